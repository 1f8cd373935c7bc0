public import KeyjarCore
public import KeyjarProtocol

/// Everything keyjard needs to know to serve.
public struct ServerConfiguration: Sendable {
    public enum Secrets: Sendable, Hashable {
        /// The Secret Service on the D-Bus session bus, through libsecret.
        case secretService
        /// A 0600 JSON file: weaker, for headless hosts that have no Secret Service.
        case file(path: String)
    }

    public var socketPath: String
    public var databasePath: String
    public var secrets: Secrets
    /// A listening socket handed over by systemd (socket activation), used instead of binding.
    public var inheritedSocket: CInt?
    public var maximumFramePayload: Int
    /// Messages queued for one client before it is considered stuck and disconnected.
    public var clientQueueLimit: Int
    /// The jar's limits; Chromium's by default.
    public var limits: CookieJar.Limits
    public var checkpointInterval: Duration
    public var expiryInterval: Duration

    public init(
        socketPath: String = KeyjarPaths.defaultSocketPath(), databasePath: String = KeyjarPaths.defaultDatabasePath(),
        secrets: Secrets = .secretService, inheritedSocket: CInt? = nil,
        maximumFramePayload: Int = Framing.defaultMaximumPayload, clientQueueLimit: Int = 4096,
        limits: CookieJar.Limits = CookieJar.Limits(),
        checkpointInterval: Duration = .seconds(1), expiryInterval: Duration = .seconds(60)
    ) {
        self.socketPath = socketPath
        self.databasePath = databasePath
        self.secrets = secrets
        self.inheritedSocket = inheritedSocket
        self.maximumFramePayload = maximumFramePayload
        self.clientQueueLimit = clientQueueLimit
        self.limits = limits
        self.checkpointInterval = checkpointInterval
        self.expiryInterval = expiryInterval
    }
}

/// Why keyjard could not start or serve.
public struct ServerError: Error, Sendable, CustomStringConvertible {
    public var message: String

    public init(_ message: String) { self.message = message }

    public var description: String { message }
}
