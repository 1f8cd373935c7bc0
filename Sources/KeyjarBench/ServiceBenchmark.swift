import Foundation
import Glibc
import Keyjar
import KeyjarCodec
import KeyjarCore
import KeyjarProtocol

struct BenchmarkError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// A keyjard of the same build (next to this binary), in a private directory, with passwords
/// in a file so that no D-Bus session is needed and limits raised for 100,000 cookies.
final class BenchDaemon {
    let directory: String
    let socketPath: String
    let process = Process()
    /// Nanoseconds from spawn to its "ready" line.
    private(set) var startup: UInt64 = 0

    /// - Parameter defaultLimits: keyjard's own limits (Chromium's 3,300 and 180) instead of
    ///   room for 100,000 cookies.
    /// - Parameter secretService: the environment of a Secret Service to keep passwords in
    ///   instead of the file.
    /// - Parameter socketPath: where it listens, when not in `directory` beside the database.
    init(
        directory: String,
        socketPath: String? = nil,
        defaultLimits: Bool = false,
        secretService: [String: String]? = nil
    ) throws {
        self.directory = directory
        self.socketPath = socketPath ?? directory + "/keyjar.sock"
        let binary = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent(
            "keyjard"
        ).path
        guard FileManager.default.isExecutableFile(atPath: binary) else {
            throw BenchmarkError("no keyjard beside keyjar-bench: run `swift build -c release` first")
        }
        process.executableURL = URL(fileURLWithPath: binary)
        process.arguments =
            ["--socket", self.socketPath, "--database", directory + "/store.sqlite3", "--log-level", "warning"]
            + (secretService == nil ? ["--secrets", "file"] : [])
            + (defaultLimits ? [] : ["--max-cookies", "200000", "--max-cookies-per-site", "1000"])
        if let secretService { process.environment = secretService }
        let output = Pipe()
        process.standardOutput = output
        let started = nanoseconds()
        try process.run()
        var line: [UInt8] = []
        while true {
            let byte = ((try? output.fileHandleForReading.read(upToCount: 1)) ?? Data())
            guard let value = byte.first else { throw BenchmarkError("keyjard exited before it was ready") }
            if value == UInt8(ascii: "\n") { break }
            line.append(value)
        }
        startup = nanoseconds() - started
    }

    /// Resident memory from /proc, in bytes.
    var residentBytes: Int { statusBytes("VmRSS:") }

    /// The most resident memory it has had (its high-water mark), in bytes.
    var peakResidentBytes: Int { statusBytes("VmHWM:") }

    private func statusBytes(_ field: String) -> Int {
        guard let status = try? String(contentsOfFile: "/proc/\(process.processIdentifier)/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix(field) }),
            let kilobytes = Int(line.split(separator: " ").dropFirst().first ?? "")
        else { return 0 }
        return kilobytes * 1024
    }

    func stop() {
        kill(process.processIdentifier, SIGTERM)
        process.waitUntilExit()
    }
}

/// Results shared by subscriber threads.
/// A flag one thread sets and another polls.
final class ManagedFlag: @unchecked Sendable {
    // @unchecked: every access goes through `lock`.
    private let lock = NSLock()
    private var flag = false

    func set(_ value: Bool) { lock.withLock { flag = value } }
    var value: Bool { lock.withLock { flag } }
}

final class Samples: @unchecked Sendable {
    // @unchecked: every access goes through `lock`.
    private let lock = NSLock()
    private var values: [UInt64] = []

