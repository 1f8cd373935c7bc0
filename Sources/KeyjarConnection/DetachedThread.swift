import Glibc

// Threads and sleeping without Foundation's `Thread`: this module links only
// FoundationEssentials, so that the `keyjar` front starts without Foundation
// (docs/performance.md, The command).

/// Runs `body` on a new detached thread, as `Thread.detachNewThread` does.
func detachThread(_ body: @escaping @Sendable () -> Void) {
    let start = Unmanaged.passRetained(ThreadStart(body)).toOpaque()
    var thread = pthread_t()
    let created = pthread_create(
        &thread,
        nil,
        { argument in
            guard let argument else { return nil }
            Unmanaged<ThreadStart>.fromOpaque(argument).takeRetainedValue().body()
            return nil
        },
        start
    )
    // As `Thread.detachNewThread`: a process that cannot start a thread cannot go on.
    guard created == 0 else { fatalError("pthread_create failed: \(String(cString: strerror(created)))") }
    pthread_detach(thread)
}

private final class ThreadStart: Sendable {
    let body: @Sendable () -> Void

    init(_ body: @escaping @Sendable () -> Void) {
        self.body = body
    }
}

/// Sleeps this thread for `seconds`, resuming after a signal, as `Thread.sleep(forTimeInterval:)`.
func sleepThread(seconds: Double) {
    guard seconds > 0 else { return }
    var request = timespec(tv_sec: Int(seconds), tv_nsec: Int((seconds - seconds.rounded(.down)) * 1_000_000_000))
    var remaining = timespec()
    while nanosleep(&request, &remaining) == -1, errno == EINTR { request = remaining }
}
