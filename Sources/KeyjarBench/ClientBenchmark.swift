import CoreFoundation  // struct timespec's members resolve there once libcrypto's headers are in the build
import Foundation
import Glibc
import Keyjar
import KeyjarCodec
import KeyjarCore
import KeyjarProtocol

/// The client library against the release keyjard: lookups from the replica, a change going
/// from one process's write to another's notification, and replica memory.
func runClientBenchmark() throws {
    var template = Array("/tmp/kjclient-XXXXXX".utf8CString)
    guard let made = mkdtemp(&template) else { throw BenchmarkError("mkdtemp failed") }
    let directory = String(cString: made)
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let daemon = try BenchDaemon(directory: directory)
    defer { daemon.stop() }

    // 10,000 cookies over 500 sites, as in the engine benchmark.
    let expiry = Int(Date().timeIntervalSince1970) + 86_400
    var text = ""
    for index in 0..<10_000 {
        text += ".site\(index % 500).com\tTRUE\t/\tFALSE\t\(expiry)\tc\(index / 500)\tv\(index)_3f9a1c0e7b2d4f6a\n"
    }
    _ = try WireConnection(socketPath: daemon.socketPath).call(.importCookies(format: .netscape, text: text))

    let configuration = KeyjarClient.Configuration(socketPath: daemon.socketPath, autoStart: false)
    let heapBefore = heapBytesInUse()
    let reader = SharedCookieStorage(client: try KeyjarClient(configuration: configuration))
    print("client_replica_memory_10k: \(String(format: "%.2f", Double(heapBytesInUse() - heapBefore) / 1_048_576)) MB")

    // For profiling one part alone (`perf record`): KEYJAR_BENCH_CLIENT_ONLY=write, fresh or notify
    // skips the others; KEYJAR_BENCH_CLIENT_COUNT sets how many writes or events.
    let environment = ProcessInfo.processInfo.environment
    let only = environment["KEYJAR_BENCH_CLIENT_ONLY"]
    let count = Int(environment["KEYJAR_BENCH_CLIENT_COUNT"] ?? "")

    if only == "fresh" { return try runFreshReadBenchmark(socketPath: daemon.socketPath) }
    if only == "post" { return try runNotificationCostBenchmark(socketPath: daemon.socketPath) }

    let urls = (0..<500).compactMap { URL(string: "https://www.site\($0).com/some/path") }
    var samples: [UInt64] = []
    for iteration in 0..<(only == nil ? 100_000 : 0) {
        let url = urls[(iteration &* 7919) % urls.count]
        let start = nanoseconds()
        let header = reader.cookieHeader(for: url)
        samples.append(nanoseconds() - start)
        if header == nil { throw BenchmarkError("no header for \(url)") }
    }
    if only == nil { report("client_cookie_header", samples: samples) }

    // A write through the library, acknowledged after commit (the service benchmark's
    // service_set_cookie_acked measures the same through a bare WireConnection).
    let writer = SharedCookieStorage(client: try KeyjarClient(configuration: configuration))
    var writes: [UInt64] = []
    for index in 0..<(only == "notify" ? 0 : (count ?? 5_000) + 500) {
        guard let url = URL(string: "https://www.w\(index % 500).test/") else { throw BenchmarkError("bad URL") }
        let start = nanoseconds()
        _ = try writer.storeCookies(fromResponseHeaders: ["w=\(index); Max-Age=600"], for: url, mainDocumentURL: nil)
        if index >= 500 { writes.append(nanoseconds() - start) }
    }
    if only == "write" { return }
    if only == nil {
        report("client_set_cookie_acked", samples: writes)
        try runFreshReadBenchmark(socketPath: daemon.socketPath)
        try runNotificationCostBenchmark(socketPath: daemon.socketPath)
    }

    // A writes, B (one of 100 connected clients) is notified; and every one of the 99 others.
    // Each of the 99 is its own process, as on a real desktop: 99 clients in one process would
    // contend for that process's NotificationCenter lock and allocator, which separate
    // processes do not share.
    // The lookup client leaves, so that exactly 100 are connected: the writer and the 99.
    reader.client.close()
    let fanout = Fanout(
        writer: writer,
        socketPath: daemon.socketPath,
        events: only == "notify" ? count ?? 500 : 500,
        spacing: Int(environment["KEYJAR_BENCH_CLIENT_SPACING_US"] ?? "") ?? 3_000,
        // KEYJAR_BENCH_CLIENT_PEERS: fewer peers, to see one process's cost without contention.
        peerCount: Int(environment["KEYJAR_BENCH_CLIENT_PEERS"] ?? "") ?? 99
    )
    // How the peers listen: Apple-named notifications posted by their client, then Keyjar's
    // own listeners (`addListener`, nothing posted); KEYJAR_BENCH_PEER_MODE picks one way
    // (also `storage` or `stream`, see runNotifyPeer; `wire` and `wire-frames`, runWirePeer).
    let modes = environment["KEYJAR_BENCH_PEER_MODE"].map { [$0] } ?? ["notifications", "listener"]
    let results = try modes.map { mode in (prefix: Fanout.linePrefix(mode), try fanout.run(mode: mode)) }

    // The floor (scripts/fanout-floor.c processes): 99 processes blocked in read(), one
    // writer, the same spacing, measured now, on the same machine state.
    guard fanout.peerCount == 99 else { return }
    let floor = try FanoutFloor.measure(spacingMicroseconds: fanout.spacing)
    print("floor_fanout_middle_median: \(Int(floor.medianMiddle)) ns")
    print("floor_fanout_all_median: \(Int(floor.medianAll)) ns")
    print("floor_fanout_cpu_per_change_per_process: \(Int(floor.subscriberCPU)) ns")
    for (prefix, result) in results {
        let ratios = [
            ("write_to_other_notified_to_floor_ratio", result.middleMedian / floor.medianMiddle),
            ("write_to_all_others_notified_to_floor_ratio", result.allMedian / floor.medianAll),
            ("notified_cpu_per_change_to_floor_ratio", result.cpuPerChange / floor.subscriberCPU),
        ]
        for (name, ratio) in ratios { print("\(prefix)\(name): \(String(format: "%.2f", ratio))") }
    }
}

