import Foundation
import Glibc
import Keyjar
import KeyjarCore
import KeyjarProtocol
import KeyjarServer
import KeyjarTestSupport
import Testing

/// keyjard's memory stays within its stated bounds whatever clients send or fail to read, and
/// a client that misbehaves holds nobody else up (docs/operations.md, "Limits").
@Suite(.timeLimit(hangLimit), .servicesStopCleanly)
struct ServerMemoryBoundTests {
    static let frameLimit = 1 << 20

    /// A request of about `bytes` bytes that keyjard answers cheaply: listing the cookies of a
    /// domain with a very long name (there are none).
    static func largeRequest(id: UInt64, bytes: Int) -> [UInt8] {
        let domain = String(repeating: "a", count: bytes) + ".example"
        return Framing.frame(MessageCoding.encode(ClientMessage(id: id, request: .listCookies(domain: domain))))
    }

    static func inbound(_ socketPath: String) throws -> ServiceStatus.Inbound {
        guard case .status(let status) = try TestClient(socketPath: socketPath).call(.status) else {
            throw TestSupportError("keyjard did not report its status")
        }
        return try #require(status.inbound, "keyjard reports no inbound figures")
    }

    /// Waits for keyjard to report a state: what the test needs to see before going on.
    static func waitFor(_ what: String, _ condition: () throws -> Bool) async throws {
        try await waitUntil("keyjard reaching: \(what)", every: .milliseconds(20), condition)
    }

    /// Twenty clients each send a frame of almost 1 MiB at once, with room for only one at a
    /// time: each is answered, and keyjard never holds more than the budget plus the small
    /// per-connection allowance (unbounded, it would hold all twenty).
    @Test func aFloodOfLargeFramesStaysWithinTheBudget() async throws {
        // Room for one frame's buffer: a power of two, with a read beyond the frame.
        let budget = 2 * Self.frameLimit
        let daemon = try await InProcessServer {
            $0.maximumFramePayload = Self.frameLimit
            $0.inboundBudget = budget
        }
        let senders = 20
        let answered = LockedNames()
        let failures = LockedNames()
        let finished = TestSemaphore()
        for sender in 0..<senders {
            Thread.detachNewThread {
                defer { finished.signal() }
                do {
                    let client = try TestClient(socketPath: daemon.socketPath)
                    try client.sendRaw(Self.largeRequest(id: 7, bytes: Self.frameLimit - 200))
                    guard case .reply(7, .cookies(let cookies))? = try client.receive(timeout: hangSeconds) else {
                        failures.insert("sender \(sender): no reply")
                        return
                    }
                    if cookies.isEmpty { answered.insert("sender \(sender)") }
                } catch {
                    failures.insert("sender \(sender): \(error)")
                }
            }
        }
        for _ in 0..<senders { #expect(await finished.wait(), "a sender hung") }
        #expect(failures.all.isEmpty, "\(failures.all.sorted())")
        #expect(answered.count == senders)

        let inbound = try Self.inbound(daemon.socketPath)
        #expect(inbound.budget == budget)
        #expect(inbound.peakReserved > 0, "no frame was large enough to need the budget")
        #expect(inbound.peakReserved <= budget)
        // Beyond the budget: per connection one small frame and one read (64 KiB each), the
        // status client's connection as well.
        let allowance = (senders + 1) * 2 * 65_536
        #expect(
            inbound.peakBuffered <= budget + allowance,
            "read buffers peaked at \(inbound.peakBuffered) bytes against a bound of \(budget + allowance)"
        )
        #expect(inbound.reserved == 0)
        #expect(inbound.pausedConnections == 0)
    }

    /// A client that starts a large frame and stops sending holds the budget for the frame
    /// deadline only: then it gets an error and the next large frame is let in.
    @Test func aStalledLargeFrameIsCutOffAndFreesTheBudget() async throws {
        let daemon = try await InProcessServer {
            $0.maximumFramePayload = Self.frameLimit
            $0.inboundBudget = 2 * Self.frameLimit
            $0.frameDeadline = .seconds(1)
        }
        let staller = try TestClient(socketPath: daemon.socketPath)
        let frame = Self.largeRequest(id: 1, bytes: Self.frameLimit - 200)
        try staller.sendRaw(Array(frame.prefix(100_000)))
        try await Self.waitFor("the stalled frame reserved") { try Self.inbound(daemon.socketPath).reserved > 0 }

        // The next large frame waits for the budget, then gets in once the staller is cut off.
        let waiter = try TestClient(socketPath: daemon.socketPath)
        try waiter.sendRaw(Self.largeRequest(id: 2, bytes: Self.frameLimit - 200))
        guard case .reply(2, .cookies)? = try waiter.receive(timeout: hangSeconds) else {
            Issue.record("the second large frame was never answered")
            return
        }
        let reply = try staller.receive(timeout: hangSeconds)
        guard case .failure(nil, let error)? = reply else {
            Issue.record("the staller got \(String(describing: reply)), not an error")
            return
        }
        #expect(error.code == WireError.malformedFrame)
        #expect(error.message.contains("did not arrive within 1 s"), "\(error.message)")
        #expect(try Self.inbound(daemon.socketPath).reserved == 0)
    }

