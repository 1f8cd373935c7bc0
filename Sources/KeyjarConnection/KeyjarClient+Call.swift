import Dispatch
import FoundationEssentials
import Glibc
import KeyjarLocks
package import KeyjarProtocol
import Synchronization

extension KeyjarClient {
    /// A caller waiting for the reply to its request: pending until ``finish(_:)``, once.
    final class Waiter: @unchecked Sendable {
        // @unchecked: `result` is written once, before `isReady` is set (releasing) and
        // `done.signal()`; it is read only after `isReady` was seen (acquiring) or `done.wait()`.
        private let done = DispatchSemaphore(value: 0)
        private let isReady = Atomic(false)
        private var outcome: Result<Response, KeyjarClientError>?

        func finish(_ outcome: Result<Response, KeyjarClientError>) {
            self.outcome = outcome
            isReady.store(true, ordering: .releasing)
            done.signal()
        }

        var isFinished: Bool { isReady.load(ordering: .acquiring) }

        /// The outcome once finished; nil before.
        var result: Result<Response, KeyjarClientError>? { isFinished ? outcome : nil }

        /// Waits for ``finish(_:)``: without sleeping until `awakeUntil`
        /// (``monotonicNanoseconds()``), calling `poll` between looks (until it returns false)
        /// and yielding the CPU; then asleep until it comes or `timeout` passes.
        ///
        /// The first part is a bounded spin, kept on purpose: the reply usually comes within
        /// the time awake (``UnixSocket/awakeForReply``), and a sleeping caller's wake-up across
        /// CPUs would add 30–70 µs to it (docs/performance.md, "The numbers behind the code's
        /// comments"). Yielding lets keyjard or the reader thread have this CPU meanwhile.
        /// - Returns: whether it finished.
        func wait(awakeUntil: UInt64, polling poll: () -> Bool, thenSleepingFor timeout: TimeInterval) -> Bool {
            var polls = true
            while polls, !isFinished, monotonicNanoseconds() < awakeUntil {
                polls = poll()
                if polls, !isFinished { sched_yield() }
            }
            if !isFinished { _ = done.wait(timeout: .now() + timeout) }
            return isFinished
        }
    }

    /// What a call sends: a request, or the replica's synchronisation (see
    /// ``sendSynchronisation(for:onlyWhenChanged:)``).
    enum Outgoing {
        case request(Request)
        case synchronisation
    }

    /// Sends a request and waits for its reply: where every typed request meets the wire.
    /// - Throws: `.unreachable` at once when a listening client is disconnected (its reader
    ///   thread is reconnecting; any other client connects again first); `.refused` with
    ///   keyjard's reason; `.timedOut`.
    package func call(_ request: Request) throws(KeyjarClientError) -> Response {
        try call(sending: .request(request))
    }

    func call(sending outgoing: Outgoing) throws(KeyjarClientError) -> Response {
        let readsOwnReplies = !state.withLock { $0.connection.hasReaderThread }
        if readsOwnReplies { _ = try connectedSocket() }
        let waiter = Waiter()
        var (socket, id, sent) = try send(outgoing, for: waiter)
        if !sent, readsOwnReplies {
            // A connection keyjard closed (it restarted) fails the first send, so the request
            // never arrived: it goes once more, on a new connection.
            state.withLock { $0.connection.requestAbandoned(id: id) }
            disconnected(socket)
            _ = try connectedSocket()
            (socket, id, sent) = try send(outgoing, for: waiter)
        }
        if !sent {
            state.withLock { $0.connection.requestAbandoned(id: id) }
            if readsOwnReplies { disconnected(socket) }
            throw KeyjarClientError(code: .unreachable, message: "the connection to keyjard was lost")
        }
        guard let result = wait(for: waiter, id: id, on: socket) else {
            state.withLock { $0.connection.requestAbandoned(id: id) }
            throw KeyjarClientError(
                code: .timedOut,
                message: "keyjard did not answer within \(Self.seconds(configuration.requestTimeout)) "
                    + "(is it stopped? KEYJAR_TIMEOUT sets how long to wait)"
            )
        }
        return try result.get()
    }

