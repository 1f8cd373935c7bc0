public import FoundationEssentials

// Storage: a Set-Cookie line under the accept policy (RFC 6265bis §5.7).
extension CookieJar {
    /// Parses and stores one Set-Cookie header value received in response to `context`.
    ///
    /// - Returns: the changes made (none when an already-expired cookie deletes nothing), or
    ///   why the cookie was refused.
    @discardableResult
    public mutating func setCookie(
        _ header: String,
        context: CookieContext,
        now: Date = Date()
    ) -> Result<[CookieChange], CookieRejection> {
        do {
            return store(try SetCookieParser.parse(header), context: context, now: now)
        } catch {
            return .failure(.malformed(error))
        }
    }

    /// Stores every Set-Cookie line of one response, one by one (never comma-joined).
    public mutating func setCookies(
        _ headers: [String],
        context: CookieContext,
        now: Date = Date()
    ) -> [Result<[CookieChange], CookieRejection>] {
        headers.map { setCookie($0, context: context, now: now) }
    }

    /// Applies the accept policy and the storage model to a parsed Set-Cookie.
    public mutating func store(
        _ parsed: SetCookie,
        context: CookieContext,
        now: Date = Date()
    ) -> Result<[CookieChange], CookieRejection> {
        var sessionOnly = false
        if let rejection = policyRejection(for: context, partitioned: parsed.partitioned, sessionOnly: &sessionOnly) {
            return .failure(rejection)
        }
        var cookie: Cookie
        switch makeCookie(from: parsed, context: context, now: now) {
        case .failure(let rejection): return .failure(rejection)
        case .success(let made): cookie = made
        }
        if sessionOnly, let date = cookie.expires, date > now { cookie.expires = nil }
        if !cookie.secure && !context.url.isSecure, let shadowed = secureCookieShadowed(by: cookie) {
            return .failure(.wouldOverwriteSecureCookie(name: shadowed.name))
        }
        return put(cookie, api: context.api, now: now, keepCreationOfOld: true)
    }

    /// The cookie a parsed Set-Cookie makes in response to `context` by the storage model, or
    /// why it makes none: expiry, domain and path, and the rules on the cookie's own attributes
    /// and its origin. Neither the accept policy nor the cookies the jar holds are consulted:
    /// storing (`store(_:context:now:)`) adds those, and
    /// `Cookie.cookies(withResponseHeaderFields:for:now:publicSuffixes:)` is this alone.
    mutating func makeCookie(
        from parsed: SetCookie,
        context: CookieContext,
        now: Date
    ) -> Result<Cookie, CookieRejection> {
        let host = context.url.host
        var expires: Date?
        if let maxAge = parsed.maxAge {
            expires = maxAge <= 0 ? .distantPast : now.addingTimeInterval(min(TimeInterval(maxAge), limits.maximumAge))
        } else if let date = parsed.expires {
            expires = min(date, now.addingTimeInterval(limits.maximumAge))
        }

        var domain = host
        var hostOnly = true
        if let attribute = parsed.domain {
            switch resolveDomainAttribute(attribute, host: host) {
            case .failure(let rejection): return .failure(rejection)
            case .success(let resolved?):
                domain = resolved
                hostOnly = false
            case .success(nil): break
            }
        }

        let cookie = Cookie(
            name: parsed.name,
            value: parsed.value,
            domain: domain,
            hostOnly: hostOnly,
            path: parsed.path ?? CookiePath.defaultPath(of: context.url.path),
            expires: expires,
            secure: parsed.secure,
            httpOnly: parsed.httpOnly,
            sameSite: parsed.sameSite,
            creation: now,
            partitionKey: parsed.partitioned ? partitionKey(for: context) : nil
        )
        // A key every reader takes back: a top-level host a URL parser let through (an IPv6
        // zone, a sub-delimiter) would make a cookie that vanishes on reload and that replicas
        // cannot decode.
        if let key = cookie.partitionKey, CookiePartitionKey(serialized: key.serialized) != key {
            return .failure(.unusablePartitionKey(key.serialized))
        }

        if cookie.secure && !context.url.isSecure { return .failure(.secureFromInsecureOrigin) }
        if cookie.httpOnly && context.api == .nonHTTP { return .failure(.httpOnlyFromNonHTTPAPI) }
        if cookie.sameSite.enforced != .none, !isSameSite(context),
            context.api == .nonHTTP || !context.isTopLevelNavigation
        {
            return .failure(.sameSiteFromCrossSiteRequest(cookie.sameSite))
        }
        if let rejection = Self.attributeRejection(cookie) { return .failure(rejection) }
        return .success(cookie)
    }

