public import Foundation
public import KeyjarCore
public import KeyjarProtocol
import Glibc
import Synchronization
import KeyjarLocks

/// A process's connection to keyjard, with a local replica of the shared cookie jar, policy
/// and credential list (never passwords), kept current by keyjard's change events.
///
/// Reads (a Cookie header, the cookie list) are answered from the replica, never waiting on
/// the socket. Writes go to keyjard and return once committed; the replica already holds their
/// result then (keyjard sends a change's event before its reply), so a process reads its own
/// writes at once, and every other process as soon as the event reaches it.
///
/// If no keyjard answers, one is started (unless `KEYJAR_NO_AUTOSTART=1`). When keyjard goes
/// away the client reconnects with backoff and resynchronises from the last sequence number it
/// saw, so no change is missed; calls made meanwhile fail at once with `.unreachable`.
///
/// ```swift
/// let client = try KeyjarClient()
/// try client.setCookies(["sid=1; Secure"], for: URL(string: "https://example.com/")!)
/// client.cookieHeader(for: URL(string: "https://example.com/")!)   // "sid=1"
/// ```
public final class KeyjarClient: Sendable {
    public struct Configuration: Sendable {
        public var socketPath: String
        /// Start keyjard when none answers; off when `KEYJAR_NO_AUTOSTART=1`.
        public var autoStart: Bool
        public var clientName: String
        public var requestTimeout: TimeInterval
        /// Keep a replica of the jar and subscribe to changes (what lookups, notifications and
        /// change streams need). A tool that only sends requests (`keyjar cookie import`) turns
        /// it off: no snapshot is downloaded and no change is pushed to it.
        public var keepsReplica: Bool

        public init(
            socketPath: String = KeyjarPaths.defaultSocketPath(),
            autoStart: Bool = ProcessInfo.processInfo.environment["KEYJAR_NO_AUTOSTART"] != "1",
            clientName: String = ProcessInfo.processInfo.processName, requestTimeout: TimeInterval = 30,
            keepsReplica: Bool = true
        ) {
            self.socketPath = socketPath
            self.autoStart = autoStart
            self.clientName = clientName
            self.requestTimeout = requestTimeout
            self.keepsReplica = keepsReplica
        }
    }

    /// What the replica holds.
    struct Replica: Sendable {
        var jar = CookieJar()
        var credentials: [CredentialRecord] = []
        var sequence: UInt64 = 0
    }

    /// A caller waiting for the reply to its request.
    final class Waiter: @unchecked Sendable {
        // @unchecked: `result` is written once, before `isReady` is set (releasing) and
        // `done.signal()`; it is read only after `isReady` was seen (acquiring) or `done.wait()`.
        let done = DispatchSemaphore(value: 0)
        let isReady = Atomic(false)
        var result: Result<Response, KeyjarClientError>?

        func finish(_ outcome: Result<Response, KeyjarClientError>) {
            result = outcome
            isReady.store(true, ordering: .releasing)
            done.signal()
        }
    }

    /// What the socket's reader holds: the connection and the bytes of a frame not yet whole.
    /// The reader thread and a caller waiting for its reply both read through it, one at a
    /// time, so frames are taken in order whoever takes them.
    struct Receiver: ~Copyable {
        var socket: UnixSocket?
        var parser = FrameParser()
        var buffer = [UInt8](repeating: 0, count: 65_536)
    }

    /// The receiver under its lock, in an object of its own: the reader thread holds this, not
    /// the client, while it blocks in the socket, so dropping the client still ends it.
    final class ReceiveSide: Sendable {
        let lock = Locked(Receiver())
    }

    /// A change to announce (notification, change streams) once no lock is held, in order.
    enum Announcement: Sendable {
        case event(SequencedEvent, [AsyncStream<SequencedEvent>.Continuation])
        case resynchronised
    }

    /// What one read from the socket came to.
    enum ReadOutcome {
        case received, nothingYet, ended
    }

