public import Foundation
public import KeyjarCore
import KeyjarLocks
import Synchronization

/// The user's shared cookie jar, shaped like Foundation's `HTTPCookieStorage` but shared by
/// every process through keyjard, persistent, and correct by RFC 6265bis.
///
/// Lookups answer from this process's replica, which first catches up when another process
/// has changed something; changes are committed by keyjard before the call returns, and are
/// seen by every lookup that starts after that, in any process.
///
/// Like `HTTPCookieStorage`, it posts `KeyjarNotifications.cookiesChanged` and
/// `KeyjarNotifications.acceptPolicyChanged` (Foundation's names) with itself as object, for
/// every change its replica applies: this process's before the call returns, other processes'
/// at its next lookup, or as keyjard commits them while the process listens
/// (``addObserver(forName:queue:using:)``; `KeyjarNotifications` says why that is not the
/// default).
///
/// ```swift
/// let storage = try SharedCookieStorage()
/// try storage.storeCookies(fromResponseHeaders: ["sid=42; Secure; HttpOnly"], for: url, mainDocumentURL: nil)
/// var request = URLRequest(url: url)
/// request.setValue(storage.cookieHeader(for: url), forHTTPHeaderField: "Cookie")
/// ```
public final class SharedCookieStorage: Sendable {
    /// Where the cookies live: keyjard (through a client and its replica), or this process's
    /// memory only (an ephemeral store, or the fallback when keyjard is unreachable).
    private enum Backend: Sendable {
        case shared(KeyjarClient)
        case memory(MemoryJar)
    }

    /// An in-memory jar and its lock.
    private final class MemoryJar: Sendable {
        let lock: Locked<CookieJar>

        init(_ jar: CookieJar) { lock = Locked(jar) }

        func withLock<T>(_ body: (inout CookieJar) -> T) -> T { lock.withLock { body(&$0) } }
    }

    private let backend: Backend
    /// The last request URL and the last main-document URL, each parsed once for a run of
    /// lookups (one cache for both would parse each anew when they differ).
    private let recentURLs = RecentCookieURLs()
    private let recentMainDocumentURLs = RecentCookieURLs()

    /// The connection to keyjard; nil for a store kept in memory.
    public var sharedClient: KeyjarClient? {
        if case .shared(let client) = backend { return client }
        return nil
    }

    /// The connection to keyjard. Only for shared stores (see ``isEphemeral``).
    public var client: KeyjarClient {
        guard let sharedClient else { preconditionFailure("an in-memory cookie store has no keyjard client") }
        return sharedClient
    }

    /// True when the cookies live in this process's memory only.
    public var isEphemeral: Bool { sharedClient == nil }

    public init(client: KeyjarClient) {
        backend = .shared(client)
        client.addNotificationTarget(self, kind: .cookies, poster: KeyjarNotifications.poster)
    }

    private init(memory jar: CookieJar) {
        backend = .memory(MemoryJar(jar))
    }

    /// Connects to keyjard (starting it if needed).
    /// - Parameter fallbackToMemory: when keyjard cannot be reached, use a private in-memory
    ///   jar instead of throwing (cookies then are neither shared nor kept).
    public convenience init(
        configuration: KeyjarClient.Configuration = .init(),
        fallbackToMemory: Bool = false
    ) throws(KeyjarClientError) {
        do {
            self.init(client: try KeyjarClient(configuration: configuration))
        } catch {
            guard fallbackToMemory, error.code == .unreachable else { throw error }
            self.init(memory: CookieJar())
        }
    }

    /// Connects to keyjard as ``init(configuration:fallbackToMemory:)`` does, without holding a
    /// thread of the caller's meanwhile: connecting may start keyjard and wait for it (up to
    /// 10 s, or `KEYJAR_START_TIMEOUT`).
    public static func connect(
        configuration: KeyjarClient.Configuration = .init(),
        fallbackToMemory: Bool = false
    ) async throws(KeyjarClientError) -> SharedCookieStorage {
        try await awaitBlockingCall { () throws(KeyjarClientError) in
            try SharedCookieStorage(configuration: configuration, fallbackToMemory: fallbackToMemory)
        }
    }

    /// A store private to this process, in memory, never touching keyjard: the
    /// ephemeral-session case (`URLSessionConfiguration.ephemeral`).
    public static func ephemeral(policy: CookiePolicy = CookiePolicy()) -> SharedCookieStorage {
        SharedCookieStorage(memory: CookieJar(policy: policy))
    }

    /// Runs a lookup on the jar: the replica of a shared store, or the in-memory one.
    private func withJar<T>(_ body: (inout CookieJar) -> T) -> T {
        switch backend {
        case .shared(let client): return client.withReplica { $0.lookUp(body) }
        case .memory(let jar): return jar.withLock { body(&$0) }
        }
    }

