import Foundation
import Glibc
import Keyjar
import KeyjarTestSupport
import Testing

/// Reads after another process's acknowledged write, and the cost of not listening, with
/// another process (`KeyjarTestPeer lookups`) reading.
@Suite(.timeLimit(hangLimit), .servicesStopCleanly)
struct FreshReadTests {
    /// A peer process answering one Cookie header per line it is sent.
    final class LookupPeer {
        let process = ChildProcess()
        private let input = Pipe()
        private let output = Pipe()
        private var buffered: [UInt8] = []

        init(_ daemon: some KeyjarService, url: String, listening: Bool) throws {
            process.executableURL = URL(fileURLWithPath: DaemonProcess.builtExecutable(named: "KeyjarTestPeer"))
            process.arguments = ["lookups", url] + (listening ? ["listen"] : [])
            var environment = ProcessInfo.processInfo.environment
            environment["KEYJAR_SOCKET"] = daemon.socketPath
            environment["KEYJAR_NO_AUTOSTART"] = "1"
            process.environment = environment
            process.standardInput = input
            process.standardOutput = output
            try process.run()
        }

        deinit {
            // Its input closed, it exits; SIGKILL in case it does not. Foundation reaps it.
            try? input.fileHandleForWriting.close()
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        }

        var pid: Int32 { process.processIdentifier }

        /// The peer's next line; nil after 20 s or at its end.
        func line() -> String? {
            let descriptor = output.fileHandleForReading.fileDescriptor
            while true {
                if let newline = buffered.firstIndex(of: UInt8(ascii: "\n")) {
                    defer { buffered.removeSubrange(...newline) }
                    return String(decoding: buffered[..<newline], as: UTF8.self)
                }
                var ready = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
                guard poll(&ready, 1, 20_000) == 1 else { return nil }
                var chunk = [UInt8](repeating: 0, count: 4096)
                let count = read(descriptor, &chunk, chunk.count)
                guard count > 0 else { return nil }
                buffered += chunk[..<count]
            }
        }

        /// Asks for one lookup and returns its answer.
        func lookup() -> String? {
            DescriptorIO.write("\n", to: input.fileHandleForWriting)
            return line()
        }
    }

    /// Process A writes; once the write is acknowledged it tells process B (through a pipe),
    /// and B's next lookup must include the write: every time, whether B listens or not.
    @Test(arguments: [false, true]) func aLookupAfterAnotherProcesssAcknowledgedWriteSeesIt(
        listening: Bool
    ) async throws {
        let daemon = try await InProcessServer.withSecretService()
        let writer = try storage(for: daemon)
        let url = try #require(URL(string: "https://fresh.example/"))
        let peer = try LookupPeer(daemon, url: url.absoluteString, listening: listening)
        #expect(peer.line() == "ready")
        var stale: [String] = []
        for round in 0..<1_000 {
            let outcomes = try await writer.storeCookies(
                fromResponseHeaders: ["n=\(round)"],
                for: url,
                mainDocumentURL: nil
            )
            #expect(outcomes == [.stored])
            let seen = peer.lookup()
            if seen != "n=\(round)" { stale.append("round \(round): \(seen ?? "no answer")") }
        }
        #expect(stale.count == 0, "stale lookups, the first: \(stale.prefix(3))")
    }

    /// A process that does not listen is not woken by other processes' changes: its threads
    /// are not scheduled at all (no context switch, no CPU time, from /proc) while another
    /// process makes 1,000 changes; its next lookup is still right.
    @Test func aProcessThatDoesNotListenIsNotWokenByOthersChanges() async throws {
        let daemon = try await InProcessServer.withSecretService()
        let writer = try storage(for: daemon)
        let url = try #require(URL(string: "https://quiet.example/"))
        try await writer.storeCookies(fromResponseHeaders: ["n=start"], for: url, mainDocumentURL: nil)
        let peer = try LookupPeer(daemon, url: url.absoluteString, listening: false)
        #expect(peer.line() == "ready")
        #expect(peer.lookup() == "n=start")
        // Settled: every thread of the peer asleep in a system call (its main thread in its
        // read of the pipe), so only a wake-up can change its counts.
        let before = try await Scheduling.settled(pid: peer.pid)
        for round in 0..<1_000 {
            try await writer.storeCookies(fromResponseHeaders: ["n=\(round)"], for: url, mainDocumentURL: nil)
        }
        let after = try #require(Scheduling(pid: peer.pid))
        #expect(after.contextSwitches - before.contextSwitches <= 2, "\(before) → \(after)")
        #expect(after.cpuTicks - before.cpuTicks <= 1, "\(before) → \(after)")
        #expect(peer.lookup() == "n=999")

        // The same peer, listening, is woken: the measurement above can tell.
        let listening = try LookupPeer(daemon, url: url.absoluteString, listening: true)
        #expect(listening.line() == "ready")
        let listeningBefore = try await Scheduling.settled(pid: listening.pid)
        for round in 0..<100 {
            try await writer.storeCookies(fromResponseHeaders: ["n=\(round)"], for: url, mainDocumentURL: nil)
        }
        #expect(
            await eventually {
                (Scheduling(pid: listening.pid)?.contextSwitches ?? 0) - listeningBefore.contextSwitches >= 10
            }
        )
        #expect(listening.lookup() == "n=99")
    }

    /// How much a process was scheduled: context switches of all its threads, and CPU time.
    struct Scheduling: Equatable, CustomStringConvertible {
        var contextSwitches: Int
        var cpuTicks: Int

        /// The counts once every thread of `pid` sleeps (state S) and two readings agree: a
        /// thread still finishing earlier work (on a busy machine, long after it was asked)
        /// would otherwise be counted as woken.
        static func settled(pid: Int32) async throws -> Scheduling {
            var previous: Scheduling?
            var settled: Scheduling?
            try await waitUntil("process \(pid) settling", every: .milliseconds(20)) {
                let now = Scheduling(pid: pid)
                defer { previous = now }
                guard let now, now == previous, allAsleep(pid: pid) else { return false }
                settled = now
                return true
            }
            return try #require(settled)
        }

        /// Whether every thread of `pid` is asleep in a system call.
        static func allAsleep(pid: Int32) -> Bool {
            guard let tasks = try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task") else {
                return false
            }
            return tasks.allSatisfy { task in
                guard let stat = try? String(contentsOfFile: "/proc/\(pid)/task/\(task)/stat", encoding: .utf8),
                    let close = stat.lastIndex(of: ")")
                else { return false }
                return stat[stat.index(after: close)...].split(separator: " ").first == "S"
            }
        }

        init?(pid: Int32) {
            guard let tasks = try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task") else {
                return nil
            }
            var switches = 0
            for task in tasks {
                guard let status = try? String(contentsOfFile: "/proc/\(pid)/task/\(task)/status", encoding: .utf8)
                else { return nil }
                for line in status.split(separator: "\n") where line.contains("ctxt_switches:") {
                    switches += Int(line.split(separator: "\t").last ?? "") ?? 0
                }
            }
            // Fields 14 and 15 of /proc/PID/stat (after the parenthesised name): utime, stime.
            guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
                let close = stat.lastIndex(of: ")")
            else { return nil }
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            guard fields.count > 13, let user = Int(fields[11]), let system = Int(fields[12]) else { return nil }
            contextSwitches = switches
            cpuTicks = user + system
        }

        var description: String { "\(contextSwitches) switches, \(cpuTicks) ticks" }
    }
}
