import Foundation
import FoundationNetworking
import Glibc
import Keyjar
import KeyjarCore
import KeyjarTestSupport
import Testing

/// Runs KeyjarTestPeer (another process) against the daemon; its standard output.
func runPeer(_ daemon: some KeyjarService, _ arguments: [String]) async throws -> String {
    let peer = DaemonProcess.builtExecutable(named: "KeyjarTestPeer")
    var environment = ProcessInfo.processInfo.environment
    environment["KEYJAR_SOCKET"] = daemon.socketPath
    environment["KEYJAR_NO_AUTOSTART"] = "1"
    let result = try await runCommand(peer, arguments, environment: environment)
    if result.status != 0 { Issue.record("KeyjarTestPeer \(arguments) failed: \(result.error)") }
    return result.output
}

func credentialStorage(for daemon: some KeyjarService) throws -> SharedCredentialStorage {
    try SharedCredentialStorage(configuration: .init(socketPath: daemon.socketPath, autoStart: false))
}

/// A fresh Foundation space each time: lookups must match by value, not identity.
func space(_ host: String, port: Int = 443, realm: String = "Admin") -> URLProtectionSpace {
    URLProtectionSpace(
        host: host,
        port: port,
        protocol: port == 443 ? "https" : "http",
        realm: realm,
        authenticationMethod: NSURLAuthenticationMethodHTTPBasic
    )
}

@Suite(.timeLimit(hangLimit), .servicesStopCleanly)
struct SharedCredentialStorageTests {
    @Test func credentialsAreSharedAccordingToTheirPersistence() async throws {
        let daemon = try await InProcessServer.withSecretService()
        let a = try credentialStorage(for: daemon)
        let b = try credentialStorage(for: daemon)
        let host = "creds-\(UUID().uuidString.prefix(8).lowercased()).example"

        try await a.store(
            URLCredential(user: "alice", password: "perm-pw", persistence: .permanent),
            for: space(host),
            makeDefault: true
        )
        try await a.store(
            URLCredential(user: "sam", password: "session-pw", persistence: .forSession),
            for: space(host)
        )
        try await a.store(URLCredential(user: "nobody", password: "x", persistence: .none), for: space(host))
        #expect(throws: KeyjarClientError.self) {
            try a.store(
                URLCredential(
                    user: "sync",
                    password: "x",
                    persistence: try #require(URLCredential.Persistence(rawValue: 3))
                ),
                for: space(host)
            )
        }

        // The permanent one reaches B, password fetched on demand; the session one is shared
        // by every storage of this process (B included), and by no other process.
        #expect(await eventually { b.permanentCredentials.contains { $0.user == "alice" && $0.isDefault } })
        let fromB = try #require(b.defaultCredential(for: space(host)))
        #expect(fromB.user == "alice" && fromB.password == "perm-pw" && fromB.persistence == .permanent)
        #expect(Set(b.credentials(for: space(host))?.keys.map { $0 } ?? []) == ["alice", "sam"])
        #expect(b.credentials(for: space(host))?["sam"]?.password == "session-pw")
        #expect(Set(a.credentials(for: space(host))?.keys.map { $0 } ?? []) == ["alice", "sam"])
        #expect(b.credentials(for: space(host, realm: "Other")) == nil)
        #expect(b.allCredentials.keys.contains { $0.host == host })
        let peer = try await runPeer(daemon, ["credential-users", host, "443", "https", "Admin"])
        #expect(peer == "alice\n", "another process sees the permanent credential only")

