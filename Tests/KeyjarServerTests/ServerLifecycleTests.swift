import Foundation
import Glibc
import Keyjar
import KeyjarCore
import KeyjarProtocol
import KeyjarTestSupport
import Testing

/// Socket activation and slow clients.
@Suite(.timeLimit(hangLimit), .servicesStopCleanly)
struct ServerLifecycleTests {
    @Test func aBurstOfWritesLeavesNoLargeWALOnceWritesPause() async throws {
        // Given a keyjard that takes 1,500 acknowledged writes back to back (a WAL of ~12 MB)
        let daemon = try await InProcessServer.withSecretService()
        let client = try TestClient(socketPath: daemon.socketPath)
        for index in 0..<1_500 {
            try client.setCookies(["c\(index % 50)=\(index)"], from: "https://burst\(index % 50).example/")
        }
        let wal = daemon.databasePath + "-wal"
        func walBytes() -> Int { ((try? FileManager.default.attributesOfItem(atPath: wal))?[.size] as? Int) ?? 0 }
        #expect(walBytes() > 4 << 20, "the burst should have grown the WAL")
        // When writes pause, then the WAL is folded in and cut back...
        #expect(await eventually(every: .milliseconds(100)) { walBytes() <= 4 << 20 })
        // ...and nothing was lost.
        #expect(try client.snapshot().cookies.count == 50)
        #expect(try client.cookieHeader(for: "https://burst7.example/") == "c7=1457")
    }

    @Test func aLongStormOfWritesKeepsTheWALBounded() async throws {
        // Given a keyjard taking 20,000 acknowledged writes back to back, which without restarts
        // would leave a WAL of about 160 MB (8 KB per write)
        let daemon = try await InProcessServer.withSecretService()
        let client = try TestClient(socketPath: daemon.socketPath)
        let wal = daemon.databasePath + "-wal"
        func walBytes() -> Int { ((try? FileManager.default.attributesOfItem(atPath: wal))?[.size] as? Int) ?? 0 }
        var largest = 0
        for index in 0..<20_000 {
            try client.setCookies(["c\(index % 50)=\(index)"], from: "https://storm\(index % 50).example/")
            if index % 250 == 0 { largest = max(largest, walBytes()) }
        }
        largest = max(largest, walBytes())
        // Then the WAL was started over while the writes kept coming: it never held much more
        // than a checkpoint's worth (64 MB) plus what arrived while one ran
        #expect(largest > 0)
        #expect(largest <= 96 << 20, "the WAL reached \(largest) bytes")
        // ...and nothing was lost.
        #expect(try client.cookieHeader(for: "https://storm7.example/") == "c7=19957")
    }

    @Test func checkpointsRunOnALowerPriorityThread() async throws {
        // Given a keyjard whose WAL needs checkpointing
        let daemon = try await DaemonProcess()
        let client = try TestClient(socketPath: daemon.socketPath)
        try client.setCookies(["c=1"], from: "https://nice.example/")
        // Then within the checkpoint interval a thread of keyjard runs at nice 10 (field 19 of
        // /proc/PID/task/TID/stat), and the event loop stays at 0
        func niceValues() -> [Int] {
            let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(daemon.pid)/task")) ?? []
            return tasks.compactMap { task in
                guard let stat = try? String(contentsOfFile: "/proc/\(daemon.pid)/task/\(task)/stat", encoding: .utf8),
                    let end = stat.lastIndex(of: ")")
                else { return nil }
                // Fields after the name: state is field 3, so nice (19) is the 17th.
                let fields = stat[stat.index(after: end)...].split(separator: " ")
                return fields.count > 16 ? Int(fields[16]) : nil
            }
        }
        #expect(await eventually(every: .milliseconds(100)) { niceValues().contains(10) })
        #expect(niceValues().contains(0))
    }

