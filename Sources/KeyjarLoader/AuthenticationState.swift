import Foundation
import FoundationNetworking
import KeyjarAuth
import KeyjarCore
import KeyjarDigest

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

/// What a connection knows about authentication across its attempts.
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
    var headers: [String: String] = [:]
    var curlServerAuthentication: (scheme: Int, user: String, password: String)?
    private var proxyAnswer: ProxyAnswer?
    var inUse: [AuthorizationTarget: InUse] = [:]
    var failures: [ProtectionSpace: Int] = [:]
    /// The credential that failed last in each space: the next challenge proposes it.
    var lastFailed: [ProtectionSpace: URLCredential] = [:]
    var triedURLCredential: Set<ProtectionSpace> = []
    var triedStoredCredential: Set<ProtectionSpace> = []
    var digestSessions: [ProtectionSpace: DigestSession] = [:]
    /// Spaces whose stored token this load refreshed (or saw refreshed): once per load, so a
    /// server that refuses every token cannot make it refresh in a loop.
    var refreshedTokens: Set<ProtectionSpace> = []
    var pendingRefresh: PendingRefresh?

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
