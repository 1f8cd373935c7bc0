import Foundation
import Glibc
import Synchronization

/// Runs a connection's own work on the thread of a caller that blocks for the result
/// (`sendSynchronousRequest`). When the engine has nothing else to do, that thread also drives
/// the transfers itself; otherwise an event from the engine wakes it directly, instead of
/// waking a pool thread that would wake the caller in turn. On this kind of machine every
/// cross-thread wake-up costs some 20–35 µs, more than everything else a request does.
///
/// Jobs still run on the connection's serial queue (`DispatchQueue.sync` runs them on the
/// calling thread), so they stay serial with anything another thread sends the connection.
final class CallerExecutor: Sendable {
    private struct State {
        var jobs: [@Sendable () -> Void] = []
        /// The waiting thread while it drives the engine: work from elsewhere must break it
        /// out of libcurl's wait.
        var drivingThread: pthread_t?
        /// The caller stopped waiting; later jobs go to the queue like any connection's.
        var closed = false
    }

    private let queue: DispatchQueue
    private let engine: CurlEngine
    private let state = Mutex(State())
    private let wakeup = DispatchSemaphore(value: 0)

    init(queue: DispatchQueue, engine: CurlEngine = .shared) {
        self.queue = queue
        self.engine = engine
    }

    private enum Nudge {
        case none
        case signal
        case wakeDriver
        case runElsewhere
    }

    func post(_ job: @escaping @Sendable () -> Void) {
        let nudge = state.withLock { state -> Nudge in
            guard !state.closed else { return .runElsewhere }
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
        case .runElsewhere: queue.async(execute: job)
        }
    }

    /// Makes the caller look at its result again (for a result set from another thread).
    func wake() {
        let nudge = state.withLock { state -> Nudge in
            guard let thread = state.drivingThread else { return .signal }
            return pthread_equal(thread, pthread_self()) != 0 ? .none : .wakeDriver
        }
        switch nudge {
        case .none, .runElsewhere: break
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
        let left = state.withLock { state in
            state.closed = true
            defer { state.jobs.removeAll() }
            return state.jobs
        }
        for job in left { queue.async(execute: job) }
    }

    private func runJobs() {
        let jobs = state.withLock { state in
            defer { state.jobs.removeAll(keepingCapacity: true) }
            return state.jobs
        }
        for job in jobs { queue.sync(execute: job) }
    }
}