    /// A client that sends requests without reading the replies is paused, not cut off and not
    /// allowed to pile replies up: once it reads, every reply is there, in order.
    @Test func aClientThatDoesNotReadIsPausedAndLosesNoReply() async throws {
        let daemon = try await InProcessServer { $0.clientQueueLimit = 64 }
        let client = try TestClient(socketPath: daemon.socketPath)
        let requests = 20_000
        let sent = TestSemaphore()
        let sendError = LockedNames()
        // Blocks once keyjard stops reading: the rest waits in the socket.
        let sender = Unshared(client)
        Thread.detachNewThread {
            defer { sent.signal() }
            do {
                for id in 1...requests {
                    try sender.value.sendRaw(
                        Framing.frame(MessageCoding.encode(ClientMessage(id: UInt64(id), request: .policy)))
                    )
                }
            } catch {
                sendError.insert("\(error)")
            }
        }
        try await Self.waitFor("the client paused") { try Self.inbound(daemon.socketPath).pausedConnections == 1 }

        var nextID: UInt64 = 1
        while nextID <= UInt64(requests) {
            guard case .reply(let id, .policy)? = try client.receive(timeout: hangSeconds) else {
                Issue.record("reply \(nextID) never came")
                break
            }
            #expect(id == nextID)
            nextID = id + 1
        }
        #expect(await sent.wait())
        #expect(sendError.all.isEmpty, "\(sendError.all)")
        guard case .policy = try client.call(.policy) else {
            Issue.record("the client was not served after catching up")
            return
        }
        #expect(try Self.inbound(daemon.socketPath).pausedConnections == 0)
    }

    /// A subscriber that reads what it is sent is never cut off, however many events go by:
    /// what keyjard counts as queued for it comes down as its socket takes them, with no
    /// callback per write (`OutboundBacklog`).
    @Test func aSubscriberThatKeepsUpIsNeverCutOff() async throws {
        let daemon = try await InProcessServer { $0.clientQueueLimit = 16 }
        let subscriber = try TestClient(socketPath: daemon.socketPath)
        guard case .subscribed = try subscriber.call(.subscribe(after: nil)) else {
            Issue.record("subscribe failed")
            return
        }
        let writer = try TestClient(socketPath: daemon.socketPath)
        let events = 400
        for index in 0..<events {
            #expect(try writer.setCookies(["c\(index)=1"], from: "https://keep\(index).example/") == [nil])
            // Read as they come: never more than a few behind.
            guard case .event(let event)? = try subscriber.nextPushed(timeout: hangSeconds),
                case .cookies(let changes) = event.event
            else {
                Issue.record("event \(index) never came: the subscriber was cut off")
                return
            }
            #expect(changes.map(\.cookie.name) == ["c\(index)"])
        }
        guard case .policy = try subscriber.call(.policy) else {
            Issue.record("the subscriber was not served after \(events) events")
            return
        }
    }

    /// A subscriber stopped with SIGSTOP holds nobody up: the writer's requests are all
    /// answered, the stopped client is disconnected once its queue is full, and when it is
    /// continued it reconnects and receives what it missed.
    @Test func aStoppedSubscriberHoldsNobodyUp() async throws {
        let daemon = try await InProcessServer { $0.clientQueueLimit = 16 }
        let directory = try TemporaryDirectory()
        let outputPath = directory.path("watch.out")
        _ = FileManager.default.createFile(atPath: outputPath, contents: nil)
        let watcher = ChildProcess()
        watcher.executableURL = URL(fileURLWithPath: DaemonProcess.builtExecutable(named: "keyjar"))
        watcher.arguments = ["watch"]
        var environment = ProcessInfo.processInfo.environment
        environment["KEYJAR_SOCKET"] = daemon.socketPath
        watcher.environment = childEnvironment(environment)
        watcher.standardOutput = FileHandle(forWritingAtPath: outputPath)
        let errors = Pipe()
        watcher.standardError = errors
        try watcher.run()
        defer {
            kill(watcher.processIdentifier, SIGCONT)
            kill(watcher.processIdentifier, SIGKILL)
        }
        #expect(
            await DaemonProcess.readLine(from: errors.fileHandleForReading)?.hasPrefix("keyjar: watching")
                == true
        )
        func clients() throws -> Int {
            guard case .status(let status) = try TestClient(socketPath: daemon.socketPath).call(.status) else {
                return -1
            }
            return status.connectedClients - 1
        }
        #expect(try clients() == 1)

