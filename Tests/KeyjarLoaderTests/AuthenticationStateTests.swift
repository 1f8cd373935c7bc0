import Foundation
import FoundationNetworking
import KeyjarAuth
import KeyjarCore
import Testing

@testable import KeyjarLoader
@testable import KeyjarTransfer

/// What a load knows about authentication across its attempts, without a load: refusals and
/// what the next challenge proposes, what was tried once, a token refresh in flight, what a
/// redirect, a success and another proxy leave.
@Suite("Authentication state")
struct AuthenticationStateTests {
    static let space = ProtectionSpace(host: "example.com", protocol: "https", realm: "r")
    static let alice = URLCredential(user: "alice", password: "a", persistence: .forSession)
    static let bob = URLCredential(user: "bob", password: "b", persistence: .forSession)

    static func inUse(_ credential: URLCredential) -> AuthenticationState.InUse {
        .init(space: space, credential: credential, source: .storage, scheme: .basic, basicHeader: "Basic x")
    }

    @Test func aRefusedCredentialCountsAndIsProposedNext() {
        var state = AuthenticationState()
        #expect(state.failureCount(in: Self.space) == 0 && state.lastFailed[Self.space] == nil)
        state.use(Self.inUse(Self.alice), for: .server)
        state.refusedInUse(for: .server)
        #expect(state.inUse[.server] == nil)
        #expect(state.failureCount(in: Self.space) == 1 && state.lastFailed[Self.space]?.user == "alice")
        // Nothing in use: nothing more is counted.
        state.refusedInUse(for: .server)
        #expect(state.failureCount(in: Self.space) == 1)
        state.refused(Self.bob, in: Self.space)
        #expect(state.failureCount(in: Self.space) == 2 && state.lastFailed[Self.space]?.user == "bob")
        let other = ProtectionSpace(host: "example.org", protocol: "https")
        #expect(state.failureCount(in: other) == 0)
    }

    @Test func eachSourceIsTriedOncePerSpace() {
        var state = AuthenticationState()
        #expect(!state.hasTriedURLCredential(in: Self.space) && !state.hasTriedStoredCredential(in: Self.space))
        state.triedURLCredential(in: Self.space)
        #expect(state.hasTriedURLCredential(in: Self.space) && !state.hasTriedStoredCredential(in: Self.space))
        state.triedStoredCredential(in: Self.space)
        #expect(state.hasTriedStoredCredential(in: Self.space))
        #expect(!state.hasTriedStoredCredential(in: ProtectionSpace(host: "example.com", protocol: "https")))
    }

    /// A refresh counts as the stored credential's try, happens once per space, and its
    /// retry is taken once.
    @Test func aTokenRefreshIsOncePerSpaceAndItsRetryTakenOnce() throws {
        var state = AuthenticationState()
        let empty = state.takePendingRefresh()
        #expect(empty == nil)
        let url = URL(string: "https://example.com/")!
        let response = try #require(HTTPURLResponse(url: url, statusCode: 401, httpVersion: nil, headerFields: nil))
        let head = ResponseHead(statusCode: 401, httpVersion: "HTTP/1.1", fields: [])
        let context = HTTPChallengeContext(
            head: head,
            response: response,
            body: Data(),
            target: .server,
            candidates: [],
            index: 0
        )
        state.refreshStarted(space: Self.space, user: "token", context: context)
        #expect(state.hasRefreshedToken(in: Self.space) && state.hasTriedStoredCredential(in: Self.space))
        let pending = state.takePendingRefresh()
        #expect(pending?.user == "token" && pending?.space == Self.space)
        let again = state.takePendingRefresh()
        #expect(again == nil)
        #expect(state.hasRefreshedToken(in: Self.space), "still refreshed: not again in this load")
    }

    /// A success sends nothing computed again but keeps what failed; a redirect drops the
    /// server's answer and keeps the proxy's.
    @Test func aSuccessAndARedirectDropWhatTheyShould() {
        var state = AuthenticationState()
        state.refused(Self.bob, in: Self.space)
        state.use(Self.inUse(Self.alice), for: .server)
        state.send("Basic YWxpY2U6YQ==", for: .server)
        state.send("Basic cHJveHk=", for: .proxy)
        state.use(Self.inUse(Self.alice), for: .proxy)
        state.answerServerThroughCurl(scheme: 8, user: "alice", password: "a")
        state.redirected()
        #expect(state.headers == ["Proxy-Authorization": "Basic cHJveHk="])
        #expect(state.curlServerAuthentication == nil && state.inUse[.server] == nil && state.inUse[.proxy] != nil)
        state.succeeded()
        #expect(state.headers.isEmpty && state.inUse.isEmpty)
        #expect(state.failureCount(in: Self.space) == 1, "what failed is still known")
    }

    /// A proxy's answer goes to that proxy only: asked for through another, it is forgotten.
    @Test func aProxyAnswerGoesToItsProxyOnly() throws {
        let first = try #require(ProxyAddress(configured: URL(string: "http://proxy.example:3128"), for: nil))
        let second = try #require(ProxyAddress(configured: URL(string: "http://other.example:3128"), for: nil))
        var state = AuthenticationState()
        let none = state.proxyCredential { first }
        #expect(none == nil)
        state.answerProxy(.init(scheme: 1, user: "p", password: "pw", proxy: first))
        state.use(Self.inUse(Self.alice), for: .proxy)
        let answered = state.proxyCredential { first }
        #expect(answered?.user == "p" && answered?.password == "pw")
        let elsewhere = state.proxyCredential { second }
        #expect(elsewhere == nil && state.inUse[.proxy] == nil)
        let forgotten = state.proxyCredential { first }
        #expect(forgotten == nil)
    }
}
