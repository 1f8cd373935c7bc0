import Foundation
import KeyjarCore
import KeyjarProtocol
import KeyjarStore
import Logging

/// The shared store's single owner: the authoritative cookie jar in memory, the database it is
/// persisted to, the secret store, and the clients to notify.
///
/// Every write goes through this actor, is committed to SQLite (with its change-log entries)
/// before it is acknowledged, and is then pushed to every subscribed client, so all clients see
/// one order of changes. Secret Service calls, which cross D-Bus, run off the actor.
actor KeyjarService {
    let configuration: ServerConfiguration
    let database: StoreDatabase
    let secrets: any SecretStore
    let logger: Logger
    var jar: CookieJar
    private var clients: [UInt64: ClientConnection] = [:]
    private var subscribers: [UInt64: ClientConnection] = [:]
    private(set) var isShuttingDown = false

    init(configuration: ServerConfiguration, database: StoreDatabase, secrets: any SecretStore, logger: Logger) throws {
        self.configuration = configuration
        self.database = database
        self.secrets = secrets
        self.logger = logger
        let snapshot = try database.loadSnapshot()
        var jar = CookieJar(policy: snapshot.policy)
        jar.restore(snapshot.cookies)
        self.jar = jar
    }

    // MARK: - Clients

    func register(_ client: ClientConnection) { clients[client.id] = client }

    func unregister(_ client: ClientConnection) {
        clients[client.id] = nil
        subscribers[client.id] = nil
    }

    var clientCount: Int { clients.count }

    /// Pushes events to every subscriber; encoded once, whatever the number of clients.
    private func broadcast(_ events: [SequencedEvent]) {
        for event in events {
            let payload = MessageCoding.encode(ServerMessage.event(event: event))
            for (id, client) in subscribers where !client.send(encoded: payload) {
                logger.warning("client queue overflowed; disconnecting it", metadata: ["client.pid": "\(client.pid)"])
                subscribers[id] = nil
                client.close()
            }
        }
    }

    func subscribe(_ client: ClientConnection, after sequence: UInt64?) throws(WireError) -> Response {
        let latest: UInt64
        do {
            latest = try database.latestSequence()
            if let sequence {
                if let missed = try database.events(after: sequence) {
                    for event in missed { client.send(.event(event: event)) }
                } else {
                    client.send(.snapshot(snapshot: try snapshot()))
                }
            }
        } catch {
            throw storageFailure(error)
        }
        // No suspension point since the read above: nothing committed in between is missed.
        subscribers[client.id] = client
        return .subscribed(sequence: latest)
    }

    func snapshot() throws -> StoreSnapshot {
        StoreSnapshot(
            cookies: jar.allCookies, policy: jar.policy, credentials: try database.credentialRecords(),
            sequence: try database.latestSequence())
    }

    // MARK: - Writing

    /// Commits writes, broadcasts their events, and returns the last sequence number. On failure
    /// the in-memory jar is reloaded from the database, so memory never runs ahead of disk.
    func commit(_ writes: [StoreDatabase.Write]) throws(WireError) -> UInt64? {
        if isShuttingDown { throw WireError(code: WireError.shuttingDown, message: "keyjard is shutting down") }
        do {
            let events = try database.commit(writes)
            broadcast(events)
            return events.last?.sequence
        } catch {
            reloadJar()
            throw storageFailure(error)
        }
    }

    private func reloadJar() {
        guard let snapshot = try? database.loadSnapshot() else { return }
        var reloaded = CookieJar(policy: snapshot.policy, limits: jar.limits, publicSuffixes: jar.publicSuffixes)
        reloaded.restore(snapshot.cookies)
        jar = reloaded
    }

    func storageFailure(_ error: any Error) -> WireError {
        logger.error("storage failure", metadata: ["error": "\(error)"])
        return WireError(code: WireError.storageFailure, message: "keyjard could not write its database: \(error)")
    }

    // MARK: - Maintenance

    /// Drops expired cookies (and tells everyone).
    func purgeExpired(now: Date = Date()) {
        let changes = jar.removeExpired(now: now)
        guard !changes.isEmpty else { return }
        _ = try? commit([.cookies(changes)])
    }

    /// A clean stop ends the login session: session cookies are dropped, the WAL is folded into
    /// the database, and every client is disconnected. After a crash, none of this runs, so
    /// session cookies survive it.
    func shutdown() {
        guard !isShuttingDown else { return }
        let ended = jar.endSession()
        if !ended.isEmpty { _ = try? commit([.cookies(ended)]) }
        isShuttingDown = true
        do {
            try database.checkpoint(truncate: true)
        } catch {
            logger.warning("final checkpoint failed", metadata: ["error": "\(error)"])
        }
        for client in clients.values { client.close() }
        clients.removeAll()
        subscribers.removeAll()
    }

    func status() -> ServiceStatus {
        let health = secrets.health()
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
            version: KeyjarServer.version, protocolVersion: ProtocolVersion.current, pid: getpid(),
            socketPath: configuration.socketPath, databasePath: configuration.databasePath,
            schemaVersion: StoreDatabase.schemaVersion, cookieCount: jar.count,
            credentialCount: (try? database.credentialRecords().count) ?? 0,
            sequence: (try? database.latestSequence()) ?? 0, secretsBackend: backend, secretsHealthy: healthy,
            secretsDetail: detail, acceptPolicy: jar.policy.acceptPolicy, connectedClients: clients.count)
    }
}
