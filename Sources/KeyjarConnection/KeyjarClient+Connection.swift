import FoundationEssentials
import Glibc
import KeyjarCore
import KeyjarLocks
import KeyjarPlatform
import KeyjarProtocol

extension KeyjarClient {
    /// What the socket's reader holds: the connection's receiving side. The reader thread and
    /// a caller waiting for its reply both read through it, one at a time, so messages are
    /// taken in order whoever takes them.
    struct Receiver: ~Copyable {
        var reader: ServerMessageReader?

        func reads(_ socket: UnixSocket) -> Bool { reader?.socket.descriptor == socket.descriptor }
    }

    /// The receiver under its lock, in an object of its own: the reader thread holds this, not
    /// the client, while it blocks in the socket, so dropping the client still ends it.
    final class ReceiveSide: Sendable {
        let lock = Locked(Receiver())
    }

    /// Connects, greets, and with a replica brings it up to date: a snapshot the first time,
    /// the missed events (or a snapshot when too old) after a reconnect; then subscribes while
    /// the client listens, else follows. Runs before the socket is shared, so it reads its
    /// replies itself.
    ///
    /// keyjard speaks one protocol version, the one it was built with (Schemas/protocol.md,
    /// "Versions"): a keyjard of another build refuses this client's hello, and the error says
    /// to restart it.
    func connectAndSynchronise(after sequence: UInt64?) throws(KeyjarClientError) -> Connected {
        let socket: UnixSocket
        let reached = servingSocketPath
        do {
            socket = try UnixSocket.connect(path: reached)
        } catch let failure {
            guard failure.nobodyListening else {
                throw KeyjarClientError(code: .unreachable, message: "keyjard is not reachable: \(failure)")
            }
            // Our own socket again first: the keyjard reached elsewhere may be gone.
            let path: String
            if configuration.autoStart {
                path = try KeyjardLauncher.ensureRunning(
                    socketPath: configuration.socketPath,
                    database: configuration.databasePath
                )
            } else if let serving = KeyjardLauncher.servingNow(
                socketPath: configuration.socketPath,
                database: configuration.databasePath
            ) {
                // Starting none, but the keyjard that serves our database is ours wherever it
                // listens (a shell without XDG_RUNTIME_DIR beside a desktop session's).
                path = serving
            } else {
                throw KeyjarClientError(code: .unreachable, message: "keyjard is not reachable: \(failure)")
            }
            do {
                socket = try UnixSocket.connect(path: path)
            } catch {
                throw KeyjarClientError(
                    code: .unreachable,
                    message: "keyjard was started but is not reachable: \(error)"
                )
            }
            state.withLock { $0.servingSocket = path == configuration.socketPath ? nil : path }
        }
        var reader = ServerMessageReader(socket: socket)
        // A change too large to push, announced during the handshake: fetched before it ends.
        var missedLargeChange = false
        func exchange(_ request: Request) throws(KeyjarClientError) -> Response {
            do {
                try socket.sendAll(Framing.frame(MessageCoding.encode(ClientMessage(id: 0, request: request))))
            } catch {
                throw KeyjarClientError(code: .unreachable, message: "the connection to keyjard was lost: \(error)")
            }
            let reply = try Self.translating { () throws(ServerMessageReader.Failure) -> Response? in
                try reader.reply(
                    to: 0,
                    awakeUntil: monotonicNanoseconds() + UnixSocket.awakeForReply,
                    deadline: Date().addingTimeInterval(configuration.requestTimeout)
                ) { message in
                    switch message {
                    case .event(let event): apply(event)
                    case .snapshot(let snapshot): apply(snapshot)
                    case .resynchronise: missedLargeChange = true
                    case .reply, .failure: break
                    }
                }
            }
            guard let reply else {
                throw KeyjarClientError(
                    code: .timedOut,
                    message: "keyjard at \(servingSocketPath) did not answer within "
                        + "\(KeyjarClient.seconds(configuration.requestTimeout)) (is it stopped? KEYJAR_TIMEOUT sets how long to wait)"
                )
            }
            return reply
        }
        var listens: Bool?
        do throws(KeyjarClientError) {
            do throws(KeyjarClientError) {
                _ = try exchange(.hello(version: ProtocolVersion.current, client: configuration.clientName))
            } catch  where error.wireCode == WireError.unsupportedVersion {
                throw KeyjarClientError(
                    code: .refused,
                    message: "the keyjard at \(servingSocketPath) is of another build (\(error.message)): restart it "
                        + "(systemctl --user restart keyjard, or end it and the next call starts this build's)",
                    wireCode: error.wireCode
                )
            } catch  where error.code == .protocolViolation {
                // Whatever listens there answered, but not in Keyjar's protocol: as good as no
                // keyjard, and said so rather than with the decoder's details.
                throw KeyjarClientError(
                    code: .unreachable,
                    message:
                        "\(servingSocketPath) is not keyjard's socket: what answers there does not speak Keyjar's protocol"
                )
            }
            if configuration.keepsReplica {
                // keyjard made its page before it took connections.
                mapSequencePage()
                var after = sequence
                if after == nil {
                    guard case .snapshot(let snapshot) = try exchange(.snapshot) else {
                        throw KeyjarClientError(
                            code: .protocolViolation,
                            message: "keyjard answered snapshot with something else"
                        )
                    }
                    apply(snapshot)
                    after = snapshot.sequence
                }
                let listening = state.withLock { $0.listens }
                let from = after ?? 0
                _ = try exchange(listening ? .subscribe(after: from) : .follow(after: from))
                listens = listening
            }
            while missedLargeChange {
                missedLargeChange = false
                guard case .snapshot(let snapshot) = try exchange(.snapshot) else {
                    throw KeyjarClientError(
                        code: .protocolViolation,
                        message: "keyjard answered snapshot with something else"
                    )
                }
                apply(snapshot)
            }
        } catch {
            socket.close()
            throw error
        }
        // The reader may already hold what keyjard sent right after the subscribe reply.
        return Connected(reader: reader, listens: listens)
    }