        #expect(await stopProcess(watcher.processIdentifier))
        let writer = try TestClient(socketPath: daemon.socketPath)
        let value = String(repeating: "v", count: 3_000)
        for index in 0..<300 {
            #expect(try writer.setCookies(["c\(index)=\(value)"], from: "https://stop\(index).example/") == [nil])
        }
        try await Self.waitFor("the stopped subscriber disconnected") { try clients() == 1 }

        kill(watcher.processIdentifier, SIGCONT)
        try await Self.waitFor("the watcher reconnected") { try clients() == 2 }
        #expect(try writer.setCookies(["final=1"], from: "https://final.example/") == [nil])
        try await Self.waitFor("the watcher printed the last change") {
            (try String(contentsOfFile: outputPath, encoding: .utf8)).contains("added final for final.example/")
        }
        let output = try String(contentsOfFile: outputPath, encoding: .utf8)
        #expect(output.contains("added c299 for stop299.example/"), "the watcher missed what came while it was stopped")
        #expect(watcher.isRunning)
    }

    /// Connections beyond `--max-connections` are refused with a clear error; the others are
    /// served, and a place freed is taken again.
    @Test func connectionsBeyondTheLimitAreRefused() async throws {
        let daemon = try await InProcessServer { $0.maximumConnections = 3 }
        var open = try (0..<3).map { _ in try TestClient(socketPath: daemon.socketPath) }
        do {
            _ = try TestClient(socketPath: daemon.socketPath)
            Issue.record("a fourth connection was served")
        } catch let error as WireError {
            #expect(error.code == WireError.overloaded)
            #expect(error.message.contains("already serves 3 connections"), "\(error.message)")
        }
        guard case .policy = try open[0].call(.policy) else {
            Issue.record("a client within the limit was not served")
            return
        }
        open.removeLast()
        try await Self.waitFor("a place freed") { (try? TestClient(socketPath: daemon.socketPath)) != nil }
    }

    /// One process cannot take every place: past its own limit its next connection is refused,
    /// while another process (the real `keyjar`) is still served.
    @Test func oneProcessCannotHoldEveryPlace() async throws {
        let daemon = try await InProcessServer {
            $0.maximumConnections = 8
            $0.maximumConnectionsPerProcess = 3
        }
        let open = try (0..<3).map { _ in try TestClient(socketPath: daemon.socketPath) }
        do {
            _ = try TestClient(socketPath: daemon.socketPath)
            Issue.record("a fourth connection of one process was served")
        } catch let error as WireError {
            #expect(error.code == WireError.overloaded)
            #expect(error.message.contains("already serves 3 connections of process \(getpid())"), "\(error.message)")
        }
        var environment = ProcessInfo.processInfo.environment
        environment["KEYJAR_SOCKET"] = daemon.socketPath
        environment["KEYJAR_NO_AUTOSTART"] = "1"
        let other = try await runCommand(
            DaemonProcess.builtExecutable(named: "keyjar"),
            ["cookie", "list"],
            environment: environment
        )
        #expect(other.status == 0, "another process is served: \(other.error)")
        #expect(open.count == 3)
    }

    /// A connection that never says hello, or stops halfway through its first frame, is
    /// closed at the hello deadline with a reason; one that said hello stays, idle as it likes.
    @Test func aConnectionWithoutHelloIsClosedAtItsDeadline() async throws {
        let daemon = try await InProcessServer { $0.helloDeadline = .seconds(1) }
        let greeted = try TestClient(socketPath: daemon.socketPath)
        let silent = try TestClient(socketPath: daemon.socketPath, hello: false)
        let halfway = try TestClient(socketPath: daemon.socketPath, hello: false)
        try halfway.sendRaw([0, 0, 0])
        for connection in [silent, halfway] {
            guard
                case .failure(_, let error)? = try connection.receive(timeout: Double(hangDeadline.components.seconds))
            else {
                Issue.record("no failure before the connection closed")
                continue
            }
            #expect(error.code == WireError.handshakeRequired && error.message.contains("no hello within 1 s"))
            #expect(try connection.receive(timeout: Double(hangDeadline.components.seconds)) == nil, "closed")
        }
        guard case .policy = try greeted.call(.policy) else {
            Issue.record("the greeted connection was not served after the deadline")
            return
        }
    }
}

/// One connection used from two threads, one only sending raw bytes and the other only
/// receiving: the two paths share nothing but the socket, which the kernel serialises.
private struct Unshared<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}
