import CCurl
import Dispatch
import Glibc
import KeyjarLocks
import KeyjarPlatform
import Synchronization

/// Drives every transfer of the process through one libcurl multi handle, so a thousand
/// concurrent connections cost a thousand sockets, not a thousand threads, and keep-alive
/// connections are shared by every request of the process.
///
/// One thread at a time drives the multi handle (holds the driver role): the engine's own
/// thread, or a thread blocked in `sendSynchronousRequest` that found the engine with nothing
/// to do. Such a caller would otherwise sleep while the engine thread works for it, and each of
/// those two hand-overs is a cross-thread wake-up (docs/performance.md, Loader). Whoever drives
/// runs every transfer's callbacks; when a caller's load is over while other transfers are
/// still running, the engine thread takes over. A thread that adds a transfer while nothing
/// loads drives one round itself (so its request is on the wire at once) before handing over.
///
/// Other threads talk to the engine only through its inbox (then `curl_multi_wakeup`); the
/// multi handle, the easy handles while they are added, and every libcurl callback belong to
/// the driver.
package final class CurlEngine: Sendable {
    /// The process's engine. Its thread starts with the first transfer that a blocked caller
    /// does not drive itself, and sleeps while nothing is loading.
    package static let shared = CurlEngine()

    private enum Command {
        case add(CurlTransfer)
        case cancel(CurlTransfer)
        case resume(CurlTransfer)
    }

    private enum Driver {
        case nobody
        case engineThread
        case caller(pthread_t)
    }

    /// A CURLM handle; only the driver touches it except for `curl_multi_wakeup`, which
    /// libcurl documents as callable from any thread.
    private struct MultiHandle: @unchecked Sendable {
        let pointer: UnsafeMutableRawPointer
    }

    private struct Control {
        var inbox: [Command] = []
        var driver = Driver.nobody
        var threadStarted = false
        /// Another thread started or changed a load while a caller drives: the caller gives
        /// the role to the engine thread, so that its own connection's work (cookie store,
        /// credential lookups) never holds up other loads.
        var handOff = false
    }

    /// What the driver works with; touched only by the thread that holds the driver role
    /// (taking the role goes through `control`'s lock, which orders the accesses).
    private final class Driven: @unchecked Sendable {
        var transfers: [UnsafeMutableRawPointer: CurlTransfer] = [:]
        var lastSweep: UInt64 = 0
        /// How many transfers the connection-cache limit was last set beside.
        var limitedBeside = 0
        /// The inbox's commands being handled; swapped with the inbox so that neither array
        /// allocates again on every round.
        var commands: [Command] = []
    }

    private let multi: MultiHandle
    private let control = Locked(Control())
    private let driven = Driven()
    /// Wakes the engine thread when it is handed the driver role.
    private let threadWakeup = DispatchSemaphore(value: 0)

    private init() {
        curl_global_init(Int(CURL_GLOBAL_ALL))
        guard let pointer = curl_multi_init() else { fatalError("libcurl could not create a multi handle") }
        multi = MultiHandle(pointer: pointer)
        Self.keepIdle(beside: 0, in: pointer)
    }

    /// Idle keep-alive connections kept for reuse, however many transfers are running.
    package static let idleConnections = 256

    /// Sets libcurl's connection-cache limit to `idleConnections` beyond the `running`
    /// transfers. libcurl counts connections in use (and dead ones not yet pruned) against
    /// CURLMOPT_MAXCONNECTS and, whenever a transfer ends above it, closes the oldest idle one:
    /// with a fixed limit, a few hundred loads in flight would close every connection as soon
    /// as it was returned, and a sequential client's next request would find none (libcurl's
    /// default, 4 per added handle, shrinks to nothing between requests). libcurl reads the
    /// limit on each return, so it can follow the count.
    private static func keepIdle(beside running: Int, in pointer: UnsafeMutableRawPointer) {
        _ = keyjar_multi_setopt_long(pointer, CURLMOPT_MAXCONNECTS, idleConnections + running)
    }

    package func add(_ transfer: CurlTransfer) { post(.add(transfer)) }

    /// Stops a transfer; no callback of it runs after the engine handled this.
    package func cancel(_ transfer: CurlTransfer) { post(.cancel(transfer)) }

    /// Continues a transfer paused because its receiver had too much unread data.
    package func resume(_ transfer: CurlTransfer) { post(.resume(transfer)) }

    private enum Nudge {
        case none
        case startThread
        case wakeThread
        case wakeMulti
        /// Drive one round on this thread, then hand the role to the engine thread.
        case pumpThenHandOff
    }

    private func post(_ command: Command) {
        let nudge = control.withLock { control -> Nudge in
            control.inbox.append(command)
            switch control.driver {
            case .nobody:
                // Nothing is loading: the thread adding a transfer lets libcurl send its
                // request at once, and the engine thread's wake-up overlaps the server's work
                // instead of coming before it.
                if case .add = command {
                    control.driver = .caller(pthread_self())
                    return .pumpThenHandOff
                }
                control.driver = .engineThread
                if control.threadStarted { return .wakeThread }
                control.threadStarted = true
                return .startThread
            case .engineThread:
                return .wakeMulti
            case .caller(let thread):
                // The driving caller posting for itself reads the inbox before it next waits.
                guard pthread_equal(thread, pthread_self()) == 0 else { return .none }
                control.handOff = true
                return .wakeMulti
            }
        }
        perform(nudge)
    }

    private func perform(_ nudge: Nudge) {
        switch nudge {
        case .none: break
        case .startThread:
            detachThread(named: "keyjar-loader") { [self] in self.runThread() }
        case .wakeThread: threadWakeup.signal()
        case .wakeMulti: curl_multi_wakeup(multi.pointer)
        case .pumpThenHandOff:
            pump()
            perform(handOffToEngineThread())
        }
    }

    /// Gives the driver role (held by the calling thread) to the engine thread.
    private func handOffToEngineThread() -> Nudge {
        control.withLock { control -> Nudge in
            control.handOff = false
            guard control.inbox.isEmpty, driven.transfers.isEmpty else {
                control.driver = .engineThread
                if control.threadStarted { return .wakeThread }
                control.threadStarted = true
                return .startThread
            }
            control.driver = .nobody
            return .none
        }
    }

    /// Breaks the driver out of its wait (for a driving caller that was sent work).
    package func wakeDriver() { curl_multi_wakeup(multi.pointer) }

    private func runThread() {
        while true {
            pump()
            let idle = control.withLock { control -> Bool in
                guard control.inbox.isEmpty, driven.transfers.isEmpty else { return false }
                control.driver = .nobody
                return true
            }
            if idle {
                // Keep-alive connections need no driving while nothing loads.
                threadWakeup.wait()
            } else {
                waitForActivity()
            }
        }
    }

    /// Takes the driver role for the calling thread if nobody holds it.
    package func takeDriverRole() -> Bool {
        control.withLock { control in
            guard case .nobody = control.driver else { return false }
            control.driver = .caller(pthread_self())
            control.handOff = false
            return true
        }
    }

    /// Drives the multi handle on the calling thread (which holds the driver role) until
    /// `isDone` or another thread has loads of its own, running the caller's own connection
    /// work in between; then hands the role on.
    package func drive(runningBetweenSteps runJobs: () -> Void, until isDone: () -> Bool) {
        let mustHandOff = { self.control.withLock { $0.handOff } }
        // Commands the caller's own jobs posted (a retry's transfer) wake nobody: they are
        // read by the next pump, which must not wait first.
        let ownCommandsWaiting = { self.control.withLock { !$0.inbox.isEmpty } }
        while true {
            runJobs()
            if isDone() || mustHandOff() { break }
            pump()
            runJobs()
            if isDone() || mustHandOff() { break }
            if !ownCommandsWaiting() { waitForActivity() }
        }
        perform(handOffToEngineThread())
    }

    /// One round of the driver's work: commands from other threads, libcurl's transfers,
    /// finished transfers, idle timeouts.
    private func pump() {
        control.withLock { control in
            if !control.inbox.isEmpty { swap(&control.inbox, &driven.commands) }
        }
        defer { driven.commands.removeAll(keepingCapacity: true) }
        for command in driven.commands {
            switch command {
            case .add(let transfer):
                if driven.transfers[transfer.easy] == nil,
                    curl_multi_add_handle(multi.pointer, transfer.easy) == CURLM_OK
                {
                    driven.transfers[transfer.easy] = transfer
                    transfer.touch()
                } else {
                    transfer.complete(CURLE_FAILED_INIT)
                }
            case .cancel(let transfer):
                if driven.transfers.removeValue(forKey: transfer.easy) != nil {
                    curl_multi_remove_handle(multi.pointer, transfer.easy)
                }
            case .resume(let transfer):
                if driven.transfers[transfer.easy] != nil { curl_easy_pause(transfer.easy, CURLPAUSE_CONT) }
            }
        }
        followConnectionLimit()
        var running: Int32 = 0
        curl_multi_perform(multi.pointer, &running)
        var remaining: Int32 = 0
        while let message = curl_multi_info_read(multi.pointer, &remaining) {
            guard keyjar_message_is_done(message) != 0, let easy = keyjar_message_easy_handle(message) else { continue }
            let result = keyjar_message_result(message)
            if let transfer = driven.transfers.removeValue(forKey: easy) {
                // Remove before completing so the finished handle's connection goes back to
                // the pool before the receiver starts its next attempt.
                curl_multi_remove_handle(multi.pointer, easy)
                transfer.complete(result)
            }
        }
        let now = DispatchTime.now().uptimeNanoseconds
        // A sweep every 50 ms is plenty for timeouts of a second or more, and keeps a
        // thousand busy transfers from being scanned on every wakeup.
        guard now - driven.lastSweep > 50_000_000 else { return }
        driven.lastSweep = now
        for (easy, transfer) in driven.transfers where transfer.isIdle(at: now) {
            driven.transfers[easy] = nil
            curl_multi_remove_handle(multi.pointer, easy)
            transfer.complete(CURLE_OPERATION_TIMEDOUT)
        }
    }

    /// Keeps `idleConnections` idle connections beside the transfers now added (`keepIdle`).
    private func followConnectionLimit() {
        guard driven.limitedBeside != driven.transfers.count else { return }
        driven.limitedBeside = driven.transfers.count
        Self.keepIdle(beside: driven.limitedBeside, in: multi.pointer)
    }

    private func waitForActivity() {
        // curl_multi_poll lowers the timeout to libcurl's own next deadline; while anything
        // loads, wake often enough to notice idle timeouts.
        curl_multi_poll(multi.pointer, nil, 0, driven.transfers.isEmpty ? 60_000 : 100, nil)
    }
}
