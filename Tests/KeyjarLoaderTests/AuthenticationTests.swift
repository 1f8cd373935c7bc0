import Foundation
import FoundationNetworking
import Keyjar
import KeyjarAuth
import KeyjarCore
import KeyjarTestSupport
import Synchronization
import Testing

@testable import KeyjarLoader

@Suite(
    "KeyjarLoader: challenges answered from the URL, the shared store and the delegate",
    .timeLimit(hangLimit),
    .servicesStopCleanly
)
struct AuthenticationTests {
    let server: LoaderTestServer
    init() async throws { server = try await LoaderTestServer() }

    /// A loader whose credential storage is process-local (Foundation's own class).
    private func loader(storage: (any URLCredentialStorage & Sendable)? = nil, proxy: URL? = nil) -> URLLoader {
        URLLoader(configuration: .init(cookieStorage: .ephemeral(), credentialStorage: storage, proxy: proxy))
    }

    @Test func urlCredentialsAnswerAChallengeAndWrongOnesDeliverThe401() async throws {
        let good = await load(
            URLRequest(url: URL(string: "http://alice:wonderland@127.0.0.1:\(server.port)/basic/url?key=u1")!),
            with: loader()
        )
        #expect(good.body == "welcome alice")
        let bad = await load(
            URLRequest(url: URL(string: "http://alice:nope@127.0.0.1:\(server.port)/basic/url?key=u2")!),
            with: loader()
        )
        #expect(bad.lastResponse?.statusCode == 401)
        #expect(bad.body == "who are you")
        #expect(bad.events.last == .finished)
    }

    @Test func theDelegateAnswersCountsFailuresAndANoneCredentialIsNeverReplayed() async throws {
        let loader = loader()
        let delegate = ChallengeDelegate { seen in
            seen.previousFailureCount == 0
                ? .use(user: "alice", password: "wrong", persistence: .none)
                : .use(user: "alice", password: "wonderland", persistence: .none)
        }
        _ = loader.connection(with: URLRequest(url: server.url("/basic/area/one?key=p1")), delegate: delegate)
        #expect(await delegate.recorder.wait())
        #expect(delegate.recorder.body == "welcome alice")
        let seen = delegate.challenges
        #expect(seen.map(\.previousFailureCount) == [0, 1])
        // The second challenge proposes the credential that just failed.
        #expect(seen.map(\.proposedUser) == [nil, "alice"])
        #expect(seen.first?.method == NSURLAuthenticationMethodHTTPBasic)
        #expect(seen.first?.realm == "keyjar-test")
        #expect(seen.first?.failureStatus == 401)
        #expect(try server.count("401:p1") == 2)

        // Same directory, later: a `.none` credential answered its challenge only; it is not
        // sent pre-emptively, and the delegate is asked again.
        let later = ChallengeDelegate { _ in .cancel }
        _ = loader.connection(with: URLRequest(url: server.url("/basic/area/two?key=p2")), delegate: later)
        #expect(await later.recorder.wait())
        #expect(later.recorder.error?.code == .userCancelledAuthentication)
        #expect(later.challenges.map(\.previousFailureCount) == [0])
        #expect(try server.count("401:p2") == 1)
    }

    /// A synchronous load answers its 401 on the caller's thread, which drives libcurl: the
    /// retry it posts must go out at once, not after the driver's next idle wait (60 s).
    @Test func synchronousLoadsRetryAChallengeAtOnce() throws {
        let loader = loader()
        for round in 0..<5 {
            let url = URL(string: "http://alice:wonderland@127.0.0.1:\(server.port)/basic/sync?key=y\(round)")!
            var request = URLRequest(url: url)
            // A stalled retry fails the load instead of hanging the test.
            request.timeoutInterval = 20
            let (data, response) = try loader.sendSynchronousRequest(request)
            #expect((response as? HTTPURLResponse)?.statusCode == 200)
            #expect(String(decoding: data, as: UTF8.self) == "welcome alice")
        }
        #expect(try server.count("401:y4") == 1)
    }

