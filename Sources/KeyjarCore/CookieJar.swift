public import Foundation

/// An in-memory cookie jar implementing the RFC 6265bis storage model and retrieval algorithm,
/// with public-suffix protection, accept policies and Chromium's limits.
///
/// It is a value type with no I/O: keyjard persists the ``CookieChange`` values each mutation
/// returns, and clients keep a replica. Cookies are indexed by site (registrable domain), so a
/// lookup touches only the cookies of the request's site.
///
/// ```swift
/// var jar = CookieJar()
/// let context = CookieContext(url: URL(string: "https://www.example.com/")!)!
/// _ = jar.setCookie("sid=42; Domain=example.com; Secure", context: context)
/// jar.cookieHeader(for: context)   // "sid=42"
/// ```
public struct CookieJar: Sendable {
    /// Size limits and their eviction targets; the defaults are Chromium's.
    public struct Limits: Sendable, Hashable, Codable {
        /// Cookies per site (registrable domain) before eviction...
        public var perSite: Int
        /// ...which then removes cookies down to this many.
        public var perSitePurgedTo: Int
        /// Cookies in the whole jar before eviction...
        public var total: Int
        /// ...which then removes this many.
        public var totalPurge: Int
        /// Expiry is capped at this many seconds from now (RFC 6265bis: 400 days at most).
        public var maximumAge: TimeInterval

        public init(
            perSite: Int = 180, perSitePurgedTo: Int = 150, total: Int = 3300, totalPurge: Int = 300,
            maximumAge: TimeInterval = 400 * 86_400
        ) {
            self.perSite = perSite
            self.perSitePurgedTo = perSitePurgedTo
            self.total = total
            self.totalPurge = totalPurge
            self.maximumAge = maximumAge
        }
    }

    public var policy: CookiePolicy
    public var limits: Limits
    public let publicSuffixes: PublicSuffixList

    /// Site key (registrable domain, or the host where there is none) → that site's cookies.
    private var sites: [String: [Cookie]] = [:]
    public private(set) var count = 0
    /// Creation times are kept unique and increasing so that "earlier creation first" is a
    /// total order even for cookies set by one response.
    private var latestCreation = Date.distantPast
    /// Host → site key; libpsl lookups cost ~0.4 µs, a dictionary hit far less. Bounded, but
    /// never below twice the number of sites: a jar loading 100,000 cookies of 5,000 sites in
    /// key order would otherwise empty a fixed-size cache before every reuse.
    private var siteKeyCache: [String: String] = [:]
    private static let siteKeyCacheMinimumLimit = 4096

    public init(
        policy: CookiePolicy = CookiePolicy(), limits: Limits = Limits(),
        publicSuffixes: PublicSuffixList = .system
    ) {
        self.policy = policy
        self.limits = limits
        self.publicSuffixes = publicSuffixes
    }

    /// Puts back cookies this jar's rules already accepted once (e.g. loaded from keyjard's
    /// database): no validation and no eviction, only indexing.
    public mutating func restore(_ cookies: [Cookie]) {
        for cookie in cookies { restore(cookie) }
    }

    /// Puts back one already-accepted cookie (see ``restore(_:)-([Cookie])``).
    /// - Parameter isNew: the caller guarantees no stored cookie has this identity (rows of a
    ///   table keyed by identity), which skips the search for one.
    public mutating func restore(_ cookie: Cookie, isNew: Bool = false) {
        let key = siteKey(for: cookie.domain)
        if !isNew, let index = sites[key]?.firstIndex(where: { $0.hasIdentity(of: cookie) }) {
            sites[key]?[index] = cookie
        } else {
            sites[key, default: []].append(cookie)
            count += 1
        }
        latestCreation = max(latestCreation, cookie.creation)
    }

    /// Every cookie, unexpired or not, in no particular order.
    public var allCookies: [Cookie] { sites.values.flatMap { $0 } }

    /// Whether any cookie is stored for the site of `host`.
    public mutating func hasCookies(forSiteOf host: String) -> Bool {
        !(sites[siteKey(for: host)]?.isEmpty ?? true)
    }

    // MARK: - Sites