    /// A connection ready to share, and whether keyjard was told to push every change to it
    /// (nil for a one-shot client).
    struct Connected {
        var reader: ServerMessageReader
        var listens: Bool?
    }

    /// A reader's failure as the client's error.
    static func translating<T>(_ body: () throws(ServerMessageReader.Failure) -> T) throws(KeyjarClientError) -> T {
        do {
            return try body()
        } catch {
            // Matched in a switch: `catch .case` patterns on this error crash Swift 6.3.1's SILGen.
            switch error {
            case .refused(let wire), .connectionRefused(let wire):
                throw KeyjarClientError(code: .refused, message: wire.message, wireCode: wire.code)
            case .closed: throw KeyjarClientError(code: .unreachable, message: "the connection to keyjard was lost")
            case .malformed(let underlying): throw KeyjarClientError(code: .protocolViolation, message: "\(underlying)")
            }
        }
    }

    /// Connects as the connection's state machine says, for a caller or the reader thread
    /// holding ``connectLock``: nothing when another thread connected meanwhile; with a
    /// replica, `resuming` catches up from its sequence number rather than load a snapshot.
    /// - Returns: the connected socket.
    func connect(resuming: Bool, connections: inout Int) throws(KeyjarClientError) -> UnixSocket {
        switch state.withLock({ $0.connection.connectRequested() }) {
        case .connect: break
        case .useExisting(let socket): return socket
        case .alreadyConnecting:
            throw KeyjarClientError(code: .unreachable, message: "not connected to keyjard (reconnecting)")
        case .closed: throw KeyjarClientError(code: .unreachable, message: "the client was closed")
        }
        let after = resuming && configuration.keepsReplica ? state.withLock { $0.replica.sequence } : nil
        let connected: Connected
        do {
            connected = try connectAndSynchronise(after: after)
        } catch {
            state.withLock { $0.connection.connectFailed() }
            throw error
        }
        connections += 1
        guard install(connected) else {
            throw KeyjarClientError(code: .unreachable, message: "the client was closed")
        }
        return connected.reader.socket
    }

    /// Makes a connected socket the current one, for callers and the reader thread alike; then
    /// tells keyjard again whether to push everything if that changed during the handshake.
    /// False (and the socket closed) when the client was closed meanwhile.
    func install(_ connected: Connected) -> Bool {
        let reader = connected.reader
        let socket = reader.socket
        // The reader first: a caller that sends on the socket as soon as it is installed finds
        // it there to wait on.
        receiving.lock.withLock { receiver in
            receiver.reader = reader
            // Whole messages that came in the same read as the subscribe reply: dispatched now,
            // not when the next message arrives.
            if dispatchBuffered(&receiver) == .ended { socket.shutdownBoth() }
        }
        let mode: ClientConnectionStateMachine<Waiter>.Mode =
            switch connected.listens {
            case true?: .subscribed
            case false?: .following
            case nil: .oneShot
            }
        switch state.withLock({ $0.connection.connectSucceeded(socket, mode: mode) }) {
        case .install:
            if mode != .oneShot { _ = sendSynchronisation(for: nil, onlyWhenChanged: true) }
            return true
        case .discard:
            receiving.lock.withLock { receiver in
                if receiver.reads(socket) { receiver.reader = nil }
            }
            socket.close()
            return false
        }
    }

