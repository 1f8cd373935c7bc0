import Foundation
import Keyjar
import KeyjarCodec
import KeyjarCore
import KeyjarProtocol
import KeyjarServer
import KeyjarTestSupport
import Testing

/// keyjard shares one store between clients and tells each about the others' changes (the
/// server in this process, but for the restart, which needs a keyjard of its own).
@Suite(.timeLimit(hangLimit), .servicesStopCleanly)
struct ServerSharingTests {
    @Test func clientsSeeEachOthersChanges() async throws {
        let server = try await InProcessServer()
        let writer = try TestClient(socketPath: server.socketPath)
        let watcher = try TestClient(socketPath: server.socketPath)
        guard case .subscribed(let start) = try watcher.call(.subscribe(after: nil)) else {
            Issue.record("subscribe failed")
            return
        }
        // When A stores a cookie...
        #expect(
            try writer.setCookies(["sid=42; Domain=example.com; Secure"], from: "https://www.example.com/") == [nil]
        )
        // ...B is told, with the next sequence number...
        let message = try #require(try watcher.nextPushed())
        guard case .event(let event) = message, case .cookies(let changes) = event.event else {
            Issue.record("expected a cookie event, got \(message)")
            return
        }
        #expect(event.sequence == start + 1)
        #expect(changes.map(\.cookie.name) == ["sid"])
        #expect(event.event.notificationName == "NSHTTPCookieManagerCookiesChangedNotification")
        // ...and B's requests get it.
        #expect(try watcher.cookieHeader(for: "https://api.example.com/") == "sid=42")
        #expect(try watcher.cookieHeader(for: "http://api.example.com/") == nil)
    }

    @Test func writersGetTheirEventBeforeTheReplyAndEveryoneGetsEveryEventInOrder() async throws {
        // Given two subscribed writers and a subscribed watcher
        let server = try await InProcessServer()
        let writers = [try TestClient(socketPath: server.socketPath), try TestClient(socketPath: server.socketPath)]
        let watcher = try TestClient(socketPath: server.socketPath)
        var start: UInt64 = 0
        for client in writers + [watcher] {
            guard case .subscribed(let sequence) = try client.call(.subscribe(after: nil)) else {
                Issue.record("subscribe failed")
                return
            }
            start = sequence
        }
        // When both pipeline 20 writes each, interleaved, without waiting for replies
        let perWriter = 20
        for index in 0..<perWriter {
            for (number, writer) in writers.enumerated() {
                try writer.send(
                    .setCookies(
                        headers: ["w\(number)=\(index)"],
                        context: WireCookieContext(url: "https://w\(number).example/")
                    )
                )
            }
        }
        // Then each writer has the event of each of its writes before that write's reply...
        for writer in writers {
            var events: [UInt64] = []
            var replies = 0
            while replies < perWriter || events.count < 2 * perWriter {
                let message = try #require(try writer.receive(), "a writer stopped hearing from keyjard")
                switch message {
                case .event(let event): events.append(event.sequence)
                case .reply(_, .cookieOutcomes(_, let sequence?)):
                    replies += 1
                    #expect(events.contains(sequence), "reply for \(sequence) came before its event")
                default: Issue.record("unexpected \(message)")
                }
            }
            // ...and every event of both, once each, in sequence order.
            #expect(events == Array((start + 1)...(start + UInt64(2 * perWriter))))
        }
        var watched: [UInt64] = []
        while watched.count < 2 * perWriter, case .event(let event)? = try watcher.nextPushed() {
            watched.append(event.sequence)
        }
        #expect(watched == Array((start + 1)...(start + UInt64(2 * perWriter))))
    }

    /// An import into a full jar is planned on a copy of it. A cookie another client sets while
    /// the plan is applied must survive, although the plan, made before, evicts its old copy.
    @Test func anImportNeverUndoesAnotherClientsWrite() async throws {
        // Given a full jar (the default limits: 3,300) whose least recently used cookie is
        // "keep", and imports applied 32 changes at a time, 5 ms apart (so that the test's write
        // comes well before the plan's last chunks, even under a sanitizer)
        let server = try await InProcessServer {
            $0.largestImportChunk = 32
            $0.importChunkPause = .milliseconds(5)
        }
        let importer = try TestClient(socketPath: server.socketPath)
        func file(_ cookies: [(name: String, site: String, lastAccess: Double)]) -> String {
            let objects = cookies.map { cookie in
                #"{"name":"\#(cookie.name)","value":"v","domain":"\#(cookie.site)","hostOnly":true,"path":"/","#
                    + #""secure":false,"httpOnly":false,"sameSite":"Lax","creation":\#(cookie.lastAccess),"#
                    + #""lastAccess":\#(cookie.lastAccess)}"#
            }
            return "[" + objects.joined(separator: ",") + "]"
        }
        let year2020 = 1_577_836_800.0
        let year2021 = 1_609_459_200.0
        let year2022 = 1_640_995_200.0
        let full =
            [("keep", "keep.example", year2020)]
            + (0..<3_299).map { ("old\($0 % 40)", "old\($0 / 40).example", year2021 + Double($0)) }
        _ = try importer.call(.importCookies(format: .json, text: file(full)), timeout: hangSeconds)
        let watcher = try TestClient(socketPath: server.socketPath)
        _ = try watcher.call(.subscribe(after: nil))
        let writer = try TestClient(socketPath: server.socketPath)

        // When 5,000 more recent cookies are imported, and "keep" is set again once the
        // import's first chunk is in
        let more = (0..<5_000).map { ("new\($0 % 40)", "new\($0 / 40).example", year2022 + Double($0)) }
        let reply = Reply()
        let text = file(more)
        let socketPath = server.socketPath
        let thread = Thread {
            reply.set(
                Result {
                    try TestClient(socketPath: socketPath).call(
                        .importCookies(format: .json, text: text),
                        timeout: hangSeconds
                    )
                }
            )
        }
        thread.start()
        guard case .event? = try watcher.nextPushed(timeout: hangSeconds) else {
            Issue.record("no chunk of the import was committed")
            return
        }
        let set = try writer.call(
            .setCookies(
                headers: ["keep=live; Max-Age=86400"],
                context: WireCookieContext(url: "https://keep.example/")
            )
        )
        guard case .cookieOutcomes([nil], let written?) = set else {
            Issue.record("expected the cookie stored, got \(set)")
            return
        }
        let result = try #require(await reply.wait())
        guard case .importReport(let imported, _, let problems, let lastChunk?, _, _, _) = try result.get() else {
            Issue.record("expected an import report with a sequence")
            return
        }
        #expect(imported == 5_000 && problems.isEmpty)
        // The write was served between the import's chunks, not after the whole import
        #expect(written < lastChunk, "the write (\(written)) waited for the import (\(lastChunk))")

        // Then "keep", now the most recently used, is still there with its new value
        let cookies = try importer.snapshot().cookies
        #expect(cookies.first { $0.name == "keep" }?.value == "live")
        #expect(cookies.count <= 3_300)
    }

    @Test func rejectionsComeBackPerLineAndChangeNothing() async throws {
        let server = try await InProcessServer()
        let client = try TestClient(socketPath: server.socketPath)
        let outcomes = try client.setCookies(
            ["ok=1", "bad=1; Domain=com", "x=1; Secure"],
            from: "http://www.example.com/"
        )
        #expect(
            outcomes == [nil, "Domain=com is a public suffix", "A Secure cookie can only be set from a secure origin"]
        )
        #expect(try client.snapshot().cookies.map(\.name) == ["ok"])
    }

    @Test func aSeparateProcessIsNotified() async throws {
        let server = try await InProcessServer()
        // A Python process subscribes and prints the first event it gets.
        let script = """
            import socket, struct, json, sys
            s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1])
            def send(o):
                b = json.dumps(o).encode(); s.sendall(struct.pack(">I", len(b)) + b)
            def recv():
                h = b""
                while len(h) < 4: h += s.recv(4 - len(h))
                n = struct.unpack(">I", h)[0]; b = b""
                while len(b) < n: b += s.recv(n - len(b))
                return json.loads(b)
            send({"id": 1, "request": {"hello": {"version": 4, "client": "python"}}}); recv()
            send({"id": 2, "request": {"subscribe": {}}}); recv()
            print("subscribed", flush=True)
            while True:
                m = recv()
                if "event" in m:
                    print(json.dumps(m["event"]["event"]["event"]), flush=True); break
            """
        let process = ChildProcess()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-c", script, server.socketPath]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        defer { if process.isRunning { kill(process.processIdentifier, SIGKILL) } }
        let reader = output.fileHandleForReading
        #expect(await DaemonProcess.readLine(from: reader) == "subscribed")
        let client = try TestClient(socketPath: server.socketPath)
        try client.setCookies(["theme=dark"], from: "https://example.org/")
        let line = try #require(await DaemonProcess.readLine(from: reader))
        let event = try StoreEventJSON.decode(line.utf8)
        guard case .cookies(let changes) = event else {
            Issue.record("unexpected \(event)")
            return
        }
        #expect(changes.first?.cookie.name == "theme")
    }

    /// A follower (a replica that does not listen) is sent nothing while others write; its
    /// own write brings what it missed first, then its own event, all before the reply; a
    /// `follow` brings it up to date; `subscribe` makes it a subscriber again.
    @Test func aFollowerGetsOnlyItsOwnWritesAfterWhatItMissed() async throws {
        let server = try await InProcessServer()
        let follower = try TestClient(socketPath: server.socketPath)
        let other = try TestClient(socketPath: server.socketPath)
        try other.setCookies(["a=1"], from: "https://example.com/")
        guard case .subscribed(let start) = try follower.call(.subscribe(after: nil)),
            case .subscribed(let followed) = try follower.call(.follow(after: start))
        else {
            Issue.record("subscribe or follow failed")
            return
        }
        #expect(followed == start && follower.pushed.isEmpty)

        // Others' writes are not pushed to it...
        try other.setCookies(["b=1"], from: "https://example.com/")
        try other.setCookies(["c=1"], from: "https://example.com/")
        _ = try follower.call(.policy)
        #expect(follower.pushed.isEmpty, "\(follower.pushed)")
        // ...until it writes: what it missed, then its own change, before the reply.
        try follower.setCookies(["d=1"], from: "https://example.com/")
        var consumed = 0
        func drained() -> [(UInt64, [String])] {
            defer { consumed = follower.pushed.count }
            return follower.pushed[consumed...].compactMap { message in
                guard case .event(let event) = message, case .cookies(let changes) = event.event else { return nil }
                return (event.sequence, changes.map(\.cookie.name))
            }
        }
        let afterWrite = drained()
        #expect(afterWrite.map(\.0) == [start + 1, start + 2, start + 3])
        #expect(afterWrite.map(\.1) == [["b"], ["c"], ["d"]])
        // With nothing missed, its next write brings its own change alone.
        try follower.setCookies(["e=1"], from: "https://example.com/")
        #expect(drained().map(\.0) == [start + 4])

        // A follow catches it up from where it says it is; a sequence from another database
        // gets the whole state.
        try other.setCookies(["f=1"], from: "https://example.com/")
        guard case .subscribed(let latest) = try follower.call(.follow(after: start + 4)) else {
            Issue.record("follow failed")
            return
        }
        #expect(latest == start + 5 && drained().map(\.1) == [["f"]])
        _ = try follower.call(.follow(after: 1_000_000))
        guard case .snapshot(let snapshot)? = follower.pushed.last else {
            Issue.record("expected a snapshot, got \(follower.pushed)")
            return
        }
        #expect(snapshot.cookies.count == 6 && snapshot.sequence == latest)

        // Subscribing again: others' changes are pushed once more.
        _ = try follower.call(.subscribe(after: latest))
        let before = follower.pushed.count
        try other.setCookies(["g=1"], from: "https://example.com/")
        // Its next reply comes after the event (keyjard finishes a broadcast before the next request).
        _ = try follower.call(.policy)
        guard case .event(let event)? = follower.pushed.last else {
            Issue.record("expected an event, got \(follower.pushed)")
            return
        }
        #expect(event.sequence == latest + 1 && follower.pushed.count == before + 1)
    }

    /// A follower that missed more changes than half its queue holds gets the whole state
    /// instead, and its write is answered (replaying them one by one overflowed the queue and
    /// cut the connection before the reply).
    @Test func aFollowerThatMissedTooMuchGetsASnapshotAndItsReply() async throws {
        let server = try await InProcessServer { $0.clientQueueLimit = 64 }
        let follower = try TestClient(socketPath: server.socketPath)
        let other = try TestClient(socketPath: server.socketPath)
        guard case .subscribed(let start) = try follower.call(.follow(after: 0)) else {
            Issue.record("follow failed")
            return
        }
        for index in 0..<100 { try other.setCookies(["o\(index)=1"], from: "https://example.com/") }
        #expect(try follower.setCookies(["mine=1"], from: "https://example.com/") == [nil])
        let snapshots = follower.pushed.compactMap { message -> StoreSnapshot? in
            if case .snapshot(let snapshot) = message { return snapshot }
            return nil
        }
        #expect(snapshots.count == 1 && snapshots.first?.sequence == start + 101)
        #expect(snapshots.first?.cookies.count == 101)
    }

    @Test func aReconnectingClientGetsExactlyWhatItMissed() async throws {
        var daemon = try await DaemonProcess()
        var seen: UInt64 = 0
        do {
            let client = try TestClient(socketPath: daemon.socketPath)
            // Persistent cookies: a clean stop ends the session and would drop session cookies.
            try client.setCookies(["a=1; Max-Age=3600"], from: "https://example.com/")
            let reply = try client.call(.subscribe(after: nil))
            guard case .subscribed(let sequence) = reply else {
                Issue.record("expected a subscribed reply, got \(reply)")
                return
            }
            seen = sequence
        }
        let other = try TestClient(socketPath: daemon.socketPath)
        try other.setCookies(["b=1; Max-Age=3600"], from: "https://example.com/")
        _ = try other.call(.setPolicy(policy: CookiePolicy(acceptPolicy: .noThirdParty)))
        // Across a restart too: sequence numbers are persistent.
        #expect(await daemon.stop() == 0)
        daemon = try await daemon.restarted()
        try TestClient(socketPath: daemon.socketPath).setCookies(["c=1; Max-Age=3600"], from: "https://example.com/")

        let returning = try TestClient(socketPath: daemon.socketPath)
        _ = try returning.call(.subscribe(after: seen))
        var missed: [SequencedEvent] = []
        for message in returning.pushed {
            if case .event(let event) = message { missed.append(event) }
        }
        #expect(missed.map(\.sequence) == [seen + 1, seen + 2, seen + 3])
        #expect(missed[1].event == .policy(policy: CookiePolicy(acceptPolicy: .noThirdParty)))
        // A client whose sequence is unknown to this database gets a snapshot instead.
        let lost = try TestClient(socketPath: daemon.socketPath)
        _ = try lost.call(.subscribe(after: 1_000_000))
        guard case .snapshot(let snapshot)? = lost.pushed.first else {
            Issue.record("expected a snapshot, got \(lost.pushed)")
            return
        }
        #expect(Set(snapshot.cookies.map(\.name)) == ["a", "b", "c"])
    }
}

/// The import's reply, handed from its thread to the test.
private final class Reply: @unchecked Sendable {
    // @unchecked: `value` is written once, before `ready` is signalled, and read after.
    private var value: Result<Response, any Error>?
    private let ready = TestSemaphore()

    func set(_ result: Result<Response, any Error>) {
        value = result
        ready.signal()
    }

    func wait() async -> Result<Response, any Error>? {
        guard await ready.wait() else { return nil }
        return value
    }
}
