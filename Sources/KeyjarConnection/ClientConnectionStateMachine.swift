import FoundationEssentials
import KeyjarProtocol

/// What a ``KeyjarClient``'s connection to keyjard may do next, as a value: connecting (with
/// its handshake), connected in a mode (one-shot, following, subscribed), lost and made again,
/// closed; which requests wait for which reply; whether a reader thread runs and who connects
/// again after a loss. The client feeds it what happens and does what it says, holding it under
/// the client's state lock; it does no I/O itself, so every path is tested without a socket
/// (`ClientConnectionStateMachineTests`).
///
/// `Waiter` is whatever a caller waits on for its reply (the client's `Waiter`; a plain value
/// in the tests).
struct ClientConnectionStateMachine<Waiter> {
    /// What keyjard was told to push to the connection.
    enum Mode: Equatable, Sendable {
        /// Nothing: a one-shot client only greets keyjard.
        case oneShot
        /// Only this client's own writes (`follow`): the replica catches up on other changes at
        /// its next lookup.
        case following
        /// Every change (`subscribe`): something in the process listens.
        case subscribed
    }

    enum State: Equatable {
        /// No connection: the next call (or the reader thread, once it runs) connects.
        case disconnected
        /// One thread connects and greets keyjard, on a socket nobody else uses yet; calls
        /// meanwhile fail as unreachable, as they do while disconnected.
        case connecting
        /// Connected: requests go out on this socket.
        case connected(UnixSocket)
        /// Closed for good; nothing connects again.
        case closed
    }

    /// The thread that reads keyjard's messages once the process listens; it is never stopped
    /// but by closing (it then finds the state closed and ends).
    enum ReaderThread: Equatable {
        /// None: each caller reads its own reply.
        case notStarted
        /// Started; not yet running (its thread's id unknown).
        case starting
        /// Running on the thread with this `pthread_self()`.
        case running(thread: UInt)
    }

    /// A request the client sent for itself, whose reply no caller waits for.
    enum InternalRequest: Equatable {
        /// A snapshot after a change too large to push: its reply replaces the replica.
        case snapshot
        /// A change of mode sent without waiting: its reply is dropped.
        case ignored
    }

    private(set) var state = State.disconnected
    private(set) var readerThread = ReaderThread.notStarted
    /// What keyjard was last told to push; nil before the first connection. Kept while
    /// reconnecting: the reconnection tells keyjard again.
    private(set) var mode: Mode?
    /// How long the reader thread waits before its next attempt after a failed reconnection.
    private(set) var reconnectDelay = Self.firstReconnectDelay
    private var nextID: UInt64 = 0
    private var waiters: [UInt64: Waiter] = [:]
    private var internalRequests: [UInt64: InternalRequest] = [:]

    static var firstReconnectDelay: TimeInterval { 0.05 }
    static var longestReconnectDelay: TimeInterval { 2 }

    /// The socket requests go out on; nil unless connected.
    var socket: UnixSocket? {
        guard case .connected(let socket) = state else { return nil }
        return socket
    }

    var isClosed: Bool { state == .closed }

    /// Whether a reader thread reads every message (callers then wait for it to hand their
    /// replies over).
    var hasReaderThread: Bool { readerThread != .notStarted }

    /// Whether `thread` is the reader thread (which runs notification observers, and so reads
    /// its own replies when one of them calls the client).
    func isReaderThread(_ thread: UInt) -> Bool { readerThread == .running(thread: thread) }

    /// How many callers wait for a reply.
    var waitingCount: Int { waiters.count }

    // MARK: Connecting

    enum ConnectAction: Equatable {
        /// Connect and greet keyjard, then report ``connectSucceeded(_:mode:)`` or
        /// ``connectFailed()``.
        case connect
        /// Already connected (by another thread meanwhile): use this one.
        case useExisting(UnixSocket)
        /// Another thread is connecting. Callers serialise connecting, so only a caller that
        /// asks twice sees this; it is unreachable like a call while reconnecting.
        case alreadyConnecting
        /// Closed: fail.
        case closed
    }

    /// A caller, or the reader thread, needs a connection.
    mutating func connectRequested() -> ConnectAction {
        switch state {
        case .disconnected:
            state = .connecting
            return .connect
        case .connecting: return .alreadyConnecting
        case .connected(let socket): return .useExisting(socket)
        case .closed: return .closed
        }
    }

    enum ConnectedAction: Equatable {
        /// Share the connection: requests now go out on it.
        case install
        /// Nobody wants it (closed meanwhile): close it.
        case discard
    }

    /// The handshake ended and keyjard was told `mode`; the socket's reader is already in place
    /// for the callers that will wait on it.
    mutating func connectSucceeded(_ socket: UnixSocket, mode: Mode) -> ConnectedAction {
        guard state == .connecting else { return .discard }
        state = .connected(socket)
        self.mode = mode
        reconnectDelay = Self.firstReconnectDelay
        return .install
    }

    /// Connecting or the handshake failed; the caller reports the error.
    mutating func connectFailed() {
        if state == .connecting { state = .disconnected }
    }

    enum ReconnectAction: Equatable {
        /// Try again after this many seconds.
        case retry(after: TimeInterval)
        /// Closed: the reader thread ends.
        case stop
    }