    func append(contentsOf more: [UInt64]) { lock.withLock { values += more } }
    var all: [UInt64] { lock.withLock { values } }
}

/// keyjard through its socket: acknowledged writes, fan-out to 100 clients, bulk import, and
/// start-up with 100,000 stored cookies.
func runServiceBenchmark() throws {
    var template = Array("/tmp/kjbench-XXXXXX".utf8CString)
    guard let made = mkdtemp(&template) else { throw BenchmarkError("mkdtemp failed") }
    let directory = String(cString: made)
    defer { try? FileManager.default.removeItem(atPath: directory) }
    var daemon = try BenchDaemon(directory: directory)
    let writer = try WireConnection(socketPath: daemon.socketPath, client: "bench-writer")

    // KEYJAR_BENCH_SERVICE_ONLY=acked, =fanout or =import runs that part alone (for `perf
    // record` on keyjard); the fan-out sends KEYJAR_BENCH_SERVICE_EVENTS events (default 500).
    let environment = ProcessInfo.processInfo.environment
    let only = environment["KEYJAR_BENCH_SERVICE_ONLY"]

    // 1. One Set-Cookie from a client, answered after its commit. 2,000 cookies on 2,000
    // sites, set and then reset ten times: adds first, replacements after.
    var samples: [UInt64] = []
    let measuresAcked = only == nil || only == "acked"
    for index in 0..<(measuresAcked ? 22_000 : 0) {
        let site = index % 2_000
        let request = Request.setCookies(
            headers: ["c\(site)=value\(index); Max-Age=86400; Secure; SameSite=Lax"],
            context: WireCookieContext(url: "https://www.s\(site).test/")
        )
        let start = nanoseconds()
        _ = try writer.call(request)
        if index >= 2_000 { samples.append(nanoseconds() - start) }
    }
    if measuresAcked {
        report("service_set_cookie_acked", samples: samples, p999: true)
        // The floor in this run (scripts/acked-write-floor.c awake: the same two rows committed
        // by a C server in epoll, a client polling as this one does); target ≤ 1.3×.
        let floor = try ScriptProgram("acked-write-floor.c", linking: "-lsqlite3", needs: "libsqlite3-dev")
        let text = try floor.run(["awake"])
        guard let floorMedian = ScriptProgram.number(after: "median ", in: text) else {
            throw BenchmarkError("unexpected output from the acknowledged-write floor: \(text)")
        }
        let median = percentile(samples.sorted(), 0.5)
        print("service_set_cookie_acked_floor_median: \(Int(floorMedian * 1_000)) ns")
        print("service_set_cookie_acked_over_floor: \(String(format: "%.2f", Double(median) / (floorMedian * 1_000)))")
    }
    if only == "acked" {
        daemon.stop()
        return
    }

    // 2. A change reaching 100 subscribed clients.
    if only == nil || only == "fanout" {
        let events = Int(environment["KEYJAR_BENCH_SERVICE_EVENTS"] ?? "") ?? 500
        try measureFanout(writer: writer, socketPath: daemon.socketPath, events: events)
    }
    if only == "fanout" {
        daemon.stop()
        return
    }

    // 3. Bulk import of 100,000 cookies (5,000 sites, 20 each) in one request, from a
    // connection that is not subscribed; meanwhile another client sets a cookie again and
    // again, and each acknowledged set is timed (the import must not hold it up).
    let importer = try WireConnection(socketPath: daemon.socketPath, client: "bench-importer")
    let expiry = Int(Date().timeIntervalSince1970) + 86_400 * 30
    var text = ""
    text.reserveCapacity(100_000 * 60)
    for index in 0..<100_000 {
        text += ".site\(index % 5_000).example\tTRUE\t/\tFALSE\t\(expiry)\tk\(index / 5_000)\tv\(index)\n"
    }
    let importing = ManagedFlag()
    let bystanderSamples = Samples()
    let bystanderReady = DispatchSemaphore(value: 0)
    let bystanderDone = DispatchSemaphore(value: 0)
    let socketPath = daemon.socketPath
    // KEYJAR_BENCH_STALLS=1 prints each of the other client's waits over 10 ms.
    let printsStalls = environment["KEYJAR_BENCH_STALLS"] != nil
    importing.set(true)
    Thread.detachNewThread {
        defer { bystanderDone.signal() }
        guard let bystander = try? WireConnection(socketPath: socketPath, client: "bench-bystander") else {
            bystanderReady.signal()
            return
        }
        bystanderReady.signal()
        var latencies: [UInt64] = []
        var index = 0
        while importing.value {
            let start = nanoseconds()
            guard
                (try? bystander.call(
                    .setCookies(
                        headers: ["during=\(index); Max-Age=86400"],
                        context: WireCookieContext(url: "https://bystander.test/")
                    )
                )) != nil
            else { break }
            let took = nanoseconds() - start
            latencies.append(took)
            if printsStalls, took > 10_000_000 {
                FileHandle.standardError.write(
                    Data("stall \(took / 1_000_000) ms ending at \(start / 1_000_000 + took / 1_000_000) ms\n".utf8)
                )
            }
            index += 1
        }
        bystanderSamples.append(contentsOf: latencies)
    }
    bystanderReady.wait()
    let importStart = nanoseconds()
    if printsStalls {
        try? FileHandle.standardError.write(contentsOf: Data("import starts at \(importStart / 1_000_000) ms\n".utf8))
    }
    guard
        case .importReport(let imported, _, let problems, _, _, _, _) = try importer.call(
            .importCookies(format: .netscape, text: text),
            timeout: 120
        )
    else { throw BenchmarkError("import failed") }
    let importSeconds = Double(nanoseconds() - importStart) / 1e9
    importing.set(false)
    bystanderDone.wait()
    let during = bystanderSamples.all
    guard during.count >= 10 else {
        throw BenchmarkError("the other client set only \(during.count) cookies during the import")
    }
    print("service_import_100k_other_client_sets: \(during.count)")
    report("service_import_100k_other_client_set_acked", samples: during)
    print("service_import_100k_other_client_set_acked_max: \(during.max() ?? 0) ns")
    guard imported == 100_000, problems.isEmpty else {
        throw BenchmarkError("imported \(imported), \(problems.count) problems")
    }
    print("service_import_100k: \(String(format: "%.3f", importSeconds)) s")
    print("service_import_rate: \(Int(Double(imported) / importSeconds)) cookies/s")

    // 4. Start-up with those ~102,000 stored cookies, until it serves; then its memory.
    daemon.stop()
    var startups: [UInt64] = []
    var resident = 0
    for _ in 0..<3 {
        daemon = try BenchDaemon(directory: directory)
        startups.append(daemon.startup)
        let probe = try WireConnection(socketPath: daemon.socketPath, client: "bench-probe")
        guard case .status(let status) = try probe.call(.status) else { throw BenchmarkError("status failed") }
        if status.cookieCount < 100_000 { throw BenchmarkError("only \(status.cookieCount) cookies after restart") }
        resident = daemon.residentBytes
        daemon.stop()
    }
    print("service_startup_100k_median: \(String(format: "%.1f", Double(startups.sorted()[1]) / 1e6)) ms")
    print("service_rss_100k: \(String(format: "%.1f", Double(resident) / 1_048_576)) MB")
}

/// A change reaching 100 subscribed clients: from the writer's send (so commit included) to
/// each subscriber's receipt of the event.
private func measureFanout(writer: WireConnection, socketPath: String, events: Int) throws {
    let subscriberCount = 100
    let sendTimes = UnsafeMutableBufferPointer<UInt64>.allocate(capacity: events + 1)
    sendTimes.initialize(repeating: 0)
    defer { sendTimes.deallocate() }
    let latencies = Samples()
    let ready = DispatchSemaphore(value: 0)
    let done = DispatchGroup()
    let baseSequence: UInt64
    guard case .subscribed(let current) = try writer.call(.subscribe(after: nil)) else {
        throw BenchmarkError("subscribe failed")
    }
    baseSequence = current
    let sendTimesAddress = UInt(bitPattern: sendTimes.baseAddress)
    for _ in 0..<subscriberCount {
        done.enter()
        Thread.detachNewThread {
            defer { done.leave() }
            guard let connection = try? WireConnection(socketPath: socketPath, client: "bench-subscriber"),
                (try? connection.call(.subscribe(after: nil))) != nil
            else {
                ready.signal()
                return
            }
            ready.signal()
            // Stamped when the frame arrives, before JSON decoding: this measures delivery to
            // 100 connections, not 100 decoders sharing this machine's 2 cores.
            var received: [UInt64] = []
            let times = UnsafePointer<UInt64>(bitPattern: sendTimesAddress)
            while received.count < events, let payload = try? connection.receiveRaw(timeout: 30) {
                let now = nanoseconds()
                guard let sequence = eventSequence(payload) else { continue }
                let index = Int(sequence) - Int(baseSequence)
                guard index >= 1, index <= events, let sent = times?[index] else { continue }
                received.append(now - sent)
            }
            latencies.append(contentsOf: received)
        }
    }
    for _ in 0..<subscriberCount { ready.wait() }
    var acknowledgements: [UInt64] = []
    for index in 1...events {
        let sent = nanoseconds()
        sendTimes[index] = sent
        _ = try writer.call(
            .setCookies(
                headers: ["fan=\(index); Max-Age=600"],
                context: WireCookieContext(url: "https://fanout.test/")
            )
        )
        acknowledgements.append(nanoseconds() - sent)
        usleep(2_000)  // a change every ~2 ms, not a flood: this measures latency, not backlog
    }
    done.wait()
    let fanout = latencies.all
    print("service_fanout_clients: \(subscriberCount) clients")
    print("service_fanout_deliveries: \(fanout.count) events")
    report("service_fanout_from_send", samples: fanout)
    // The same acknowledged write as in 1., now with 100 other subscribers to tell.
    report("service_set_cookie_acked_100_subscribers", samples: acknowledgements)
}

/// The sequence number of a pushed event payload, read without decoding the JSON: keyjard
/// writes events as `{"event":{"event":{"sequence":N,...`.
func eventSequence(_ payload: [UInt8]) -> UInt64? {
    let prefix = Array(#"{"event":{"event":{"sequence":"#.utf8)
    guard payload.starts(with: prefix) else { return nil }
    var value: UInt64 = 0
    for byte in payload.dropFirst(prefix.count) {
        guard byte >= 0x30 && byte <= 0x39 else { break }
        value = value * 10 + UInt64(byte - 0x30)
    }
    return value
}
