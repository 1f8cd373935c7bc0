public import Glibc

/// A value behind a lock, for short synchronous sections: the replacement of
/// `Synchronization.Mutex` throughout Keyjar.
///
/// Why not `Mutex`: on Linux it locks with a futex inside the standard library, which is not
/// built with ThreadSanitizer, so TSan sees none of the ordering it gives and reports every
/// access inside a `withLock` as a data race. This one is a `pthread_mutex_t`, which the
/// sanitizers intercept; uncontended it costs the same. Written here rather than taken from
/// NIO's `NIOLock` because the client needs a try-lock, which `NIOLock` lacks.
///
/// ```swift
/// let counter = Locked(0)
/// counter.withLock { $0 += 1 }
/// ```
public final class Locked<Value: ~Copyable>: @unchecked Sendable {
    // @unchecked: `value` is only ever touched while `mutex` is held.
    @usableFromInline let mutex: UnsafeMutablePointer<pthread_mutex_t>
    // Unchecked: `mutex` already makes every access exclusive, and Swift's own check (a
    // thread-local lookup on each `withLock`) was 5% of a listening process's reader thread
    // (perf, `KEYJAR_BENCH_PEER_MODE=listener KEYJAR_BENCH_CLIENT_ONLY=notify keyjar-bench client`).
    @exclusivity(unchecked) @usableFromInline var value: Value

    public init(_ value: consuming Value) {
        mutex = UnsafeMutablePointer.allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(mutex, nil)
        self.value = value
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    /// Runs `body` with the value, holding the lock; never call back into the same lock.
    @inlinable
    public func withLock<Result: ~Copyable, Failure: Error>(
        _ body: (inout Value) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&value)
    }

    /// Runs `body` if the lock is free right now; nil (and `body` not run) when it is held.
    @inlinable
    public func withLockIfAvailable<Result: ~Copyable, Failure: Error>(
        _ body: (inout Value) throws(Failure) -> Result
    ) throws(Failure) -> Result? {
        guard pthread_mutex_trylock(mutex) == 0 else { return nil }
        defer { pthread_mutex_unlock(mutex) }
        return try body(&value)
    }
}
