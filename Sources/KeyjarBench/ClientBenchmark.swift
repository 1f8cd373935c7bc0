import Foundation
import Glibc
import Keyjar
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
    _ = try KeyjarConnection(socketPath: daemon.socketPath).call(.importCookies(format: .netscape, text: text))

    let configuration = KeyjarClient.Configuration(socketPath: daemon.socketPath, autoStart: false)
    let heapBefore = heapBytesInUse()
    let reader = SharedCookieStorage(client: try KeyjarClient(configuration: configuration))
    print("client_replica_memory_10k: \(String(format: "%.2f", Double(heapBytesInUse() - heapBefore) / 1_048_576)) MB")

    let urls = (0..<500).compactMap { URL(string: "https://www.site\($0).com/some/path") }
    var samples: [UInt64] = []
    for iteration in 0..<100_000 {
        let url = urls[(iteration &* 7919) % urls.count]
        let start = nanoseconds()
        let header = reader.cookieHeader(for: url)
        samples.append(nanoseconds() - start)
        if header == nil { throw BenchmarkError("no header for \(url)") }
    }
    report("client_cookie_header", samples: samples)

    // A write through the library, acknowledged after commit (the service benchmark's
    // service_set_cookie_acked measures the same through a bare KeyjarConnection).
    let writer = SharedCookieStorage(client: try KeyjarClient(configuration: configuration))
    var writes: [UInt64] = []
    for index in 0..<5_500 {
        guard let url = URL(string: "https://www.w\(index % 500).test/") else { throw BenchmarkError("bad URL") }
        let start = nanoseconds()
        _ = try writer.storeCookies(fromResponseHeaders: ["w=\(index); Max-Age=600"], for: url, mainDocumentURL: nil)
        if index >= 500 { writes.append(nanoseconds() - start) }
    }
    report("client_set_cookie_acked", samples: writes)

    // A writes, B (one of 100 connected clients) is notified; and every one of the 99 others.
    let others = try (0..<98).map { _ in try KeyjarClient(configuration: configuration) }
    let arrivals = Arrivals(expected: 1)
    let everyone = Arrivals(expected: others.count + 1)
    let writerClient = writer.client
    let observer = NotificationCenter.default.addObserver(
        forName: KeyjarNotifications.cookiesChanged, object: nil, queue: nil
    ) { notification in
        guard let event = notification.userInfo?[KeyjarNotifications.eventKey] as? SequencedEvent,
            let client = notification.object as? KeyjarClient, client !== writerClient
        else { return }
        let now = nanoseconds()
        everyone.record(event.sequence, at: now)
        if client === reader.client { arrivals.record(event.sequence, at: now) }
    }
    defer { NotificationCenter.default.removeObserver(observer) }
    guard let site = URL(string: "https://notify.test/") else { throw BenchmarkError("bad URL") }
    var latencies: [UInt64] = []
    var allLatencies: [UInt64] = []
    for index in 0..<500 {
        let start = nanoseconds()
        _ = try writer.storeCookies(fromResponseHeaders: ["n=\(index); Max-Age=600"], for: site, mainDocumentURL: nil)
        let sequence = writer.client.sequence
        guard let arrived = arrivals.wait(for: sequence, timeout: 5).first else {
            throw BenchmarkError("no notification for \(sequence)")
        }
        latencies.append(arrived - start)
        let all = everyone.wait(for: sequence, timeout: 5)
        guard all.count == others.count + 1 else { throw BenchmarkError("only \(all.count) clients notified of \(sequence)") }
        allLatencies += all.map { $0 - start }
        usleep(1_000)
    }
    print("client_notify_clients: \(others.count + 2) clients")
    report("client_write_to_other_notified", samples: latencies)
    // Every client's notification, wherever keyjard's fan-out reached it: the fair figure.
    report("client_write_to_all_others_notified", samples: allLatencies)
}

/// Notification arrival times by sequence number, shared with the observers' threads.
final class Arrivals: @unchecked Sendable {
    // @unchecked: every access goes through `condition`.
    private let condition = NSCondition()
    private var times: [UInt64: [UInt64]] = [:]
    /// Arrivals per sequence number that complete it. The waiter is woken only then: waking it
    /// for each of 99 clients would put 99 more thread wake-ups into what is being measured.
    private let expected: Int

    init(expected: Int) { self.expected = expected }

    func record(_ sequence: UInt64, at time: UInt64) {
        condition.lock()
        times[sequence, default: []].append(time)
        if times[sequence]?.count == expected { condition.broadcast() }
        condition.unlock()
    }

    /// The arrivals for `sequence`: all expected ones, or fewer when the time ran out.
    func wait(for sequence: UInt64, timeout: TimeInterval) -> [UInt64] {
        let deadline = Date().addingTimeInterval(timeout)
        condition.lock()
        defer { condition.unlock() }
        while times[sequence, default: []].count < expected, condition.wait(until: deadline) {}
        return times[sequence] ?? []
    }
}
