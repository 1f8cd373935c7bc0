import CProcessControl
import Glibc

// Threads and sleeping without Foundation's `Thread`: the `keyjar` front and a transfer start
// without Foundation (docs/performance.md, The command).

/// Runs `body` on a new detached thread, as `Thread.detachNewThread` does, named `name` (at
/// most 15 bytes, as `ps` and `top` show it) when given.
package func detachThread(named name: String? = nil, _ body: @escaping @Sendable () -> Void) {
    let start = Unmanaged.passRetained(ThreadStart(name: name, body)).toOpaque()
    var thread = pthread_t()
    let created = pthread_create(
        &thread,
        nil,
        { argument in
            guard let argument else { return nil }
            Unmanaged<ThreadStart>.fromOpaque(argument).takeRetainedValue().run()
            return nil
        },
        start
    )
    // As `Thread.detachNewThread`: a process that cannot start a thread cannot go on.
    guard created == 0 else { fatalError("pthread_create failed: \(String(cString: strerror(created)))") }
    pthread_detach(thread)
}

private final class ThreadStart: Sendable {
    let name: String?
    let body: @Sendable () -> Void

    init(name: String?, _ body: @escaping @Sendable () -> Void) {
        self.name = name
        self.body = body
    }

    func run() {
        if let name { _ = keyjar_set_thread_name(name) }
        body()
    }
}

/// Sleeps this thread for `seconds`, resuming after a signal, as `Thread.sleep(forTimeInterval:)`.
package func sleepThread(seconds: Double) {
    guard seconds > 0 else { return }
    var request = timespec(tv_sec: Int(seconds), tv_nsec: Int((seconds - seconds.rounded(.down)) * 1_000_000_000))
    var remaining = timespec()
    while nanosleep(&request, &remaining) == -1, errno == EINTR { request = remaining }
}