    /// Stores each item in an in-memory jar; per item nil when stored, else why not (the
    /// wire's form, which the public calls turn into `CookieStoreOutcome`s).
    private func storeInMemory<Item>(
        _ jar: MemoryJar,
        _ items: [Item],
        _ store: (inout CookieJar, Item) -> Result<[CookieChange], CookieRejection>
    ) -> [String?] {
        var rejections: [CookieRejection?] = []
        changeMemory(jar) { jar in
            let result = jar.storeEach(items, store)
            rejections = result.rejections
            return result.changes
        }
        return rejections.map { $0?.description }
    }

    /// Applies a change to an in-memory store and announces it like keyjard's changes.
    private func changeMemory(_ jar: MemoryJar, _ body: (inout CookieJar) -> [CookieChange]) {
        let changes = jar.withLock { body(&$0) }
        guard !changes.isEmpty else { return }
        NotificationCenter.default.post(
            name: KeyjarNotifications.cookiesChanged,
            object: self,
            userInfo: [KeyjarNotifications.eventKey: SequencedEvent(sequence: 0, event: .cookies(changes: changes))]
        )
    }

    /// Every unexpired cookie.
    public var cookies: [Cookie] {
        let now = Date()
        return withJar { $0.allCookies.filter { !$0.isExpired(at: now) } }
    }

    /// The cookies that would go with a request to `url` (HTTP API, top-level), in header order.
    public func cookies(for url: URL) -> [Cookie] {
        guard let context = CookieContext(url: url) else { return [] }
        return withJar { $0.cookies(for: context) }
    }

    /// Every unexpired cookie, sorted by the given order.
    public func sortedCookies(by areInIncreasingOrder: (Cookie, Cookie) -> Bool) -> [Cookie] {
        cookies.sorted(by: areInIncreasingOrder)
    }

    /// The Cookie header value for a request from the replica (no socket round trip), or nil.
    public func cookieHeader(
        for url: URL,
        mainDocumentURL: URL? = nil,
        isTopLevelNavigation: Bool = true,
        httpMethod: String = "GET"
    ) -> String? {
        guard
            let context = context(
                url: url,
                mainDocumentURL: mainDocumentURL,
                isTopLevelNavigation: isTopLevelNavigation,
                httpMethod: httpMethod
            )
        else { return nil }
        return withJar { $0.cookieHeader(for: context) }
    }

    /// `CookieContext(url:mainDocumentURL:…)`, with the URLs parsed through the recent-URL caches.
    private func context(
        url: URL,
        mainDocumentURL: URL?,
        isTopLevelNavigation: Bool,
        httpMethod: String
    ) -> CookieContext? {
        guard let cookieURL = recentURLs.cookieURL(for: url) else { return nil }
        return CookieContext(
            url: cookieURL,
            siteForCookies: mainDocumentURL.flatMap(recentMainDocumentURLs.cookieURL(for:)),
            isTopLevelNavigation: isTopLevelNavigation,
            httpMethod: httpMethod
        )
    }

    /// Stores every Set-Cookie line of a response (one line each, never comma-joined) under the
    /// accept policy.
    /// - Returns: per line, whether it was stored or why not.
    @discardableResult
    public func storeCookies(
        fromResponseHeaders setCookieLines: [String],
        for url: URL,
        mainDocumentURL: URL?,
        isTopLevelNavigation: Bool = true,
        httpMethod: String = "GET"
    ) throws(KeyjarClientError) -> [CookieStoreOutcome] {
        try storeLines(
            setCookieLines,
            for: url,
            mainDocumentURL: mainDocumentURL,
            isTopLevelNavigation: isTopLevelNavigation,
            httpMethod: httpMethod
        ).map(CookieStoreOutcome.init)
    }

    /// `storeCookies(fromResponseHeaders:for:mainDocumentURL:isTopLevelNavigation:httpMethod:)`
    /// without holding a thread of the caller's while keyjard answers (or is reconnected to).
    @discardableResult
    public func storeCookies(
        fromResponseHeaders setCookieLines: [String],
        for url: URL,
        mainDocumentURL: URL?,
        isTopLevelNavigation: Bool = true,
        httpMethod: String = "GET"
    ) async throws(KeyjarClientError) -> [CookieStoreOutcome] {
        try await awaitBlockingCall { () throws(KeyjarClientError) in
            try self.storeCookies(
                fromResponseHeaders: setCookieLines,
                for: url,
                mainDocumentURL: mainDocumentURL,
                isTopLevelNavigation: isTopLevelNavigation,
                httpMethod: httpMethod
            )
        }
    }