    /// The connected socket; nil when disconnected or closed.
    func currentSocket() -> UnixSocket? { state.withLock { $0.connection.socket } }

    /// The socket of a client without a reader thread, connecting again (and, with a replica,
    /// catching up from its sequence number) when the last connection was lost.
    func connectedSocket() throws(KeyjarClientError) -> UnixSocket {
        if let socket = currentSocket() { return socket }
        let socket = try connectLock.withLock { (connections: inout Int) throws(KeyjarClientError) -> UnixSocket in
            try connect(resuming: true, connections: &connections)
        }
        announcePending()
        return socket
    }

    /// The thread that reads keyjard's messages while the client keeps a replica. It blocks
    /// in the socket without holding the client, so an idle client costs no CPU and dropping
    /// it works: deinit shuts the socket, which wakes the thread.
    func startReaderThread() {
        guard state.withLock({ $0.connection.readerThreadNeeded() }) else { return }
        let receiving = self.receiving
        detachThread { [weak self] in
            self?.state.withLock { $0.connection.readerThreadStarted(thread: UInt(pthread_self())) }
            while true {
                // The client is held only for a moment at a time, never across the read.
                guard let next = self?.state.withLock({ $0.connection.readerNext }) else { return }
                let socket: UnixSocket
                switch next {
                case .read(let connected): socket = connected
                case .reconnect:
                    guard let client = self, client.reconnectStep() else { return }
                    continue
                case .stop: return
                }
                // One blocking read per message, under the receive lock: a caller waiting for
                // its reply meanwhile finds the lock taken and waits for this thread to hand
                // the reply over (see `wait(for:id:on:)`). Waiting without reading (MSG_PEEK),
                // so that such a caller could read its reply itself, cost a second system call
                // for every change in every process.
                // The client, once read, is kept to the end of this turn (one weak load less
                // per message).
                let (outcome, reader) = receiving.lock.withLock { receiver -> (ReadOutcome, KeyjarClient?) in
                    guard receiver.reads(socket) else { return (.ended, self) }
                    do {
                        _ = try receiver.reader?.read(.indefinitely)
                    } catch {
                        socket.shutdownBoth()
                        return (.ended, self)
                    }
                    guard let client = self else { return (.ended, nil) }
                    return (client.dispatchBuffered(&receiver), client)
                }
                guard let client = reader else { return }
                if outcome == .ended { client.disconnected(socket) }
                client.announcePending()
                if client.state.withLock({ $0.connection.isClosed }) { return }
            }
        }
    }

    /// While disconnected: tries to reconnect and resynchronise, waiting longer after each
    /// failure (the state machine's backoff). False once the client is closed.
    func reconnectStep() -> Bool {
        // Under the lock a caller takes to reconnect (before this thread started, a call may
        // have been connecting): one connection, never two.
        let connected = connectLock.withLock { (connections: inout Int) -> Bool in
            (try? connect(resuming: true, connections: &connections)) != nil
        }
        if connected {
            // What the handshake and install dispatched (messages that came with the
            // subscribe reply).
            announcePending()
            return !state.withLock { $0.connection.isClosed }
        }
        switch state.withLock({ $0.connection.reconnectFailed() }) {
        case .retry(let delay):
            sleepThread(seconds: delay)
            return true
        case .stop:
            return false
        }
    }

    /// Fails every waiting call and forgets the socket (the reader thread, or a one-shot
    /// client's next call, connects again).
    func disconnected(_ socket: UnixSocket) {
        let current = receiving.lock.withLock { receiver -> Bool in
            guard receiver.reads(socket) else { return false }
            receiver.reader = nil
            return true
        }
        guard current else { return }
        let waiters = state.withLock { $0.connection.connectionLost(socket) }
        socket.close()
        for waiter in waiters {
            waiter.finish(
                .failure(KeyjarClientError(code: .unreachable, message: "the connection to keyjard was lost"))
            )
        }
    }
}
