public import KeyjarCore

/// What keyjard reports about itself.
public struct ServiceStatus: Sendable, Hashable {
    public var version: String
    public var protocolVersion: Int
    public var pid: Int32
    public var socketPath: String
    public var databasePath: String
    public var schemaVersion: Int64
    public var cookieCount: Int
    public var credentialCount: Int
    public var sequence: UInt64
    public var secretsBackend: String
    public var secretsHealthy: Bool
    public var secretsDetail: String
    public var acceptPolicy: CookieAcceptPolicy
    public var connectedClients: Int
    /// The memory clients' requests occupy in keyjard (absent from keyjards before it was
    /// bounded).
    public var inbound: Inbound?
    /// Credentials and passwords that are not in pairs; `nil` when they could not be compared
    /// (the secret store is unavailable, or keyjard predates the check).
    public var credentialMismatches: [CredentialMismatch]?
    /// Whether the encrypted secrets file is open, and for how long; absent for the other
    /// backends (and from keyjards before the encrypted file).
    public var secretsLock: SecretsLock?

    /// The encrypted secrets file's lock.
    public struct SecretsLock: Sendable, Hashable {
        /// No secret can be read or stored until `keyjar unlock`.
        public var isLocked: Bool
        /// Seconds without a secret read or stored after which keyjard locks the file; nil
        /// when it stays open until `keyjar lock` or keyjard stops.
        public var lockAfterIdle: Int?
        /// Seconds from now at which the file locks unless a secret is used before; nil when
        /// locked, or when it has no idle timeout.
        public var locksIn: Int?

        public init(isLocked: Bool, lockAfterIdle: Int? = nil, locksIn: Int? = nil) {
            self.isLocked = isLocked
            self.lockAfterIdle = lockAfterIdle
            self.locksIn = locksIn
        }
    }

    /// What clients' incoming frames hold of keyjard's memory, and its bounds.
    public struct Inbound: Sendable, Hashable {
        /// Bytes large frames may reserve at once (`--max-inbound-bytes`).
        public var budget: Int
        public var reserved: Int
        public var peakReserved: Int
        /// Bytes the connections' read buffers hold (allocated capacity), now and at most.
        public var buffered: Int
        public var peakBuffered: Int
        public var maximumConnections: Int
        /// Connections keyjard is not reading right now: waiting for the budget, for the
        /// Secret Service, or for the client to read what it was sent.
        public var pausedConnections: Int

        public init(
            budget: Int,
            reserved: Int,
            peakReserved: Int,
            buffered: Int,
            peakBuffered: Int,
            maximumConnections: Int,
            pausedConnections: Int
        ) {
            self.budget = budget
            self.reserved = reserved
            self.peakReserved = peakReserved
            self.buffered = buffered
            self.peakBuffered = peakBuffered
            self.maximumConnections = maximumConnections
            self.pausedConnections = pausedConnections
        }
    }

    public init(
        version: String,
        protocolVersion: Int,
        pid: Int32,
        socketPath: String,
        databasePath: String,
        schemaVersion: Int64,
        cookieCount: Int,
        credentialCount: Int,
        sequence: UInt64,
        secretsBackend: String,
        secretsHealthy: Bool,
        secretsDetail: String,
        acceptPolicy: CookieAcceptPolicy,
        connectedClients: Int,
        inbound: Inbound? = nil,
        credentialMismatches: [CredentialMismatch]? = nil,
        secretsLock: SecretsLock? = nil
    ) {
        self.version = version
        self.protocolVersion = protocolVersion
        self.pid = pid
        self.socketPath = socketPath
        self.databasePath = databasePath
        self.schemaVersion = schemaVersion
        self.cookieCount = cookieCount
        self.credentialCount = credentialCount
        self.sequence = sequence
        self.secretsBackend = secretsBackend
        self.secretsHealthy = secretsHealthy
        self.secretsDetail = secretsDetail
        self.acceptPolicy = acceptPolicy
        self.connectedClients = connectedClients
        self.inbound = inbound
        self.credentialMismatches = credentialMismatches
        self.secretsLock = secretsLock
    }
}
