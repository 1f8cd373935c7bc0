import Foundation
import FoundationNetworking
import KeyjarAuth
import KeyjarCore
import KeyjarDigest
import KeyjarTransfer

/// A 401 or 407 being answered: the response to deliver if nobody answers, and the
/// challenges it offered, strongest first.
struct HTTPChallengeContext {
    let head: ResponseHead
    let response: HTTPURLResponse
    let body: Data
    let target: AuthorizationTarget
    let candidates: [SelectedChallenge]
    /// Which candidate is being asked about (`rejectProtectionSpaceAndContinue` moves on).
    var index: Int

    var selected: SelectedChallenge { candidates[index] }
}

/// What a connection knows about authentication across its attempts: what each attempt sends,
/// the credential in use for the server and the proxy, what failed and what was tried in each
/// space, Digest sessions, token refreshes. The connection's HTTP, TLS and token-refresh steps
/// change it only through these methods (its fields are read-only outside), so that a rule —
/// a refused credential counts as a failure and is proposed next, a space's stored credential
/// is tried once — is written here once. `AuthenticationStateTests` drives it without a load.
struct AuthenticationState {
    /// Where a credential came from; a failed one is not offered again from the same place.
    enum Source { case url, storage, delegate, preemptive }

    struct InUse {
        var space: ProtectionSpace
        var credential: URLCredential
        var source: Source
        var scheme: AuthenticationScheme
        /// The Basic or Bearer header, kept to send pre-emptively once it worked.
        var basicHeader: String?
    }

    /// A refresh of a stored token in flight (off the connection's work): where to retry
    /// with the token it brings.
    struct PendingRefresh {
        var space: ProtectionSpace
        var user: String
        var context: HTTPChallengeContext
    }

    /// A proxy's credential for libcurl, with the proxy it answered: it goes to that proxy
    /// only, never to another one a redirect's URL is sent through.
    struct ProxyAnswer {
        var scheme: Int
        var user: String
        var password: String
        var proxy: ProxyAddress

        var curl: (scheme: Int, user: String, password: String) { (scheme, user, password) }
    }

    /// Header lines to send on the next attempt (Authorization / Proxy-Authorization).
    private(set) var headers: [String: String] = [:]
    /// NTLM or Negotiate, which libcurl answers for the server.
    private(set) var curlServerAuthentication: (scheme: Int, user: String, password: String)?
    private var proxyAnswer: ProxyAnswer?
    private(set) var inUse: [AuthorizationTarget: InUse] = [:]
    private var failures: [ProtectionSpace: Int] = [:]
    /// The credential that failed last in each space: the next challenge proposes it.
    private(set) var lastFailed: [ProtectionSpace: URLCredential] = [:]
    private var triedURLCredential: Set<ProtectionSpace> = []
    private var triedStoredCredential: Set<ProtectionSpace> = []
    private(set) var digestSessions: [ProtectionSpace: DigestSession] = [:]
    /// Spaces whose stored token this load refreshed (or saw refreshed): once per load, so a
    /// server that refuses every token cannot make it refresh in a loop.
    private var refreshedTokens: Set<ProtectionSpace> = []
    private var pendingRefresh: PendingRefresh?

    /// How often a credential for `space` was refused in this load.
    func failureCount(in space: ProtectionSpace) -> Int { failures[space, default: 0] }

    /// Whether the credential in the request's URL was tried for `space`.
    func hasTriedURLCredential(in space: ProtectionSpace) -> Bool { triedURLCredential.contains(space) }

    /// Whether the storage's credential for `space` was tried (sent, or refreshed).
    func hasTriedStoredCredential(in space: ProtectionSpace) -> Bool { triedStoredCredential.contains(space) }

    /// Whether this load refreshed the stored token of `space` (or saw it refreshed).
    func hasRefreshedToken(in space: ProtectionSpace) -> Bool { refreshedTokens.contains(space) }

    mutating func triedURLCredential(in space: ProtectionSpace) { triedURLCredential.insert(space) }

    mutating func triedStoredCredential(in space: ProtectionSpace) { triedStoredCredential.insert(space) }

    /// `credential` was refused in `space`: one failure more, and the next challenge there
    /// proposes it.
    mutating func refused(_ credential: URLCredential, in space: ProtectionSpace) {
        failures[space, default: 0] += 1
        lastFailed[space] = credential
    }

    /// The credential in use for `target` was refused: counted, and no longer in use.
    mutating func refusedInUse(for target: AuthorizationTarget) {
        guard let previous = inUse.removeValue(forKey: target) else { return }
        refused(previous.credential, in: previous.space)
    }

    /// `credential` goes with the next attempt for `target`.
    mutating func use(_ credential: InUse, for target: AuthorizationTarget) { inUse[target] = credential }

    /// `value` is the Authorization (or Proxy-Authorization) header of the next attempts.
    mutating func send(_ value: String, for target: AuthorizationTarget) { headers[target.headerName] = value }

    /// libcurl answers the server's NTLM or Negotiate challenge with this credential.
    mutating func answerServerThroughCurl(scheme: Int, user: String, password: String) {
        curlServerAuthentication = (scheme, user, password)
    }

    mutating func keep(_ session: DigestSession, for space: ProtectionSpace) { digestSessions[space] = session }

    /// The load got past authentication: nothing computed is sent again (a kept credential
    /// goes pre-emptively from the loader's memory).
    mutating func succeeded() {
        inUse = [:]
        headers = [:]
    }

    /// A refresh of the stored token of `space` starts (once per load; the stored credential
    /// counts as tried): `context` is retried with the token it brings.
    mutating func refreshStarted(space: ProtectionSpace, user: String, context: HTTPChallengeContext) {
        refreshedTokens.insert(space)
        triedStoredCredential.insert(space)
        pendingRefresh = PendingRefresh(space: space, user: user, context: context)
    }

    /// The refresh in flight ended: where to retry (once); nil when none was.
    mutating func takePendingRefresh() -> PendingRefresh? {
        defer { pendingRefresh = nil }
        return pendingRefresh
    }

    /// A redirect is a new request: computed headers do not follow it (the next hop gets
    /// pre-emptive Basic if its space is known).
    mutating func redirected() {
        headers[AuthorizationTarget.server.headerName] = nil
        curlServerAuthentication = nil
        inUse[.server] = nil
    }

    mutating func answerProxy(_ answer: ProxyAnswer) { proxyAnswer = answer }

    /// The proxy credential for a request sent through `proxy` (asked only when there is one:
    /// finding the proxy reads the environment): the one that answered that proxy, else none
    /// (and the answer for another proxy is forgotten, as curl forgets it).
    mutating func proxyCredential(
        for proxy: () -> ProxyAddress?
    ) -> (scheme: Int, user: String, password: String)? {
        guard let answer = proxyAnswer else { return nil }
        guard answer.proxy == proxy() else {
            proxyAnswer = nil
            inUse[.proxy] = nil
            return nil
        }
        return answer.curl
    }
}

/// Which proxy a request goes through, as a proxy's protection space names it: its type, host
/// and port.
struct ProxyAddress: Hashable {
    var type: ProtectionSpace.ProxyType
    var host: String
    var port: Int?

    /// The loader's proxy, else the one libcurl picks from the environment for `url`.
    init?(configured: URL?, for url: URL?) {
        guard let proxy = configured ?? ProxyEnvironment.proxy(for: url), let host = proxy.host else { return nil }
        self.type =
            switch proxy.scheme?.lowercased() {
            case "https": .https
            case "socks", "socks4", "socks5", "socks5h": .socks
            default: .http
            }
        self.host = host.lowercased()
        self.port = proxy.port
    }
}