    /// Registers `waiter` under a new id and sends the request; `sent` false when the socket
    /// refused it.
    private func send(
        _ outgoing: Outgoing,
        for waiter: Waiter
    ) throws(KeyjarClientError) -> (socket: UnixSocket, id: UInt64, sent: Bool) {
        let unreachable = KeyjarClientError(code: .unreachable, message: "not connected to keyjard (reconnecting)")
        switch outgoing {
        case .synchronisation:
            guard let result = sendSynchronisation(for: waiter, onlyWhenChanged: false) else { throw unreachable }
            return result
        case .request(let request):
            guard let (socket, id) = state.withLock({ $0.connection.requestSent(for: waiter) }) else {
                throw unreachable
            }
            var frame = Framing.frame(MessageCoding.encode(ClientMessage(id: id, request: request)))
            let sent: Bool = sendLock.withLock { count in
                count += 1
                return (try? socket.sendAll(frame)) != nil
            }
            Framing.wipe(&frame, upTo: frame.count)
            return (socket, id, sent)
        }
    }

    /// The caller's reply; nil after the request timeout.
    ///
    /// Without a reader thread (a one-shot client, a replica that does not listen) the caller
    /// reads it here; a reader thread started meanwhile hands it over instead, releasing the
    /// receive lock after each message. With a reader thread, the caller first stays awake
    /// for it (``UnixSocket/awakeForReply``), reading it here when no other thread reads, or
    /// seeing the reader thread hand it over when that thread is waiting in the socket (as it
    /// is whenever the client is idle), rather than sleep and be woken across CPUs; then
    /// sleeps until it comes.
    private func wait(for waiter: Waiter, id: UInt64, on socket: UnixSocket) -> Result<Response, KeyjarClientError>? {
        let deadline = Date().addingTimeInterval(configuration.requestTimeout)
        let awakeUntil = monotonicNanoseconds() + UnixSocket.awakeForReply
        let readerThread = state.withLock { $0.connection.readerThread }
        if readerThread == .notStarted {
            while !waiter.isFinished, deadline.timeIntervalSinceNow > 0 {
                let outcome = receiving.lock.withLock { receiver in
                    receiveReply(
                        &receiver,
                        id: id,
                        waiter: waiter,
                        on: socket,
                        awakeUntil: awakeUntil,
                        deadline: deadline
                    )
                }
                if outcome == .ended {
                    disconnected(socket)
                    break
                }
            }
        } else if readerThread == .running(thread: UInt(pthread_self())) {
            // A notification observer that writes runs on the reader thread: nobody else
            // would read its reply.
            let outcome = receiving.lock.withLock { receiver in
                receiveReply(&receiver, id: id, waiter: waiter, on: socket, awakeUntil: awakeUntil, deadline: deadline)
            }
            if outcome == .ended { disconnected(socket) }
        } else {
            // Awake, reading the reply here whenever no other thread reads (one try each time);
            // then asleep until the reader thread hands it over.
            _ = waiter.wait(
                awakeUntil: awakeUntil,
                polling: {
                    let outcome = receiving.lock.withLockIfAvailable { receiver in
                        receiveReply(
                            &receiver,
                            id: id,
                            waiter: waiter,
                            on: socket,
                            awakeUntil: 0,
                            deadline: .distantPast
                        )
                    }
                    return outcome != .ended
                },
                thenSleepingFor: configuration.requestTimeout
            )
        }
        // Events this thread took off the socket are announced before the call returns, as
        // they would have been had the reader thread taken them.
        announcePending()
        return waiter.result
    }

    /// Reads until request `id`'s reply (which finishes `waiter`) or the deadline, dispatching
    /// everything else that comes first. `.ended` when the connection is over or sent garbage.
    private func receiveReply(
        _ receiver: inout Receiver,
        id: UInt64,
        waiter: Waiter,
        on socket: UnixSocket,
        awakeUntil: UInt64,
        deadline: Date
    ) -> ReadOutcome {
        // A socket that was replaced meanwhile is not read (its descriptor may be reused): the
        // connection this call went out on is over, and its waiters were failed with it.
        guard receiver.reads(socket) else { return .ended }
        guard !waiter.isFinished else { return .nothingYet }
        do {
            let reply = try receiver.reader?.reply(to: id, awakeUntil: awakeUntil, deadline: deadline) { message in
                handle(message)
            }
            guard let reply else { return .nothingYet }
            resume(id, .success(reply))
            return .received
        } catch {
            // Matched in a switch: `catch .case` patterns on this error crash Swift 6.3.1's SILGen.
            switch error {
            case .refused(let wire):
                resume(id, .failure(KeyjarClientError(code: .refused, message: wire.message, wireCode: wire.code)))
                return .received
            case .connectionRefused(let wire):
                resumeAll(.failure(KeyjarClientError(code: .refused, message: wire.message, wireCode: wire.code)))
                return .received
            case .closed, .malformed:
                // Shut down here, under the lock, while the descriptor is still this socket's.
                socket.shutdownBoth()
                return .ended
            }
        }
    }

}
