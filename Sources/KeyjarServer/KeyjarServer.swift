public import Logging
import Foundation
import Glibc
import KeyjarProtocol
import KeyjarStore
import NIOCore
import NIOPosix

/// keyjard's server: binds (or inherits) the socket, serves every connection, keeps the
/// database checkpointed and expired cookies purged, and stops cleanly when told to.
public enum KeyjarServer {
    public static let version = "0.1.0"

    /// Serves until `shutdown` yields or finishes; `ready` is called with the socket path once
    /// clients can connect.
    public static func run(
        configuration: ServerConfiguration, logger: Logger, shutdown: AsyncStream<Void>,
        ready: @escaping @Sendable (String) -> Void
    ) async throws {
        let directory = try SocketDirectory(socketPath: configuration.socketPath)
        let database: StoreDatabase
        do {
            try FileManager.default.createDirectory(
                atPath: (configuration.databasePath as NSString).deletingLastPathComponent,
                withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            database = try StoreDatabase(path: configuration.databasePath)
        } catch let error as StoreError {
            throw ServerError(error.message)
        } catch {
            throw ServerError("cannot open the database \(configuration.databasePath): \(error.localizedDescription)")
        }
        let secrets: any SecretStore
        switch configuration.secrets {
        case .secretService:
            secrets = LibSecretStore()
        case .file(let path):
            logger.warning("passwords are kept in a plain file (--secrets file): weaker than the Secret Service",
                           metadata: ["file": "\(path)"])
            do { secrets = try FileSecretStore(path: path) } catch { throw ServerError("\(error)") }
        }
        if case .unavailable(let reason) = secrets.health() {
            logger.warning("no usable secret store: permanent credentials will be refused until it is back",
                           metadata: ["reason": "\(reason)"])
        }
        let service = try KeyjarService(configuration: configuration, database: database, secrets: secrets, logger: logger)
        await service.purgeExpired()

        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        do {
            try await serve(
                configuration: configuration, directory: directory, service: service, database: database, group: group,
                logger: logger, shutdown: shutdown, ready: ready)
        } catch {
            try? await group.shutdownGracefully()
            throw error
        }
        try? await group.shutdownGracefully()
    }

    private static func serve(
        configuration: ServerConfiguration, directory: SocketDirectory, service: KeyjarService, database: StoreDatabase,
        group: MultiThreadedEventLoopGroup, logger: Logger, shutdown: AsyncStream<Void>,
        ready: @escaping @Sendable (String) -> Void
    ) async throws {
        let maximumPayload = configuration.maximumFramePayload
        let bootstrap = ServerBootstrap(group: group).serverChannelOption(.backlog, value: 256)
        let initializer: @Sendable (any Channel) -> EventLoopFuture<NIOAsyncChannel<ByteBuffer, ByteBuffer>> = { channel in
            channel.eventLoop.makeCompletedFuture {
                try channel.pipeline.syncOperations.addHandler(ByteToMessageHandler(FrameDecoder(maximumPayload: maximumPayload)))
                try channel.pipeline.syncOperations.addHandler(MessageToByteHandler(FrameEncoder()))
                return try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: channel)
            }
        }
        let server: NIOAsyncChannel<NIOAsyncChannel<ByteBuffer, ByteBuffer>, Never>
        let ownsSocketFile = configuration.inheritedSocket == nil
        if let inherited = configuration.inheritedSocket {
            logger.info("using the listening socket passed by systemd", metadata: ["fd": "\(inherited)"])
            server = try await bootstrap.bind(inherited, childChannelInitializer: initializer)
        } else {
            try directory.removeStaleSocket()
            server = try await bootstrap.bind(
                unixDomainSocketPath: configuration.socketPath, childChannelInitializer: initializer)
            // keyjard runs with umask 077, but a library caller may not: set the mode explicitly.
            chmod(configuration.socketPath, 0o600)
        }
        logger.info("serving", metadata: ["socket": "\(configuration.socketPath)", "database": "\(configuration.databasePath)"])
        ready(configuration.socketPath)

        await withDiscardingTaskGroup { tasks in
            tasks.addTask {
                try? await server.executeThenClose { connections in
                    var nextID: UInt64 = 0
                    try await withThrowingDiscardingTaskGroup { connectionTasks in
                        for try await connection in connections {
                            nextID += 1
                            let id = nextID
                            connectionTasks.addTask {
                                await ConnectionHandler.serve(
                                    connection, id: id, service: service, queueLimit: configuration.clientQueueLimit,
                                    logger: logger)
                            }
                        }
                    }
                }
            }
            tasks.addTask {
                await maintain(database: database, service: service, configuration: configuration, logger: logger)
            }
            for await _ in shutdown { break }
            logger.info("stopping")
            try? await server.channel.close()
            await service.shutdown()
            tasks.cancelAll()
        }
        if ownsSocketFile { directory.removeSocket() }
        logger.info("stopped")
    }

    /// Checkpoints the WAL from its own connection (never inside a commit) and purges expired
    /// cookies, until cancelled.
    private static func maintain(
        database: StoreDatabase, service: KeyjarService, configuration: ServerConfiguration, logger: Logger
    ) async {
        var sinceExpiry: Duration = .zero
        while !Task.isCancelled {
            do { try await Task.sleep(for: configuration.checkpointInterval) } catch { return }
            do { try database.checkpoint() } catch { logger.debug("checkpoint skipped", metadata: ["error": "\(error)"]) }
            sinceExpiry += configuration.checkpointInterval
            if sinceExpiry >= configuration.expiryInterval {
                sinceExpiry = .zero
                await service.purgeExpired()
            }
        }
    }
}