    /// The registrable domain of `host`, or the host itself when it has none (IP addresses,
    /// public suffixes, or an unavailable suffix list).
    mutating func siteKey(for host: String) -> String {
        if let cached = siteKeyCache[host] { return cached }
        let key = publicSuffixes.registrableDomain(of: host) ?? host
        if siteKeyCache.count >= max(Self.siteKeyCacheMinimumLimit, 2 * sites.count) {
            siteKeyCache.removeAll(keepingCapacity: true)
        }
        siteKeyCache[host] = key
        return key
    }

    /// Schemeful same-site (RFC 6265bis §5.2): same registrable domain and same scheme class.
    mutating func isSameSite(_ context: CookieContext) -> Bool {
        guard let site = context.siteForCookies else { return true }
        return site.isSecureScheme == context.url.isSecureScheme
            && siteKey(for: site.host) == siteKey(for: context.url.host)
    }

    /// Third party for the accept policies: a different registrable domain, whatever the scheme.
    mutating func isThirdParty(_ context: CookieContext) -> Bool {
        guard let site = context.siteForCookies else { return false }
        return siteKey(for: site.host) != siteKey(for: context.url.host)
    }

    private mutating func uniqueCreationTime(_ now: Date) -> Date {
        let creation = now > latestCreation ? now : latestCreation.addingTimeInterval(1e-6)
        latestCreation = creation
        return creation
    }

    // MARK: - Retrieval (RFC 6265bis §5.8.3)

    /// The cookies to send with a request, in header order (longer paths first, then earlier
    /// creation), with their last-access time updated.
    public mutating func cookies(for context: CookieContext, now: Date = Date()) -> [Cookie] {
        guard let (bucketIndex, matched) = matchingCookies(for: context, now: now) else { return [] }
        return matched.map { sites.values[bucketIndex][$0.index] }
    }

    /// The Cookie header value for a request, or nil when no cookie applies.
    public mutating func cookieHeader(for context: CookieContext, now: Date = Date()) -> String? {
        guard let (bucketIndex, matched) = matchingCookies(for: context, now: now), !matched.isEmpty else { return nil }
        // Built straight from the bucket in one allocation: copying Cookie values would cost a
        // retain per string, and appending piece by piece a capacity check per piece.
        return sites.values[bucketIndex].withUnsafeBufferPointer { bucket in
            var length = 2 * (matched.count - 1)
            for (index, _, _) in matched {
                let nameLength = bucket[index].name.utf8.count
                length += bucket[index].value.utf8.count + (nameLength == 0 ? 0 : nameLength + 1)
            }
            return String(unsafeUninitializedCapacity: length) { output in
                var position = 0
                func append(_ text: String) {
                    Bytes.with(text) { bytes in
                        guard let source = bytes.baseAddress, let target = output.baseAddress else { return }
                        (target + position).initialize(from: source, count: bytes.count)
                        position += bytes.count
                    }
                }
                func append(_ byte: UInt8) {
                    output[position] = byte
                    position += 1
                }
                for (offset, (index, _, _)) in matched.enumerated() {
                    if offset > 0 {
                        append(UInt8(ascii: ";"))
                        append(UInt8(ascii: " "))
                    }
                    if !bucket[index].name.isEmpty {
                        append(bucket[index].name)
                        append(UInt8(ascii: "="))
                    }
                    append(bucket[index].value)
                }
                return position
            }
        }
    }

    /// Indices, in header order, of the cookies in the request site's bucket that go with the
    /// request; their last-access times are updated.
    private mutating func matchingCookies(
        for context: CookieContext, now: Date
    ) -> (bucket: Dictionary<String, [Cookie]>.Index, matched: [(index: Int, pathLength: Int, creation: Date)])? {
        let host = context.url.host
        if let rule = policy.rule(for: host) {
            if rule.action == .block { return nil }
        } else if policy.acceptPolicy == .noThirdParty, isThirdParty(context) {
            return nil
        }
        let key = siteKey(for: host)
        guard let bucketIndex = sites.index(forKey: key) else { return nil }
        let request = RequestFacts(
            host: host, hostIsName: !Host.isIPAddress(host), path: context.url.path,
            secureChannel: context.url.isSecure, httpAPI: context.api == .http, sameSite: isSameSite(context),
            laxAllowed: context.isTopLevelNavigation && context.isSafeMethod, now: now)

        // Sort keys are copied out so that sorting moves integers, not cookies.
        var matched: [(index: Int, pathLength: Int, creation: Date)] = []
        sites.values[bucketIndex].withUnsafeMutableBufferPointer { bucket in
            guard let base = bucket.baseAddress else { return }
            matched.reserveCapacity(bucket.count)
            for index in bucket.indices where Self.matches(base + index, request) {
                base[index].lastAccess = now
                matched.append((index, base[index].path.utf8.count, base[index].creation))
            }
        }
        if matched.count > 1 {
            matched.sort { $0.pathLength != $1.pathLength ? $0.pathLength > $1.pathLength : $0.creation < $1.creation }
        }
        return (bucketIndex, matched)
    }

