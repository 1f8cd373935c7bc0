import Foundation
public import Testing

// How the suite waits. Swift Testing runs test bodies on Swift's cooperative pool, which has one
// thread per core (two here). A body that blocks its thread — on a process's exit, a semaphore,
// a polling sleep — stalls every test queued behind it, so a limit counted from a test's start
// measures how busy the machine is. Every wait here is `async`: it suspends the task and holds
// no thread, and it ends at a deadline on the thing awaited, never on the test's own clock.

/// How long a test waits for one thing (a process to start or exit, a reply, a state) before it
/// calls it a hang. Sized for a loaded 2-core machine running the whole suite at once: only
/// something that will never happen reaches it. Ten times longer under a sanitizer.
public let hangDeadline: Duration = .seconds(120 * sanitizerSlowdown)

/// How long a test waits for a script that does several such things in turn (every example of
/// the documentation, each with its own keyjard and servers): five of `hangDeadline`. One
/// `hangDeadline` for the whole script measured how busy the machine was: alone the examples
/// take 10 s, but beside a release build in the suite they took over 120 s.
public let scriptDeadline: Duration = hangDeadline * 5

/// The whole-test guard against a hang nobody waits on with a deadline (a body stuck in a
/// synchronous call): far beyond the time the whole suite takes on a busy machine.
public let hangLimit: TimeLimitTrait.Duration =
    ProcessInfo.processInfo.environment["KEYJAR_SANITIZER"] == nil ? .minutes(15) : .minutes(60)

/// Something awaited did not happen before its deadline.
public struct WaitTimedOut: Error, CustomStringConvertible {
    public var description: String

    public init(_ what: String, after deadline: Duration) {
        description = "\(what) did not happen within \(deadline)"
    }
}

/// Checks `condition` until it holds and returns true; false once `deadline` has passed. The
/// task sleeps between checks, so no thread is held; the pause is only the pace of checking.
public func eventually(
    within deadline: Duration = hangDeadline,
    every interval: Duration = .milliseconds(10),
    _ condition: () throws -> Bool
) async rethrows -> Bool {
    let clock = ContinuousClock()
    let end = clock.now.advanced(by: deadline)
    while true {
        if try condition() { return true }
        if clock.now >= end { return false }
        try? await Task.sleep(for: interval)
    }
}

/// Like `eventually`, but throws `WaitTimedOut` naming what was awaited.
public func waitUntil(
    _ what: @autoclosure () -> String,
    within deadline: Duration = hangDeadline,
    every interval: Duration = .milliseconds(10),
    _ condition: () throws -> Bool
) async throws {
    guard try await eventually(within: deadline, every: interval, condition) else {
        throw WaitTimedOut(what(), after: deadline)
    }
}

/// Like `waitUntil`, for a condition that must itself wait (a command run to check it).
public func waitUntil(
    _ what: @autoclosure () -> String,
    within deadline: Duration = hangDeadline,
    every interval: Duration = .milliseconds(10),
    asking condition: () async throws -> Bool
) async throws {
    let clock = ContinuousClock()
    let end = clock.now.advanced(by: deadline)
    while try await !condition() {
        guard clock.now < end else { throw WaitTimedOut(what(), after: deadline) }
        try? await Task.sleep(for: interval)
    }
}

/// Runs blocking work (a synchronous API under test, a blocking read) on a thread of its own
/// and suspends until it returns: the cooperative pool stays free for the other tests.
public func onOwnThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        let thread = Thread { continuation.resume(with: Result { try body() }) }
        thread.stackSize = 8 << 20
        thread.start()
    }
}

/// A counting semaphore that threads signal (a delegate's callback, a server's queue) and tests
/// await with a deadline, holding no thread while they wait.
public final class TestSemaphore: @unchecked Sendable {
    // @unchecked: every access goes through `lock`.
    private let lock = NSLock()
    private var count: Int
    private var waiters: [(id: UInt64, continuation: CheckedContinuation<Bool, Never>)] = []
    private var nextID: UInt64 = 0

    public init(value: Int = 0) { count = value }

    public func signal() {
        let waiter: CheckedContinuation<Bool, Never>? = lock.withLock {
            if waiters.isEmpty {
                count += 1
                return nil
            }
            return waiters.removeFirst().continuation
        }
        waiter?.resume(returning: true)
    }

    /// True once signalled; false if `deadline` passed first (the signal is then not taken).
    public func wait(within deadline: Duration = hangDeadline) async -> Bool {
        await withCheckedContinuation { continuation in
            let id: UInt64? = lock.withLock {
                if count > 0 {
                    count -= 1
                    return nil
                }
                nextID += 1
                waiters.append((nextID, continuation))
                return nextID
            }
            guard let id else { return continuation.resume(returning: true) }
            // The deadline runs on a dispatch timer, not on the cooperative pool.
            DispatchQueue.global().asyncAfter(deadline: .now() + deadline.timeInterval) {
                let expired: CheckedContinuation<Bool, Never>? = self.lock.withLock {
                    guard let index = self.waiters.firstIndex(where: { $0.id == id }) else { return nil }
                    return self.waiters.remove(at: index).continuation
                }
                expired?.resume(returning: false)
            }
        }
    }
}

/// A gate that opens once and stays open: every present and later waiter passes.
public final class TestLatch: Sendable {
    private let semaphore = TestSemaphore()
    private let opened = LockedBox(false)

    public init() {}

    public var isOpen: Bool { opened.get() }

    public func open() {
        guard opened.exchange(true) == false else { return }
        // One signal is passed on by each waiter that takes it (see `wait`).
        semaphore.signal()
    }

    /// True once open; false if `deadline` passed first.
    public func wait(within deadline: Duration = hangDeadline) async -> Bool {
        guard await semaphore.wait(within: deadline) else { return false }
        semaphore.signal()
        return true
    }
}

extension Duration {
    /// In seconds, for Dispatch and Foundation.
    public var timeInterval: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) + Double(attoseconds) / 1e18
    }
}

/// `hangDeadline` in seconds, for the synchronous APIs that take a timeout.
public let hangSeconds: Double = hangDeadline.timeInterval
