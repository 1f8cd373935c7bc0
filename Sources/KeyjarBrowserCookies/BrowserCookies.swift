public import KeyjarCore

/// What a browser's database came to: the cookies the browser would send, and how many rows
/// were left out, by reason.
public struct BrowserCookies: Sendable, Hashable {
    public var cookies: [Cookie] = []
    public var skipped: [BrowserCookieSkip: Int] = [:]

    public init() {}

    public var skippedCount: Int { skipped.values.reduce(0, +) }

    mutating func take(_ result: Result<Cookie, BrowserCookieSkip>) {
        switch result {
        case .success(let cookie): cookies.append(cookie)
        case .failure(let reason): skipped[reason, default: 0] += 1
        }
    }

    /// Only the cookies of these domains and their subdomains (all when `domains` is empty).
    public func selecting(domains: [String]) -> BrowserCookies {
        guard !domains.isEmpty else { return self }
        var selected = self
        selected.cookies = cookies.filter { cookie in
            domains.contains { cookie.domain == $0 || cookie.domain.hasSuffix("." + $0) }
        }
        return selected
    }
}