        // With alice gone, sam (the only user left) answers.
        try await a.removeCredential(user: "alice", for: space(host))
        #expect(await eventually { !b.permanentCredentials.contains { $0.space.host == host } })
        #expect(b.defaultCredential(for: space(host))?.user == "sam")
        #expect(a.credentials(for: space(host))?.keys.map { $0 } == ["sam"])
        try await b.removeCredential(user: "sam", for: space(host))
        #expect(a.credentials(for: space(host)) == nil)
    }

    @Test func aCredentialStoredForAWholeServerAnswersAnyRealmAndTheFirstBecomesTheDefault() async throws {
        let daemon = try await InProcessServer.withSecretService()
        let storage = try credentialStorage(for: daemon)
        let host = "server-\(UUID().uuidString.prefix(8).lowercased()).example"
        let server = URLProtectionSpace(
            host: host,
            port: 443,
            protocol: "https",
            realm: nil,
            authenticationMethod: NSURLAuthenticationMethodDefault
        )

        // Stored without asking for default: the space's first credential becomes its default
        // (keyjard applies the rule), the second does not.
        try await storage.store(URLCredential(user: "alice", password: "a-pw", persistence: .permanent), for: server)
        try await storage.store(URLCredential(user: "bob", password: "b-pw", persistence: .permanent), for: server)
        let records = storage.permanentCredentials.filter { $0.space.host == host }
        #expect(records.first { $0.user == "alice" }?.isDefault == true)
        #expect(records.first { $0.user == "bob" }?.isDefault == false)

        // Any challenge there, realm and method unknown to the credential, is answered by alice.
        for method in [NSURLAuthenticationMethodHTTPBasic, NSURLAuthenticationMethodHTTPDigest] {
            let challenge = URLProtectionSpace(
                host: host,
                port: 443,
                protocol: "https",
                realm: "Team Area",
                authenticationMethod: method
            )
            #expect(storage.defaultCredential(for: challenge)?.password == "a-pw")
            #expect(storage.choice(for: ProtectionSpace(challenge)).candidates.map(\.record.user) == ["alice", "bob"])
            // The challenge's own space holds nothing: credentials(for:) is per space.
            #expect(storage.credentials(for: challenge) == nil)
        }
        // A more specific credential wins over the server-wide one.
        let team = URLProtectionSpace(
            host: host,
            port: 443,
            protocol: "https",
            realm: "Team Area",
            authenticationMethod: NSURLAuthenticationMethodHTTPBasic
        )
        try await storage.store(URLCredential(user: "carol", password: "c-pw", persistence: .permanent), for: team)
        #expect(storage.defaultCredential(for: team)?.user == "carol")
        // Never a form, a client certificate or a server-trust space.
        let form = URLProtectionSpace(
            host: host,
            port: 443,
            protocol: "https",
            realm: nil,
            authenticationMethod: NSURLAuthenticationMethodHTMLForm
        )
        #expect(storage.defaultCredential(for: form) == nil)
    }

    @Test func anotherProcesssTokenRefreshAndRevocationReachTheReplica() async throws {
        let daemon = try await InProcessServer.withSecretService()
        let reader = try credentialStorage(for: daemon)
        let writer = try credentialStorage(for: daemon).client
        let api = ProtectionSpace(
            host: "token-\(UUID().uuidString.prefix(8).lowercased()).example",
            protocol: "https",
            authenticationMethod: .httpBearer
        )
        #expect(reader.choice(for: api).candidates.isEmpty)
        // Given a token stored by another process, expired already
        try writer.setCredential(
            user: "",
            password: "t0",
            for: api,
            expires: 1_000,
            refreshToken: "r1",
            tokenRefresh: TokenRefresh(endpoint: "https://auth.example/token")
        )
        let stored = try #require(reader.permanentCredentials.first { $0.space == api })
        #expect(stored.expires == 1_000 && stored.canRefresh)
        #expect(reader.choice(for: api).candidates.isEmpty, "an expired token is not offered")
        #expect(reader.credentials(for: api.foundationSpace) == nil, "nor listed for use")
        #expect(reader.allCredentials[api.foundationSpace] == nil)
        // When that process refreshes it, this one's copy has the new expiry and offers it
        _ = try writer.beginTokenRefresh(user: "", for: api, rejected: "t0")
        try writer.finishTokenRefresh(
            user: "",
            for: api,
            outcome: .refreshed(accessToken: "t1", refreshToken: nil, expires: 4_000_000_000)
        )
        #expect(reader.choice(for: api).preferred?.expires == 4_000_000_000)
        #expect(reader.credentials(for: api.foundationSpace)?.keys.sorted() == [""])
        // ...and once the refresh token is refused there, not any more
        _ = try writer.beginTokenRefresh(user: "", for: api, rejected: "t1")
        try writer.finishTokenRefresh(user: "", for: api, outcome: .failed(revoke: true))
        #expect(reader.permanentCredentials.first { $0.space == api }?.isRevoked == true)
        #expect(reader.choice(for: api).candidates.isEmpty)
    }

    @Test func urlSessionAuthenticatesWithTheSharedStorage() async throws {
        let daemon = try await InProcessServer.withSecretService()
        // A local Basic-auth server: 401 with a realm, 200 for alice:wonderland.
        let server = """
            import base64, http.server, sys
            class H(http.server.BaseHTTPRequestHandler):
                def do_GET(self):
                    if self.headers.get("Authorization") == "Basic " + base64.b64encode(b"alice:wonderland").decode():
                        body = b"hello alice"; self.send_response(200)
                    else:
                        body = b"who are you"; self.send_response(401)
                        self.send_header("WWW-Authenticate", 'Basic realm="keyjar-test"')
                    self.send_header("Content-Length", str(len(body))); self.end_headers(); self.wfile.write(body)
                def log_message(self, *args): pass
            s = http.server.HTTPServer(("127.0.0.1", 0), H)
            print(s.server_address[1], flush=True)
            s.serve_forever()
            """
        let process = ChildProcess()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-c", server]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        // SIGKILL: nothing of it needs a clean end.
        defer { kill(process.processIdentifier, SIGKILL) }
        let port = try #require(
            await DaemonProcess.readLine(from: output.fileHandleForReading).flatMap { Int($0) }
        )

        // One process stores the credential; another's URLSession uses it.
        let writer = try credentialStorage(for: daemon)
        try await writer.store(
            URLCredential(user: "alice", password: "wonderland", persistence: .permanent),
            for: URLProtectionSpace(
                host: "127.0.0.1",
                port: port,
                protocol: "http",
                realm: "keyjar-test",
                authenticationMethod: NSURLAuthenticationMethodHTTPBasic
            ),
            makeDefault: true
        )
        let storage = try credentialStorage(for: daemon)
        #expect(await eventually { !storage.permanentCredentials.isEmpty })
        let configuration = URLSessionConfiguration.ephemeral
        configuration.urlCredentialStorage = storage
        let delegate = ChallengeDelegate(storage: storage)
        let session = URLSession(configuration: configuration, delegate: delegate, delegateQueue: nil)
        // Not invalidateAndCancel: a request still in flight when the test gives up must end on
        // its own; cancelling it under corelibs' URLSession can crash the test process (seen once
        // under AddressSanitizer, where the request outlived the wait).
        defer { session.finishTasksAndInvalidate() }
        let url = try #require(URL(string: "http://127.0.0.1:\(port)/secret"))
        let result = LockedResult()
        let done = TestSemaphore()
        session.dataTask(with: url) { data, response, error in
            result.set(
                status: (response as? HTTPURLResponse)?.statusCode,
                body: data.map { String(decoding: $0, as: UTF8.self) },
                error: error.map { "\($0)" }
            )
            done.signal()
        }.resume()
        #expect(await done.wait(), "the request did not finish")
        #expect(result.status == 200, "\(result.error ?? "")")
        #expect(result.body == "hello alice")
        #expect(delegate.challenges.value == 1)
    }
}