    /// What the accept policy and domain rules say about storing a cookie from `context`.
    public enum PolicyVerdict: Sendable, Hashable {
        case accept
        /// Accept, but only for the session (a `sessionOnly` domain rule).
        case acceptForSession
        case reject(CookieRejection)
    }

    /// The accept policy and domain rules' verdict on storing from `context` (the check every
    /// Set-Cookie goes through, for callers storing cookies they built themselves).
    /// `partitioned`: the cookie is partitioned, which the third-party policies let through.
    public mutating func policyVerdict(for context: CookieContext, partitioned: Bool = false) -> PolicyVerdict {
        var sessionOnly = false
        if let rejection = policyRejection(for: context, partitioned: partitioned, sessionOnly: &sessionOnly) {
            return .reject(rejection)
        }
        return sessionOnly ? .acceptForSession : .accept
    }

    /// The accept policy and domain rules' verdict on storing from `context`. A partitioned
    /// cookie passes the third-party policies, as browsers that block third-party cookies let
    /// partitioned ones through: kept under one top-level site, it cannot follow a user across
    /// sites, which is what those policies are for. A domain rule and `never` still refuse it.
    private mutating func policyRejection(
        for context: CookieContext,
        partitioned: Bool,
        sessionOnly: inout Bool
    ) -> CookieRejection? {
        if let rule = policy.rule(for: context.url.host) {
            // A rule decides on its own: it outranks the global accept policy.
            switch rule.action {
            case .block: return .blockedByDomainRule(domain: rule.domain)
            case .allow: return nil
            case .sessionOnly:
                sessionOnly = true
                return nil
            }
        }
        switch policy.acceptPolicy {
        case .always:
            return nil
        case .never:
            return .blockedByPolicy(.never)
        case .onlyFromMainDocumentDomain, .noThirdParty, .grandfatheredThirdParty:
            guard !partitioned, isThirdParty(context), let site = context.siteForCookies else { return nil }
            // Only first-party cookies grandfather a site: a partitioned one, let through above,
            // must not open the door to unpartitioned third-party cookies.
            if policy.acceptPolicy == .grandfatheredThirdParty, hasUnpartitionedCookies(forSiteOf: context.url.host) {
                return nil
            }
            return .thirdParty(site: siteKey(for: context.url.host), mainDocumentSite: siteKey(for: site.host))
        }
    }

    /// RFC 6265bis §5.7 steps 8-10: the domain a Domain attribute gives (nil for host-only).
    private func resolveDomainAttribute(_ attribute: String, host: String) -> Result<String?, CookieRejection> {
        guard attribute.utf8.allSatisfy({ $0 < 0x80 }) else { return .failure(.nonASCIIDomain(domain: attribute)) }
        // IP addresses are settled before the suffix list is asked: they match only themselves.
        if Host.isIPAddress(host) || Host.isIPAddress(attribute) {
            return attribute == host ? .success(nil) : .failure(.domainMismatch(domain: attribute, host: host))
        }
        switch publicSuffixes.isPublicSuffix(attribute) {
        case nil:
            return .failure(.publicSuffixListUnavailable(domain: attribute))
        case true?:
            return attribute == host ? .success(nil) : .failure(.publicSuffix(domain: attribute))
        case false?:
            return Host.domainMatches(host, attribute)
                ? .success(attribute) : .failure(.domainMismatch(domain: attribute, host: host))
        }
    }

