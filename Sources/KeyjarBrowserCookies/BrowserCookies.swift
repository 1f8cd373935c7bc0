public import KeyjarCore

/// What a browser's database came to: the cookies the browser would send, and how many rows
/// were left out, by reason.
public struct BrowserCookies: Sendable, Hashable {
    public var cookies: [Cookie] = []
    public var skipped: [BrowserCookieSkip: Int] = [:]
    /// The Safe Storage passwords a Chromium read tried when one of them opened its v11 values:
    /// what `--follow` gives its next reads, so that the Secret Service is asked once.
    package var safeStoragePasswords: [String]?

    public init() {}

    /// Whether a row of `host` (the browser's form: a leading dot, an IPv6 address in brackets)
    /// is on one of `domains` or a subdomain of one (every host when `domains` is empty). The
    /// readers ask before they decrypt or count a row, so a `--domain` import neither counts
    /// other sites' rows nor fails on their values.
    package static func selects(host: String, domains: [String]) -> Bool {
        guard !domains.isEmpty else { return true }
        let domain = Host.canonicalDomain(String(host.drop { $0 == "." }))
        return domains.contains { Host.domainMatches(domain, $0) }
    }

    public var skippedCount: Int { skipped.values.reduce(0, +) }

    mutating func take(_ result: Result<Cookie, BrowserCookieSkip>) {
        switch result {
        case .success(let cookie): cookies.append(cookie)
        case .failure(let reason): skipped[reason, default: 0] += 1
        }
    }
}
