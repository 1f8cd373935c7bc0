import Atomics
import Foundation
import Glibc
import KeyjarCore
import KeyjarPlatform
import KeyjarProtocol
import KeyjarStore
public import Logging
import NIOCore
import NIOPosix

/// keyjard's server: binds (or inherits) the socket, serves every connection, keeps the
/// database checkpointed and expired cookies purged, and stops cleanly when told to.
public enum KeyjarServer {
    public static let version = "0.1.0"

    /// Why keyjard stops.
    public enum Stop: Sendable, Hashable {
        /// The login session ended (SIGTERM, SIGINT): session cookies are dropped.
        case endOfSession
        /// keyjard is replaced (SIGHUP, an upgrade) while the login session goes on: session
        /// cookies are kept for the next keyjard, as after a crash.
        case restart
    }

    /// Serves until `shutdown` yields or finishes, then stops at the end of the login session;
    /// `ready` is called with the socket path once clients can connect.
    public static func run(
        configuration: ServerConfiguration,
        logger: Logger,
        shutdown: AsyncStream<Void>,
        ready: @escaping @Sendable (String) -> Void
    ) async throws {
        let (stops, stop) = AsyncStream.makeStream(of: Stop.self)
        let forward = Task {
            for await _ in shutdown { break }
            stop.yield(.endOfSession)
            stop.finish()
        }
        defer { forward.cancel() }
        try await run(configuration: configuration, logger: logger, stops: stops, ready: ready)
    }

    /// Serves until `stops` yields (stopping as it says) or finishes (the end of the login
    /// session); `ready` is called with the socket path once clients can connect.
    public static func run(
        configuration: ServerConfiguration,
        logger: Logger,
        stops shutdown: AsyncStream<Stop>,
        ready: @escaping @Sendable (String) -> Void
    ) async throws {
        let directory = try SocketDirectory(socketPath: configuration.socketPath)
        let database: StoreDatabase
        let databaseLock: DatabaseLock
        do {
            try PrivateDirectory.makeIfMissing((configuration.databasePath as NSString).deletingLastPathComponent)
            // One keyjard per database, whatever socket it serves; before the database is
            // opened, which migrates and checkpoints it.
            databaseLock = try DatabaseLock(
                databasePath: configuration.databasePath,
                socketPath: configuration.socketPath
            )
            database = try StoreDatabase(path: configuration.databasePath)
        } catch let error as ServerError {
            throw error
        } catch let error as StoreError {
            throw ServerError(error.message)
        } catch let error as PrivateDirectory.Failure {
            throw ServerError("the database's directory \(error)")
        } catch {
            throw ServerError("cannot open the database \(configuration.databasePath): \(error.localizedDescription)")
        }
        var configuration = configuration
        let backend = try chooseSecrets(configuration, database: database, logger: logger)
        configuration.secrets = backend
        let secrets: any SecretStore
        switch backend {
        case .secretService:
            secrets = LibSecretStore()
        case .file(let path):
            logger.warning(
                "passwords are kept in a plain file (--secrets file): weaker than the Secret Service",
                metadata: ["file": "\(path)"]
            )
            do { secrets = try FileSecretStore(path: path) } catch { throw ServerError("\(error)") }
        case .encrypted(let path):
            do { secrets = try EncryptedSecretStore(path: path) } catch { throw ServerError("\(error)") }
        }
        if case .unavailable(let reason) = secrets.health() {
            logger.warning(
                "no usable secret store: permanent credentials will be refused until it is back",
                metadata: ["reason": "\(reason)"]
            )
        }
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let threadPool = NIOThreadPool(numberOfThreads: 2)
        threadPool.start()
        let checkpointThread = NIOThreadPool(numberOfThreads: 1)
        checkpointThread.start()
        // Large messages are decoded here, off the event loop every client is served on.
        let decodingThread = NIOThreadPool(numberOfThreads: 1)
        decodingThread.start()
        do {
            try await serve(
                configuration: configuration,
                directory: directory,
                database: database,
                secrets: secrets,
                group: group,
                threadPools: (threadPool, checkpointThread, decodingThread),
                logger: logger,
                shutdown: shutdown,
                ready: ready
            )
        } catch {
            try? await decodingThread.shutdownGracefully()
            try? await checkpointThread.shutdownGracefully()
            try? await threadPool.shutdownGracefully()
            try? await group.shutdownGracefully()
            throw error
        }
        try? await decodingThread.shutdownGracefully()
        try? await checkpointThread.shutdownGracefully()
        try? await threadPool.shutdownGracefully()
        try? await group.shutdownGracefully()
        // The database stays this keyjard's until it has stopped serving.
        withExtendedLifetime(databaseLock) {}
    }

