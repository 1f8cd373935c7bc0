import Foundation
import KeyjarCore
import KeyjarProtocol
import KeyjarStore
import Logging
import NIOCore
import NIOPosix

/// The shared store's single owner: the authoritative cookie jar in memory, the database it is
/// persisted to, the secret store, and the clients to notify.
///
/// All of its state lives on one event loop, the one that also runs every client connection,
/// so a request is read, applied, committed and answered without a thread hop. Every write is
/// committed to SQLite (with its change-log entry) before it is
/// acknowledged, and pushed to every subscriber (its writer before the acknowledgement, the
/// others right after), so all clients see one order of changes.
/// Secret Service calls, which cross D-Bus, run on a thread pool.
final class StoreService: Sendable {
    /// What the service owns, reachable only on its event loop.
    final class State {
        var jar: CookieJar
        var clients: [UInt64: ServedClient] = [:]
        var subscribers = SubscriberList<ServedClient>()
        /// Committed events already sent to their writer, not yet to the other subscribers.
        var pendingBroadcasts: [PendingBroadcast] = []
        var isFlushScheduled = false
        var lifecycle = ServiceLifecycle.serving
        /// Counts the commits (and reloads) of the jar: a plan made on a copy of it holds while
        /// this has not moved.
        var jarGeneration: UInt64 = 0
        /// The last committed sequence number (what the sequence page shows).
        var latestSequence: UInt64
        /// The latest events, framed, for replicas that catch up.
        var recentEvents: RecentEvents
        /// The end of the credential work queued so far (see ``StoreService/inCredentialLane(_:)``).
        var credentialLane: EventLoopFuture<Void>?
        /// Storage failures are logged at most once a second (a full disk fails every write).
        var lastStorageFailureLogged = NIODeadline.distantPast
        var storageFailuresNotLogged = 0
        let inbound: InboundBudget

        init(jar: CookieJar, inbound: InboundBudget, latestSequence: UInt64) {
            self.jar = jar
            self.inbound = inbound
            self.latestSequence = latestSequence
            recentEvents = RecentEvents(latest: latestSequence, byteLimit: StoreService.recentEventBytes)
        }
    }

    let eventLoop: any EventLoop
    let configuration: ServerConfiguration
    let database: StoreDatabase
    let secrets: any SecretStore
    let threadPool: NIOThreadPool
    /// Runs checkpoints, at a lower CPU priority (nice 10), so that on a small machine a
    /// checkpoint does not delay the event loop's fan-out to its subscribers
    /// (docs/performance.md, Acknowledged writes).
    let checkpointThread: NIOThreadPool
    let logger: Logger
    /// Where clients read the last committed sequence number (``SequencePage``).
    let sequencePage: SequencePage.Publisher
    private let box: NIOLoopBoundBox<State>

    /// What the ring of recent events may hold: a replica that missed more reads the log.
    static let recentEventBytes = 1 << 20

    /// The state; only on the event loop (checked).
    var state: State { box.value }

    init(
        eventLoop: any EventLoop,
        configuration: ServerConfiguration,
        database: StoreDatabase,
        secrets: any SecretStore,
        threadPool: NIOThreadPool,
        checkpointThread: NIOThreadPool,
        logger: Logger
    ) throws {
        self.eventLoop = eventLoop
        self.configuration = configuration
        self.database = database
        self.secrets = secrets
        self.threadPool = threadPool
        self.checkpointThread = checkpointThread
        self.logger = logger
        var jar = CookieJar(policy: try database.policy(), limits: configuration.limits)
        // Rows are unique by identity (the table's primary key).
        try database.forEachCookie { jar.restore($0, isNew: true) }
        let latest = try database.latestSequence()
        sequencePage = try SequencePage.Publisher(
            path: SequencePage.path(forSocket: configuration.socketPath),
            sequence: latest
        )
        box = NIOLoopBoundBox.makeBoxSendingValue(
            State(jar: jar, inbound: InboundBudget(limit: configuration.inboundBudget), latestSequence: latest),
            eventLoop: eventLoop
        )
    }

    // MARK: - Clients

    func register(_ client: ServedClient) { state.clients[client.id] = client }

    func unregister(_ client: ServedClient) {
        state.clients[client.id] = nil
        state.subscribers.remove(id: client.id)
    }

    /// An event framed once for every subscriber, and the writer that already has it.
    struct PendingBroadcast {
        var frame: ByteBuffer
        var sentTo: UInt64?
    }