    /// What the retrieval algorithm needs to know of a request, computed once per lookup.
    private struct RequestFacts {
        var host: String
        var hostIsName: Bool
        var path: String
        var secureChannel: Bool
        var httpAPI: Bool
        var sameSite: Bool
        var laxAllowed: Bool
        var now: Date
    }

    /// RFC 6265bis §5.8.3 step 1 for one cookie (read in place, never copied).
    @inline(__always)
    private static func matches(_ cookie: UnsafePointer<Cookie>, _ request: RequestFacts) -> Bool {
        if cookie.pointee.hostOnly || !request.hostIsName {
            guard cookie.pointee.domain == request.host else { return false }
        } else {
            guard cookie.pointee.domain == request.host || Host.isSuffixDomain(request.host, of: cookie.pointee.domain)
            else { return false }
        }
        guard CookiePath.matches(request.path, cookie.pointee.path),
            !cookie.pointee.secure || request.secureChannel,
            !cookie.pointee.httpOnly || request.httpAPI,
            !cookie.pointee.isExpired(at: request.now)
        else { return false }
        if !request.sameSite {
            switch cookie.pointee.sameSite.enforced {
            case .strict: return false
            case .lax, .unspecified: return request.laxAllowed
            case .none: return true
            }
        }
        return true
    }

    // MARK: - Storage (RFC 6265bis §5.7)

    /// Parses and stores one Set-Cookie header value received in response to `context`.
    ///
    /// - Returns: the changes made (none when an already-expired cookie deletes nothing), or
    ///   why the cookie was refused.
    @discardableResult
    public mutating func setCookie(
        _ header: String, context: CookieContext, now: Date = Date()
    ) -> Result<[CookieChange], CookieRejection> {
        do {
            return store(try SetCookieParser.parse(header), context: context, now: now)
        } catch {
            return .failure(.malformed(error))
        }
    }

    /// Stores every Set-Cookie line of one response, one by one (never comma-joined).
    public mutating func setCookies(
        _ headers: [String], context: CookieContext, now: Date = Date()
    ) -> [Result<[CookieChange], CookieRejection>] {
        headers.map { setCookie($0, context: context, now: now) }
    }

    /// Applies the accept policy and the storage model to a parsed Set-Cookie.
    public mutating func store(
        _ parsed: SetCookie, context: CookieContext, now: Date = Date()
    ) -> Result<[CookieChange], CookieRejection> {
        let host = context.url.host
        var sessionOnly = false
        if let rejection = policyRejection(for: context, sessionOnly: &sessionOnly) { return .failure(rejection) }

        var expires: Date?
        if let maxAge = parsed.maxAge {
            expires = maxAge <= 0 ? .distantPast : now.addingTimeInterval(min(TimeInterval(maxAge), limits.maximumAge))
        } else if let date = parsed.expires {
            expires = min(date, now.addingTimeInterval(limits.maximumAge))
        }
        if sessionOnly, let date = expires, date > now { expires = nil }

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
            name: parsed.name, value: parsed.value, domain: domain, hostOnly: hostOnly,
            path: parsed.path ?? CookiePath.defaultPath(of: context.url.path), expires: expires,
            secure: parsed.secure, httpOnly: parsed.httpOnly, sameSite: parsed.sameSite, creation: now)