/// A change going from one client's write to 99 other processes listening, one way of
/// listening at a time.
struct Fanout {
    let writer: SharedCookieStorage
    let socketPath: String
    let events: Int
    let spacing: Int
    let peerCount: Int

    /// Medians of the middle peer's and of all peers' latencies, and the CPU each peer spent
    /// per change (ns).
    struct Result {
        let middleMedian: Double
        let allMedian: Double
        let cpuPerChange: Double
    }

    /// Where a mode's lines start: `client_` for the ways that post Apple-named notifications
    /// (the lines' names before other ways existed), `client_MODE_` for the others
    /// (`client_listener_`, `client_wire_`, `client_wire_frames_`).
    static func linePrefix(_ mode: String) -> String {
        ["notifications", "storage", "stream"].contains(mode)
            ? "client_" : "client_\(mode.replacingOccurrences(of: "-", with: "_"))_"
    }

    /// Starts the peers listening in `mode`, makes the changes, reports the latencies under
    /// ``linePrefix(_:)`` and returns their medians.
    func run(mode: String) throws -> Result {
        let prefix = Self.linePrefix(mode)
        let peers = try (0..<peerCount).map { _ in try NotifyPeer(socketPath: socketPath, events: events, mode: mode) }
        guard let site = URL(string: "https://notify-\(mode).test/") else { throw BenchmarkError("bad URL") }
        var starts: [UInt64: UInt64] = [:]
        for index in 0..<events {
            let start = nanoseconds()
            _ = try writer.storeCookies(
                fromResponseHeaders: ["n=\(index); Max-Age=600"],
                for: site,
                mainDocumentURL: nil
            )
            starts[writer.client.sequence] = start
            // A change every 3 ms (KEYJAR_BENCH_CLIENT_SPACING_US): time for 99 processes on 2
            // cores to take each one, so this measures latency, not a backlog. Longer pauses do
            // not lower it: idle CPUs and cold caches make each wake-up dearer
            // (docs/performance.md, Notifications in other processes).
            usleep(UInt32(spacing))
        }
        // keyjard tells the oldest connection first, and each peer connected after the one
        // before it, so a peer's index is its place in the fan-out. B is the peer in the
        // middle: a typical process, not the luckiest (the first) nor the unluckiest (the
        // last), reported beside it.
        let places = [("first", 0), ("", peers.count / 2), ("last", peers.count - 1)]
        var latencies = [[UInt64]](repeating: [], count: peers.count)
        var allLatencies: [UInt64] = []
        var peerCPU: UInt64 = 0
        for (position, peer) in peers.enumerated() {
            let (arrivals, cpu) = try peer.arrivals()
            peerCPU += cpu
            guard arrivals.count == events else {
                throw BenchmarkError("a peer was told of \(arrivals.count) of \(events) changes")
            }
            for (sequence, time) in arrivals {
                guard let start = starts[sequence] else {
                    throw BenchmarkError("a peer was told of unknown change \(sequence)")
                }
                allLatencies.append(time - start)
                latencies[position].append(time - start)
            }
        }
        print("\(prefix)notify_clients: \(peers.count + 1) clients (\(peers.count) in their own processes, \(mode))")
        for (name, position) in places {
            report(
                name.isEmpty ? "\(prefix)write_to_other_notified" : "\(prefix)write_to_\(name)_other_notified",
                samples: latencies[position]
            )
        }
        // Every client's notification, wherever keyjard's fan-out reached it: the fair figure.
        report("\(prefix)write_to_all_others_notified", samples: allLatencies)
        // What one change costs each receiving process: the sum over the 99 is what two cores
        // must get through before the last of them has it.
        let cpuPerChange = peerCPU / UInt64(peers.count * events)
        print("\(prefix)notified_cpu_per_change_per_process: \(cpuPerChange) ns")
        return Result(
            middleMedian: Double(percentile(latencies[peers.count / 2].sorted(), 0.5)),
            allMedian: Double(percentile(allLatencies.sorted(), 0.5)),
            cpuPerChange: Double(cpuPerChange)
        )
    }
}