    /// Where the passwords are (``SecretsBackendChoice``), recorded in the database when the
    /// choice is new.
    private static func chooseSecrets(
        _ configuration: ServerConfiguration,
        database: StoreDatabase,
        logger: Logger
    ) throws -> ServerConfiguration.Secrets {
        let encrypted = ServerConfiguration.encryptedSecretsFile(besideDatabase: configuration.databasePath)
        let plain = ServerConfiguration.plainSecretsFile(besideDatabase: configuration.databasePath)
        let environment = ProcessInfo.processInfo.environment
        let choice: SecretsBackendChoice
        do {
            choice = SecretsBackendChoice(
                asked: configuration.secrets.map(StoreDatabase.SecretsBackend.init),
                askedByEnvironment: configuration.secretsFromEnvironment,
                recorded: try database.secretsBackend(),
                // Only credentials that keep a secret: a trusted server's fingerprint has none.
                credentialCount: try database.credentialRecords().count { $0.space.authenticationMethod.keepsSecret },
                encryptedFile: encrypted,
                encryptedFileExists: FileManager.default.fileExists(atPath: encrypted),
                plainFile: plain,
                plainFileExists: FileManager.default.fileExists(atPath: plain),
                hasDisplay: [environment["DISPLAY"], environment["WAYLAND_DISPLAY"]].contains { !($0 ?? "").isEmpty }
            )
        } catch {
            throw ServerError("cannot read where the passwords are from the database: \(error)")
        }
        let outcome = choice.decide(offer: LibSecretStore.offer)
        if let warning = outcome.warning { logger.warning("\(warning)") }
        if outcome.record {
            do {
                try database.recordSecretsBackend(outcome.backend)
            } catch {
                throw ServerError("cannot record where the passwords are in the database: \(error)")
            }
            logger.notice("passwords go to \(outcome.backend)", metadata: ["why": "\(outcome.why)"])
        }
        return ServerConfiguration.Secrets(outcome.backend)
    }