    /// Sends new events to their writer at once (so its replica has them before the reply,
    /// read-your-writes) and to every other subscriber just after the reply: an acknowledgement
    /// does not wait for a hundred other sockets. Order is kept: whatever keyjard does next
    /// (another request, a subscription, the next commit) first finishes these broadcasts, so
    /// every subscriber still sees every event in sequence order. A writer that follows
    /// (``Request/follow(after:)``) gets its events too, after whatever it missed.
    private func broadcast(_ events: [StoreDatabase.LoggedEvent], origin: ServedClient?, previous: UInt64) {
        let writer = origin.flatMap { state.subscribers[$0.id] }
        let follower = writer == nil ? origin.flatMap { $0.followedTo == nil ? nil : $0 } : nil
        // A follower that has everything before these events gets them as they are.
        let direct = writer ?? (follower?.followedTo == previous ? follower : nil)
        // Nobody else to tell (a later subscriber reads these from the change log).
        let othersListen = state.subscribers.count > (writer == nil ? 0 : 1)
        for event in events {
            // The logged JSON is wrapped as it is: no event is encoded twice. One too large to
            // push (a big import's) becomes a marker; subscribers fetch a snapshot.
            let payload =
                event.json.utf8.count > ProtocolLimits.largestPushedEvent
                ? MessageCoding.encode(ServerMessage.resynchronise(sequence: event.sequence))
                : Array(MessageCoding.eventPayload(sequence: event.sequence, eventJSON: event.json).utf8)
            let frame = ByteBuffer(framing: payload, allocator: ByteBufferAllocator())
            state.recentEvents.append(sequence: event.sequence, frame: frame)
            if let direct { deliver(frame, to: direct) }
            if othersListen { state.pendingBroadcasts.append(PendingBroadcast(frame: frame, sentTo: writer?.id)) }
        }
        if let follower, let last = events.last?.sequence {
            if direct == nil, let missedSince = follower.followedTo {
                do {
                    try sendEvents(after: missedSince, to: follower, replica: true)
                } catch {
                    // It reconnects and catches up from what it has.
                    follower.close()
                }
            }
            follower.followedTo = last
        }
        guard !state.isFlushScheduled, !state.pendingBroadcasts.isEmpty else { return }
        state.isFlushScheduled = true
        // Runs on this loop after the current read is handled, its replies written.
        let service = NIOLoopBound(self, eventLoop: eventLoop)
        eventLoop.execute { service.value.flushBroadcasts() }
    }

    /// Sends every pending event to the subscribers that do not have it yet, in order (each
    /// event to the oldest connection first: ``SubscriberList``).
    func flushBroadcasts() {
        state.isFlushScheduled = false
        guard !state.pendingBroadcasts.isEmpty else { return }
        let pending = state.pendingBroadcasts
        state.pendingBroadcasts.removeAll(keepingCapacity: true)
        for broadcast in pending {
            for client in state.subscribers.clients where client.id != broadcast.sentTo {
                deliver(broadcast.frame, to: client)
            }
        }
    }

    private func deliver(_ frame: ByteBuffer, to client: ServedClient) {
        guard !client.send(framed: frame) else { return }
        logger.warning("client queue overflowed; disconnecting it", metadata: ["client.pid": "\(client.pid)"])
        state.subscribers.remove(id: client.id)
        client.close()
    }

    func subscribe(_ client: ServedClient, after sequence: UInt64?) throws(WireError) -> Response {
        // Events committed before this request reach the client through the log below, never twice.
        flushBroadcasts()
        if let sequence { try sendEvents(after: sequence, to: client) }
        // On the event loop nothing can commit between the events sent above and this line.
        client.followedTo = nil
        state.subscribers.insert(client)
        return .subscribed(sequence: state.latestSequence)
    }

    /// Ends a subscription, if any, and brings the client's replica up to date: from now on it
    /// is sent only its own writes (``broadcast(_:origin:previous:)``).
    func follow(_ client: ServedClient, after sequence: UInt64) throws(WireError) -> Response {
        // What was pending for it as a subscriber is in what follows (or it already has it).
        state.subscribers.remove(id: client.id)
        try sendEvents(after: sequence, to: client, replica: true)
        client.followedTo = state.latestSequence
        return .subscribed(sequence: state.latestSequence)
    }

