public import FoundationEssentials

// Programmatic storage and import: cookies made elsewhere, validated as a response's would be.
extension CookieJar {
    /// Stores a cookie built by a program or read from a file, after the checks a response's
    /// cookie would pass that do not depend on a request: valid characters and sizes, a domain
    /// that is not a public suffix, path, prefixes. Creation time is kept as given.
    ///
    /// - Parameter keepingCreation: false when the source has no creation time (cookies.txt):
    ///   the cookie then gets a fresh one, so cookies inserted in turn keep that order.
    /// - Parameter enforcingLimits: false while a batch is inserted (an import), which then
    ///   enforces them once, with `enforceLimits(scopes:now:)`.
    @discardableResult
    public mutating func insert(
        _ cookie: Cookie,
        keepingCreation: Bool = true,
        now: Date = Date(),
        enforcingLimits: Bool = true
    ) -> Result<[CookieChange], CookieRejection> {
        var cookie = cookie
        if !keepingCreation {
            cookie.creation = uniqueCreationTime(now)
            cookie.lastAccess = cookie.creation
        }
        cookie.domain = Host.canonicalDomain(cookie.domain)
        if let key = cookie.partitionKey {
            // A key made from a host (`https://www.example.com`) is that host's site's key, the
            // one requests under it are looked up with.
            cookie.partitionKey = CookiePartitionKey(canonicalScheme: key.scheme, site: siteKey(for: key.site))
        }
        if let rejection = validate(&cookie, now: now) { return .failure(rejection) }
        return put(cookie, api: .http, now: now, keepCreationOfOld: false, enforcingLimits: enforcingLimits)
    }

    /// The limit of each of `scopes` (sites and partitions a batch touched), then the total
    /// limit, once: what inserting the batch one by one would have enforced after every cookie,
    /// at the cost of one sort per scope and one for the jar instead of one per insertion past a
    /// limit.
    mutating func enforceLimits(scopes: Set<LimitScope>, now: Date) -> [CookieChange] {
        var changes: [CookieChange] = []
        for scope in scopes { changes += enforceScopeLimit(scope, now: now) }
        changes += enforceTotalLimit(now: now)
        return changes
    }

    private func validate(_ cookie: inout Cookie, now: Date) -> CookieRejection? {
        // Called per field of every imported cookie: a plain byte scan, no allocation.
        func hasForbidden(_ text: String, alsoForbidding extra: (UInt8, UInt8, UInt8)) -> Bool {
            text.utf8.contains {
                ($0 < 0x20 && $0 != 0x09) || $0 == 0x7F || $0 == extra.0 || $0 == extra.1 || $0 == extra.2
            }
        }
        if cookie.name.isEmpty && cookie.value.isEmpty { return .malformed(.emptyNameAndValue) }
        if hasForbidden(cookie.name, alsoForbidding: (UInt8(ascii: "="), UInt8(ascii: ";"), 0x7F)) {
            return .invalidCharacter(field: "name")
        }
        if hasForbidden(cookie.value, alsoForbidding: (UInt8(ascii: ";"), 0x7F, 0x7F)) {
            return .invalidCharacter(field: "value")
        }
        let nameValueBytes = cookie.name.utf8.count + cookie.value.utf8.count
        if nameValueBytes > SetCookieParser.maximumNameValueBytes {
            return .malformed(.nameValueTooLong(bytes: nameValueBytes))
        }
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
        if hasForbidden(cookie.path, alsoForbidding: (UInt8(ascii: ";"), 0x7F, 0x7F)) {
            return .invalidCharacter(field: "path")
        }
        if Host.isIPAddress(cookie.domain) {
            cookie.hostOnly = true
        } else if !cookie.hostOnly {
            switch publicSuffixes.isPublicSuffix(cookie.domain) {
            case nil: return .publicSuffixListUnavailable(domain: cookie.domain)
            case true?:
                // A domain cookie on a name that is a suffix only by the list's implicit rule
                // (`.localhost`, `.nas`: curl writes one a dev server set that way) can only
                // have come from that host: RFC 6265bis §5.7 makes it host-only there, as a
                // response would. A suffix the list names (`com`, `co.uk`) is refused.
                guard publicSuffixes.isListedSuffix(cookie.domain) == false else {
                    return .publicSuffix(domain: cookie.domain)
                }
                cookie.hostOnly = true
            case false?: break
            }
        }
        if let rejection = Self.attributeRejection(cookie) { return rejection }
        if let expires = cookie.expires { cookie.expires = min(expires, now.addingTimeInterval(limits.maximumAge)) }
        return nil
    }
}
