import Foundation
import Glibc
import KeyjarCore
import KeyjarProtocol
import KeyjarTestSupport
import Testing

/// Socket activation and slow clients.
@Suite(.timeLimit(testTimeLimit))
struct ServerLifecycleTests {
    @Test func aBurstOfWritesLeavesNoLargeWALOnceWritesPause() throws {
        // Given a keyjard that takes 1,500 acknowledged writes back to back (a WAL of ~12 MB)
        let daemon = try DaemonProcess()
        defer { #expect(daemon.stop() == 0) }
        let client = try TestClient(socketPath: daemon.socketPath)
        for index in 0..<1_500 {
            try client.setCookies(["c\(index % 50)=\(index)"], from: "https://burst\(index % 50).example/")
        }
        let wal = daemon.databasePath + "-wal"
        func walBytes() -> Int { ((try? FileManager.default.attributesOfItem(atPath: wal))?[.size] as? Int) ?? 0 }
        #expect(walBytes() > 4 << 20, "the burst should have grown the WAL")
        // When writes pause, then the WAL is folded in and cut back within a few seconds...
        let deadline = Date().addingTimeInterval(10)
        while walBytes() > 4 << 20, Date() < deadline { Thread.sleep(forTimeInterval: 0.1) }
        #expect(walBytes() <= 4 << 20)
        // ...and nothing was lost.
        #expect(try client.snapshot().cookies.count == 50)
        #expect(try client.cookieHeader(for: "https://burst7.example/") == "c7=1457")
    }

    @Test func aLongStormOfWritesKeepsTheWALBounded() throws {
        // Given a keyjard taking 20,000 acknowledged writes back to back, which without restarts
        // would leave a WAL of about 160 MB (8 KB per write)
        let daemon = try DaemonProcess()
        defer { #expect(daemon.stop() == 0) }
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

    @Test func checkpointsRunOnALowerPriorityThread() throws {
        // Given a keyjard whose WAL needs checkpointing
        let daemon = try DaemonProcess()
        defer { #expect(daemon.stop() == 0) }
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
        let deadline = Date().addingTimeInterval(10)
        while !niceValues().contains(10), Date() < deadline { Thread.sleep(forTimeInterval: 0.1) }
        #expect(niceValues().contains(10))
        #expect(niceValues().contains(0))
    }

    @Test func servesASocketPassedBySystemd() throws {
        // systemd's own tool: it binds the socket, and on the first connection executes keyjard
        // in its place (the same pid) with the socket as fd 3, LISTEN_FDS=1 and LISTEN_PID set.
        let directory = try TemporaryDirectory()
        let socketPath = directory.path("run/keyjar.sock")
        try FileManager.default.createDirectory(
            atPath: directory.path("run"),
            withIntermediateDirectories: true,
            attributes: [.posixPermissions: 0o700]
        )
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/systemd-socket-activate")
        process.arguments = [
            "--listen=\(socketPath)", DaemonProcess.binary, "--socket", socketPath, "--database",
            directory.path("store.sqlite3"),
        ]
        process.environment = childEnvironment(ProcessInfo.processInfo.environment)
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle(forWritingAtPath: "/dev/null")
        try process.run()
        defer { if process.isRunning { process.terminate() } }
        let deadline = Date().addingTimeInterval(20)
        while !FileManager.default.fileExists(atPath: socketPath), process.isRunning, Date() < deadline {
            usleep(10_000)
        }

        // The first client's connection is what starts keyjard; it is served once keyjard is up.
        let client = try TestClient(socketPath: socketPath)
        #expect(DaemonProcess.readLine(from: output.fileHandleForReading, timeout: 20) == "ready \(socketPath)")
        #expect(try client.setCookies(["activated=1"], from: "https://example.com/") == [nil])
        let reply = try client.call(.status)
        guard case .status(let status) = reply else {
            Issue.record("expected a status reply, got \(reply)")
            return
        }
        #expect(status.pid == process.processIdentifier)

        kill(process.processIdentifier, SIGTERM)
        process.waitUntilExit()
        #expect(process.terminationReason == .exit && process.terminationStatus == 0)
        // The socket file is systemd's: keyjard leaves it for the next activation.
        #expect(FileManager.default.fileExists(atPath: socketPath))
    }

    @Test func aStuckClientIsDisconnectedWithoutHoldingUpOthers() throws {
        let daemon = try DaemonProcess(arguments: ["--client-queue-limit", "8"])
        defer { #expect(daemon.stop() == 0) }
        let stuck = try TestClient(socketPath: daemon.socketPath)
        _ = try stuck.call(.subscribe(after: nil))
        // A healthy client reads every event as it comes, on a thread of its own.
        let total = 300
        let subscribed = DispatchSemaphore(value: 0)
        let finished = DispatchSemaphore(value: 0)
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
            while received < total, case .event? = try? healthy.nextPushed(timeout: 10) {
                received += 1
                healthyCount.insert("\(received)")
            }
        }
        subscribed.wait()
        let writer = try TestClient(socketPath: daemon.socketPath)

        // Big events fill the stuck client's socket buffer, then its queue, while it reads nothing.
        let value = String(repeating: "x", count: 3_000)
        for index in 0..<total {
            #expect(try writer.setCookies(["c\(index)=\(value)"], from: "https://site\(index).example/") == [nil])
        }
        #expect(finished.wait(timeout: .now() + 20) == .success)
        #expect(healthyCount.count == total)

        // The stuck client finds its connection closed once it looks, having got only part.
        var stuckReceived = 0
        while try stuck.receive(timeout: 10) != nil { stuckReceived += 1 }
        #expect(stuck.isClosed)
        #expect(stuckReceived < total)
        #expect(daemon.log.contains("client queue overflowed"))
    }
}