    /// The lines' outcomes in the wire's form: nil when stored, else why not.
    private func storeLines(
        _ setCookieLines: [String],
        for url: URL,
        mainDocumentURL: URL?,
        isTopLevelNavigation: Bool,
        httpMethod: String
    ) throws(KeyjarClientError) -> [String?] {
        if case .memory(let jar) = backend {
            guard
                let context = context(
                    url: url,
                    mainDocumentURL: mainDocumentURL,
                    isTopLevelNavigation: isTopLevelNavigation,
                    httpMethod: httpMethod
                )
            else { throw KeyjarClientError(code: .refused, message: "'\(url)' is not a URL with a host") }
            return storeInMemory(jar, setCookieLines) { jar, line in jar.setCookie(line, context: context) }
        }
        return try client.storeCookies(
            setCookieLines,
            for: url,
            mainDocumentURL: mainDocumentURL,
            isTopLevelNavigation: isTopLevelNavigation,
            httpMethod: httpMethod
        ).map(\.rejectionReason)
    }

    /// Stores cookies received for `url` as `HTTPCookieStorage.setCookies(_:for:mainDocumentURL:)`
    /// does: under the accept policy and domain rules (a cookie the policy refuses is skipped,
    /// a session-only rule drops expiry), and only cookies whose domain matches `url`'s host.
    /// - Returns: per cookie, whether it was stored or why not.
    @discardableResult
    public func setCookies(
        _ cookies: [Cookie],
        for url: URL,
        mainDocumentURL: URL?
    ) throws(KeyjarClientError) -> [CookieStoreOutcome] {
        try setCookieValues(cookies, for: url, mainDocumentURL: mainDocumentURL).map(CookieStoreOutcome.init)
    }

    /// `setCookies(_:for:mainDocumentURL:)` without holding a thread of the caller's while
    /// keyjard answers.
    @discardableResult
    public func setCookies(
        _ cookies: [Cookie],
        for url: URL,
        mainDocumentURL: URL?
    ) async throws(KeyjarClientError) -> [CookieStoreOutcome] {
        try await awaitBlockingCall { () throws(KeyjarClientError) in
            try self.setCookies(cookies, for: url, mainDocumentURL: mainDocumentURL)
        }
    }

    private func setCookieValues(
        _ cookies: [Cookie],
        for url: URL,
        mainDocumentURL: URL?
    ) throws(KeyjarClientError) -> [String?] {
        guard let context = CookieContext(url: url, mainDocumentURL: mainDocumentURL) else {
            throw KeyjarClientError(code: .refused, message: "'\(url)' is not a URL with a host")
        }
        let (verdict, partitionedVerdict, partitionKey) = withJar { jar in
            (
                jar.policyVerdict(for: context), jar.policyVerdict(for: context, partitioned: true),
                jar.partitionKey(for: context)
            )
        }
        var outcomes: [String?] = Array(repeating: nil, count: cookies.count)
        var accepted: [(index: Int, cookie: Cookie)] = []
        for (index, original) in cookies.enumerated() {
            var cookie = original
            // A partitioned cookie set for this request belongs to its top-level site, whatever
            // key it was made with (`Cookie.cookies(withResponseHeaderFields:for:)` knows no
            // main document, so it gives the URL's own).
            if cookie.isPartitioned { cookie.partitionKey = partitionKey }
            guard
                cookie.hostOnly
                    ? cookie.domain == context.url.host : Host.domainMatches(context.url.host, cookie.domain)
            else {
                outcomes[index] =
                    CookieRejection.domainMismatch(domain: cookie.domain, host: context.url.host).description
                continue
            }
            switch Self.admit(cookie, cookie.isPartitioned ? partitionedVerdict : verdict) {
            case .failure(let rejection): outcomes[index] = rejection.description
            case .success(let admitted): accepted.append((index, admitted))
            }
        }
        guard !accepted.isEmpty else { return outcomes }
        let results = try insert(accepted.map(\.cookie))
        for (position, entry) in accepted.enumerated() where position < results.count {
            outcomes[entry.index] = results[position]
        }
        return outcomes
    }

    /// Inserts cookies built by a program; per cookie nil when stored, else why not.
    private func insert(_ cookies: [Cookie]) throws(KeyjarClientError) -> [String?] {
        if case .memory(let jar) = backend {
            return storeInMemory(jar, cookies) { jar, cookie in jar.insert(cookie) }
        }
        return try client.insertCookies(cookies).map(\.rejectionReason)
    }