    struct State: Sendable {
        var replica = Replica()
        var socket: UnixSocket?
        var nextID: UInt64 = 0
        var waiters: [UInt64: Waiter] = [:]
        /// Snapshots asked for after a change too large to push; their replies replace the replica.
        var snapshotRequests: Set<UInt64> = []
        var listeners: [UUID: AsyncStream<SequencedEvent>.Continuation] = [:]
        var closed = false
        /// Announcements not yet made, oldest first; `announcing` while a thread makes them.
        var announcements: [Announcement] = []
        var announcing = false
    }

    public let configuration: Configuration
    private let state = Locked(State())
    /// Taken before `state` when both are needed, never the other way round. The reader thread
    /// holds it while it waits in the socket; any other thread only ever tries it.
    private let receiving = ReceiveSide()
    /// The reader thread's `pthread_self()`.
    private let readerThread = Atomic<UInt>(0)
    /// Serialises frames written by several threads; holds how many were sent (a lock around
    /// an empty value shares its address with the lock's own fields, which ThreadSanitizer
    /// then mistook for a race).
    private let sendLock = Locked(0)

    /// Connects (starting keyjard if allowed and needed), loads the replica and subscribes.
    /// - Throws: ``KeyjarClientError`` with code `.unreachable` when no keyjard can be reached.
    public init(configuration: Configuration = Configuration()) throws(KeyjarClientError) {
        self.configuration = configuration
        let (socket, parser) = try connectAndSynchronise(after: nil)
        install(socket, parser)
        announcePending()
        // The thread blocks in the socket without holding the client, so an idle client costs
        // no CPU and dropping it works: deinit shuts the socket, which wakes the thread.
        let receiving = self.receiving
        Thread.detachNewThread { [weak self] in
            self?.readerThread.store(UInt(pthread_self()), ordering: .relaxed)
            var backoff: TimeInterval = 0.05
            while true {
                guard let socket = self?.currentSocket() else {
                    guard let client = self, client.reconnectStep(&backoff) else { return }
                    continue
                }
                // One blocking read per message, under the receive lock: a caller waiting for
                // its reply meanwhile finds the lock taken and waits for this thread to hand
                // the reply over (see `wait(for:on:)`). Waiting without reading (MSG_PEEK), so
                // that such a caller could read its reply itself, cost a second system call for
                // every change in every process.
                let outcome = receiving.lock.withLock { receiver -> ReadOutcome in
                    guard receiver.socket?.descriptor == socket.descriptor else { return .ended }
                    let count: Int
                    do {
                        count = try socket.receiveBlocking(into: &receiver.buffer)
                    } catch {
                        socket.shutdownBoth()
                        return .ended
                    }
                    guard count > 0, let client = self else { return .ended }
                    receiver.parser.append(receiver.buffer[0..<count])
                    Framing.wipe(&receiver.buffer, upTo: count)
                    return client.dispatchFrames(&receiver, from: socket)
                }
                guard let client = self else { return }
                if outcome == .ended { client.disconnected(socket) }
                client.announcePending()
                if client.state.withLock({ $0.closed }) { return }
            }
        }
    }

    deinit {
        close()
    }

    /// Disconnects for good; later calls fail with `.unreachable`.
    public func close() {
        let socket = state.withLock { state -> UnixSocket? in
            state.closed = true
            defer { state.socket = nil }
            return state.socket
        }
        socket?.shutdownBoth()
    }

    // MARK: - Connection

