import Foundation
import Glibc
import Keyjar
import KeyjarCore
import KeyjarProtocol
import KeyjarServer
import KeyjarTestSupport
import Testing

/// Bad input, crashes and competing starts lose nothing and bring nothing down.
@Suite(.timeLimit(hangLimit), .servicesStopCleanly)
struct ServerRobustnessTests {
    @Test func killDuringAWriteStormLosesNoAcknowledgedWrite() async throws {
        // No limit evicts a cookie the test counts: one site per cookie, and room for all.
        let daemon = try await DaemonProcess(arguments: ["--max-cookies", "400000"])
        let acknowledged = LockedNames()
        let unconnected = LockedNames()
        let outlived = LockedNames()
        let finished = TestSemaphore()
        let writers = (0..<3).map { writer in
            Thread {
                defer { finished.signal() }
                guard let client = try? TestClient(socketPath: daemon.socketPath) else {
                    unconnected.insert("writer \(writer)")
                    return
                }
                // A writer writes until its first failure, the crash, so writes are in flight
                // when it comes however long the test takes to get there.
                for index in 0..<100_000 {
                    let name = "w\(writer)n\(index)"
                    guard let outcomes = try? client.setCookies(["\(name)=1"], from: "https://\(name).example/"),
                        outcomes == [nil]
                    else { return }
                    acknowledged.insert(name)
                }
                outlived.insert("writer \(writer)")
            }
        }
        for writer in writers { writer.start() }
        #expect(
            await eventually(every: .milliseconds(1)) { acknowledged.count >= 300 },
            "the writers did not get going"
        )
        #expect(unconnected.count == 0, "writers that could not connect: \(unconnected.all.sorted())")
        await daemon.crash()
        // Every writer has seen its last reply (or the connection's end) before the count is read.
        for _ in writers { #expect(await finished.wait(), "a writer hung after the crash") }
        let restarted = try await daemon.restarted(arguments: ["--max-cookies", "400000"])
        let stored = Set(try TestClient(socketPath: restarted.socketPath).snapshot().cookies.map(\.name))
        let missing = acknowledged.all.subtracting(stored)
        #expect(missing.isEmpty, "acknowledged but lost: \(missing.sorted().prefix(10))")
        #expect(outlived.count == 0, "the crash came after every write: nothing was in flight")
    }

