import CoreFoundation  // struct timespec's members resolve there once libcrypto's headers are in the build
import Foundation
import Keyjar
import KeyjarCore

/// What a change costs a process that does not listen now that storages post every change
/// their replica applies, observed or not: posting one notification with nobody observing and
/// with one observer, and a lookup after another connection's change (the catch-up that posts
/// it) without and with an observer of the storage.
/// (`KEYJAR_BENCH_CLIENT_ONLY=post keyjar-bench client`; a listening process's cost per change
/// is `client_notified_cpu_per_change_per_process`, with `KEYJAR_BENCH_PEER_MODE=storage` for
/// peers that observe a storage through its `addObserver`.)
func runNotificationCostBenchmark(socketPath: String) throws {
    let storage = SharedCookieStorage.ephemeral()
    let event = SequencedEvent(
        sequence: 1,
        event: .cookies(changes: [.added(Cookie(name: "n", value: "1", domain: "post.test"))])
    )
    func posting() -> [UInt64] {
        (0..<100_000).map { _ in
            let start = nanoseconds()
            NotificationCenter.default.post(
                name: KeyjarNotifications.cookiesChanged,
                object: storage,
                userInfo: [KeyjarNotifications.eventKey: event]
            )
            return nanoseconds() - start
        }
    }
    report("client_post_unobserved", samples: posting())
    let calls = Counter()
    let observer = NotificationCenter.default.addObserver(
        forName: KeyjarNotifications.cookiesChanged,
        object: storage,
        queue: nil
    ) { _ in calls.increment() }
    report("client_post_observed", samples: posting())
    NotificationCenter.default.removeObserver(observer)

    let configuration = KeyjarClient.Configuration(socketPath: socketPath, autoStart: false)
    let writer = SharedCookieStorage(client: try KeyjarClient(configuration: configuration))
    let reader = SharedCookieStorage(client: try KeyjarClient(configuration: configuration))
    guard let url = URL(string: "https://post.test/") else { throw BenchmarkError("bad URL") }
    func lookupsAfterForeignChanges() throws -> [UInt64] {
        var samples: [UInt64] = []
        for index in 0..<2_500 {
            _ = try writer.storeCookies(fromResponseHeaders: ["p=\(index)"], for: url, mainDocumentURL: nil)
            let start = nanoseconds()
            let header = reader.cookieHeader(for: url)
            if index >= 500 { samples.append(nanoseconds() - start) }
            guard header == "p=\(index)" else { throw BenchmarkError("a stale lookup: \(header ?? "none")") }
        }
        return samples
    }
    report("client_lookup_after_foreign_change_unobserved", samples: try lookupsAfterForeignChanges())
    let readerObserver = NotificationCenter.default.addObserver(
        forName: KeyjarNotifications.cookiesChanged,
        object: reader,
        queue: nil
    ) { _ in calls.increment() }
    report("client_lookup_after_foreign_change_observed", samples: try lookupsAfterForeignChanges())
    NotificationCenter.default.removeObserver(readerObserver)
    guard calls.value == 100_000 + 2_500 else { throw BenchmarkError("the observers were called \(calls.value) times") }
}

/// A counter an observer may bump from any thread.
private final class Counter: @unchecked Sendable {
    // @unchecked: every access goes through `lock`.
    private let lock = NSLock()
    private var count = 0

    func increment() { lock.withLock { count += 1 } }
    var value: Int { lock.withLock { count } }
}