/// Answers a challenge with the shared storage's default credential for its space.
final class ChallengeDelegate: NSObject, URLSessionTaskDelegate, @unchecked Sendable {
    // @unchecked: `storage` is Sendable and `challenges` is a locked counter.
    let storage: SharedCredentialStorage
    let challenges = LockedCounter()

    init(storage: SharedCredentialStorage) { self.storage = storage }

    func urlSession(
        _ session: URLSession,
        task: URLSessionTask,
        didReceive challenge: URLAuthenticationChallenge,
        completionHandler: @escaping (URLSession.AuthChallengeDisposition, URLCredential?) -> Void
    ) {
        challenges.increment()
        FileHandle.standardError.write(
            Data(
                "challenge for \(challenge.protectionSpace.host):\(challenge.protectionSpace.port) realm \(challenge.protectionSpace.realm ?? "-") method \(challenge.protectionSpace.authenticationMethod)\n"
                    .utf8
            )
        )
        guard challenge.previousFailureCount == 0,
            let credential = storage.defaultCredential(for: challenge.protectionSpace)
        else {
            completionHandler(.cancelAuthenticationChallenge, nil)
            return
        }
        completionHandler(.useCredential, credential)
    }
}

final class LockedResult: @unchecked Sendable {
    // @unchecked: every access goes through `lock`.
    private let lock = NSLock()
    private var values: (Int?, String?, String?) = (nil, nil, nil)

    func set(status: Int?, body: String?, error: String?) { lock.withLock { values = (status, body, error) } }
    var status: Int? { lock.withLock { values.0 } }
    var body: String? { lock.withLock { values.1 } }
    var error: String? { lock.withLock { values.2 } }
}