        if cookie.secure && !context.url.isSecure { return .failure(.secureFromInsecureOrigin) }
        if cookie.httpOnly && context.api == .nonHTTP { return .failure(.httpOnlyFromNonHTTPAPI) }
        if cookie.sameSite.enforced != .none, !isSameSite(context),
            context.api == .nonHTTP || !context.isTopLevelNavigation
        {
            return .failure(.sameSiteFromCrossSiteRequest(cookie.sameSite))
        }
        if let rejection = Self.attributeRejection(cookie) { return .failure(rejection) }
        if !cookie.secure && !context.url.isSecure, let shadowed = secureCookieShadowed(by: cookie) {
            return .failure(.wouldOverwriteSecureCookie(name: shadowed.name))
        }
        return put(cookie, api: context.api, now: now, keepCreationOfOld: true)
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
    public mutating func policyVerdict(for context: CookieContext) -> PolicyVerdict {
        var sessionOnly = false
        if let rejection = policyRejection(for: context, sessionOnly: &sessionOnly) { return .reject(rejection) }
        return sessionOnly ? .acceptForSession : .accept
    }

    /// The accept policy and domain rules' verdict on storing from `context`.
    private mutating func policyRejection(for context: CookieContext, sessionOnly: inout Bool) -> CookieRejection? {
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
            guard isThirdParty(context), let site = context.siteForCookies else { return nil }
            if policy.acceptPolicy == .grandfatheredThirdParty, hasCookies(forSiteOf: context.url.host) { return nil }
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
    /// needs Secure, and the `__Secure-` / `__Host-` prefixes (RFC 6265bis §4.1.3).
    static func attributeRejection(_ cookie: Cookie) -> CookieRejection? {
        if cookie.sameSite == .none && !cookie.secure { return .sameSiteNoneWithoutSecure }
        if cookie.name.isEmpty {
            if hasPrefix(cookie.value, "__secure-") || hasPrefix(cookie.value, "__host-") { return .nameLooksLikePrefix }
        } else if hasPrefix(cookie.name, "__secure-") {
            if !cookie.secure { return .prefixRequirementsUnmet(prefix: "__Secure-", requirement: "have the Secure attribute") }
        } else if hasPrefix(cookie.name, "__host-") {
            if !cookie.secure { return .prefixRequirementsUnmet(prefix: "__Host-", requirement: "have the Secure attribute") }
            if !cookie.hostOnly { return .prefixRequirementsUnmet(prefix: "__Host-", requirement: "have no Domain attribute") }
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

    /// RFC 6265bis §5.7 step 16: a Secure cookie this insecure one would shadow, if any.
    private mutating func secureCookieShadowed(by cookie: Cookie) -> Cookie? {
        sites[siteKey(for: cookie.domain)]?.first { existing in
            existing.secure && existing.name == cookie.name
                && (Host.domainMatches(existing.domain, cookie.domain) || Host.domainMatches(cookie.domain, existing.domain))
                && CookiePath.matches(cookie.path, existing.path)
        }
    }

    /// Replaces or inserts a validated cookie, or deletes its twin when it is already expired,
    /// then enforces the limits.
    private mutating func put(
        _ cookie: Cookie, api: CookieAPI, now: Date, keepCreationOfOld: Bool, enforcingLimits: Bool = true
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
            return .success([.replaced(old: old, new: cookie)])
        }
        if cookie.isExpired(at: now) { return .success([]) }
        if keepCreationOfOld { cookie.creation = uniqueCreationTime(now) } else { latestCreation = max(latestCreation, cookie.creation) }
        cookie.lastAccess = max(cookie.lastAccess, cookie.creation)
        sites[key, default: []].append(cookie)
        count += 1
        return .success(enforcingLimits ? [.added(cookie)] + enforceLimits(site: key, now: now) : [.added(cookie)])
    }

    private mutating func removeCookie(at index: Int, site key: String) {
        sites[key]?.remove(at: index)
        if sites[key]?.isEmpty == true { sites[key] = nil }
        count -= 1
    }

    // MARK: - Programmatic storage and import

    /// Stores a cookie built by a program or read from a file, after the checks a response's
    /// cookie would pass that do not depend on a request: valid characters and sizes, a domain
    /// that is not a public suffix, path, prefixes. Creation time is kept as given.
    ///
    /// - Parameter keepingCreation: false when the source has no creation time (cookies.txt):
    ///   the cookie then gets a fresh one, so cookies inserted in turn keep that order.
    /// - Parameter enforcingLimits: false while a batch is inserted (an import), which then
    ///   enforces them once, with ``enforceLimits(sites:now:)``.
    @discardableResult
    public mutating func insert(
        _ cookie: Cookie, keepingCreation: Bool = true, now: Date = Date(), enforcingLimits: Bool = true
    ) -> Result<[CookieChange], CookieRejection> {
        var cookie = cookie
        if !keepingCreation {
            cookie.creation = uniqueCreationTime(now)
            cookie.lastAccess = cookie.creation
        }
        cookie.domain = Host.canonicalDomain(cookie.domain)
        if let rejection = validate(&cookie, now: now) { return .failure(rejection) }
        return put(cookie, api: .http, now: now, keepCreationOfOld: false, enforcingLimits: enforcingLimits)
    }

    /// The per-site limit for each of `keys` (sites a batch touched), then the total limit,
    /// once: what inserting the batch one by one would have enforced after every cookie, at the
    /// cost of one sort per site and one for the jar instead of one per insertion past a limit.
    mutating func enforceLimits(sites keys: Set<String>, now: Date) -> [CookieChange] {
        var changes: [CookieChange] = []
        for key in keys { changes += enforceSiteLimit(key, now: now) }
        changes += enforceTotalLimit(now: now)
        return changes
    }

    private func validate(_ cookie: inout Cookie, now: Date) -> CookieRejection? {
        // Called per field of every imported cookie: a plain byte scan, no allocation.
        func hasForbidden(_ text: String, alsoForbidding extra: (UInt8, UInt8, UInt8)) -> Bool {
            text.utf8.contains { ($0 < 0x20 && $0 != 0x09) || $0 == 0x7F || $0 == extra.0 || $0 == extra.1 || $0 == extra.2 }
        }
        if cookie.name.isEmpty && cookie.value.isEmpty { return .malformed(.emptyNameAndValue) }
        if hasForbidden(cookie.name, alsoForbidding: (UInt8(ascii: "="), UInt8(ascii: ";"), 0x7F)) {
            return .invalidCharacter(field: "name")
        }
        if hasForbidden(cookie.value, alsoForbidding: (UInt8(ascii: ";"), 0x7F, 0x7F)) { return .invalidCharacter(field: "value") }
        let nameValueBytes = cookie.name.utf8.count + cookie.value.utf8.count
        if nameValueBytes > SetCookieParser.maximumNameValueBytes { return .malformed(.nameValueTooLong(bytes: nameValueBytes)) }
        if cookie.domain.isEmpty { return .noHost }
        if !cookie.domain.utf8.allSatisfy({ $0 < 0x80 }) { return .nonASCIIDomain(domain: cookie.domain) }
        if hasForbidden(cookie.domain, alsoForbidding: (UInt8(ascii: ";"), UInt8(ascii: " "), UInt8(ascii: "/"))) {
            return .invalidCharacter(field: "domain")
        }
        for (field, text) in [("domain", cookie.domain), ("path", cookie.path)]
        where text.utf8.count > SetCookieParser.maximumAttributeValueBytes {
            return .attributeTooLong(field: field, bytes: text.utf8.count)
        }
        if !cookie.path.hasPrefix("/") { return .invalidPath(cookie.path) }
        if hasForbidden(cookie.path, alsoForbidding: (UInt8(ascii: ";"), 0x7F, 0x7F)) { return .invalidCharacter(field: "path") }
        if Host.isIPAddress(cookie.domain) {
            cookie.hostOnly = true
        } else if !cookie.hostOnly {
            switch publicSuffixes.isPublicSuffix(cookie.domain) {
            case nil: return .publicSuffixListUnavailable(domain: cookie.domain)
            case true?: return .publicSuffix(domain: cookie.domain)
            case false?: break
            }
        }
        if let rejection = Self.attributeRejection(cookie) { return rejection }
        if let expires = cookie.expires { cookie.expires = min(expires, now.addingTimeInterval(limits.maximumAge)) }
        return nil
    }

    // MARK: - Removal

    /// Deletes the cookie with this identity, if stored.
    @discardableResult
    public mutating func remove(_ identity: Cookie.Identity) -> CookieChange? {
        let key = siteKey(for: identity.domain)
        guard let index = sites[key]?.firstIndex(where: { $0.identity == identity }),
            let cookie = sites[key]?[index]
        else { return nil }
        removeCookie(at: index, site: key)
        return .removed(cookie, cause: .deleted)
    }

    /// Deletes every cookie for which `shouldRemove` is true, reporting `cause`.
    @discardableResult
    public mutating func removeAll(
        cause: CookieRemovalCause = .deleted, where shouldRemove: (Cookie) throws -> Bool
    ) rethrows -> [CookieChange] {
        var changes: [CookieChange] = []
        for key in Array(sites.keys) {
            // Only buckets with something to remove are rebuilt: the periodic expiry purge visits
            // every site, and copying each bucket would copy the whole jar every time.
            guard var bucket = sites[key], try bucket.contains(where: shouldRemove) else { continue }
            sites[key] = nil  // so that `bucket` is unique and is edited in place
            let before = bucket.count
            var removed: [Cookie] = []
            try bucket.removeAll { cookie in
                guard try shouldRemove(cookie) else { return false }
                removed.append(cookie)
                return true
            }
            changes += removed.map { .removed($0, cause: cause) }
            count -= before - bucket.count
            sites[key] = bucket.isEmpty ? nil : bucket
        }
        return changes
    }

    /// Drops cookies whose expiry has passed.
    @discardableResult
    public mutating func removeExpired(now: Date = Date()) -> [CookieChange] {
        removeAll(cause: .expired) { $0.isExpired(at: now) }
    }

    /// Drops every session cookie: the end of the session they belonged to.
    @discardableResult
    public mutating func endSession() -> [CookieChange] {
        removeAll(cause: .sessionEnded) { $0.isSession }
    }

    // MARK: - Limits (Chromium's eviction)

    /// Eviction rank: expired first, then non-secure, then least recently accessed.
    private static func evictsBefore(_ a: Cookie, _ b: Cookie, now: Date) -> Bool {
        let aExpired = a.isExpired(at: now)
        let bExpired = b.isExpired(at: now)
        if aExpired != bExpired { return aExpired }
        if a.secure != b.secure { return !a.secure }
        if a.lastAccess != b.lastAccess { return a.lastAccess < b.lastAccess }
        return a.creation < b.creation
    }

    private mutating func enforceLimits(site key: String, now: Date) -> [CookieChange] {
        enforceSiteLimit(key, now: now) + enforceTotalLimit(now: now)
    }

    private mutating func enforceSiteLimit(_ key: String, now: Date) -> [CookieChange] {
        guard let bucket = sites[key], bucket.count > limits.perSite else { return [] }
        let victims = bucket.indices.sorted { Self.evictsBefore(bucket[$0], bucket[$1], now: now) }
            .prefix(bucket.count - limits.perSitePurgedTo)
        return evict(Set(victims), from: key, now: now)
    }

    private mutating func enforceTotalLimit(now: Date) -> [CookieChange] {
        var changes: [CookieChange] = []
        if count > limits.total {
            let target = max(0, min(limits.total - limits.totalPurge, limits.total))
            let all = sites.flatMap { key, bucket in bucket.enumerated().map { (key: key, index: $0, cookie: $1) } }
            let victims = all.sorted { Self.evictsBefore($0.cookie, $1.cookie, now: now) }.prefix(count - target)
            for (victimKey, group) in Dictionary(grouping: victims, by: \.key) {
                changes += evict(Set(group.map(\.index)), from: victimKey, now: now)
            }
        }
        return changes
    }

    private mutating func evict(_ indices: Set<Int>, from key: String, now: Date) -> [CookieChange] {
        guard let bucket = sites[key] else { return [] }
        var kept: [Cookie] = []
        var changes: [CookieChange] = []
        for (index, cookie) in bucket.enumerated() {
            if indices.contains(index) {
                changes.append(.removed(cookie, cause: cookie.isExpired(at: now) ? .expired : .evicted))
            } else {
                kept.append(cookie)
            }
        }
        count -= changes.count
        sites[key] = kept.isEmpty ? nil : kept
        return changes
    }
}
