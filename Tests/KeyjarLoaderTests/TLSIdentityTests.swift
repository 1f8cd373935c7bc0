import Foundation
import FoundationNetworking
import Keyjar
import KeyjarCore
import KeyjarLoader
import KeyjarLocks
import KeyjarTestSupport
import KeyjarTransfer
import Testing

/// Server trust (the chain shown, one certificate trusted per host and port, decisions kept by
/// persistence) and client certificates (required, accepted, refused, stored), against the
/// Python test server's self-signed TLS and lighttpd with client verification.
@Suite(.timeLimit(hangLimit), .servicesStopCleanly)
struct TLSIdentityTests {
    private static func accept(_ persistence: URLCredential.Persistence) -> URLCredential {
        URLCredential(user: "", password: "", persistence: persistence)
    }

    /// The server's current certificate's fingerprint, by Python's hashlib.
    private func presentedFingerprint(_ server: LoaderTestServer) throws -> String? {
        let (data, _) = try URLLoader(configuration: .init()).sendSynchronousRequest(
            URLRequest(url: server.url("/fingerprint"))
        )
        return CertificateSummary.canonicalFingerprint(String(decoding: data, as: UTF8.self))
    }

    @Test func aServerTrustChallengeShowsTheChainAndTrustsThatCertificateOnly() async throws {
        let server = try await LoaderTestServer()
        let loader = URLLoader(configuration: .init(cookieStorage: .ephemeral()))
        let expected = try #require(try presentedFingerprint(server))

        // 1. The challenge shows the certificate and why it failed; accepted for this load.
        let first = ChallengeDelegate { _ in .credential(Self.accept(.none)) }
        _ = loader.connection(with: URLRequest(url: server.tlsURL("/hello")), delegate: first)
        #expect(await first.recorder.wait())
        #expect(first.recorder.body == "hello world")
        let seen = try #require(first.challenges.first)
        #expect(first.challenges.count == 1)
        #expect(seen.method == LoaderAuthenticationMethod.serverTrust)
        #expect(seen.host == "127.0.0.1" && seen.port == server.tlsPort)
        #expect(seen.errorCode == .serverCertificateUntrusted)
        let trust = try #require(seen.serverTrust)
        #expect(trust.certificates.count == 1)
        let leaf = try #require(trust.leaf)
        #expect(leaf.sha256Fingerprint == expected)
        #expect(leaf.subject == "CN=127.0.0.1")
        #expect(leaf.issuer == "CN=127.0.0.1")
        #expect(CertificateSummary.fingerprint(of: leaf.der) == expected)
        #expect(leaf.notValidBefore < Date() && leaf.notValidAfter > Date())
        #expect(
            trust.failureReason.contains("self-signed") || trust.failureReason.contains("self signed"),
            "\(trust.failureReason)"
        )

        // 2. `.none` held for that load only: the next load is challenged again; accepted for
        //    the session this time.
        let second = ChallengeDelegate { _ in .credential(Self.accept(.forSession)) }
        _ = loader.connection(with: URLRequest(url: server.tlsURL("/hello")), delegate: second)
        #expect(await second.recorder.wait())
        #expect(second.challenges.count == 1)
        #expect(second.recorder.body == "hello world")

        // 3. Now trusted by this loader: no challenge.
        let third = ChallengeDelegate { _ in .cancel }
        _ = loader.connection(with: URLRequest(url: server.tlsURL("/hello")), delegate: third)
        #expect(await third.recorder.wait())
        #expect(third.challenges.isEmpty)
        #expect(third.recorder.body == "hello world")

