import Foundation
import FoundationNetworking
import Glibc
import KeyjarLocks
import KeyjarTestSupport
import Synchronization
import Testing

@testable import KeyjarLoader
@testable import KeyjarTransfer

@Suite("KeyjarLoader: protocols and plumbing")
struct ProtocolTests {
    @Test func http2IsUsedWhereTheServerOffersIt() async throws {
        let lighttpd = try await LighttpdServer(tls: true)
        let delegate = ChallengeDelegate { seen in
            seen.method == LoaderAuthenticationMethod.serverTrust
                ? .use(user: "", password: "", persistence: .none)
                : .use(user: "alice", password: "wonderland", persistence: .none)
        }
        // A page without authentication: lighttpd 1.4.69 resets HTTP/2 streams of its Digest
        // 401 (curl's own command line fails there too), so Digest is tested over HTTP/1.1.
        let connection = ephemeralLoader().connection(
            with: URLRequest(url: lighttpd.url("/plain/index.txt")),
            delegate: delegate
        )
        #expect(await delegate.recorder.wait())
        #expect(delegate.recorder.body == "secret page\n", "\(delegate.recorder.error.map { "\($0)" } ?? "")")
        #expect(connection.httpVersion == "HTTP/2")
        #expect(delegate.challenges.map(\.method) == [LoaderAuthenticationMethod.serverTrust])
    }

    @Test func ftpURLsLoadFromARealFTPServer() async throws {
        let directory = try TemporaryDirectory()
        try Data("over ftp\n".utf8).write(to: URL(fileURLWithPath: directory.path("file.txt")))
        let port = try freeLoopbackPort()
        let pid = try spawnQuietly(
            "/usr/bin/env",
            ["python3", "-m", "pyftpdlib", "-i", "127.0.0.1", "-p", "\(port)", "-d", directory.path],
            environment: ProcessInfo.processInfo.environment
        )
        defer { kill(pid, SIGKILL) }
        #expect(await eventually { loopbackPortAccepts(port) })
        let loaded = await load(
            URLRequest(url: URL(string: "ftp://127.0.0.1:\(port)/file.txt")!),
            with: ephemeralLoader()
        )
        #expect(loaded.body == "over ftp\n")
        #expect(loaded.events.last == .finished)
        let missing = await load(
            URLRequest(url: URL(string: "ftp://127.0.0.1:\(port)/nothing.txt")!),
            with: ephemeralLoader()
        )
        #expect(missing.error?.code == .fileDoesNotExist)
    }

    @Test func cancellingWhileAChallengeWaitsEndsEverything() async throws {
        let server = try await LoaderTestServer()
        let seen = TestSemaphore()
        let held = Locked<URLAuthenticationChallenge?>(nil)
        let delegate = HoldingDelegate { challenge in
            held.withLock { $0 = challenge }
            seen.signal()
        }
        let connection = ephemeralLoader().connection(
            with: URLRequest(url: server.url("/basic/c?key=c1")),
            delegate: delegate
        )
        #expect(await seen.wait())
        connection.cancel()
        // An answer after cancel is ignored: no retry, no message.
        if let challenge = held.withLock({ $0 }) {
            challenge.sender?.use(
                URLCredential(user: "alice", password: "wonderland", persistence: .none),
                for: challenge
            )
        }
        #expect(await !delegate.recorder.wait(within: .seconds(1)))
        #expect(delegate.recorder.events.isEmpty)
        #expect(try server.count("401:c1") == 1)
    }

    @Test func theSynchronousCallFollowsRedirectsAndUsesURLCredentials() async throws {
        let server = try await LoaderTestServer()
        let url = URL(string: "http://alice:wonderland@127.0.0.1:\(server.port)/basic/sync?key=y1")!
        let (data, response) = try ephemeralLoader().sendSynchronousRequest(URLRequest(url: url))
        #expect(String(decoding: data, as: UTF8.self) == "welcome alice")
        #expect((response as? HTTPURLResponse)?.statusCode == 200)
    }
}

/// Keeps a challenge unanswered and tells the test.
final class HoldingDelegate: LoaderConnectionAuthenticationDelegate, @unchecked Sendable {
    let recorder = RecordingDelegate()
    private let onChallenge: @Sendable (URLAuthenticationChallenge) -> Void
    init(onChallenge: @escaping @Sendable (URLAuthenticationChallenge) -> Void) { self.onChallenge = onChallenge }
    func connection(_ connection: LoaderConnection, willSendRequestFor challenge: URLAuthenticationChallenge) {
        onChallenge(challenge)
    }
    func connection(_ connection: LoaderConnection, didReceive response: URLResponse) {
        recorder.connection(connection, didReceive: response)
    }
    func connection(_ connection: LoaderConnection, didReceive data: Data) {
        recorder.connection(connection, didReceive: data)
    }
    func connectionDidFinishLoading(_ connection: LoaderConnection) { recorder.connectionDidFinishLoading(connection) }
    func connection(_ connection: LoaderConnection, didFailWithError error: any Error) {
        recorder.connection(connection, didFailWithError: error)
    }
}

/// Connection reuse. A process has one libcurl engine, whose cache keeps 256 idle connections
/// and closes the oldest beyond them: the loads of every test running beside one return their
/// connections to the same cache, and a few hundred returned at once take the oldest, perhaps a
/// test's own between its two loads. So reuse itself is seen in a process of its own, and the
/// test that holds hundreds of loads runs alone.
@Suite("KeyjarLoader: connection reuse", .serialized)
struct ConnectionReuseTests {
    @Test func keepAliveConnectionsAreReused() async throws {
        let server = try await LoaderTestServer()
        let result = try await runCommand(
            DaemonProcess.builtExecutable(named: "KeyjarTestPeer"),
            ["reuse", server.url("/echo").absoluteString]
        )
        #expect(result.status == 0, "\(result.error)")
        let echoes = try result.output.split(separator: "\n").map { try decodeEcho(String($0)) }
        #expect(echoes.count == 2, "\(result.output)")
        #expect(echoes.first?.peer == echoes.last?.peer, "the second load opened a new connection")
    }

    /// libcurl counts connections in use against its cache limit and closes the oldest idle
    /// one whenever a transfer ends above it: with more loads in flight than the limit, a
    /// sequential client's connection would be closed as soon as it was returned.
    @Test func aConnectionIsKeptWhileMoreLoadsThanTheCacheLimitAreInFlight() async throws {
        let server = try await LoaderTestServer()
        let loader = ephemeralLoader()
        let inFlight = CurlEngine.idleConnections + 16
        let held = (0..<inFlight).map { _ in RecordingDelegate() }
        // No idle timeout (`.infinity`, which the loader takes as "about never"): on a busy
        // machine, starting them all may take longer than the default minute.
        let unhurried = { (path: String) in URLRequest(url: server.url(path), timeoutInterval: .infinity) }
        for delegate in held { _ = loader.connection(with: unhurried("/held"), delegate: delegate) }
        // Answered once every held load has reached the server, so all of them are in flight.
        let first = try await decodeEcho(load(unhurried("/echo?after-held=\(inFlight)"), with: loader).body)
        let second = try await decodeEcho(load(URLRequest(url: server.url("/echo")), with: loader).body)
        #expect(await load(URLRequest(url: server.url("/release")), with: loader).body == "released")
        for delegate in held { #expect(await delegate.wait()) }
        #expect(held.filter { $0.body == "released" }.count == inFlight)
        #expect(first.peer == second.peer, "the second load opened a new connection")
    }
}
