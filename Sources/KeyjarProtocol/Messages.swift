public import KeyjarCore

/// The protocol version this build speaks; a hello with another is refused with
/// ``WireError/unsupportedVersion``.
public enum ProtocolVersion {
    public static let current = 1
}

/// A request and its id, from client to keyjard. The first must be ``Request/hello(version:client:)``.
public struct ClientMessage: Sendable, Hashable, Codable {
    public var id: UInt64
    public var request: Request

    public init(id: UInt64, request: Request) {
        self.id = id
        self.request = request
    }
}

/// Where a request for cookies comes from: the URL, its main document, and the request kind.
public struct WireCookieContext: Sendable, Hashable, Codable {
    public var url: String
    public var mainDocumentURL: String?
    public var isTopLevelNavigation: Bool
    public var method: String
    public var nonHTTP: Bool

    public init(
        url: String, mainDocumentURL: String? = nil, isTopLevelNavigation: Bool = true, method: String = "GET",
        nonHTTP: Bool = false
    ) {
        self.url = url
        self.mainDocumentURL = mainDocumentURL
        self.isTopLevelNavigation = isTopLevelNavigation
        self.method = method
        self.nonHTTP = nonHTTP
    }
}

public enum CookieFileFormat: String, Sendable, Hashable, Codable, CaseIterable {
    case netscape, json
}

/// Everything a client can ask keyjard.
public enum Request: Sendable, Hashable, Codable {
    case hello(version: Int, client: String)
    /// Start receiving events. With `after`, first the events after that sequence number, or
    /// a `snapshot` event when they are no longer kept; then every new event.
    case subscribe(after: UInt64?)
    case snapshot
    case status

    case cookieHeader(context: WireCookieContext)
    case cookies(context: WireCookieContext)
    /// Set-Cookie lines of one response, stored one by one under the accept policy, committed together.
    case setCookies(headers: [String], context: WireCookieContext)
    /// Cookies built by a program, committed together.
    case insertCookies(cookies: [Cookie])
    case deleteCookies(identities: [Cookie.Identity])
    /// Deletes all cookies, or those of a domain and its subdomains.
    case clearCookies(domain: String?)
    case removeCookiesCreated(since: Double)
    case listCookies(domain: String?)
    /// A cookie file, or one batch of it (`firstLine`: the number its first line, or JSON
    /// element, has in the whole file; problems are numbered from it).
    case importCookies(format: CookieFileFormat, text: String, firstLine: Int? = nil)
    case exportCookies(format: CookieFileFormat, includeSameSite: Bool)

    case policy
    case setPolicy(policy: CookiePolicy)

    case credentials(space: ProtectionSpace)
    case allCredentials
    /// The stored credentials that may answer a challenge for `space`, by Keyjar's matching
    /// rule (``CredentialChoice``): most specific first, and the one that answers unasked.
    case credentialChoice(space: ProtectionSpace)
    case setCredential(space: ProtectionSpace, user: String, password: String, makeDefault: Bool)
    case removeCredential(space: ProtectionSpace, user: String)
    case setDefaultCredential(space: ProtectionSpace, user: String)
    /// Fetches one password on demand (never part of a listing or an event).
    case password(space: ProtectionSpace, user: String)
    /// Finds credentials whose password is missing and passwords no credential owns (a crash
    /// between a credential's two writes), and removes both kinds.
    case repairCredentials
}

/// What keyjard reports about itself.
public struct ServiceStatus: Sendable, Hashable, Codable {
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

    /// What clients' incoming frames hold of keyjard's memory, and its bounds.
    public struct Inbound: Sendable, Hashable, Codable {
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
            budget: Int, reserved: Int, peakReserved: Int, buffered: Int, peakBuffered: Int, maximumConnections: Int,
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
        version: String, protocolVersion: Int, pid: Int32, socketPath: String, databasePath: String,
        schemaVersion: Int64, cookieCount: Int, credentialCount: Int, sequence: UInt64, secretsBackend: String,
        secretsHealthy: Bool, secretsDetail: String, acceptPolicy: CookieAcceptPolicy, connectedClients: Int,
        inbound: Inbound? = nil, credentialMismatches: [CredentialMismatch]? = nil
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
    }
}