        // 4. The server presents another certificate (another key) on the same host and port:
        //    it is challenged again, showing the new one.
        let switching = ChallengeDelegate { _ in .cancel }
        _ = loader.connection(with: URLRequest(url: server.tlsURL("/switch-certificate")), delegate: switching)
        #expect(await switching.recorder.wait())
        #expect(switching.recorder.body == "switched")
        let switched = try #require(try presentedFingerprint(server))
        #expect(switched != expected)
        let fourth = ChallengeDelegate { _ in .performDefault }
        _ = loader.connection(with: URLRequest(url: server.tlsURL("/hello")), delegate: fourth)
        #expect(await fourth.recorder.wait())
        #expect(fourth.challenges.map { $0.serverTrust?.leaf?.sha256Fingerprint } == [switched])
        #expect(fourth.recorder.error?.code == .serverCertificateUntrusted)
    }

    @Test func aPermanentTrustDecisionIsKeptByKeyjardForEveryProcess() async throws {
        let server = try await LoaderTestServer()
        let daemon = try await InProcessServer.withSecretService()
        let configuration = KeyjarClient.Configuration(socketPath: daemon.socketPath, autoStart: false)
        let writer = URLLoader(
            configuration: .init(credentialStorage: try SharedCredentialStorage(configuration: configuration))
        )
        let accepting = ChallengeDelegate { _ in .credential(Self.accept(.permanent)) }
        _ = writer.connection(with: URLRequest(url: server.tlsURL("/hello")), delegate: accepting)
        #expect(await accepting.recorder.wait())
        #expect(accepting.recorder.body == "hello world")

        let readerStorage = try SharedCredentialStorage(configuration: configuration)
        let fingerprint = try #require(try presentedFingerprint(server))
        let kept = readerStorage.permanentCredentials.filter { $0.space.authenticationMethod == .serverTrust }
        #expect(kept.map(\.user) == [fingerprint])
        #expect(kept.first?.space.port == server.tlsPort)

        // Another loader (as another process would) trusts it without asking.
        let reader = URLLoader(configuration: .init(credentialStorage: readerStorage))
        let silent = ChallengeDelegate { _ in .cancel }
        _ = reader.connection(with: URLRequest(url: server.tlsURL("/hello")), delegate: silent)
        #expect(await silent.recorder.wait())
        #expect(silent.challenges.isEmpty)
        #expect(silent.recorder.body == "hello world")
    }

    /// The guide's custom TLS chain validation: a delegate that says it can authenticate against
    /// server trust is shown every server's certificate before the first request, trusted or
    /// not; other delegates keep default handling.
    @Test func aDelegateThatHandlesServerTrustIsAskedAboutEveryServer() async throws {
        let server = try await LoaderTestServer()
        let expected = try #require(try presentedFingerprint(server))
        let serverTrust: Set<String> = [LoaderAuthenticationMethod.serverTrust]
        let url = server.tlsURL("/hello")

        // 1. A certificate that fails verification: shown with the failure, before anything is
        //    sent; accepted for the session.
        let loader = URLLoader(configuration: .init(cookieStorage: .ephemeral()))
        let accepting = TrustCheckingDelegate(handles: serverTrust) { _ in .credential(Self.accept(.forSession)) }
        _ = loader.connection(with: URLRequest(url: url), delegate: accepting)
        #expect(await accepting.recorder.wait())
        #expect(accepting.recorder.body == "hello world")
        #expect(accepting.asked.withLock { $0 }.first == LoaderAuthenticationMethod.serverTrust)
        let untrusted = try #require(accepting.challenges.first)
        #expect(accepting.challenges.count == 1)
        #expect(untrusted.method == LoaderAuthenticationMethod.serverTrust && untrusted.port == server.tlsPort)
        #expect(untrusted.errorCode == .serverCertificateUntrusted)
        #expect(untrusted.serverTrust?.isTrusted == false)
        #expect(untrusted.serverTrust?.leaf?.sha256Fingerprint == expected)

        // 2. Now trusted by the loader: still shown, every load, with no error; default
        //    handling trusts it.
        let inspecting = TrustCheckingDelegate(handles: serverTrust) { _ in .performDefault }
        _ = loader.connection(with: URLRequest(url: url), delegate: inspecting)
        #expect(await inspecting.recorder.wait())
        #expect(inspecting.recorder.body == "hello world")
        let trusted = try #require(inspecting.challenges.first)
        #expect(inspecting.challenges.count == 1)
        #expect(!trusted.hasError && trusted.serverTrust?.isTrusted == true)
        #expect(trusted.serverTrust?.leaf?.sha256Fingerprint == expected)
        #expect(trusted.serverTrust?.failureReason == "")

        // 3. Cancelled: the load fails before any byte of the request is sent.
        let before = try server.count("/hello")
        let pinning = TrustCheckingDelegate(handles: serverTrust) { _ in .cancel }
        _ = loader.connection(with: URLRequest(url: url), delegate: pinning)
        #expect(await pinning.recorder.wait())
        #expect(
            pinning.recorder.events == [
                .willSend(url: url.absoluteString, redirectStatus: nil),
                .challenge(method: "ServerTrust", failures: 0, proposed: nil), .challengeCancelled,
                .failed(code: URLError.userCancelledAuthentication.rawValue),
            ]
        )
        #expect(try server.count("/hello") == before)

        // 4. A delegate that does not handle server trust is not asked: default handling.
        let other = TrustCheckingDelegate(handles: []) { _ in .cancel }
        _ = loader.connection(with: URLRequest(url: url), delegate: other)
        #expect(await other.recorder.wait())
        #expect(other.recorder.body == "hello world")
        #expect(other.challenges.isEmpty)

        // 5. On a loader that trusts nothing, default handling refuses the certificate shown.
        let strict = TrustCheckingDelegate(handles: serverTrust) { _ in .performDefault }
        _ = URLLoader(configuration: .init()).connection(with: URLRequest(url: url), delegate: strict)
        #expect(await strict.recorder.wait())
        #expect(strict.challenges.count == 1)
        #expect(strict.recorder.error?.code == .serverCertificateUntrusted)
    }

    // MARK: Client certificates

    @Test func aServerThatRequiresAClientCertificateGetsOneOrRefusesTheLoad() async throws {
        let identities = try await TestIdentities()
        defer { identities.remove() }
        let lighttpd = try await LighttpdServer(tls: true, clientCA: identities.caPath)
        let alice = try ClientIdentity(contentsOf: URL(fileURLWithPath: identities.alicePEM))
        let mallory = try ClientIdentity(contentsOf: URL(fileURLWithPath: identities.malloryPEM))
        let url = lighttpd.url("/plain/index.txt")
        let loader = URLLoader(configuration: .init())
        func answering(_ identity: @escaping @Sendable (SeenChallenge) -> TestAnswer) -> ChallengeDelegate {
            ChallengeDelegate { seen in
                seen.method == LoaderAuthenticationMethod.serverTrust ? .credential(Self.accept(.none)) : identity(seen)
            }
        }

        // Missing: the delegate is asked; default handling has none, so the load fails.
        let missing = answering { _ in .performDefault }
        _ = loader.connection(with: URLRequest(url: url), delegate: missing)
        #expect(await missing.recorder.wait())
        #expect(
            missing.challenges.map(\.method) == [
                LoaderAuthenticationMethod.serverTrust, LoaderAuthenticationMethod.clientCertificate,
            ]
        )
        #expect(missing.recorder.error?.code == .clientCertificateRequired)

        // Accepted: alice's certificate, issued by the CA the server trusts.
        let accepted = answering { _ in .credential(alice.credential(persistence: .none)) }
        _ = loader.connection(with: URLRequest(url: url), delegate: accepted)
        #expect(await accepted.recorder.wait())
        #expect(accepted.recorder.body == "secret page\n", "\(String(describing: accepted.recorder.error))")

        // Refused: mallory's is not; the delegate hears of the failure with it proposed.
        let refused = answering { seen in
            seen.previousFailureCount == 0 ? .credential(mallory.credential(persistence: .none)) : .continueWithout
        }
        _ = loader.connection(with: URLRequest(url: url), delegate: refused)
        #expect(await refused.recorder.wait())
        let clientChallenges = refused.challenges.filter { $0.method == LoaderAuthenticationMethod.clientCertificate }
        #expect(clientChallenges.map(\.previousFailureCount) == [0, 1])
        #expect(clientChallenges.map(\.proposedUser) == [nil, "CN=mallory"])
        #expect(refused.recorder.error?.code == .clientCertificateRejected)
    }

    @Test func aStoredClientIdentityAnswersAndItsKeyStaysOutOfSQLite() async throws {
        let identities = try await TestIdentities()
        defer { identities.remove() }
        let lighttpd = try await LighttpdServer(tls: true, clientCA: identities.caPath)
        let daemon = try await InProcessServer.withSecretService()
        let storage = try SharedCredentialStorage(configuration: .init(socketPath: daemon.socketPath, autoStart: false))
        let alice = try ClientIdentity(
            contentsOf: URL(fileURLWithPath: identities.aliceP12),
            passphrase: TestIdentities.p12Passphrase
        )
        #expect(alice.label == "CN=alice")
        let space = URLProtectionSpace(
            host: "127.0.0.1",
            port: lighttpd.port,
            protocol: "https",
            realm: nil,
            authenticationMethod: LoaderAuthenticationMethod.clientCertificate
        )
        try await storage.store(alice.credential(persistence: .permanent), for: space)

        let loader = URLLoader(configuration: .init(credentialStorage: storage))
        let delegate = ChallengeDelegate { seen in
            seen.method == LoaderAuthenticationMethod.serverTrust ? .credential(Self.accept(.none)) : .cancel
        }
        _ = loader.connection(with: URLRequest(url: lighttpd.url("/plain/index.txt")), delegate: delegate)
        #expect(await delegate.recorder.wait())
        #expect(delegate.recorder.body == "secret page\n", "\(String(describing: delegate.recorder.error))")
        #expect(delegate.challenges.map(\.method) == [LoaderAuthenticationMethod.serverTrust])

        // The private key went to the Secret Service, never to the database or its WAL.
        for file in ["store.sqlite3", "store.sqlite3-wal"] {
            let bytes = (try? Data(contentsOf: URL(fileURLWithPath: daemon.directory.path(file)))) ?? Data()
            #expect(bytes.range(of: Data("PRIVATE KEY".utf8)) == nil, "\(file)")
        }
    }

    @Test func identitiesAreReadFromPEMAndPKCS12WithClearErrors() async throws {
        let identities = try await TestIdentities()
        defer { identities.remove() }
        let pem = try ClientIdentity(contentsOf: URL(fileURLWithPath: identities.alicePEM))
        let p12 = try ClientIdentity(
            contentsOf: URL(fileURLWithPath: identities.aliceP12),
            passphrase: TestIdentities.p12Passphrase
        )
        #expect(pem.certificate == p12.certificate)
        #expect(pem.certificate.issuer == "CN=Keyjar Test CA")
        // The stored form reads back as the same identity.
        #expect(ClientIdentity(credential: p12.credential(persistence: .none)) == p12)
        #expect(!p12.description.contains("PRIVATE"))

        #expect {
            try ClientIdentity(contentsOf: URL(fileURLWithPath: identities.aliceP12), passphrase: "wrong")
        } throws: { ($0 as? ClientIdentity.ReadError)?.mightNeedPassphrase == true }
        let certificateOnly = identities.directory + "/alice.crt"
        #expect {
            try ClientIdentity(contentsOf: URL(fileURLWithPath: certificateOnly))
        } throws: { "\($0)".contains("no private key") }
        let mismatched = identities.directory + "/mismatched.pem"
        try
            (String(contentsOfFile: identities.directory + "/alice.crt", encoding: .utf8)
            + String(contentsOfFile: identities.directory + "/mallory.key", encoding: .utf8)).write(
                toFile: mismatched,
                atomically: true,
                encoding: .utf8
            )
        #expect {
            try ClientIdentity(contentsOf: URL(fileURLWithPath: mismatched))
        } throws: { "\($0)".contains("belongs to none") }
    }
}
