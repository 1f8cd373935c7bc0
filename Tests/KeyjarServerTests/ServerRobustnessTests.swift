import Foundation
import Glibc
import KeyjarCore
import KeyjarProtocol
import KeyjarServer
import KeyjarTestSupport
import Testing

/// Bad input, crashes and competing starts lose nothing and bring nothing down.
@Suite(.timeLimit(testTimeLimit))
struct ServerRobustnessTests {
    @Test func killDuringAWriteStormLosesNoAcknowledgedWrite() throws {
        let daemon = try DaemonProcess()
        let acknowledged = LockedNames()
        let unconnected = LockedNames()
        let finished = DispatchSemaphore(value: 0)
        let writers = (0..<3).map { writer in
            Thread {
                defer { finished.signal() }
                guard let client = try? TestClient(socketPath: daemon.socketPath) else {
                    unconnected.insert("writer \(writer)")
                    return
                }
                // One site per cookie, and fewer than 3300 in all, so no limit evicts any. A
                // writer stops at its first failure: the crash.
                for index in 0..<1_000 {
                    let name = "w\(writer)n\(index)"
                    guard let outcomes = try? client.setCookies(["\(name)=1"], from: "https://\(name).example/"),
                        outcomes == [nil]
                    else { return }
                    acknowledged.insert(name)
                }
            }
        }
        for writer in writers { writer.start() }
        let deadline = Date().addingTimeInterval(30)
        while acknowledged.count < 300, Date() < deadline { usleep(1_000) }
        #expect(acknowledged.count >= 300, "the writers did not get going")
        #expect(unconnected.count == 0, "writers that could not connect: \(unconnected.all.sorted())")
        daemon.crash()
        // Every writer has seen its last reply (or the connection's end) before the count is read.
        for _ in writers { #expect(finished.wait(timeout: .now() + 20) == .success, "a writer hung after the crash") }
        let restarted = try daemon.restarted()
        defer { #expect(restarted.stop() == 0) }
        let stored = Set(try TestClient(socketPath: restarted.socketPath).snapshot().cookies.map(\.name))
        let missing = acknowledged.all.subtracting(stored)
        #expect(missing.isEmpty, "acknowledged but lost: \(missing.sorted().prefix(10))")
        #expect(acknowledged.count < 3_000, "the crash came after every write: nothing was in flight")
    }

    @Test func malformedInputClosesOnlyThatConnection() throws {
        let server = try InProcessServer { $0.maximumFramePayload = 1_048_576 }
        defer { #expect(server.stop()) }
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
            let reply = try attacker.receive(timeout: 5)
            guard case .failure(_, let error)? = reply else {
                Issue.record("\(name): expected an error reply, got \(String(describing: reply))")
                continue
            }
            #expect(error.code == code, "\(name): \(error)")
            #expect(try attacker.receive(timeout: 5) == nil, "\(name): the connection should be closed")
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

    @Test func aSecondKeyjardRefusesAndAStaleSocketIsReplaced() throws {
        let first = try DaemonProcess()
        do {
            _ = try first.restarted()
            Issue.record("a second keyjard started on the same socket")
        } catch {
            #expect("\(error)".contains("another keyjard is already serving"), "\(error)")
        }
        let second = try runCommand(
            DaemonProcess.binary,
            ["--socket", first.socketPath, "--database", first.databasePath]
        )
        #expect(second.status == 1)
        #expect(second.error.contains("another keyjard is already serving \(first.socketPath)"))
        // A keyjard that died leaves its socket file behind; the next one replaces it.
        first.crash()
        #expect(FileManager.default.fileExists(atPath: first.socketPath))
        let third = try first.restarted()
        defer { #expect(third.stop() == 0) }
        #expect(try TestClient(socketPath: third.socketPath).cookieHeader(for: "https://example.com/") == nil)
    }

    @Test func sessionCookiesSurviveACrashButNotACleanStop() throws {
        let daemon = try DaemonProcess()
        try TestClient(socketPath: daemon.socketPath).setCookies(
            ["session=1", "persistent=1; Max-Age=3600"],
            from: "https://example.com/"
        )
        daemon.crash()
        let afterCrash = try daemon.restarted()
        #expect(
            Set(try TestClient(socketPath: afterCrash.socketPath).snapshot().cookies.map(\.name)) == [
                "session", "persistent",
            ]
        )
        #expect(afterCrash.stop() == 0)
        #expect(!FileManager.default.fileExists(atPath: afterCrash.socketPath))
        let afterStop = try afterCrash.restarted()
        defer { #expect(afterStop.stop() == 0) }
        #expect(try TestClient(socketPath: afterStop.socketPath).snapshot().cookies.map(\.name) == ["persistent"])
    }

    @Test func aDatabaseFromTheFutureIsRefused() throws {
        let directory = try TemporaryDirectory()
        let database = directory.path("store.sqlite3")
        _ = try runCommand(
            "/usr/bin/env",
            [
                "python3", "-c",
                "import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); c.execute('PRAGMA user_version=7'); c.commit()",
                database,
            ]
        )
        let result = try runCommand(
            DaemonProcess.binary,
            ["--socket", directory.path("k.sock"), "--database", database]
        )
        #expect(result.status == 1)
        #expect(result.error.contains("schema version 7, newer than this keyjard supports"))
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
