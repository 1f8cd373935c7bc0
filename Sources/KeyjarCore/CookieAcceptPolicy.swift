/// Which cookies a jar accepts from responses.
///
/// The first three are Apple's `HTTPCookie.AcceptPolicy`; the last two are libsoup's. Sites are
/// compared by registrable domain (`a.example.co.uk` and `b.example.co.uk` are one site), never
/// by string suffix.
///
/// The third-party policies let partitioned cookies (CHIPS) through, as browsers that block
/// third-party cookies do: one is kept and sent under a single top-level site, so it cannot
/// follow a user from site to site.
public enum CookieAcceptPolicy: String, Sendable, Hashable, Codable, CaseIterable {
    /// Accept every cookie the storage rules allow.
    case always
    /// Accept no cookie.
    case never
    /// Accept a cookie only when the response's site is the main document's site.
    case onlyFromMainDocumentDomain
    /// Like `onlyFromMainDocumentDomain`, and also send no cookies on third-party requests but
    /// the partitioned cookies set under the request's top-level site.
    case noThirdParty
    /// Accept third-party cookies only for sites that already have cookies in the jar (set
    /// while they were first party); otherwise like `noThirdParty` for storing.
    case grandfatheredThirdParty
}

/// A per-domain rule, for a domain and all of its subdomains; it outranks the global policy.
public enum CookieDomainAction: String, Sendable, Hashable, Codable, CaseIterable {
    /// Accept and send cookies whatever the global policy says.
    case allow
    /// Store no cookie from, and send none to, the domain.
    case block
    /// Accept cookies whatever the global policy says, but keep them only for the session
    /// (expiry dropped).
    case sessionOnly
}

/// The global accept policy and the per-domain rules, as one value.
public struct CookiePolicy: Sendable, Hashable {
    public var acceptPolicy: CookieAcceptPolicy
    /// Canonical domain (lower-case, no leading dot) → action. The most specific rule wins.
    public var domainRules: [String: CookieDomainAction]

    public init(acceptPolicy: CookieAcceptPolicy = .always, domainRules: [String: CookieDomainAction] = [:]) {
        self.acceptPolicy = acceptPolicy
        self.domainRules = domainRules
    }

    /// The rule of the longest rule domain that `host` domain-matches, with that domain.
    public func rule(for host: String) -> (domain: String, action: CookieDomainAction)? {
        guard !domainRules.isEmpty else { return nil }
        if Host.isIPAddress(host) { return domainRules[host].map { (host, $0) } }
        for suffix in Host.suffixes(of: host) {
            let domain = String(suffix)
            if let action = domainRules[domain] { return (domain, action) }
        }
        return nil
    }
}
