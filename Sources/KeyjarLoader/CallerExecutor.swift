import Foundation
import Glibc
import KeyjarLocks
import KeyjarTransfer
import Synchronization

/// Runs a connection's own work on the thread of a caller that blocks for the result
/// (`sendSynchronousRequest`). When the engine has nothing else to do, that thread also drives
/// the transfers itself; otherwise an event from the engine wakes it directly, instead of
/// waking a pool thread that would wake the caller in turn. On a small machine every
/// cross-thread wake-up costs more than everything else a request does (docs/performance.md,
/// Loader).
///
/// Jobs are serial without a queue: while the caller waits, only its thread runs them (others
/// post them here), and jobs posted after it stopped waiting go to a serial queue made then,
/// which starts only after the caller's last job.
final class CallerExecutor: Sendable {
    private struct State {
        var jobs: [@Sendable () -> Void]
        /// The waiting thread while it drives the engine: work from elsewhere must break it
        /// out of libcurl's wait.
        var drivingThread: pthread_t?
        /// The caller stopped waiting; later jobs go to a queue like any connection's.
        var closed = false
        /// Made only for jobs that come after the caller (rare: the load is normally over).
        var queue: DispatchQueue?

        mutating func lateQueue(_ make: () -> DispatchQueue) -> DispatchQueue {
            if let queue { return queue }
            let made = make()
            queue = made
            return made
        }
    }

    private let makeQueue: @Sendable () -> DispatchQueue
    private let engine: CurlEngine
    private let state: Locked<State>
    private let wakeup = DispatchSemaphore(value: 0)

    init(makeQueue: @escaping @Sendable () -> DispatchQueue, engine: CurlEngine = .shared) {
        self.makeQueue = makeQueue
        self.engine = engine
        // Room for a load's usual batch (its start, then head, body and end from one round of
        // the engine): grown from empty, the array was allocated three times per request.
        var jobs: [@Sendable () -> Void] = []
        jobs.reserveCapacity(4)
        state = Locked(State(jobs: jobs))
    }

    private enum Nudge {
        case none
        case signal
        case wakeDriver
        case runOn(DispatchQueue)
    }

    func post(_ job: @escaping @Sendable () -> Void) {
        let nudge = state.withLock { state -> Nudge in
            guard !state.closed else { return .runOn(state.lateQueue(makeQueue)) }
            state.jobs.append(job)
            if let thread = state.drivingThread {
                return pthread_equal(thread, pthread_self()) != 0 ? .none : .wakeDriver
            }
            // One wake-up per batch: the caller takes every job queued when it wakes.
            return state.jobs.count == 1 ? .signal : .none
        }
        switch nudge {
        case .none: break
        case .signal: wakeup.signal()
        case .wakeDriver: engine.wakeDriver()
        case .runOn(let queue): queue.async(execute: job)
        }
    }

    /// Makes the caller look at its result again (for a result set from another thread).
    func wake() {
        let nudge = state.withLock { state -> Nudge in
            guard let thread = state.drivingThread else { return .signal }
            return pthread_equal(thread, pthread_self()) != 0 ? .none : .wakeDriver
        }
        switch nudge {
        case .none, .runOn: break
        case .signal: wakeup.signal()
        case .wakeDriver: engine.wakeDriver()
        }
    }

    /// Runs posted jobs on this thread until `isDone` says the result is there, driving the
    /// engine meanwhile whenever nobody else does.
    func run(until isDone: () -> Bool) {
        while !isDone() {
            // Marked before taking the role, so that nothing posted while it drives only
            // signals the semaphore the driver is not waiting on.
            state.withLock { $0.drivingThread = pthread_self() }
            if engine.takeDriverRole() {
                engine.drive(runningBetweenSteps: runJobs, until: isDone)
                state.withLock { $0.drivingThread = nil }
            } else {
                // A job posted or a result set while the mark was up sent no signal.
                let nothingQueued = state.withLock { state in
                    state.drivingThread = nil
                    return state.jobs.isEmpty
                }
                if nothingQueued, !isDone() { wakeup.wait() }
                runJobs()
            }
        }
        state.withLock { state in
            state.closed = true
            guard !state.jobs.isEmpty else { return }
            // Queued under the lock, so that a job posted meanwhile cannot overtake them.
            let queue = state.lateQueue(makeQueue)
            for job in state.jobs { queue.async(execute: job) }
            state.jobs.removeAll()
        }
    }

    /// Runs the jobs queued when called, one at a time out of the array: taking the batch as
    /// a copy made the array allocate again for every batch.
    private func runJobs() {
        var count = state.withLock { $0.jobs.count }
        while count > 0, let job = state.withLock({ $0.jobs.isEmpty ? nil : $0.jobs.removeFirst() }) {
            job()
            count -= 1
        }
    }
}