    /// The reader thread's reconnection failed: it waits longer after each failure.
    mutating func reconnectFailed() -> ReconnectAction {
        connectFailed()
        guard state != .closed else { return .stop }
        let delay = reconnectDelay
        reconnectDelay = min(reconnectDelay * 2, Self.longestReconnectDelay)
        return .retry(after: delay)
    }

    /// The connection on `socket` ended (keyjard closed it, it failed, or keyjard sent
    /// garbage): every waiting caller fails, and replies to internal requests will never come.
    /// - Returns: the callers to fail.
    mutating func connectionLost(_ socket: UnixSocket) -> [Waiter] {
        if state == .connected(socket) { state = .disconnected }
        internalRequests.removeAll()
        defer { waiters.removeAll() }
        return Array(waiters.values)
    }

    /// Closed for good (``KeyjarClient/close()``, deinit).
    /// - Returns: the connected socket, to shut down: that wakes the reader thread, which then
    ///   fails what waits and ends.
    mutating func close() -> UnixSocket? {
        defer { state = .closed }
        return socket
    }

    // MARK: The reader thread

    /// Something listens: the reader thread is needed. True once, when the thread is to be
    /// started.
    mutating func readerThreadNeeded() -> Bool {
        guard readerThread == .notStarted else { return false }
        readerThread = .starting
        return true
    }

    /// The reader thread runs, on `thread`.
    mutating func readerThreadStarted(thread: UInt) {
        readerThread = .running(thread: thread)
    }

    enum ReaderAction: Equatable {
        /// Wait for the next message on this socket.
        case read(UnixSocket)
        /// Connect again (or wait for the thread that does).
        case reconnect
        /// Closed: end.
        case stop
    }

    /// What the reader thread does next.
    var readerNext: ReaderAction {
        switch state {
        case .connected(let socket): .read(socket)
        case .disconnected, .connecting: .reconnect
        case .closed: .stop
        }
    }

    // MARK: Requests and replies

    /// A caller sends a request and waits for its reply with `waiter`.
    /// - Returns: the socket to send on and the request's id; nil when not connected (the
    ///   caller fails as unreachable).
    mutating func requestSent(for waiter: Waiter) -> (socket: UnixSocket, id: UInt64)? {
        guard let socket else { return nil }
        let id = newID()
        waiters[id] = waiter
        return (socket, id)
    }

    /// keyjard announced a change too large to push: ask for a snapshot, without waiting.
    /// - Returns: the socket and request id; nil when not connected (the reconnection
    ///   resynchronises).
    mutating func snapshotRequested() -> (socket: UnixSocket, id: UInt64)? {
        guard let socket else { return nil }
        let id = newID()
        internalRequests[id] = .snapshot
        return (socket, id)
    }

    /// The request that keeps the replica current in the mode the process wants right now:
    /// `subscribe` while it `listens`, `follow` otherwise, after the replica's sequence number.
    /// `waiter` gets the reply (nil: dropped). With `onlyWhenChanged`, nothing is sent when
    /// keyjard was last told the same mode.
    /// - Returns: the socket, the request id and the request; nil when nothing is to be sent
    ///   (not connected, a one-shot connection, or the mode did not change).
    mutating func synchronisationSent(
        listens: Bool,
        after sequence: UInt64,
        for waiter: Waiter?,
        onlyWhenChanged: Bool
    ) -> (socket: UnixSocket, id: UInt64, request: Request)? {
        guard let socket, mode != .oneShot else { return nil }
        let wanted = listens ? Mode.subscribed : .following
        if onlyWhenChanged, mode == wanted { return nil }
        mode = wanted
        let id = newID()
        if let waiter {
            waiters[id] = waiter
        } else {
            internalRequests[id] = .ignored
        }
        return (socket, id, listens ? .subscribe(after: sequence) : .follow(after: sequence))
    }

    enum ReplyAction {
        /// Hand the reply to this caller.
        case resume(Waiter)
        /// The reply to a snapshot the client asked for itself: it replaces the replica (a
        /// failure leaves the replica to catch up later).
        case applySnapshot
        /// Nobody waits for it (a change of mode sent without waiting, or a caller that gave
        /// up).
        case drop
    }

    /// The reply (or refusal) to request `id` arrived.
    mutating func replyArrived(id: UInt64) -> ReplyAction {
        if let waiter = waiters.removeValue(forKey: id) { return .resume(waiter) }
        switch internalRequests.removeValue(forKey: id) {
        case .snapshot?: return .applySnapshot
        case .ignored?, nil: return .drop
        }
    }

    /// keyjard refused the whole connection (a failure without an id) and closes it.
    /// - Returns: every waiting caller, to fail with keyjard's reason.
    mutating func connectionRefused() -> [Waiter] {
        defer { waiters.removeAll() }
        return Array(waiters.values)
    }

    /// A caller stopped waiting for request `id` (timed out, or the request was never sent).
    mutating func requestAbandoned(id: UInt64) {
        waiters.removeValue(forKey: id)
    }

    private mutating func newID() -> UInt64 {
        nextID += 1
        return nextID
    }
}

extension ClientConnectionStateMachine: Sendable where Waiter: Sendable {}

extension ClientConnectionStateMachine.ReplyAction: Equatable where Waiter: Equatable {}
