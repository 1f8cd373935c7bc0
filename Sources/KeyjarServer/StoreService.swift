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
        var fanout = EventFanout<ServedClient>()
        /// Imports arriving in batches, by connection (``ImportSessions``).
        var imports = ImportSessions()
        var lifecycle = ServiceLifecycle.serving
        /// Counts the commits (and reloads) of the jar: a plan made on a copy of it holds while
        /// this has not moved.
        var jarGeneration: UInt64 = 0
        /// The last committed sequence number (what the sequence page shows).
        var latestSequence: UInt64
        /// The latest events, framed, for replicas that catch up.
        var recentEvents: RecentEvents
        var storageFailures = StorageFailureLog()
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
    /// Runs what would hold up the loop: Secret Service calls (``CredentialKeeper``) and the
    /// parsing of imported files.
    let threadPool: NIOThreadPool
    /// Runs checkpoints, at a lower CPU priority (nice 10), so that on a small machine a
    /// checkpoint does not delay the event loop's fan-out to its subscribers
    /// (docs/performance.md, Acknowledged writes).
    let checkpointThread: NIOThreadPool
    /// Decodes the messages too large to decode on the event loop (``ConnectionHandler``).
    let decodingThread: NIOThreadPool
    let logger: Logger
    /// Where clients read the last committed sequence number (``SequencePage``).
    let sequencePage: SequencePage.Publisher
    private let box: NIOLoopBoundBox<State>
    /// Credentials, with the secret store's half of each (``CredentialKeeper``). It commits
    /// through this service, so it is made at the end of `init`, and never changed after.
    var credentials: CredentialKeeper {
        guard let keeper else { preconditionFailure("StoreService.init sets its credential keeper") }
        return keeper
    }
    nonisolated(unsafe) private var keeper: CredentialKeeper?

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
        decodingThread: NIOThreadPool,
        logger: Logger
    ) throws {
        self.eventLoop = eventLoop
        self.configuration = configuration
        self.database = database
        self.threadPool = threadPool
        self.checkpointThread = checkpointThread
        self.decodingThread = decodingThread
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
        // Chosen before the service is made (SecretsBackendChoice): never nil here.
        keeper = CredentialKeeper(
            store: self,
            secrets: secrets,
            backend: configuration.secrets ?? .secretService,
            threadPool: threadPool
        )
    }

    // MARK: - Clients

    func register(_ client: ServedClient) { state.clients[client.id] = client }

    /// Whether the client `id` is still connected (not yet unregistered).
    func isConnected(_ id: UInt64) -> Bool { state.clients[id] != nil }

    func unregister(_ client: ServedClient) {
        state.clients[client.id] = nil
        state.fanout.unsubscribe(id: client.id)
        // An import whose end never came is dropped: none of it was committed.
        state.imports.end(on: client.id)
        credentials.clientLeft(client.id)
    }

    /// The whole state as a pushed `snapshot` message (cookies written by the fast encoder).
    func snapshotMessage() throws(WireError) -> [UInt8] {
        MessageCoding.encode(ServerMessage.snapshot(snapshot: try snapshot()))
    }

    /// The whole state.
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
        if let unlogged = state.storageFailures.failure(at: .now()) {
            logger.error("storage failure", metadata: ["error": "\(error)", "failures.unlogged": "\(unlogged)"])
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

    /// A clean stop: the WAL is folded into the database and every client is disconnected; at
    /// the end of the login session (not for a restart) session cookies are dropped first.
    /// After a crash none of this runs, so session cookies survive it.
    func shutdown(endingSession: Bool = true) {
        guard state.lifecycle.beginShutdown() else { return }
        if endingSession {
            let ended = state.jar.endSession()
            if !ended.isEmpty { _ = try? commit([.cookies(ended)]) }
        }
        flushBroadcasts()
        credentials.stop(endingSession: endingSession)
        state.lifecycle.finishShutdown()
        do {
            try database.checkpoint(.truncate)
        } catch {
            logger.warning("final checkpoint failed", metadata: ["error": "\(error)"])
        }
        for client in state.clients.values { client.close() }
        state.clients.removeAll()
        state.fanout.removeAll()
        state.imports.endAll()
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
        switch credentials.backend {
        case .secretService: backend = "secret-service"
        case .file(let path): backend = "file:\(path)"
        case .encrypted(let path): backend = "encrypted:\(path)"
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