    /// Connects, greets, and brings the replica up to date: a snapshot the first time, the
    /// missed events (or a snapshot when too old) after a reconnect. Runs before the socket is
    /// handed to the reader thread, so it reads its replies itself.
    private func connectAndSynchronise(after sequence: UInt64?) throws(KeyjarClientError) -> (UnixSocket, FrameParser) {
        let socket: UnixSocket
        do {
            socket = try UnixSocket.connect(path: configuration.socketPath)
        } catch let failure {
            guard failure.nobodyListening, configuration.autoStart else {
                throw KeyjarClientError(code: .unreachable, message: "keyjard is not reachable: \(failure)")
            }
            try KeyjardLauncher.ensureRunning(socketPath: configuration.socketPath)
            do {
                socket = try UnixSocket.connect(path: configuration.socketPath)
            } catch {
                throw KeyjarClientError(code: .unreachable, message: "keyjard was started but is not reachable: \(error)")
            }
        }
        var parser = FrameParser()
        // A change too large to push, announced during the handshake: fetched before it ends.
        var missedLargeChange = false
        func exchange(_ request: Request, id: UInt64) throws(KeyjarClientError) -> Response {
            do {
                try socket.sendAll(Framing.frame(MessageCoding.encode(ClientMessage(id: id, request: request))))
                var buffer = [UInt8](repeating: 0, count: 65_536)
                let deadline = Date().addingTimeInterval(configuration.requestTimeout)
                while Date() < deadline {
                    while let payload = try parser.next() {
                        switch try MessageCoding.decode(ServerMessage.self, from: payload) {
                        case .reply(id, let response): return response
                        case .failure(_, let error):
                            throw KeyjarClientError(code: .refused, message: error.message, wireCode: error.code)
                        case .event(let event): apply(event)
                        case .snapshot(let snapshot): apply(snapshot)
                        case .resynchronise: missedLargeChange = true
                        case .reply: continue
                        }
                    }
                    guard let count = try socket.receive(into: &buffer, timeout: 1) else { continue }
                    guard count > 0 else { break }
                    parser.append(buffer[0..<count])
                    Framing.wipe(&buffer, upTo: count)
                }
            } catch let error as KeyjarClientError {
                throw error
            } catch {
                throw KeyjarClientError(code: .protocolViolation, message: "\(error)")
            }
            throw KeyjarClientError(code: .unreachable, message: "keyjard did not answer during the handshake")
        }
        do throws(KeyjarClientError) {
            _ = try exchange(.hello(version: ProtocolVersion.current, client: configuration.clientName), id: 0)
            if !configuration.keepsReplica {
                // Requests only: nothing to download, nothing pushed.
            } else if let sequence {
                _ = try exchange(.subscribe(after: sequence), id: 0)
            } else {
                guard case .snapshot(let snapshot) = try exchange(.snapshot, id: 0) else {
                    throw KeyjarClientError(code: .protocolViolation, message: "keyjard answered snapshot with something else")
                }
                apply(snapshot)
                _ = try exchange(.subscribe(after: snapshot.sequence), id: 0)
            }
            while missedLargeChange {
                missedLargeChange = false
                guard case .snapshot(let snapshot) = try exchange(.snapshot, id: 0) else {
                    throw KeyjarClientError(code: .protocolViolation, message: "keyjard answered snapshot with something else")
                }
                apply(snapshot)
            }
        } catch {
            socket.close()
            throw error
        }
        // The parser may already hold what keyjard sent right after the subscribe reply.
        return (socket, parser)
    }

    /// Makes a connected socket the current one, for callers and the reader thread alike.
    private func install(_ socket: UnixSocket, _ parser: FrameParser) {
        receiving.lock.withLock { receiver in
            receiver.socket = socket
            receiver.parser = parser
            // Whole messages that came in the same read as the subscribe reply: dispatched now,
            // not when the next message arrives.
            if dispatchFrames(&receiver, from: socket) == .ended { socket.shutdownBoth() }
        }
        state.withLock { $0.socket = socket }
    }

    /// The connected socket; nil when disconnected or closed.
    private func currentSocket() -> UnixSocket? { state.withLock { $0.closed ? nil : $0.socket } }

    /// While disconnected: tries to reconnect and resynchronise, waiting longer after each
    /// failure (up to 2 s). False once the client is closed.
    private func reconnectStep(_ backoff: inout TimeInterval) -> Bool {
        let (lastSequence, closed) = state.withLock { ($0.replica.sequence, $0.closed) }
        if closed { return false }
        if let (reconnected, parser) = try? connectAndSynchronise(after: lastSequence) {
            announcePending()
            guard !state.withLock({ $0.closed }) else {
                reconnected.close()
                return false
            }
            install(reconnected, parser)
            // What install dispatched (messages that came with the subscribe reply).
            announcePending()
            backoff = 0.05
            return true
        }
        Thread.sleep(forTimeInterval: backoff)
        backoff = min(backoff * 2, 2)
        return true
    }