    @Test func everyDispositionDoesWhatItSays() async throws {
        let cancelled = ChallengeDelegate { _ in .cancel }
        _ = loader().connection(with: URLRequest(url: server.url("/basic/d?key=d1")), delegate: cancelled)
        #expect(await cancelled.recorder.wait())
        #expect(cancelled.recorder.error?.code == .userCancelledAuthentication)

        let without = ChallengeDelegate { _ in .continueWithout }
        _ = loader().connection(with: URLRequest(url: server.url("/basic/d?key=d2")), delegate: without)
        #expect(await without.recorder.wait())
        #expect(without.recorder.lastResponse?.statusCode == 401)
        #expect(without.recorder.body == "who are you")

        // Default handling with nothing stored: the 401 is the answer.
        let byDefault = ChallengeDelegate { _ in .performDefault }
        _ = loader().connection(with: URLRequest(url: server.url("/basic/d?key=d3")), delegate: byDefault)
        #expect(await byDefault.recorder.wait())
        #expect(byDefault.recorder.lastResponse?.statusCode == 401)

        // Rejecting the strongest space (Digest, realm "other") moves on to Basic.
        let rejecting = ChallengeDelegate { seen in
            seen.method == NSURLAuthenticationMethodHTTPDigest
                ? .reject : .use(user: "alice", password: "wonderland", persistence: .none)
        }
        _ = loader().connection(with: URLRequest(url: server.url("/basic/d?key=d4&also-digest=1")), delegate: rejecting)
        #expect(await rejecting.recorder.wait())
        #expect(
            rejecting.challenges.map(\.method) == [
                NSURLAuthenticationMethodHTTPDigest, NSURLAuthenticationMethodHTTPBasic,
            ]
        )
        #expect(rejecting.challenges.map(\.realm) == ["other", "keyjar-test"])
        #expect(rejecting.recorder.body == "welcome alice")
    }

    @Test func theOlderTrioIsAskedAndItsDefaultsFollowApple() async throws {
        let willing = LegacyDelegate(canAuthenticate: true)
        _ = loader().connection(with: URLRequest(url: server.url("/basic/l?key=l1")), delegate: willing)
        #expect(await willing.recorder.wait())
        #expect(willing.received.load(ordering: .relaxed) == 1)
        #expect(willing.recorder.body == "welcome alice")

        let unwilling = LegacyDelegate(canAuthenticate: false)
        _ = loader().connection(with: URLRequest(url: server.url("/basic/l?key=l2")), delegate: unwilling)
        #expect(await unwilling.recorder.wait())
        #expect(unwilling.received.load(ordering: .relaxed) == 0)
        #expect(unwilling.recorder.lastResponse?.statusCode == 401)
    }

    @Test func storedCredentialsComeFromKeyjardAndDelegateCredentialsAreKeptByPersistence() async throws {
        let daemon = try await InProcessServer.withSecretService()
        let configuration = KeyjarClient.Configuration(socketPath: daemon.socketPath, autoStart: false)
        let storage = try SharedCredentialStorage(configuration: configuration)
        let space = URLProtectionSpace(
            host: "127.0.0.1",
            port: server.port,
            protocol: "http",
            realm: "keyjar-test",
            authenticationMethod: NSURLAuthenticationMethodHTTPBasic
        )

        // 1. The delegate answers with a permanent credential: it lands in keyjard.
        let asking = ChallengeDelegate { _ in .use(user: "alice", password: "wonderland", persistence: .permanent) }
        _ = loader(storage: storage).connection(with: URLRequest(url: server.url("/basic/s?key=s1")), delegate: asking)
        #expect(await asking.recorder.wait())
        #expect(asking.recorder.body == "welcome alice")
        let other = try SharedCredentialStorage(configuration: configuration)
        #expect(await eventually { other.defaultCredential(for: space)?.user == "alice" })

        // 2. Another loader (another process's view) is answered from keyjard without asking.
        let silent = ChallengeDelegate { _ in .cancel }
        _ = loader(storage: other).connection(with: URLRequest(url: server.url("/basic/s?key=s2")), delegate: silent)
        #expect(await silent.recorder.wait())
        #expect(silent.recorder.body == "welcome alice")
        #expect(silent.challenges.isEmpty)

        // 3. An older-style delegate that forbids storage is asked instead of alice's stored
        //    credential answering, with nothing proposed (the storage is not read), and its
        //    permanent answer is not written.
        let noStorage = LegacyDelegate(
            canAuthenticate: true,
            storageAllowed: false,
            persistence: .permanent,
            user: "carol"
        )
        _ = loader(storage: other).connection(
            with: URLRequest(url: server.url("/basic/s?key=s3&user=carol")),
            delegate: noStorage
        )
        #expect(await noStorage.recorder.wait())
        #expect(noStorage.recorder.body == "welcome carol")
        #expect(noStorage.challenges.map(\.proposedUser) == [nil])
        #expect(noStorage.recorder.events.filter { $0 == .shouldUseCredentialStorage }.count == 1)
        #expect(!other.permanentCredentials.contains { $0.user == "carol" })

        // 4. A stored credential that fails is not offered again by default handling.
        let wrongSpace = URLProtectionSpace(
            host: "127.0.0.1",
            port: server.port,
            protocol: "http",
            realm: "wrong-realm",
            authenticationMethod: NSURLAuthenticationMethodHTTPBasic
        )
        try await storage.store(
            URLCredential(user: "alice", password: "stale", persistence: .permanent),
            for: wrongSpace,
            makeDefault: true
        )
        #expect(await eventually { other.defaultCredential(for: wrongSpace) != nil })
        let failing = ChallengeDelegate { _ in .performDefault }
        _ = loader(storage: other).connection(
            with: URLRequest(url: server.url("/basic/s?key=s4&realm=wrong-realm")),
            delegate: failing
        )
        #expect(await failing.recorder.wait())
        #expect(failing.recorder.lastResponse?.statusCode == 401)
        #expect(failing.challenges.map(\.previousFailureCount) == [1])
        #expect(try server.count("401:s4") == 2)
    }

    @Test func digestAgainstLighttpdWithSHA256AndMD5() async throws {
        let lighttpd = try await LighttpdServer()
        for path in ["/digest/index.txt", "/digest-md5/index.txt"] {
            let delegate = ChallengeDelegate { _ in .use(user: "alice", password: "wonderland", persistence: .none) }
            _ = loader().connection(with: URLRequest(url: lighttpd.url(path)), delegate: delegate)
            #expect(await delegate.recorder.wait())
            #expect(delegate.recorder.lastResponse?.statusCode == 200, "\(path)")
            #expect(delegate.recorder.body == "secret page\n")
            #expect(delegate.challenges.map(\.method) == [NSURLAuthenticationMethodHTTPDigest])

            let wrong = ChallengeDelegate { seen in
                seen.previousFailureCount < 2
                    ? .use(user: "alice", password: "nope", persistence: .none) : .continueWithout
            }
            _ = loader().connection(with: URLRequest(url: lighttpd.url(path)), delegate: wrong)
            #expect(await wrong.recorder.wait())
            #expect(wrong.challenges.map(\.previousFailureCount) == [0, 1, 2])
            #expect(wrong.recorder.lastResponse?.statusCode == 401)
        }
    }

    @Test func aStaleDigestNonceIsRetriedWithoutCountingAFailure() async throws {
        let delegate = ChallengeDelegate { _ in .use(user: "alice", password: "wonderland", persistence: .none) }
        _ = loader().connection(with: URLRequest(url: server.url("/digest-stale/page")), delegate: delegate)
        #expect(await delegate.recorder.wait())
        #expect(delegate.recorder.body == "digest ok")
        #expect(delegate.challenges.map(\.previousFailureCount) == [0])
        #expect(try server.count("stale") >= 1)
        #expect(try server.count("digest-wrong") == 0)
    }

    @Test func ntlmIsPreferredToBasicAndHandedToLibcurlWithTheCredential() async throws {
        let delegate = ChallengeDelegate { _ in .use(user: "alice", password: "wonderland", persistence: .none) }
        _ = loader().connection(with: URLRequest(url: server.url("/ntlm")), delegate: delegate)
        #expect(await delegate.recorder.wait())
        // The server checked libcurl's NTLMv2 response against alice's password.
        #expect(delegate.recorder.body == "ntlm welcome alice")
        #expect(delegate.challenges.map(\.method) == [NSURLAuthenticationMethodNTLM])
        #expect(try server.count("401:ntlm") == 1)

        // A wrong password: the server refuses it, and the delegate hears of the failure.
        let wrong = ChallengeDelegate { seen in
            seen.previousFailureCount == 0
                ? .use(user: "alice", password: "not-it", persistence: .none) : .continueWithout
        }
        _ = loader().connection(with: URLRequest(url: server.url("/ntlm")), delegate: wrong)
        #expect(await wrong.recorder.wait())
        #expect(wrong.recorder.lastResponse?.statusCode == 401)
        #expect(wrong.challenges.map(\.previousFailureCount) == [0, 1])
        #expect(try server.count("ntlm-wrong") == 1)
    }

    /// Negotiate (SPNEGO) is offered to the delegate and handed to libcurl; with no Kerberos
    /// ticket anywhere libcurl cannot answer it, and the 401 is the load's answer.
    @Test(.enabled(if: LoaderConnection.supportedSchemes.contains(.negotiate), "this libcurl has no SPNEGO"))
    func negotiateIsOfferedAndHandedToLibcurl() async throws {
        let delegate = ChallengeDelegate { seen in
            seen.previousFailureCount == 0
                ? .use(user: "alice", password: "wonderland", persistence: .none) : .continueWithout
        }
        _ = loader().connection(with: URLRequest(url: server.url("/negotiate")), delegate: delegate)
        #expect(await delegate.recorder.wait())
        #expect(
            delegate.challenges.map(\.method) == [
                NSURLAuthenticationMethodNegotiate, NSURLAuthenticationMethodNegotiate,
            ]
        )
        #expect(delegate.challenges.map(\.previousFailureCount) == [0, 1])
        #expect(delegate.recorder.lastResponse?.statusCode == 401)
        #expect(delegate.recorder.body == "no ticket")
        #expect(try server.count("negotiate") >= 2, "libcurl tried again with the credential")
    }

    @Test func aProxyChallengeIsAnsweredForTheProxySpace() async throws {
        let proxy = try await TinyproxyServer()
        let delegate = ChallengeDelegate { seen in
            seen.isProxy ? .use(user: "proxy", password: "secret", persistence: .none) : .cancel
        }
        let target = server.url("/hello")
        _ = loader(proxy: proxy.url).connection(with: URLRequest(url: target), delegate: delegate)
        #expect(await delegate.recorder.wait())
        #expect(delegate.recorder.body == "hello world")
        #expect(delegate.recorder.lastResponse?.value(forHTTPHeaderField: "Via")?.contains(TinyproxyServer.via) == true)
        #expect(delegate.challenges.count == 1)
        #expect(delegate.challenges.first?.isProxy == true)
        #expect(delegate.challenges.first?.realm == "Tinyproxy")
        #expect(delegate.challenges.first?.port == proxy.port)
        // Asked without credentials, then with them: both through the proxy.
        #expect(
            proxy.requests().filter { $0.contains("GET \(target.absoluteString)") }.count == 2,
            "\(proxy.requests())"
        )
    }

    @Test func anUntrustedCertificateIsAServerTrustChallenge() async throws {
        // By default (no delegate answer): a clean error.
        let refused = await load(URLRequest(url: server.tlsURL("/hello")), with: loader())
        #expect(refused.error?.code == .serverCertificateUntrusted)

        // A delegate that accepts the certificate for that host.
        let loader = loader()
        let accepting = ChallengeDelegate { seen in
            seen.method == LoaderAuthenticationMethod.serverTrust
                ? .use(user: "", password: "", persistence: .none) : .cancel
        }
        _ = loader.connection(with: URLRequest(url: server.tlsURL("/hello")), delegate: accepting)
        #expect(await accepting.recorder.wait())
        #expect(accepting.recorder.body == "hello world")
        #expect(accepting.challenges.map(\.method) == [LoaderAuthenticationMethod.serverTrust])

        // A delegate that declines: the verification error.
        let declining = ChallengeDelegate { _ in .performDefault }
        _ = URLLoader(configuration: .init()).connection(
            with: URLRequest(url: server.tlsURL("/hello")),
            delegate: declining
        )
        #expect(await declining.recorder.wait())
        #expect(declining.recorder.error?.code == .serverCertificateUntrusted)
    }
}
