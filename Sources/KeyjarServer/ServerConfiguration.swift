public import KeyjarCore
import KeyjarPlatform
public import KeyjarProtocol
public import KeyjarStore

/// Everything keyjard needs to know to serve.
public struct ServerConfiguration: Sendable {
    public enum Secrets: Sendable, Hashable {
        /// The Secret Service on the D-Bus session bus, through libsecret.
        case secretService
        /// A 0600 JSON file: weaker, for headless hosts that have no Secret Service.
        case file(path: String)
        /// A 0600 file sealed under a passphrase (``EncryptedSecretStore``): for machines
        /// without a desktop keyring. Locked until a client unlocks it.
        case encrypted(path: String)
    }

    public var socketPath: String
    public var databasePath: String
    /// nil: the database's recorded store, or at its first start the one the machine offers
    /// (``SecretsBackendChoice``). Once keyjard serves, never nil.
    public var secrets: Secrets?
    /// `secrets` was named by `KEYJAR_SECRETS`, which reaches a keyjard auto-started from any
    /// shell, not on the command line: the database's record wins over it while credentials
    /// are stored (``SecretsBackendChoice``).
    public var secretsFromEnvironment = false
    /// A listening socket handed over by systemd (socket activation), used instead of binding.
    public var inheritedSocket: CInt?
    public var maximumFramePayload: Int
    /// Bytes that large frames (over 64 KiB) may occupy at once, over all connections
    /// (``InboundBudget``); at least what one largest frame reserves
    /// (``minimumInboundBudget(maximumFramePayload:)``), which is the default.
    public var inboundBudget: Int
    /// Connections served at once; the next one is refused with `overloaded`.
    public var maximumConnections: Int
    /// Connections one process may hold at once (by its pid): one process cannot take every
    /// place from the others. Its next one is refused with `overloaded`.
    public var maximumConnectionsPerProcess = 256
    /// How long a connection may go without its hello: one that never says it (or stops
    /// halfway) is closed, so that silent connections cannot hold places.
    public var helloDeadline: Duration = .seconds(10)
    /// Called on the decoding thread before each large message is decoded: the tests hold a
    /// decode there to show that other clients are served meanwhile.
    package var decodingWillStart: (@Sendable () -> Void)?
    /// How long a large frame may take to arrive once it has begun.
    public var frameDeadline: Duration
    /// Messages queued for one client before it is considered stuck and disconnected.
    public var clientQueueLimit: Int
    /// Bytes queued for one client before it is considered stuck and disconnected.
    public var clientQueueBytes: Int
    /// Bytes queued for one client beyond which its requests are no longer read until it
    /// catches up.
    public var clientBacklogBytes: Int
    /// The jar's limits; Chromium's by default.
    public var limits: CookieJar.Limits
    /// How often the checkpoint policy is consulted when no commit triggered it.
    public var checkpointInterval: Duration
    /// When and how the WAL is checkpointed (the store's rule).
    public var checkpointPolicy: CheckpointPolicy
    /// The most cookie changes an import applies in one turn of the event loop (its chunks
    /// are otherwise sized to take about 2 ms each).
    public var largestImportChunk = 16_384
    /// The pause between two chunks of an import, in which the loop serves the other clients.
    public var importChunkPause: Duration = .microseconds(20)
    /// The protocol versions a hello may ask for; a narrower range makes this keyjard answer
    /// as an older one would (how the clients' fallback to an older keyjard is tested).
    public var protocolVersions = ProtocolVersion.supported
    public var expiryInterval: Duration
    /// How long the encrypted secrets file stays open without a secret read or stored, when
    /// an unlock does not say; nil: until `keyjar lock` or keyjard stops.
    public var lockAfterIdle: Duration?

    public init(
        socketPath: String = KeyjarPaths.defaultSocketPath(),
        databasePath: String = KeyjarPaths.defaultDatabasePath(),
        secrets: Secrets? = .secretService,
        inheritedSocket: CInt? = nil,
        maximumFramePayload: Int = Framing.defaultMaximumPayload,
        inboundBudget: Int? = nil,
        maximumConnections: Int = 512,
        frameDeadline: Duration = .seconds(30),
        clientQueueLimit: Int = 4096,
        clientQueueBytes: Int = 16 * 1024 * 1024,
        clientBacklogBytes: Int = 1024 * 1024,
        limits: CookieJar.Limits = CookieJar.Limits(),
        checkpointInterval: Duration = .seconds(1),
        checkpointPolicy: CheckpointPolicy = CheckpointPolicy(),
        expiryInterval: Duration = .seconds(60)
    ) {
        self.socketPath = socketPath
        self.databasePath = databasePath
        self.secrets = secrets
        self.inheritedSocket = inheritedSocket
        self.maximumFramePayload = maximumFramePayload
        self.inboundBudget = inboundBudget ?? Self.minimumInboundBudget(maximumFramePayload: maximumFramePayload)
        self.maximumConnections = maximumConnections
        self.frameDeadline = frameDeadline
        self.clientQueueLimit = clientQueueLimit
        self.clientQueueBytes = clientQueueBytes
        self.clientBacklogBytes = clientBacklogBytes
        self.limits = limits
        self.checkpointInterval = checkpointInterval
        self.checkpointPolicy = checkpointPolicy
        self.expiryInterval = expiryInterval
    }
}

extension ServerConfiguration {
    /// The encrypted file keyjard uses when it chooses one: beside the database.
    public static func encryptedSecretsFile(besideDatabase databasePath: String) -> String {
        PathName.appending("secrets.sealed", to: PathName.directory(of: databasePath))
    }

    /// The plain file keyjard uses when none is named: beside the database.
    public static func plainSecretsFile(besideDatabase databasePath: String) -> String {
        PathName.appending("secrets.json", to: PathName.directory(of: databasePath))
    }

    /// The smallest inbound budget that admits the largest frame: its buffer, as allocated.
    public static func minimumInboundBudget(maximumFramePayload: Int) -> Int {
        InboundBudget.reservation(forFrame: Framing.headerSize + maximumFramePayload)
    }
}

/// Why keyjard could not start or serve.
public struct ServerError: Error, Sendable, CustomStringConvertible {
    public var message: String

    public init(_ message: String) { self.message = message }

    public var description: String { message }
}