    /// Takes what has arrived on `socket` without waiting, and dispatches every whole frame:
    /// replies finish their callers, events update the replica (announced later, by
    /// ``announcePending()``). `.ended` when the connection is over or sent garbage.
    private func receiveAvailable(from socket: UnixSocket) -> ReadOutcome {
        receiving.lock.withLock { receiver in receive(&receiver, from: socket) }
    }

    /// ``receiveAvailable(from:)`` unless another thread is reading right now (then that
    /// thread dispatches whatever arrives).
    private func receiveAvailableIfFree(from socket: UnixSocket) -> ReadOutcome {
        receiving.lock.withLockIfAvailable { receiver in receive(&receiver, from: socket) } ?? .nothingYet
    }

    private func receive(_ receiver: inout Receiver, from socket: UnixSocket) -> ReadOutcome {
        // A socket that was replaced meanwhile is not read: its descriptor may be reused.
        guard receiver.socket?.descriptor == socket.descriptor else { return .nothingYet }
        do {
            // A deadline already past: one non-blocking read.
            guard let count = try socket.receiveWithoutSleeping(into: &receiver.buffer, until: 0) else { return .nothingYet }
            guard count > 0 else { return .ended }
            receiver.parser.append(receiver.buffer[0..<count])
            Framing.wipe(&receiver.buffer, upTo: count)
        } catch {
            // A failed read: the connection is over. Shut down here, under the lock (so the
            // descriptor is still this socket's).
            socket.shutdownBoth()
            return .ended
        }
        return dispatchFrames(&receiver, from: socket)
    }

    /// Handles every whole message the parser holds: replies finish their callers, events
    /// update the replica. `.ended` (and the socket shut down) when keyjard sent garbage.
    private func dispatchFrames(_ receiver: inout Receiver, from socket: UnixSocket) -> ReadOutcome {
        do {
            while var payload = try receiver.parser.next() {
                defer { Framing.wipe(&payload, upTo: payload.count) }
                handle(try MessageCoding.decode(ServerMessage.self, from: payload))
            }
            return .received
        } catch {
            socket.shutdownBoth()
            return .ended
        }
    }

    /// Fails every waiting call and forgets the socket (the read loop reconnects).
    private func disconnected(_ socket: UnixSocket) {
        let current = receiving.lock.withLock { receiver -> Bool in
            guard receiver.socket?.descriptor == socket.descriptor else { return false }
            receiver.socket = nil
            receiver.parser = FrameParser()
            return true
        }
        guard current else { return }
        let waiters = state.withLock { state -> [Waiter] in
            if state.socket?.descriptor == socket.descriptor { state.socket = nil }
            state.snapshotRequests.removeAll()
            defer { state.waiters.removeAll() }
            return Array(state.waiters.values)
        }
        socket.close()
        for waiter in waiters {
            waiter.finish(.failure(KeyjarClientError(code: .unreachable, message: "the connection to keyjard was lost")))
        }
    }

    /// Makes the pending announcements, oldest first, on this thread, unless another thread
    /// is already making them (it then makes these too). No lock is held meanwhile, so an
    /// observer may call back into the client, even write.
    private func announcePending() {
        var batch = state.withLock { state -> [Announcement]? in
            guard !state.announcing, !state.announcements.isEmpty else { return nil }
            state.announcing = true
            defer { state.announcements.removeAll() }
            return state.announcements
        }
        while let current = batch {
            for announcement in current {
                switch announcement {
                case .event(let event, let listeners):
                    for listener in listeners { listener.yield(event) }
                    KeyjarNotifications.post(event, from: self)
                case .resynchronised:
                    KeyjarNotifications.postResynchronised(self)
                }
            }
            batch = state.withLock { state -> [Announcement]? in
                guard !state.announcements.isEmpty else {
                    state.announcing = false
                    return nil
                }
                defer { state.announcements.removeAll() }
                return state.announcements
            }
        }
    }