/// One of the 99 other processes of the notification benchmark: `keyjar-bench client-peer
/// <socket> <events>` connects, says "ready", stamps each cookie notification as it is
/// posted, and once it has them all prints one "sequence nanoseconds" line each.
final class NotifyPeer {
    private let process = Process()
    private let output = Pipe()

    init(socketPath: String, events: Int, mode: String) throws {
        process.executableURL = URL(fileURLWithPath: CommandLine.arguments[0])
        process.arguments = ["client-peer", socketPath, String(events)]
        var environment = ProcessInfo.processInfo.environment
        environment["KEYJAR_BENCH_PEER_MODE"] = mode
        process.environment = environment
        process.standardOutput = output
        try process.run()
        guard readLine() == "ready" else { throw BenchmarkError("a notify peer did not start") }
    }

    private func readLine() -> String? {
        var line: [UInt8] = []
        while true {
            guard let byte = ((try? output.fileHandleForReading.read(upToCount: 1)) ?? Data()).first else { return nil }
            if byte == UInt8(ascii: "\n") { return String(decoding: line, as: UTF8.self) }
            line.append(byte)
        }
    }

    /// (sequence, arrival) for every notification, once the peer has them all, and the CPU
    /// time the peer used meanwhile.
    func arrivals() throws -> (arrivals: [(UInt64, UInt64)], cpu: UInt64) {
        let text = String(decoding: ((try? output.fileHandleForReading.readToEnd()) ?? Data()), as: UTF8.self)
        process.waitUntilExit()
        var cpu: UInt64 = 0
        let arrivals = text.split(separator: "\n").compactMap { line -> (UInt64, UInt64)? in
            let fields = line.split(separator: " ")
            guard fields.count == 2, let second = UInt64(fields[1]) else { return nil }
            if fields[0] == "cpu" { cpu = second }
            return UInt64(fields[0]).map { ($0, second) }
        }
        return (arrivals, cpu)
    }
}

/// CPU time of this process (all threads) so far.
func processCPUNanoseconds() -> UInt64 {
    var spec = timespec()
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &spec)
    return UInt64(spec.tv_sec) * 1_000_000_000 + UInt64(spec.tv_nsec)
}

/// The peer process's side (see ``NotifyPeer``).
func runNotifyPeer(socketPath: String, events: Int) -> Never {
    let mode = ProcessInfo.processInfo.environment["KEYJAR_BENCH_PEER_MODE"]
    if let mode, mode.hasPrefix("wire") { runWirePeer(socketPath: socketPath, events: events, decodes: mode == "wire") }
    let client: KeyjarClient
    do {
        client = try KeyjarClient(configuration: .init(socketPath: socketPath, autoStart: false))
    } catch {
        try? FileHandle.standardError.write(contentsOf: Data("client-peer: \(error)\n".utf8))
        exit(1)
    }
    let arrivals = Arrivals(expected: events)
    let observer = NotificationCenter.default.addObserver(
        forName: KeyjarNotifications.cookiesChanged,
        object: client,
        queue: nil
    ) { notification in
        let now = nanoseconds()
        guard let event = notification.userInfo?[KeyjarNotifications.eventKey] as? SequencedEvent else { return }
        arrivals.record(event.sequence, at: now)
    }
    // How the peer listens: Apple-named notifications from the client (the default), from a
    // storage observed through its `addObserver`, `changes()`, or a Keyjar listener.
    var observation: KeyjarObservation?
    var listener: KeyjarListener?
    switch mode {
    case "listener":
        listener = client.addListener { change in
            let now = nanoseconds()
            guard case .event(let event) = change else { return }
            arrivals.record(event.sequence, at: now)
        }
    case "stream":
        let changes = client.changes()
        Task.detached {
            for await event in changes { arrivals.record(event.sequence, at: nanoseconds()) }
        }
    case "storage":
        observation = SharedCookieStorage(client: client).addObserver(forName: KeyjarNotifications.cookiesChanged) {
            notification in
            let now = nanoseconds()
            guard let event = notification.userInfo?[KeyjarNotifications.eventKey] as? SequencedEvent else { return }
            arrivals.record(event.sequence, at: now)
        }
    default:
        client.startPostingNotifications()
    }
    try? FileHandle.standardOutput.write(contentsOf: Data("ready\n".utf8))
    let cpuBefore = processCPUNanoseconds()
    // The observer does not keep the client alive, and nothing after this line uses it.
    let received = withExtendedLifetime(client) { arrivals.wait(timeout: 120) }
    let cpu = processCPUNanoseconds() - cpuBefore
    NotificationCenter.default.removeObserver(observer)
    observation?.cancel()
    listener?.cancel()
    try? FileHandle.standardOutput.write(
        contentsOf: Data((received.map { "\($0.0) \($0.1)\n" }.joined() + "cpu \(cpu)\n").utf8)
    )
    exit(0)
}

