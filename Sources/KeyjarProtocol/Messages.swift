public import KeyjarCodec
public import KeyjarCore

/// The protocol version this build speaks, and the only one: a hello with another version is
/// refused with ``WireError/unsupportedVersion``. Keyjar has had no release, so no client of an
/// earlier version exists to be served; keyjard and its clients come from one build and one
/// install, which restarts keyjard (Schemas/protocol.md, "Versions"). The number stays where
/// development left it, so that a build from before this rule is refused rather than misread.
public enum ProtocolVersion {
    public static let current = 4
    public static let supported = current...current
}

/// A request and its id, from client to keyjard. The first must be ``Request/hello(version:client:)``.
public struct ClientMessage: Sendable, Hashable {
    public var id: UInt64
    public var request: Request

    public init(id: UInt64, request: Request) {
        self.id = id
        self.request = request
    }
}

/// Where a request for cookies comes from: the URL, its main document, and the request kind.
public struct WireCookieContext: Sendable, Hashable {
    public var url: String
    public var mainDocumentURL: String?
    public var isTopLevelNavigation: Bool
    public var method: String
    public var nonHTTP: Bool

    public init(
        url: String,
        mainDocumentURL: String? = nil,
        isTopLevelNavigation: Bool = true,
        method: String = "GET",
        nonHTTP: Bool = false
    ) {
        self.url = url
        self.mainDocumentURL = mainDocumentURL
        self.isTopLevelNavigation = isTopLevelNavigation
        self.method = method
        self.nonHTTP = nonHTTP
    }
}

/// Everything a client can ask keyjard.
public enum Request: Sendable, Hashable {
    case hello(version: Int, client: String)
    /// Start receiving events. With `after`, first the events after that sequence number, or
    /// a `snapshot` event when they are no longer kept; then every new event.
    case subscribe(after: UInt64?)
    /// Keep a replica current without listening (version 2): first the events after `after`
    /// (or a `snapshot` when they are no longer kept), then, instead of every change, only this
    /// connection's own writes, each preceded by whatever it missed since the last event it was
    /// sent. Ends a subscription. Replied to with `subscribed`, after everything it sent.
    case follow(after: UInt64)
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
    /// Begins one file imported in batches: the `importCookies` requests with a `firstLine`
    /// that follow on this connection are tried together and nothing is committed until
    /// `finishImport`, so that subscribers get the net change of the whole file. Replied to with
    /// an empty `importReport`. A connection that closes first leaves the store as it was.
    case beginImport
    /// Commits the import `beginImport` began; replied to with the `importReport` of the whole
    /// file (`added`, `replaced`, `evicted`; the batches' replies counted the rest).
    case finishImport

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
    /// between a credential's two writes, a restored database, a neighbour's keyring write):
    /// adopts each password back as a credential, and keeps each credential without its
    /// password (the user may still know it) unless `removeUnpaired`.
    case repairCredentials(removeUnpaired: Bool)
    /// Stores permanent credentials with their tokens' metadata, all or none: the secrets go to
    /// the Secret Service, then every record is committed in one transaction (the secrets
    /// written are put back as they were if it fails). Replied to with `committed`.
    case saveCredentials(writes: [CredentialWrite])
    /// Fetches a credential's stored OAuth refresh token (replied to with `refreshToken`).
    case refreshToken(space: ProtectionSpace, user: String)
    /// Asks to refresh a credential's access token, `rejected` being the token the caller saw
    /// fail (nil when it only saw the expiry). One caller at a time per credential is given
    /// the refresh token (a lease); the others wait and are then given the new access token.
    /// Replied to with `tokenRefresh`.
    case beginTokenRefresh(space: ProtectionSpace, user: String, rejected: String?)
    /// The lease holder's report; replied to with `committed`.
    case finishTokenRefresh(space: ProtectionSpace, user: String, outcome: TokenRefreshOutcome)
    /// Opens the encrypted secrets file with `passphrase` until `lockSecrets`; with `create`,
    /// when there is no file yet, makes one sealed under it. Replied to with `ok`, or refused
    /// with `wrongPassphrase` (after a delay that grows with each failure in a row), or
    /// `notFound` when there is no file and `create` is false. keyjard locks the file again
    /// once no secret has been read or stored for `lockAfterIdle` seconds (0: never; nil:
    /// keyjard's own setting).
    case unlockSecrets(passphrase: String, create: Bool, lockAfterIdle: Int? = nil)
    /// Forgets the encrypted secrets file's key; replied to with `ok`.
    case lockSecrets
    /// Moves every secret to another store: `backend` `secret-service`, `encrypted` or `file`,
    /// `path` its file (absent: beside the database), `passphrase` the encrypted file's (it is
    /// made with it when it does not exist). Each secret is copied and read back before the
    /// database records the new store; the old copies are removed only after. Replied to with
    /// `ok` once done; asked again after an interruption, it finishes.
    case migrateSecrets(backend: String, path: String?, passphrase: String?)
}

/// The whole shared state, current to `sequence`.
public struct StoreSnapshot: Sendable, Hashable {
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

/// A successful reply.
public enum Response: Sendable, Hashable {
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
    case cookieOutcomes(outcomes: [String?], sequence: UInt64?)
    /// `added`, `replaced` and `evicted` (what the import came to in the jar) are absent from an
    /// older keyjard's reply.
    case importReport(
        imported: Int,
        expired: Int,
        problems: [CookieFileProblem],
        sequence: UInt64?,
        added: Int? = nil,
        replaced: Int? = nil,
        evicted: Int? = nil
    )
    /// `omitted`: cookies the format cannot carry (partitioned ones in cookies.txt).
    case exported(text: String, omitted: Int = 0)
    case policy(policy: CookiePolicy)
    case credentials(records: [CredentialRecord])
    /// Candidates most specific first, one per user; `preferred` answers without asking.
    case credentialChoice(candidates: [CredentialRecord], preferred: CredentialRecord?)
    case password(password: String?)
    /// What `repairCredentials` found: the passwords it adopted (`credentialMissing`) and the
    /// credentials without a password, kept or, when asked, removed (`passwordMissing`).
    case credentialsRepaired(mismatches: [CredentialMismatch], sequence: UInt64?)
    case refreshToken(token: String?)
    case tokenRefresh(step: TokenRefreshStep)
}

/// Everything keyjard sends: replies (matched by id), and pushed events.
public enum ServerMessage: Sendable, Hashable {
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