    @Test func servesASocketPassedBySystemd() async throws {
        // systemd's own tool: it binds the socket, and on the first connection executes keyjard
        // in its place (the same pid) with the socket as fd 3, LISTEN_FDS=1 and LISTEN_PID set.
        let directory = try TemporaryDirectory()
        let socketPath = directory.path("run/keyjar.sock")
        try FileManager.default.createDirectory(
            atPath: directory.path("run"),
            withIntermediateDirectories: true,
            attributes: [.posixPermissions: 0o700]
        )
        let output = Pipe()
        let pid = try spawnQuietly(
            "/usr/bin/systemd-socket-activate",
            [
                "--listen=\(socketPath)", DaemonProcess.binary, "--socket", socketPath, "--database",
                directory.path("store.sqlite3"),
            ],
            environment: ProcessInfo.processInfo.environment,
            standardOutput: output.fileHandleForWriting.fileDescriptor
        )
        try output.fileHandleForWriting.close()
        var reaped = false
        defer { if !reaped { kill(pid, SIGKILL) } }
        _ = await eventually { FileManager.default.fileExists(atPath: socketPath) }

        // The first client's connection is what starts keyjard; it is served once keyjard is up.
        let client = try TestClient(socketPath: socketPath)
        #expect(await DaemonProcess.readLine(from: output.fileHandleForReading) == "ready \(socketPath)")
        #expect(try client.setCookies(["activated=1"], from: "https://example.com/") == [nil])
        let reply = try client.call(.status)
        guard case .status(let status) = reply else {
            Issue.record("expected a status reply, got \(reply)")
            return
        }
        #expect(status.pid == pid)

        kill(pid, SIGTERM)
        #expect(await waitForExit(pid) == 0)
        reaped = true
        // The socket file is systemd's: keyjard leaves it for the next activation.
        #expect(FileManager.default.fileExists(atPath: socketPath))
    }

    @Test func aStuckClientIsDisconnectedWithoutHoldingUpOthers() async throws {
        let daemon = try await DaemonProcess(arguments: ["--client-queue-limit", "8"])
        let stuck = try TestClient(socketPath: daemon.socketPath)
        _ = try stuck.call(.subscribe(after: nil))
        // A healthy client reads every event as it comes, on a thread of its own.
        let total = 300
        let subscribed = TestSemaphore()
        let finished = TestSemaphore()
        let healthyCount = LockedNames()
        let socketPath = daemon.socketPath
        Thread.detachNewThread {
            defer { finished.signal() }
            guard let healthy = try? TestClient(socketPath: socketPath),
                (try? healthy.call(.subscribe(after: nil))) != nil
            else {
                subscribed.signal()
                return
            }
            subscribed.signal()
            var received = 0
            while received < total, case .event? = try? healthy.nextPushed(timeout: hangSeconds) {
                received += 1
                healthyCount.insert("\(received)")
            }
        }
        #expect(await subscribed.wait())
        let writer = try TestClient(socketPath: daemon.socketPath)

        // Big events fill the stuck client's socket buffer, then its queue, while it reads nothing.
        // Each write waits until the healthy client has read the last event: however busy the
        // machine (its thread descheduled for seconds), it is never the one that fell behind.
        let value = String(repeating: "x", count: 3_000)
        for index in 0..<total {
            #expect(try writer.setCookies(["c\(index)=\(value)"], from: "https://site\(index).example/") == [nil])
            try await waitUntil("the healthy client reading event \(index + 1)", every: .milliseconds(1)) {
                healthyCount.count > index
            }
        }
        #expect(await finished.wait())
        #expect(healthyCount.count == total)

        // The stuck client finds its connection closed once it looks, having got only part.
        var stuckReceived = 0
        while try stuck.receive(timeout: hangSeconds) != nil { stuckReceived += 1 }
        #expect(stuck.isClosed)
        #expect(stuckReceived < total)
        #expect(daemon.log.contains("client queue overflowed"))
    }
}