/// A credential's metadata without its password in the secret store, or a password in the
/// secret store with no credential: what a crash between the two writes of a credential leaves.
/// Never carries a password.
public struct CredentialMismatch: Sendable, Hashable, Codable {
    public enum Kind: String, Sendable, Hashable, Codable {
        /// keyjard has the credential; the secret store has no password for it.
        case passwordMissing
        /// The secret store has a Keyjar password that no credential owns.
        case credentialMissing
    }

    public var kind: Kind
    public var space: ProtectionSpace
    public var user: String

    public init(kind: Kind, space: ProtectionSpace, user: String) {
        self.kind = kind
        self.space = space
        self.user = user
    }
}

/// The whole shared state, current to `sequence`.
public struct StoreSnapshot: Sendable, Hashable, Codable {
    public var cookies: [Cookie]
    public var policy: CookiePolicy
    public var credentials: [CredentialRecord]
    public var sequence: UInt64

    public init(cookies: [Cookie], policy: CookiePolicy, credentials: [CredentialRecord], sequence: UInt64) {
        self.cookies = cookies
        self.policy = policy
        self.credentials = credentials
        self.sequence = sequence
    }
}

/// The outcome of one Set-Cookie line or inserted cookie: nil when stored, else why not.
public typealias CookieOutcome = String?

/// A successful reply.
public enum Response: Sendable, Hashable, Codable {
    case hello(version: Int, server: String, sequence: UInt64)
    case ok
    /// Stored: the sequence number of the change it made, if any.
    case committed(sequence: UInt64?)
    case subscribed(sequence: UInt64)
    case snapshot(snapshot: StoreSnapshot)
    case status(status: ServiceStatus)
    case cookieHeader(header: String?)
    case cookies(cookies: [Cookie])
    /// Per line or cookie, in order: nil if stored, else the rejection reason.
    case cookieOutcomes(outcomes: [CookieOutcome], sequence: UInt64?)
    case importReport(imported: Int, expired: Int, problems: [CookieFileProblem], sequence: UInt64?)
    case exported(text: String)
    case policy(policy: CookiePolicy)
    case credentials(records: [CredentialRecord])
    /// Candidates most specific first, one per user; `preferred` answers without asking.
    case credentialChoice(candidates: [CredentialRecord], preferred: CredentialRecord?)
    case password(password: String?)
    /// What `repairCredentials` found and removed.
    case credentialsRepaired(mismatches: [CredentialMismatch], sequence: UInt64?)
}

/// Everything keyjard sends: replies (matched by id), and pushed events.
public enum ServerMessage: Sendable, Hashable, Codable {
    case reply(id: UInt64, response: Response)
    case failure(id: UInt64?, error: WireError)
    case event(event: SequencedEvent)
    /// The client missed events that are no longer kept: here is the whole state.
    case snapshot(snapshot: StoreSnapshot)
    /// The change with this sequence number was too large to push (its event's JSON over
    /// ``ProtocolLimits/largestPushedEvent``): the client fetches a snapshot instead.
    case resynchronise(sequence: UInt64)
}

/// Bounds of what keyjard sends.
public enum ProtocolLimits {
    /// An event whose JSON is larger than this is not pushed: subscribers get
    /// ``ServerMessage/resynchronise(sequence:)`` and fetch a snapshot, which the jar's limits
    /// bound. The change log keeps no larger event either.
    public static let largestPushedEvent = 1 << 20
}

extension CookieFileProblem: Codable {
    enum CodingKeys: String, CodingKey { case line, message }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(line: try container.decode(Int.self, forKey: .line), message: try container.decode(String.self, forKey: .message))
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(line, forKey: .line)
        try container.encode(message, forKey: .message)
    }
}