    /// Sends `client` every event after `sequence`: from memory when the ring holds them, else
    /// from the change log; the whole state when the log no longer has them either, or they
    /// could never fit the client's queue. Events that do not fit close the connection (a gap
    /// nobody sees would stay; reconnecting, a subscriber asks for the rest from the last event
    /// it got, so that a listener still sees every change).
    ///
    /// - Parameter replica: the client only keeps a replica (it follows): nothing shows it the
    ///   events one by one, and its write waits for its reply after them, so beyond half its
    ///   queue (in messages or bytes: what is already queued must still fit) it gets the whole
    ///   state instead.
    func sendEvents(after sequence: UInt64, to client: ServedClient, replica: Bool = false) throws(WireError) {
        guard sequence != state.latestSequence else { return }
        let messageBudget = replica ? configuration.clientQueueLimit / 2 : Int.max
        let byteBudget = replica ? configuration.clientQueueBytes / 2 : configuration.clientQueueBytes
        // A sequence number from the future (another database's) gets the whole state.
        if sequence < state.latestSequence, let held = state.recentEvents.frames(after: sequence),
            held.count <= messageBudget, held.reduce(0, { $0 + $1.frame.readableBytes }) <= byteBudget
        {
            for entry in held where !client.send(framed: entry.frame) {
                client.close()
                throw WireError(code: WireError.overloaded, message: "the missed events did not fit the client's queue")
            }
            return
        }
        let missed: [[UInt8]]?
        do {
            missed = try database.events(after: sequence).flatMap { events in
                events.count <= messageBudget
                    ? events.map { MessageCoding.encode(ServerMessage.event(event: $0)) } : nil
            }
        } catch {
            throw storageFailure(error)
        }
        if let missed, missed.reduce(0, { $0 + $1.count }) <= byteBudget {
            for payload in missed where !client.send(encoded: payload) {
                client.close()
                throw WireError(code: WireError.overloaded, message: "the missed events did not fit the client's queue")
            }
        } else if !client.send(encoded: try snapshotMessage()) {
            client.close()
            throw WireError(code: WireError.overloaded, message: "the snapshot did not fit the client's queue")
        }
    }

    /// The whole state as a pushed `snapshot` message (cookies written by the fast encoder).
    func snapshotMessage() throws(WireError) -> [UInt8] {
        MessageCoding.encode(ServerMessage.snapshot(snapshot: try snapshot()))
    }

    func snapshot() throws(WireError) -> StoreSnapshot {
        do {
            return StoreSnapshot(
                cookies: state.jar.allCookies,
                policy: state.jar.policy,
                credentials: try database.credentialRecords(),
                sequence: state.latestSequence
            )
        } catch {
            throw storageFailure(error)
        }
    }

    // MARK: - Writing

    /// Commits writes, broadcasts their events (to `origin` first), and returns the last sequence
    /// number. On failure the in-memory jar is reloaded from the database, so memory never runs
    /// ahead of disk.
    func commit(_ writes: [StoreDatabase.Write], origin: ServedClient? = nil) throws(WireError) -> UInt64? {
        guard state.lifecycle.acceptsWrites else {
            throw WireError(code: WireError.shuttingDown, message: "keyjard is shutting down")
        }
        flushBroadcasts()
        do {
            let events = try database.commit(writes)
            state.jarGeneration &+= 1
            let previous = state.latestSequence
            if let last = events.last?.sequence {
                state.latestSequence = last
                // Before any reply or event leaves: a process told of this commit finds it here.
                sequencePage.publish(last)
            }
            if configuration.checkpointPolicy.startsAtOnce(walFrames: database.walFrames) { checkpointInBackground() }
            broadcast(events, origin: origin, previous: previous)
            return events.last?.sequence
        } catch {
            reloadJar()
            throw storageFailure(error)
        }
    }

    private func reloadJar() {
        guard let policy = try? database.policy() else { return }
        var reloaded = CookieJar(policy: policy, limits: state.jar.limits, publicSuffixes: state.jar.publicSuffixes)
        guard (try? database.forEachCookie({ reloaded.restore($0, isNew: true) })) != nil else { return }
        state.jar = reloaded
        state.jarGeneration &+= 1
        // A commit that failed may still have reached the disk (an error after COMMIT): the
        // log says where the sequence stands.
        if let latest = try? database.latestSequence(), latest != state.latestSequence {
            state.latestSequence = latest
            state.recentEvents.reset(latest: latest)
            sequencePage.publish(latest)
        }
    }