    private func handle(_ message: ServerMessage) {
        switch message {
        case .reply(let id, let response):
            guard state.withLock({ $0.snapshotRequests.remove(id) == nil }) else {
                if case .snapshot(let snapshot) = response { apply(snapshot) }
                return
            }
            resume(id, .success(response))
        case .failure(let id?, let error):
            // A snapshot that failed: the replica catches up at the next reconnection.
            guard state.withLock({ $0.snapshotRequests.remove(id) == nil }) else { return }
            resume(id, .failure(KeyjarClientError(code: .refused, message: error.message, wireCode: error.code)))
        case .failure(nil, let error):
            // The connection itself failed: keyjard closes it; the read loop reconnects.
            resumeAll(.failure(KeyjarClientError(code: .refused, message: error.message, wireCode: error.code)))
        case .event(let event): apply(event)
        case .snapshot(let snapshot): apply(snapshot)
        case .resynchronise: requestSnapshot()
        }
    }

    /// Asks for the whole state, without waiting: the reply is applied when it is read, by
    /// whichever thread reads it. Events that come meanwhile update the old replica, which the
    /// snapshot then replaces (it is at least as recent as they are).
    private func requestSnapshot() {
        let prepared = state.withLock { state -> (UnixSocket, UInt64)? in
            guard let socket = state.socket, !state.closed else { return nil }
            state.nextID += 1
            state.snapshotRequests.insert(state.nextID)
            return (socket, state.nextID)
        }
        guard let (socket, id) = prepared else { return }
        let frame = Framing.frame(MessageCoding.encode(ClientMessage(id: id, request: .snapshot)))
        let sent: Bool = sendLock.withLock { count in
            count += 1
            return (try? socket.sendAll(frame)) != nil
        }
        // A connection that fails here is re-established, and a reconnection resynchronises.
        if !sent { socket.shutdownBoth() }
    }

    private func resume(_ id: UInt64, _ result: Result<Response, KeyjarClientError>) {
        state.withLock { $0.waiters.removeValue(forKey: id) }?.finish(result)
    }

    private func resumeAll(_ result: Result<Response, KeyjarClientError>) {
        let waiters = state.withLock { state -> [Waiter] in
            defer { state.waiters.removeAll() }
            return Array(state.waiters.values)
        }
        for waiter in waiters { waiter.finish(result) }
    }

    // MARK: - Replica

    private func apply(_ snapshot: StoreSnapshot) {
        var jar = CookieJar(policy: snapshot.policy)
        for cookie in snapshot.cookies { jar.restore(cookie, isNew: true) }
        state.withLock { state in
            state.replica = Replica(jar: jar, credentials: snapshot.credentials, sequence: snapshot.sequence)
            state.announcements.append(.resynchronised)
        }
    }

    private func apply(_ event: SequencedEvent) {
        // An event the replica already has (replayed after a reconnect) is not announced twice.
        state.withLock { state in
            guard event.sequence > state.replica.sequence else { return }
            state.replica.sequence = event.sequence
            switch event.event {
            case .cookies(let changes):
                for change in changes {
                    switch change {
                    case .added(let cookie), .replaced(_, let cookie): state.replica.jar.restore(cookie)
                    case .removed(let cookie, _): state.replica.jar.remove(cookie.identity)
                    }
                }
            case .policy(let policy):
                state.replica.jar.policy = policy
            case .credentials(let changes):
                for change in changes { Self.apply(change, to: &state.replica.credentials) }
            }
            state.announcements.append(.event(event, Array(state.listeners.values)))
        }
    }

    private static func apply(_ change: CredentialChange, to records: inout [CredentialRecord]) {
        let index = records.firstIndex { $0.space == change.space && $0.user == change.user }
        switch change.kind {
        case .added, .updated:
            if index == nil {
                records.append(CredentialRecord(
                    space: change.space, user: change.user, persistence: .permanent, isDefault: false,
                    created: Date().timeIntervalSince1970))
            }
        case .removed:
            if let index { records.remove(at: index) }
        case .defaultChanged:
            for position in records.indices where records[position].space == change.space {
                records[position].isDefault = records[position].user == change.user
            }
        }
    }

    /// The sequence number of the last change the replica holds.
    public var sequence: UInt64 { state.withLock { $0.replica.sequence } }

