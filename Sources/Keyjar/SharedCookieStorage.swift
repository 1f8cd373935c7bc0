public import Foundation
public import KeyjarCore
import KeyjarProtocol

/// The user's shared cookie jar, shaped like Foundation's `HTTPCookieStorage` but shared by
/// every process through keyjard, persistent, and correct by RFC 6265bis.
///
/// Lookups answer from this process's replica; changes are committed by keyjard before the
/// call returns and reach every other process as a notification.
///
/// ```swift
/// let storage = try SharedCookieStorage()
/// try storage.storeCookies(fromResponseHeaders: ["sid=42; Secure; HttpOnly"], for: url, mainDocumentURL: nil)
/// var request = URLRequest(url: url)
/// request.setValue(storage.cookieHeader(for: url), forHTTPHeaderField: "Cookie")
/// ```
public final class SharedCookieStorage: Sendable {
    public let client: KeyjarClient

    public init(client: KeyjarClient) {
        self.client = client
    }

    /// Connects to keyjard (starting it if needed).
    public convenience init() throws(KeyjarClientError) {
        self.init(client: try KeyjarClient())
    }

    /// Every unexpired cookie.
    public var cookies: [Cookie] {
        let now = Date()
        return client.withReplica { $0.jar.allCookies.filter { !$0.isExpired(at: now) } }
    }

    /// The cookies that would go with a request to `url` (HTTP API, top-level), in header order.
    public func cookies(for url: URL) -> [Cookie] {
        guard let context = CookieContext(url: url) else { return [] }
        return client.withReplica { $0.jar.cookies(for: context) }
    }

    /// Every unexpired cookie, sorted by the given order.
    public func sortedCookies(by areInIncreasingOrder: (Cookie, Cookie) -> Bool) -> [Cookie] {
        cookies.sorted(by: areInIncreasingOrder)
    }

    /// The Cookie header value for a request from the replica (no socket round trip), or nil.
    public func cookieHeader(
        for url: URL, mainDocumentURL: URL? = nil, isTopLevelNavigation: Bool = true, httpMethod: String = "GET"
    ) -> String? {
        guard let context = CookieContext(
            url: url, mainDocumentURL: mainDocumentURL, isTopLevelNavigation: isTopLevelNavigation, httpMethod: httpMethod)
        else { return nil }
        return client.withReplica { $0.jar.cookieHeader(for: context) }
    }

    /// Stores every Set-Cookie line of a response (one line each, never comma-joined) under the
    /// accept policy; returns per line nil when stored or the reason it was not.
    @discardableResult
    public func storeCookies(
        fromResponseHeaders setCookieLines: [String], for url: URL, mainDocumentURL: URL?,
        isTopLevelNavigation: Bool = true, httpMethod: String = "GET"
    ) throws(KeyjarClientError) -> [String?] {
        let context = WireCookieContext(
            url: url.absoluteString, mainDocumentURL: mainDocumentURL?.absoluteString,
            isTopLevelNavigation: isTopLevelNavigation, method: httpMethod)
        guard case .cookieOutcomes(let outcomes, _) = try client.call(.setCookies(headers: setCookieLines, context: context))
        else { throw unexpected() }
        return outcomes
    }

    /// Stores cookies received for `url` as `HTTPCookieStorage.setCookies(_:for:mainDocumentURL:)`
    /// does: under the accept policy and domain rules (a cookie the policy refuses is skipped,
    /// a session-only rule drops expiry), and only cookies whose domain matches `url`'s host.
    /// - Returns: per cookie, nil when stored or the reason it was not.
    @discardableResult
    public func setCookies(_ cookies: [Cookie], for url: URL, mainDocumentURL: URL?) throws(KeyjarClientError) -> [String?] {
        guard let context = CookieContext(url: url, mainDocumentURL: mainDocumentURL) else {
            throw KeyjarClientError(code: .refused, message: "'\(url)' is not a URL with a host")
        }
        let verdict = client.withReplica { $0.jar.policyVerdict(for: context) }
        var outcomes: [String?] = Array(repeating: nil, count: cookies.count)
        var accepted: [(index: Int, cookie: Cookie)] = []
        for (index, cookie) in cookies.enumerated() {
            var cookie = cookie
            guard cookie.hostOnly ? cookie.domain == context.url.host : Host.domainMatches(context.url.host, cookie.domain) else {
                outcomes[index] = CookieRejection.domainMismatch(domain: cookie.domain, host: context.url.host).description
                continue
            }
            switch verdict {
            case .reject(let rejection):
                outcomes[index] = rejection.description
                continue
            case .acceptForSession: cookie.expires = cookie.expires.map { $0 > Date() ? nil : $0 } ?? nil
            case .accept: break
            }
            accepted.append((index, cookie))
        }
        guard !accepted.isEmpty else { return outcomes }
        guard case .cookieOutcomes(let results, _) = try client.call(.insertCookies(cookies: accepted.map(\.cookie))) else {
            throw unexpected()
        }
        for (position, entry) in accepted.enumerated() where position < results.count { outcomes[entry.index] = results[position] }
        return outcomes
    }

    /// Stores one cookie as a program sets it (no accept policy, as `HTTPCookieStorage`).
    /// - Throws: `.refused` with the reason when the cookie itself is invalid.
    public func setCookie(_ cookie: Cookie) throws(KeyjarClientError) {
        guard case .cookieOutcomes(let outcomes, _) = try client.call(.insertCookies(cookies: [cookie])) else { throw unexpected() }
        if let reason = outcomes.first ?? nil { throw KeyjarClientError(code: .refused, message: reason) }
    }

    public func deleteCookie(_ cookie: Cookie) throws(KeyjarClientError) {
        _ = try client.call(.deleteCookies(identities: [cookie.identity]))
    }

    /// Deletes the cookies created at or after `date`.
    public func removeCookies(since date: Date) throws(KeyjarClientError) {
        _ = try client.call(.removeCookiesCreated(since: date.timeIntervalSince1970))
    }

    /// The accept policy, from the replica.
    public var cookieAcceptPolicy: CookieAcceptPolicy { client.withReplica { $0.jar.policy.acceptPolicy } }

    /// The whole policy: global accept policy and per-domain rules.
    public var policy: CookiePolicy { client.withReplica { $0.jar.policy } }

    public func setCookieAcceptPolicy(_ acceptPolicy: CookieAcceptPolicy) throws(KeyjarClientError) {
        var policy = self.policy
        policy.acceptPolicy = acceptPolicy
        _ = try client.call(.setPolicy(policy: policy))
    }

    /// Sets (or with nil removes) the rule for a domain and its subdomains.
    public func setDomainRule(_ action: CookieDomainAction?, for domain: String) throws(KeyjarClientError) {
        var policy = self.policy
        policy.domainRules[Host.canonicalDomain(domain)] = action
        _ = try client.call(.setPolicy(policy: policy))
    }

    private func unexpected() -> KeyjarClientError {
        KeyjarClientError(code: .protocolViolation, message: "keyjard answered with an unexpected reply")
    }
}
