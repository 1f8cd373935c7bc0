import Foundation

/// At most `limit` holders of something scarce at once; the others wait their turn, first come
/// first served, suspended (no thread of Swift's cooperative pool is held while waiting).
///
/// Why the suite needs one: every private D-Bus daemon takes one of the user's inotify
/// instances (`fs.inotify.max_user_instances`, 128 by default, shared with the desktop the
/// tests may run in), and Swift Testing starts every test at once. Unbounded, the suite's own
/// daemons reached 42 at a time and left the tests that watch files with none
/// ("cannot start inotify: Too many open files"). A holder waits only while `limit` others run,
/// far below any test's hang guard.
public final class ConcurrencyGate: @unchecked Sendable {
    // @unchecked: `available` and `waiting` are only touched under `lock`.
    private let lock = NSLock()
    private var available: Int
    private var waiting: [CheckedContinuation<Void, Never>] = []

    public init(limit: Int) {
        precondition(limit > 0, "a gate lets at least one through")
        available = limit
    }

    /// Places free right now.
    public var freePlaces: Int { lock.withLock { available } }

    /// Holders waiting for a place right now.
    public var waitingCount: Int { lock.withLock { waiting.count } }

    /// A place behind the gate, given back when the returned slot is released.
    public func enter() async -> Slot {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            lock.lock()
            let now = available > 0
            if now { available -= 1 } else { waiting.append(continuation) }
            lock.unlock()
            if now { continuation.resume() }
        }
        return Slot(gate: self)
    }

    fileprivate func leave() {
        lock.lock()
        let next = waiting.isEmpty ? nil : waiting.removeFirst()
        if next == nil { available += 1 }
        lock.unlock()
        next?.resume()
    }

    /// Held for as long as its holder needs the resource; the place is given back on release,
    /// so that an initializer that throws after entering gives it back too.
    public final class Slot: Sendable {
        private let gate: ConcurrencyGate

        fileprivate init(gate: ConcurrencyGate) { self.gate = gate }

        deinit { gate.leave() }
    }
}