    /// Rules about a cookie's own attributes, shared by responses and imports: SameSite=None
    /// and Partitioned need Secure, and the `__Secure-` / `__Host-` prefixes (RFC 6265bis
    /// §4.1.3).
    static func attributeRejection(_ cookie: Cookie) -> CookieRejection? {
        // Partitioned first: a CHIPS cookie is usually SameSite=None too, and Partitioned names
        // the stricter intent.
        if cookie.partitionKey != nil && !cookie.secure { return .partitionedWithoutSecure }
        if cookie.sameSite == .none && !cookie.secure { return .sameSiteNoneWithoutSecure }
        if cookie.name.isEmpty {
            if hasPrefix(cookie.value, "__secure-") || hasPrefix(cookie.value, "__host-") {
                return .nameLooksLikePrefix
            }
        } else if hasPrefix(cookie.name, "__secure-") {
            if !cookie.secure {
                return .prefixRequirementsUnmet(prefix: "__Secure-", requirement: "have the Secure attribute")
            }
        } else if hasPrefix(cookie.name, "__host-") {
            if !cookie.secure {
                return .prefixRequirementsUnmet(prefix: "__Host-", requirement: "have the Secure attribute")
            }
            if !cookie.hostOnly {
                return .prefixRequirementsUnmet(prefix: "__Host-", requirement: "have no Domain attribute")
            }
            if cookie.path != "/" { return .prefixRequirementsUnmet(prefix: "__Host-", requirement: "have Path=/") }
        }
        return nil
    }

    /// Case-insensitive ASCII prefix test against a lower-case prefix.
    private static func hasPrefix(_ string: String, _ lowercasePrefix: String) -> Bool {
        let bytes = string.utf8
        let prefix = lowercasePrefix.utf8
        guard bytes.count >= prefix.count else { return false }
        return zip(bytes, prefix).allSatisfy { ($0 >= 0x41 && $0 <= 0x5A ? $0 | 0x20 : $0) == $1 }
    }

    /// RFC 6265bis §5.7 step 16: a Secure cookie this insecure one would shadow, if any. Only
    /// cookies of its own partition count: a partitioned cookie is never sent where an
    /// unpartitioned one is (nor the other way round), so it shadows nothing there.
    private mutating func secureCookieShadowed(by cookie: Cookie) -> Cookie? {
        sites[siteKey(for: cookie.domain)]?.first { existing in
            existing.secure && existing.name == cookie.name && existing.partitionKey == cookie.partitionKey
                && (Host.domainMatches(existing.domain, cookie.domain)
                    || Host.domainMatches(cookie.domain, existing.domain))
                && CookiePath.matches(cookie.path, existing.path)
        }
    }

    /// Replaces or inserts a validated cookie, or deletes its twin when it is already expired,
    /// then enforces the limits.
    mutating func put(
        _ cookie: Cookie,
        api: CookieAPI,
        now: Date,
        keepCreationOfOld: Bool,
        enforcingLimits: Bool = true
    ) -> Result<[CookieChange], CookieRejection> {
        var cookie = cookie
        let key = siteKey(for: cookie.domain)
        let existingIndex = sites[key]?.firstIndex { $0.hasIdentity(of: cookie) }
        if let existingIndex, let old = sites[key]?[existingIndex] {
            if old.httpOnly && api == .nonHTTP { return .failure(.wouldOverwriteHttpOnlyCookie(name: old.name)) }
            if cookie.isExpired(at: now) {
                removeCookie(at: existingIndex, site: key)
                return .success([.removed(old, cause: .deleted)])
            }
            if keepCreationOfOld { cookie.creation = old.creation }
            cookie.lastAccess = now
            sites[key]?[existingIndex] = cookie
            // A partition's limit counts bytes too, which a longer value adds.
            guard enforcingLimits, let partition = cookie.partitionKey,
                cookie.name.utf8.count + cookie.value.utf8.count > old.name.utf8.count + old.value.utf8.count
            else { return .success([.replaced(old: old, new: cookie)]) }
            return .success(
                [.replaced(old: old, new: cookie)]
                    + enforceScopeLimit(LimitScope(site: key, partition: partition), now: now)
            )
        }
        if cookie.isExpired(at: now) { return .success([]) }
        if keepCreationOfOld {
            cookie.creation = uniqueCreationTime(now)
        } else {
            latestCreation = max(latestCreation, cookie.creation)
        }
        cookie.lastAccess = max(cookie.lastAccess, cookie.creation)
        sites[key, default: []].append(cookie)
        count += 1
        guard enforcingLimits else { return .success([.added(cookie)]) }
        return .success(
            [.added(cookie)] + enforceLimits(LimitScope(site: key, partition: cookie.partitionKey), now: now)
        )
    }

    mutating func removeCookie(at index: Int, site key: String) {
        sites[key]?.remove(at: index)
        if sites[key]?.isEmpty == true { sites[key] = nil }
        count -= 1
    }
}