    @Test func malformedInputClosesOnlyThatConnection() async throws {
        let server = try await InProcessServer { $0.maximumFramePayload = 1_048_576 }
        let bystander = try TestClient(socketPath: server.socketPath)
        _ = try bystander.call(.subscribe(after: nil))

        let cases: [(String, [UInt8], UInt16)] = [
            ("oversized", [0xFF, 0xFF, 0xFF, 0xFF, 1, 2, 3], WireError.malformedFrame),
            ("empty frame", [0, 0, 0, 0], WireError.malformedFrame),
            ("not JSON", Framing.frame(Array("not json at all".utf8)), WireError.malformedMessage),
            (
                "binary garbage", Framing.frame((0..<64).map { UInt8(truncatingIfNeeded: $0 &* 37) }),
                WireError.malformedMessage
            ),
            (
                "unknown request", Framing.frame(Array(#"{"id":1,"request":{"format":{"disk":"/"}}}"#.utf8)),
                WireError.malformedMessage
            ),
            (
                "no hello", Framing.frame(MessageCoding.encode(ClientMessage(id: 1, request: .snapshot))),
                WireError.handshakeRequired
            ),
            (
                "wrong version",
                Framing.frame(
                    MessageCoding.encode(ClientMessage(id: 1, request: .hello(version: 99, client: "future")))
                ),
                WireError.unsupportedVersion
            ),
        ]
        for (name, bytes, code) in cases {
            let attacker = try TestClient(socketPath: server.socketPath, hello: false)
            try attacker.sendRaw(bytes)
            let reply = try attacker.receive(timeout: hangSeconds)
            guard case .failure(_, let error)? = reply else {
                Issue.record("\(name): expected an error reply, got \(String(describing: reply))")
                continue
            }
            #expect(error.code == code, "\(name): \(error)")
            #expect(try attacker.receive(timeout: hangSeconds) == nil, "\(name): the connection should be closed")
        }
        // A truncated frame, then the peer hangs up.
        do {
            let attacker = try TestClient(socketPath: server.socketPath, hello: false)
            try attacker.sendRaw([0, 0, 1, 0, 1, 2, 3])
        }
        // Everyone else is still served, and sees the next change.
        let writer = try TestClient(socketPath: server.socketPath)
        #expect(try writer.setCookies(["after=1"], from: "https://example.com/") == [nil])
        guard case .event(let event)? = try bystander.nextPushed() else {
            Issue.record("the bystander missed the event")
            return
        }
        #expect(event.event.cookieChanges.map(\.cookie.name) == ["after"])
        #expect(try TestClient(socketPath: server.socketPath).call(.status) != .ok)
    }

    /// A large message is decoded off the event loop; the connection's requests are still
    /// answered in the order they were sent, whatever their sizes, and a large malformed one
    /// ends its connection before anything sent after it is answered.
    @Test func largeMessagesDecodedOffTheLoopKeepTheirOrder() async throws {
        let server = try await InProcessServer()
        let client = try TestClient(socketPath: server.socketPath)
        let padding = String(repeating: "x", count: 200_000)
        func status(_ id: Int, padded: Bool) -> [UInt8] {
            let extra = padded ? #","padding":"\#(padding)""# : ""
            return Framing.frame(Array(#"{"id":\#(id),"request":{"status":{}}\#(extra)}"#.utf8))
        }
        // All at once: large, small, large, small.
        try client.sendRaw(
            status(1, padded: true) + status(2, padded: false) + status(3, padded: true) + status(4, padded: false)
        )
        var answered: [UInt64] = []
        for _ in 0..<4 {
            guard case .reply(let id, .status) = try client.receive() else { break }
            answered.append(id)
        }
        #expect(answered == [1, 2, 3, 4])

        let broken = try TestClient(socketPath: server.socketPath)
        let malformed = Framing.frame(Array(#"{"id":5,"request":{"status":{}},"padding":"\#(padding)"#.utf8))
        try broken.sendRaw(malformed + status(6, padded: false))
        guard case .failure(_, let error) = try broken.receive() else {
            Issue.record("the malformed message was answered")
            return
        }
        #expect(error.code == WireError.malformedMessage)
        #expect(try broken.receive() == nil, "nothing after the malformed message is answered")
    }

    /// While one client's large message is being decoded (held there by the test, as long as
    /// it likes), keyjard greets and serves other clients; the large one is answered after, in
    /// its order. A large frame before hello is refused without being decoded.
    @Test func aLargeMessageBeingDecodedHoldsNobodyUp() async throws {
        let started = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let server = try await InProcessServer {
            $0.decodingWillStart = {
                started.signal()
                _ = release.wait(timeout: .now() + hangSeconds)
            }
        }
        let padding = String(repeating: "x", count: 200_000)
        let large = Framing.frame(Array(#"{"id":1,"request":{"status":{}},"padding":"\#(padding)"}"#.utf8))
        let small = Framing.frame(Array(#"{"id":2,"request":{"status":{}}}"#.utf8))
        let busy = try TestClient(socketPath: server.socketPath)
        try busy.sendRaw(large + small)
        let decoding = try await onOwnThread { started.wait(timeout: .now() + hangSeconds) == .success }
        #expect(decoding, "the large message's decode did not start")

        let other = try TestClient(socketPath: server.socketPath)
        guard case .policy = try other.call(.policy) else {
            Issue.record("another client was not served while a large message was decoded")
            return
        }
        release.signal()
        var answered: [UInt64] = []
        for _ in 0..<2 {
            guard case .reply(let id, .status) = try busy.receive() else { break }
            answered.append(id)
        }
        #expect(answered == [1, 2])

        let early = try TestClient(socketPath: server.socketPath, hello: false)
        try early.sendRaw(large)
        guard case .failure(_, let error) = try early.receive() else {
            Issue.record("a large frame before hello was answered")
            return
        }
        #expect(error.code == WireError.handshakeRequired)
    }

    @Test func aSecondKeyjardRefusesAndAStaleSocketIsReplaced() async throws {
        let first = try await DaemonProcess()
        do {
            _ = try await first.restarted()
            Issue.record("a second keyjard started on the same socket")
        } catch {
            #expect("\(error)".contains("another keyjard is already serving"), "\(error)")
        }
        let second = try await runCommand(
            DaemonProcess.binary,
            ["--socket", first.socketPath, "--database", first.databasePath]
        )
        #expect(second.status == 1)
        #expect(second.error.contains("another keyjard is already serving \(first.socketPath)"))
        // A keyjard that died leaves its socket file behind; the next one replaces it.
        await first.crash()
        #expect(FileManager.default.fileExists(atPath: first.socketPath))
        let third = try await first.restarted()
        #expect(try TestClient(socketPath: third.socketPath).cookieHeader(for: "https://example.com/") == nil)
    }

    @Test func sessionCookiesSurviveACrashButNotACleanStop() async throws {
        let daemon = try await DaemonProcess()
        try TestClient(socketPath: daemon.socketPath).setCookies(
            ["session=1", "persistent=1; Max-Age=3600"],
            from: "https://example.com/"
        )
        await daemon.crash()
        let afterCrash = try await daemon.restarted()
        #expect(
            Set(try TestClient(socketPath: afterCrash.socketPath).snapshot().cookies.map(\.name)) == [
                "session", "persistent",
            ]
        )
        #expect(await afterCrash.stop() == 0)
        #expect(!FileManager.default.fileExists(atPath: afterCrash.socketPath))
        let afterStop = try await afterCrash.restarted()
        #expect(try TestClient(socketPath: afterStop.socketPath).snapshot().cookies.map(\.name) == ["persistent"])
    }

    @Test func aDatabaseFromTheFutureIsRefused() async throws {
        let directory = try TemporaryDirectory()
        let database = directory.path("store.sqlite3")
        _ = try await runCommand(
            "/usr/bin/env",
            [
                "python3", "-c",
                "import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); c.execute('PRAGMA user_version=99'); c.commit()",
                database,
            ]
        )
        let result = try await runCommand(
            DaemonProcess.binary,
            ["--socket", directory.path("k.sock"), "--database", database]
        )
        #expect(result.status == 1)
        #expect(result.error.contains("schema version 99, newer than this keyjard supports"))
    }
}

/// Names acknowledged by writer threads.
final class LockedNames: @unchecked Sendable {
    // @unchecked: every access goes through `lock`.
    private let lock = NSLock()
    private var names: Set<String> = []

    func insert(_ name: String) { lock.withLock { _ = names.insert(name) } }
    var count: Int { lock.withLock { names.count } }
    var all: Set<String> { lock.withLock { names } }
}

extension StoreEvent {
    var cookieChanges: [CookieChange] {
        if case .cookies(let changes) = self { return changes }
        return []
    }
}