/// A peer without the client library, to show what is left of a listening process's cost
/// when nothing keeps a replica (`KEYJAR_BENCH_PEER_MODE=wire` or `wire-frames`): a bare
/// `WireConnection` subscribed to keyjard, its reader thread taking each frame off the socket
/// as the library's does (on its main thread), then decoding it (`wire`) or only reading its sequence number from
/// the bytes (`wire-frames`). Not a way to listen: what a replica must do with each change
/// (apply it, tell its listeners) is left out, so these measure the floor of a Swift process
/// reading Keyjar's frames (docs/performance.md, Notifications in other processes).
func runWirePeer(socketPath: String, events: Int, decodes: Bool) -> Never {
    let arrivals = Arrivals(expected: events)
    let connection: WireConnection
    do {
        connection = try WireConnection(socketPath: socketPath, client: "keyjar-bench-peer")
        _ = try connection.call(.subscribe(after: nil))
    } catch {
        try? FileHandle.standardError.write(contentsOf: Data("client-peer: \(error)\n".utf8))
        exit(1)
    }
    try? FileHandle.standardOutput.write(contentsOf: Data("ready\n".utf8))
    // Read on this thread, blocking as the library's reader does; a peer that hears nothing
    // ends here (SIGALRM), and the benchmark reports the changes it missed.
    alarm(150)
    let cpuBefore = processCPUNanoseconds()
    let prefix = Array(#"{"event":{"event":{"sequence":"#.utf8)
    var heard = 0
    while heard < events, let payload = try? connection.receiveRawBlocking() {
        if decodes {
            guard case .event(let event)? = try? MessageCoding.decode(ServerMessage.self, from: payload) else {
                continue
            }
            arrivals.record(event.sequence, at: nanoseconds())
        } else {
            guard payload.starts(with: prefix) else { continue }
            var sequence: UInt64 = 0
            for digit in payload[prefix.count...] {
                guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(digit) else { break }
                sequence = sequence * 10 + UInt64(digit - UInt8(ascii: "0"))
            }
            arrivals.record(sequence, at: nanoseconds())
        }
        heard += 1
    }
    let cpu = processCPUNanoseconds() - cpuBefore
    let received = arrivals.wait(timeout: 0)
    try? FileHandle.standardOutput.write(
        contentsOf: Data((received.map { "\($0.0) \($0.1)\n" }.joined() + "cpu \(cpu)\n").utf8)
    )
    exit(0)
}

/// Notification arrival times, shared with the observer's thread; `wait` returns once all
/// expected ones arrived (or the time ran out).
final class Arrivals: @unchecked Sendable {
    // @unchecked: every access goes through `condition`.
    private let condition = NSCondition()
    private var times: [(UInt64, UInt64)] = []
    private let expected: Int

    init(expected: Int) {
        self.expected = expected
        times.reserveCapacity(expected)
    }

    func record(_ sequence: UInt64, at time: UInt64) {
        condition.lock()
        times.append((sequence, time))
        // Woken once, at the end: a wake-up per change would be measured too.
        if times.count == expected { condition.broadcast() }
        condition.unlock()
    }

    /// (sequence, arrival) pairs: all expected ones, or fewer when the time ran out.
    func wait(timeout: TimeInterval) -> [(UInt64, UInt64)] {
        let deadline = Date().addingTimeInterval(timeout)
        condition.lock()
        defer { condition.unlock() }
        while times.count < expected, condition.wait(until: deadline) {}
        return times
    }
}