    /// Stores one cookie as a program sets it, if the accept policy permits, as
    /// `HTTPCookieStorage.setCookie(_:)` does: `.never` refuses it, and so does a domain rule
    /// that blocks its domain (a session-only rule keeps it without its expiry). With no
    /// request, nothing is a third party: the other policies accept it.
    /// - Throws: `.refused` with the reason when the policy refuses the cookie or the cookie
    ///   itself is invalid (where Foundation drops it without a word).
    public func setCookie(_ cookie: Cookie) throws(KeyjarClientError) {
        let context = CookieContext(
            url: CookieURL(scheme: cookie.secure ? "https" : "http", host: cookie.domain, path: cookie.path)
        )
        let admitted: Cookie
        switch Self.admit(cookie, withJar { $0.policyVerdict(for: context) }) {
        case .failure(let rejection): throw KeyjarClientError(code: .refused, message: rejection.description)
        case .success(let cookie): admitted = cookie
        }
        if let reason = try insert([admitted]).first ?? nil { throw KeyjarClientError(code: .refused, message: reason) }
    }

    /// A cookie a program hands over, as the policy's verdict lets it be stored, or why not.
    private static func admit(_ cookie: Cookie, _ verdict: CookieJar.PolicyVerdict) -> Result<Cookie, CookieRejection> {
        switch verdict {
        case .reject(let rejection): return .failure(rejection)
        case .accept: return .success(cookie)
        case .acceptForSession:
            // Kept for the session only; an already-expired cookie still deletes.
            var cookie = cookie
            if let expires = cookie.expires, expires > Date() { cookie.expires = nil }
            return .success(cookie)
        }
    }

    /// `setCookie(_:)` without holding a thread of the caller's while keyjard answers.
    public func setCookie(_ cookie: Cookie) async throws(KeyjarClientError) {
        try await awaitBlockingCall { () throws(KeyjarClientError) in try self.setCookie(cookie) }
    }

    /// `deleteCookie(_:)` without holding a thread of the caller's while keyjard answers.
    public func deleteCookie(_ cookie: Cookie) async throws(KeyjarClientError) {
        try await awaitBlockingCall { () throws(KeyjarClientError) in try self.deleteCookie(cookie) }
    }

    public func deleteCookie(_ cookie: Cookie) throws(KeyjarClientError) {
        if case .memory(let jar) = backend {
            changeMemory(jar) { jar in jar.remove(cookie.identity).map { [$0] } ?? [] }
            return
        }
        try client.deleteCookies([cookie.identity])
    }

    /// Deletes the cookies created at or after `date`.
    public func removeCookies(since date: Date) throws(KeyjarClientError) {
        if case .memory(let jar) = backend {
            changeMemory(jar) { jar in jar.removeAll { $0.creation >= date } }
            return
        }
        try client.removeCookies(createdSince: date)
    }

    /// `removeCookies(since:)` without holding a thread of the caller's while keyjard answers.
    public func removeCookies(since date: Date) async throws(KeyjarClientError) {
        try await awaitBlockingCall { () throws(KeyjarClientError) in try self.removeCookies(since: date) }
    }

    /// The accept policy, from the replica.
    public var cookieAcceptPolicy: CookieAcceptPolicy { withJar { $0.policy.acceptPolicy } }

    /// The whole policy: global accept policy and per-domain rules.
    public var policy: CookiePolicy { withJar { $0.policy } }

    public func setCookieAcceptPolicy(_ acceptPolicy: CookieAcceptPolicy) throws(KeyjarClientError) {
        var policy = self.policy
        policy.acceptPolicy = acceptPolicy
        try setPolicy(policy)
    }

    /// Sets (or with nil removes) the rule for a domain and its subdomains.
    public func setDomainRule(_ action: CookieDomainAction?, for domain: String) throws(KeyjarClientError) {
        var policy = self.policy
        policy.domainRules[Host.canonicalDomain(domain)] = action
        try setPolicy(policy)
    }

    /// `setCookieAcceptPolicy(_:)` without holding a thread of the caller's while keyjard answers.
    public func setCookieAcceptPolicy(_ acceptPolicy: CookieAcceptPolicy) async throws(KeyjarClientError) {
        try await awaitBlockingCall { () throws(KeyjarClientError) in try self.setCookieAcceptPolicy(acceptPolicy) }
    }

    /// `setDomainRule(_:for:)` without holding a thread of the caller's while keyjard answers.
    public func setDomainRule(_ action: CookieDomainAction?, for domain: String) async throws(KeyjarClientError) {
        try await awaitBlockingCall { () throws(KeyjarClientError) in try self.setDomainRule(action, for: domain) }
    }

    private func setPolicy(_ policy: CookiePolicy) throws(KeyjarClientError) {
        if case .memory(let jar) = backend {
            jar.withLock { $0.policy = policy }
            NotificationCenter.default.post(name: KeyjarNotifications.acceptPolicyChanged, object: self)
            return
        }
        try client.setPolicy(policy)
    }
}