    func storageFailure(_ error: any Error) -> WireError {
        let now = NIODeadline.now()
        if now - state.lastStorageFailureLogged >= .seconds(1) {
            logger.error(
                "storage failure",
                metadata: ["error": "\(error)", "failures.unlogged": "\(state.storageFailuresNotLogged)"]
            )
            state.lastStorageFailureLogged = now
            state.storageFailuresNotLogged = 0
        } else {
            state.storageFailuresNotLogged += 1
        }
        return WireError(code: WireError.storageFailure, message: "keyjard could not use its database: \(error)")
    }

    // MARK: - Maintenance

    /// Runs the store's checkpoint policy on the checkpoint thread, never inside a commit.
    func checkpointInBackground() {
        guard state.lifecycle.runsMaintenance, !database.isCheckpointRunning else { return }
        let database = self.database
        let policy = configuration.checkpointPolicy
        let logger = self.logger
        checkpointThread.runIfActive(eventLoop: eventLoop) {
            // Linux keeps a nice value per thread; "process 0" is the calling thread. (Raising
            // it needs no privilege; it is set again each time as it costs next to nothing.)
            _ = setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, 10)
            try database.checkpoint(following: policy)
        }.whenFailure { error in
            logger.debug("checkpoint skipped", metadata: ["error": "\(error)"])
        }
    }

    /// Drops expired cookies (and tells everyone).
    func purgeExpired(now: Date = Date()) {
        let changes = state.jar.removeExpired(now: now)
        guard !changes.isEmpty else { return }
        _ = try? commit([.cookies(changes)])
    }

    /// A clean stop ends the login session: session cookies are dropped, the WAL is folded into
    /// the database, and every client is disconnected. After a crash none of this runs, so
    /// session cookies survive it.
    func shutdown() {
        guard state.lifecycle.beginShutdown() else { return }
        let ended = state.jar.endSession()
        if !ended.isEmpty { _ = try? commit([.cookies(ended)]) }
        flushBroadcasts()
        state.lifecycle.finishShutdown()
        do {
            try database.checkpoint(.truncate)
        } catch {
            logger.warning("final checkpoint failed", metadata: ["error": "\(error)"])
        }
        for client in state.clients.values { client.close() }
        state.clients.removeAll()
        state.subscribers.removeAll()
    }

    /// Runs credential work that writes both the secret store and the database, or compares
    /// them, after the work queued before it has finished: no comparison ever sees half of a
    /// write in progress, and two writes of one credential cannot interleave their halves.
    func inCredentialLane<T: Sendable>(_ work: @escaping @Sendable () -> EventLoopFuture<T>) -> EventLoopFuture<T> {
        let previous = state.credentialLane ?? eventLoop.makeSucceededVoidFuture()
        let result = previous.flatMap { work() }
        state.credentialLane = result.map { _ in }.recover { _ in }
        return result
    }

    /// The service's status, with the secret store's health (and, when it could be compared,
    /// what is not in pairs) as read off the loop.
    func status(health: SecretStoreHealth, credentialMismatches: [CredentialMismatch]? = nil) -> ServiceStatus {
        let (healthy, detail): (Bool, String) = {
            switch health {
            case .available(let backend): return (true, backend)
            case .unavailable(let reason): return (false, reason)
            }
        }()
        let backend: String
        switch configuration.secrets {
        case .secretService: backend = "secret-service"
        case .file(let path): backend = "file:\(path)"
        }
        return ServiceStatus(
            version: KeyjarServer.version,
            protocolVersion: ProtocolVersion.current,
            pid: getpid(),
            socketPath: configuration.socketPath,
            databasePath: configuration.databasePath,
            schemaVersion: StoreDatabase.schemaVersion,
            cookieCount: state.jar.count,
            credentialCount: (try? database.credentialRecords().count) ?? 0,
            sequence: state.latestSequence,
            secretsBackend: backend,
            secretsHealthy: healthy,
            secretsDetail: detail,
            acceptPolicy: state.jar.policy.acceptPolicy,
            connectedClients: state.clients.count,
            inbound: ServiceStatus.Inbound(
                budget: state.inbound.limit,
                reserved: state.inbound.reserved,
                peakReserved: state.inbound.peakReserved,
                buffered: state.inbound.buffered,
                peakBuffered: state.inbound.peakBuffered,
                maximumConnections: configuration.maximumConnections,
                pausedConnections: state.inbound.pausedConnections
            ),
            credentialMismatches: credentialMismatches
        )
    }
}