    private static func serve(
        configuration: ServerConfiguration,
        directory: SocketDirectory,
        database: StoreDatabase,
        secrets: any SecretStore,
        group: MultiThreadedEventLoopGroup,
        threadPools: (secrets: NIOThreadPool, checkpoints: NIOThreadPool, decoding: NIOThreadPool),
        logger: Logger,
        shutdown: AsyncStream<Stop>,
        ready: @escaping @Sendable (String) -> Void
    ) async throws {
        // One event loop owns the service and every connection: no thread hop per request.
        let loop = group.next()
        let service = try StoreService(
            eventLoop: loop,
            configuration: configuration,
            database: database,
            secrets: secrets,
            threadPool: threadPools.secrets,
            checkpointThread: threadPools.checkpoints,
            decodingThread: threadPools.decoding,
            logger: logger
        )
        // A key kept by the keyjard before this one (a restart in the login session) opens the
        // encrypted file before the first client is served: none sees it locked in between.
        try await loop.flatSubmit {
            service.purgeExpired()
            service.credentials.tidySecretsInTheBackground()
            return service.credentials.resumeUnlockFromSessionKeyring()
        }.get()

        let connectionIDs = ManagedAtomic<UInt64>(0)
        let bootstrap = ServerBootstrap(group: group)
            .serverChannelOption(.backlog, value: 256)
            // Half-closure lets a refused or failed client read its error before we close.
            .childChannelOption(.allowRemoteHalfClosure, value: true)
            // One read (at most 64 KiB) per wake-up: a connection whose ReadGate shuts then
            // receives nothing more, which is what bounds its buffer (InboundBudget).
            .childChannelOption(.maxMessagesPerRead, value: 1)
            .childChannelInitializer { channel in
                PeerCredentials.of(channel).flatMapThrowing { peer in
                    let operations = channel.pipeline.syncOperations
                    // Outbound messages are framed by whoever writes them (events once for
                    // every subscriber), so the pipeline has no encoder.
                    /// Answers the peer with one refusal and closes, saying why in the log.
                    func refuse(_ why: Logger.Message, _ metadata: Logger.Metadata, _ error: WireError) throws {
                        logger.warning(why, metadata: metadata)
                        try operations.addHandler(RefusalHandler(error))
                    }
                    guard peer.uid == getuid() else {
                        return try refuse(
                            "refused a client of another user",
                            ["peer.uid": "\(peer.uid)"],
                            WireError(code: WireError.handshakeRequired, message: "keyjard serves only its own user")
                        )
                    }
                    let fromThisProcess = service.state.clients.values.lazy.filter { $0.pid == peer.pid }.count
                    guard fromThisProcess < configuration.maximumConnectionsPerProcess else {
                        return try refuse(
                            "refused a client over the per-process connection limit",
                            ["peer.pid": "\(peer.pid)"],
                            WireError(
                                code: WireError.overloaded,
                                message:
                                    "keyjard already serves \(fromThisProcess) connections of process \(peer.pid) (--max-connections-per-process)"
                            )
                        )
                    }
                    guard service.state.clients.count < configuration.maximumConnections else {
                        return try refuse(
                            "refused a client over the connection limit",
                            ["peer.pid": "\(peer.pid)"],
                            WireError(
                                code: WireError.overloaded,
                                message:
                                    "keyjard already serves \(configuration.maximumConnections) connections (--max-connections)"
                            )
                        )
                    }
                    let gate = ReadGate(budget: service.state.inbound)
                    let client = ServedClient(
                        id: connectionIDs.wrappingIncrementThenLoad(ordering: .relaxed),
                        pid: peer.pid,
                        channel: channel,
                        gate: gate,
                        limits: ServedClient.Limits(
                            messages: configuration.clientQueueLimit,
                            bytes: configuration.clientQueueBytes,
                            backlogBytes: configuration.clientBacklogBytes
                        )
                    )
                    try operations.addHandler(
                        FrameReader(
                            service: service,
                            gate: gate,
                            maximumPayload: configuration.maximumFramePayload,
                            frameDeadline: TimeAmount(configuration.frameDeadline)
                        )
                    )
                    try operations.addHandler(ConnectionHandler(service: service, client: client, logger: logger))
                }
            }
        let server: any Channel
        let ownsSocketFile = configuration.inheritedSocket == nil
        if let inherited = configuration.inheritedSocket {
            logger.info("using the listening socket passed by systemd", metadata: ["fd": "\(inherited)"])
            server = try await bootstrap.withBoundSocket(inherited).get()
        } else {
            try directory.removeStaleSocket()
            server = try await bootstrap.bind(unixDomainSocketPath: configuration.socketPath).get()
            // keyjard runs with umask 077, but a library caller may not: set the mode explicitly.
            chmod(configuration.socketPath, 0o600)
        }
        logger.info(
            "serving",
            metadata: ["socket": "\(configuration.socketPath)", "database": "\(configuration.databasePath)"]
        )
        ready(configuration.socketPath)

        // Checkpoints run on their own thread and connection: never inside a commit.
        let checkpoints = loop.scheduleRepeatedTask(
            initialDelay: .seconds(1),
            delay: TimeAmount(configuration.checkpointInterval)
        ) { _ in
            service.checkpointInBackground()
        }
        let expirySeconds = max(1, configuration.expiryInterval.components.seconds)
        let expiry = loop.scheduleRepeatedTask(initialDelay: .seconds(expirySeconds), delay: .seconds(expirySeconds)) {
            _ in
            service.purgeExpired()
        }

        var stop = Stop.endOfSession
        for await reason in shutdown {
            stop = reason
            break
        }
        logger.info("stopping", metadata: ["for": "\(stop == .restart ? "a restart" : "the end of the login session")"])
        checkpoints.cancel()
        expiry.cancel()
        try? await server.close()
        let endingSession = stop == .endOfSession
        try await loop.submit { service.shutdown(endingSession: endingSession) }.get()
        if ownsSocketFile { directory.removeSocket() }
        logger.info("stopped")
    }
}
