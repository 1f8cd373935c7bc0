import Foundation
import FoundationNetworking
import Keyjar
import KeyjarCore
import KeyjarLoader
import KeyjarLocks
import KeyjarTestSupport
import Synchronization
import Testing

/// The challenge contract (message order, proposed credential, failure counts, didCancel,
/// connectionShouldUseCredentialStorage) and credentials answered by Keyjar's matching rule,
/// against real servers and a real keyjard.
@Suite(.timeLimit(hangLimit), .servicesStopCleanly)
struct CredentialContractTests {
    let server: LoaderTestServer
    init() async throws { server = try await LoaderTestServer() }

    private func loader(_ storage: (any URLCredentialStorage & Sendable)?, proxy: URL? = nil) -> URLLoader {
        URLLoader(configuration: .init(cookieStorage: .ephemeral(), credentialStorage: storage, proxy: proxy))
    }

    private func storage(_ daemon: some KeyjarService) throws -> SharedCredentialStorage {
        try SharedCredentialStorage(configuration: .init(socketPath: daemon.socketPath, autoStart: false))
    }

    // MARK: Message order

    @Test func aRefusedThenAcceptedCredentialHearsEachMessageInOrder() async throws {
        let url = server.url("/basic/order?key=o1")
        let delegate = ChallengeDelegate { seen in
            .use(user: "alice", password: seen.previousFailureCount == 0 ? "wrong" : "wonderland", persistence: .none)
        }
        _ = loader(nil).connection(with: URLRequest(url: url), delegate: delegate)
        #expect(await delegate.recorder.wait())
        #expect(
            delegate.recorder.events == [
                .willSend(url: url.absoluteString, redirectStatus: nil),
                .challenge(method: "HTTPBasic", failures: 0, proposed: nil),
                .challenge(method: "HTTPBasic", failures: 1, proposed: "alice"),
                .response(status: 200), .data(count: 13), .finished,
            ]
        )
        #expect(delegate.shouldUseAsked.load(ordering: .relaxed) == 0, "never asked of a willSendRequestFor delegate")
    }

    @Test func cancellingThroughTheSenderSendsDidCancelThenTheFailure() async throws {
        let url = server.url("/basic/order?key=o2")
        let delegate = ChallengeDelegate { _ in .cancel }
        _ = loader(nil).connection(with: URLRequest(url: url), delegate: delegate)
        #expect(await delegate.recorder.wait())
        #expect(
            delegate.recorder.events == [
                .willSend(url: url.absoluteString, redirectStatus: nil),
                .challenge(method: "HTTPBasic", failures: 0, proposed: nil),
                .challengeCancelled, .failed(code: URLError.Code.userCancelledAuthentication.rawValue),
            ]
        )
    }

    @Test func cancellingTheConnectionCancelsTheChallengeItHolds() async throws {
        let delegate = ChallengeDelegate { _ in .hold }
        let connection = loader(nil).connection(
            with: URLRequest(url: server.url("/basic/order?key=o3")),
            delegate: delegate
        )
        #expect(await eventually { !delegate.challenges.isEmpty })
        connection.cancel()
        #expect(await eventually { delegate.recorder.events.last == .challengeCancelled })
        // Nothing else: no failure after cancel(), and a late answer is ignored.
        delegate.held.withLock { $0.first }?.sender?.use(
            URLCredential(user: "alice", password: "wonderland", persistence: .none),
            for: try #require(delegate.held.withLock { $0.first })
        )
        // A window in which nothing more may happen: a busy machine can only delay a wrong
        // late event past it (the test then passes this once), never make one up.
        try await Task.sleep(for: .milliseconds(200))
        #expect(
            delegate.recorder.events.map(\.description).suffix(2) == [
                "challenge(HTTPBasic, 0, nil)", "challengeCancelled",
            ]
        )
        #expect(try server.count("401:o3") == 1)
    }

    @Test func anOlderStyleDelegateIsAskedAboutStorageOnceBeforeTheLoad() async throws {
        let daemon = try await InProcessServer.withSecretService()
        let shared = try storage(daemon)
        let url = server.url("/basic/legacy?key=o4&user=carol")
        // Two challenges (the stored alice fails first), one question.
        let wrong = URLProtectionSpace(
            host: "127.0.0.1",
            port: server.port,
            protocol: "http",
            realm: "keyjar-test",
            authenticationMethod: NSURLAuthenticationMethodHTTPBasic
        )
        try await shared.store(
            URLCredential(user: "alice", password: "wonderland", persistence: .permanent),
            for: wrong
        )
        let delegate = LegacyDelegate(canAuthenticate: true, user: "carol")
        _ = loader(shared).connection(with: URLRequest(url: url), delegate: delegate)
        #expect(await delegate.recorder.wait())
        #expect(
            delegate.recorder.events == [
                .willSend(url: url.absoluteString, redirectStatus: nil), .shouldUseCredentialStorage,
                .challenge(method: "HTTPBasic", failures: 1, proposed: "alice"),
                .response(status: 200), .data(count: 13), .finished,
            ]
        )
    }

    // MARK: Persistence

    @Test func aSessionCredentialIsSharedByEveryLoaderOfTheProcessAndSentPreemptively() async throws {
        let daemon = try await InProcessServer.withSecretService()
        let first = loader(try storage(daemon))
        let delegate = ChallengeDelegate { _ in .use(user: "alice", password: "wonderland", persistence: .forSession) }
        _ = first.connection(with: URLRequest(url: server.url("/basic/session/a?key=s1")), delegate: delegate)
        #expect(await delegate.recorder.wait())
        #expect(delegate.recorder.body == "welcome alice")

        // The same loader sends it at once under that directory: stored, so replayed.
        let again = ChallengeDelegate { _ in .cancel }
        _ = first.connection(with: URLRequest(url: server.url("/basic/session/b?key=s2")), delegate: again)
        #expect(await again.recorder.wait())
        #expect(again.recorder.body == "welcome alice")
        #expect(try server.count("401:s2") == 0)

        // Another loader with another storage object of this process answers it unasked.
        let other = loader(try storage(daemon))
        let unasked = ChallengeDelegate { _ in .cancel }
        _ = other.connection(with: URLRequest(url: server.url("/basic/session/c?key=s3")), delegate: unasked)
        #expect(await unasked.recorder.wait())
        #expect(unasked.recorder.body == "welcome alice")
        #expect(unasked.challenges.isEmpty)
        #expect(try server.count("401:s3") == 1)
        // Never written to keyjard.
        #expect(try storage(daemon).permanentCredentials.isEmpty)
    }

    /// `connectionShouldUseCredentialStorage` false: a Basic credential the loader kept is not
    /// sent pre-emptively either, so the delegate hears the challenge.
    @Test func aDelegateThatRefusesTheStorageIsNotSentAKeptCredential() async throws {
        let daemon = try await InProcessServer.withSecretService()
        let shared = loader(try storage(daemon))
        let keeping = ChallengeDelegate { _ in .use(user: "alice", password: "wonderland", persistence: .forSession) }
        _ = shared.connection(with: URLRequest(url: server.url("/basic/kept/a?key=k1")), delegate: keeping)
        #expect(await keeping.recorder.wait())
        #expect(keeping.recorder.body == "welcome alice")

        let url = server.url("/basic/kept/b?key=k2")
        let refusing = LegacyDelegate(canAuthenticate: true, storageAllowed: false)
        _ = shared.connection(with: URLRequest(url: url), delegate: refusing)
        #expect(await refusing.recorder.wait())
        #expect(
            refusing.recorder.events == [
                .willSend(url: url.absoluteString, redirectStatus: nil), .shouldUseCredentialStorage,
                .challenge(method: "HTTPBasic", failures: 0, proposed: nil),
                .response(status: 200), .data(count: 13), .finished,
            ]
        )
        #expect(try server.count("401:k2") == 1)

        // A delegate that allows it is sent it at once, as before.
        let allowing = LegacyDelegate(canAuthenticate: true, storageAllowed: true)
        _ = shared.connection(with: URLRequest(url: server.url("/basic/kept/c?key=k3")), delegate: allowing)
        #expect(await allowing.recorder.wait())
        #expect(allowing.challenges.isEmpty)
        #expect(try server.count("401:k3") == 0)
    }

    // MARK: Matching

    @Test func aCredentialStoredForTheServerAnswersBasicAndDigestOnRealmsItNeverNamed() async throws {
        let daemon = try await InProcessServer.withSecretService()
        let shared = try storage(daemon)
        let lighttpd = try await LighttpdServer()
        for port in [server.port, lighttpd.port] {
            let perServer = URLProtectionSpace(
                host: "127.0.0.1",
                port: port,
                protocol: "http",
                realm: nil,
                authenticationMethod: NSURLAuthenticationMethodDefault
            )
            try await shared.store(
                URLCredential(user: "alice", password: "wonderland", persistence: .permanent),
                for: perServer
            )
        }
        let cases = [
            (server.url("/basic/m?key=m1&realm=Team%20Area"), "welcome alice"),
            (lighttpd.url("/digest/index.txt"), "secret page\n"),
            (lighttpd.url("/digest-md5/index.txt"), "secret page\n"),
        ]
        for (url, body) in cases {
            let delegate = ChallengeDelegate { _ in .cancel }
            _ = loader(shared).connection(with: URLRequest(url: url), delegate: delegate)
            #expect(await delegate.recorder.wait())
            #expect(delegate.recorder.body == body, "\(url)")
            #expect(delegate.challenges.isEmpty, "\(url): answered from the store without asking")
        }
    }

    @Test func severalUsersWithoutADefaultAskTheDelegateProposingTheMostSpecific() async throws {
        let daemon = try await InProcessServer.withSecretService()
        let shared = try storage(daemon)
        let perServer = URLProtectionSpace(
            host: "127.0.0.1",
            port: server.port,
            protocol: "http",
            realm: nil,
            authenticationMethod: NSURLAuthenticationMethodDefault
        )
        let realm = URLProtectionSpace(
            host: "127.0.0.1",
            port: server.port,
            protocol: "http",
            realm: "keyjar-test",
            authenticationMethod: NSURLAuthenticationMethodDefault
        )
        // A space keeps no default once its default is removed: zed and yan are left, each
        // alone in a space that has no default.
        for (space, gone, left) in [(perServer, "bob", "zed"), (realm, "alice", "yan")] {
            try await shared.store(URLCredential(user: gone, password: "x", persistence: .permanent), for: space)
            try await shared.store(URLCredential(user: left, password: "x", persistence: .permanent), for: space)
            try await shared.removeCredential(user: gone, for: space)
        }
        #expect(shared.permanentCredentials.map(\.user).sorted() == ["yan", "zed"])
        #expect(shared.permanentCredentials.filter(\.isDefault).isEmpty)

        let delegate = ChallengeDelegate { _ in .performDefault }
        _ = loader(shared).connection(with: URLRequest(url: server.url("/basic/n?key=n1")), delegate: delegate)
        #expect(await delegate.recorder.wait())
        // yan's space (same realm, any method) is more specific than zed's (the whole server).
        #expect(delegate.challenges.map(\.proposedUser) == ["yan"])
        // Default handling with nothing that answers unasked: the 401.
        #expect(delegate.recorder.lastResponse?.statusCode == 401)
        #expect(try server.count("401:n1") == 1)
    }

    @Test func aProxyChallengeIsAnsweredByTheStoredProxyCredential() async throws {
        let daemon = try await InProcessServer.withSecretService()
        let shared = try storage(daemon)
        let proxy = try await TinyproxyServer()
        let proxySpace = URLProtectionSpace(
            proxyHost: "127.0.0.1",
            port: proxy.port,
            type: "HTTP",
            realm: nil,
            authenticationMethod: NSURLAuthenticationMethodDefault
        )
        try await shared.store(
            URLCredential(user: "proxy", password: "secret", persistence: .permanent),
            for: proxySpace
        )
        let delegate = ChallengeDelegate { _ in .cancel }
        _ = loader(shared, proxy: proxy.url).connection(with: URLRequest(url: server.url("/hello")), delegate: delegate)
        #expect(await delegate.recorder.wait())
        #expect(delegate.recorder.body == "hello world")
        #expect(delegate.recorder.lastResponse?.value(forHTTPHeaderField: "Via")?.contains(TinyproxyServer.via) == true)
        #expect(delegate.challenges.isEmpty)
    }

    // MARK: Failures

    @Test func failuresCarryBothOfFoundationsFailingURLKeys() async throws {
        let url = server.url("/basic/f?key=f1")
        let delegate = ChallengeDelegate { _ in .cancel }
        _ = loader(nil).connection(with: URLRequest(url: url), delegate: delegate)
        #expect(await delegate.recorder.wait())
        let info = try #require(delegate.recorder.error).userInfo
        #expect(info[NSURLErrorFailingURLErrorKey] as? URL == url)
        #expect(info["NSErrorFailingURLStringKey"] as? String == url.absoluteString)
    }
}