    /// Whether a connection to keyjard is up right now.
    public var isConnected: Bool { state.withLock { $0.socket != nil } }

    /// Every change as it is applied to this process's replica: what changed, its cause, its
    /// sequence number. Each call returns a new stream.
    public func changes() -> AsyncStream<SequencedEvent> {
        let (stream, continuation) = AsyncStream.makeStream(of: SequencedEvent.self, bufferingPolicy: .bufferingNewest(4096))
        let id = UUID()
        state.withLock { $0.listeners[id] = continuation }
        continuation.onTermination = { [weak self] _ in self?.state.withLock { _ = $0.listeners.removeValue(forKey: id) } }
        return stream
    }

    // MARK: - Requests

    /// Sends a request and waits for its reply.
    /// - Throws: `.unreachable` at once when disconnected; `.refused` with keyjard's reason.
    public func call(_ request: Request) throws(KeyjarClientError) -> Response {
        let waiter = Waiter()
        let prepared = state.withLock { state -> (UnixSocket, UInt64)? in
            guard let socket = state.socket, !state.closed else { return nil }
            state.nextID += 1
            state.waiters[state.nextID] = waiter
            return (socket, state.nextID)
        }
        guard let (socket, id) = prepared else {
            throw KeyjarClientError(code: .unreachable, message: "not connected to keyjard (reconnecting)")
        }
        var frame = Framing.frame(MessageCoding.encode(ClientMessage(id: id, request: request)))
        let sent: Bool = sendLock.withLock { count in
            count += 1
            return (try? socket.sendAll(frame)) != nil
        }
        Framing.wipe(&frame, upTo: frame.count)
        if !sent {
            state.withLock { _ = $0.waiters.removeValue(forKey: id) }
            throw KeyjarClientError(code: .unreachable, message: "the connection to keyjard was lost")
        }
        guard let result = wait(for: waiter, on: socket) else {
            state.withLock { _ = $0.waiters.removeValue(forKey: id) }
            throw KeyjarClientError(code: .timedOut, message: "keyjard did not answer within \(configuration.requestTimeout) s")
        }
        return try result.get()
    }

    /// The caller's reply: first stay awake for it (``UnixSocket/awakeForReply``), reading it
    /// here when no other thread reads, or seeing the reader thread hand it over when that
    /// thread is waiting in the socket (as it is whenever the client is idle), rather than sleep
    /// and be woken across CPUs; then sleep until it comes. Nil after the request timeout.
    private func wait(for waiter: Waiter, on socket: UnixSocket) -> Result<Response, KeyjarClientError>? {
        let awakeUntil = monotonicNanoseconds() + UnixSocket.awakeForReply
        while !waiter.isReady.load(ordering: .acquiring), monotonicNanoseconds() < awakeUntil {
            if receiveAvailableIfFree(from: socket) == .ended { break }
            if !waiter.isReady.load(ordering: .acquiring) { sched_yield() }
        }
        let deadline = Date().addingTimeInterval(configuration.requestTimeout)
        if isReaderThread {
            // A notification observer that writes runs on the reader thread: nobody else
            // would read its reply.
            while !waiter.isReady.load(ordering: .acquiring), Date() < deadline {
                guard (try? socket.waitForBytes(timeout: deadline.timeIntervalSinceNow)) == true else { break }
                if receiveAvailable(from: socket) == .ended { disconnected(socket) }
            }
        } else if !waiter.isReady.load(ordering: .acquiring) {
            _ = waiter.done.wait(timeout: .now() + configuration.requestTimeout)
        }
        // Events this thread took off the socket are announced before the call returns, as
        // they would have been had the reader thread taken them.
        announcePending()
        return waiter.isReady.load(ordering: .acquiring) ? waiter.result : nil
    }

    /// True on the thread that reads keyjard's messages (and so runs notification observers).
    private var isReaderThread: Bool { readerThread.load(ordering: .relaxed) == UInt(pthread_self()) }

    /// Reads the replica under its lock.
    func withReplica<T>(_ body: (inout Replica) -> T) -> T { state.withLock { body(&$0.replica) } }
}
