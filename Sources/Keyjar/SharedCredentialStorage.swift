import Foundation
public import FoundationNetworking
public import KeyjarCore
import Synchronization

/// The user's shared credential storage, as a `URLCredentialStorage` subclass: set
/// `URLSessionConfiguration.urlCredentialStorage` to one and URLSession's lookups go through
/// keyjard.
///
/// Persistence decides where a credential lives: `.permanent` in keyjard (metadata) and the
/// Secret Service (password), shared by every process; `.forSession` in this process, shared by
/// every storage and loader in it until it exits; `.none` nowhere; `.synchronizable` is refused
/// (there is no cross-device keychain). Passwords of permanent credentials are fetched from
/// keyjard when asked for.
///
/// As in Foundation, ``credentials(for:)``, ``set(_:for:)`` and ``remove(_:for:)`` work on
/// exactly the space given. Which credential *answers a challenge* is Keyjar's matching rule
/// (`CredentialChoice`), behind ``defaultCredential(for:)``, ``proposedCredential(for:)`` and
/// ``choice(for:)`` (and the loader): a credential stored for a whole server answers a
/// challenge of any realm and HTTP method there, the most specific stored space first. Spaces
/// are compared by value, unlike Foundation on Linux, which compares `URLProtectionSpace`
/// objects by identity; the spaces this storage hands out are ``KeyjarProtectionSpace``s.
///
/// The `URLCredentialStorage` overrides cannot throw: a write that fails (a `.permanent`
/// credential with no Secret Service, keyjard unreachable) is reported to ``failureLog`` and
/// posts nothing. Keyjar's own calls throw instead: `store(_:for:makeDefault:)`
/// and `removeCredential(user:for:)`.
///
/// It posts `KeyjarNotifications.credentialStorageChanged` with itself as object for every
/// change its replica applies and for every session credential it stores or removes (see
/// `KeyjarNotifications` for when; ``addObserver(forName:queue:using:)`` to hear other
/// processes' changes as they happen).
///
/// ```swift
/// let storage = try SharedCredentialStorage()
/// let server = URLProtectionSpace(host: "example.com", port: 443, protocol: "https", realm: nil,
///                                 authenticationMethod: NSURLAuthenticationMethodDefault)
/// try storage.store(URLCredential(user: "alice", password: "s3cret", persistence: .permanent), for: server)
/// // Any challenge from https://example.com, whatever its realm, Basic or Digest:
/// let challenge = URLProtectionSpace(host: "example.com", port: 443, protocol: "https", realm: "Admin",
///                                    authenticationMethod: NSURLAuthenticationMethodHTTPDigest)
/// storage.defaultCredential(for: challenge)?.user   // "alice"
/// ```
public final class SharedCredentialStorage: URLCredentialStorage, @unchecked Sendable {
    // @unchecked: no stored state of its own beyond `client` (Sendable), `session`
    // (Sendable, behind its lock) and `failureLog` (a Sendable closure), all immutable.
    public let client: KeyjarClient
    private let session: SessionCredentials
    /// Where the `URLCredentialStorage` overrides, which cannot throw, report a failed write:
    /// one line, which names the space and says why, never a password.
    public let failureLog: @Sendable (String) -> Void

    /// - Parameters:
    ///   - client: the connection to keyjard.
    ///   - failureLog: where a failed write of an override is reported; standard error unless
    ///     given.
    public init(
        client: KeyjarClient,
        failureLog: @escaping @Sendable (String) -> Void = SharedCredentialStorage.writeToStandardError
    ) {
        self.client = client
        self.failureLog = failureLog
        session = .shared
        super.init()
        client.addNotificationTarget(self, kind: .credentials, poster: KeyjarNotifications.poster)
    }

    /// Connects to keyjard (starting it if needed).
    public convenience init(
        configuration: KeyjarClient.Configuration = .init(),
        failureLog: @escaping @Sendable (String) -> Void = SharedCredentialStorage.writeToStandardError
    ) throws(KeyjarClientError) {
        self.init(client: try KeyjarClient(configuration: configuration), failureLog: failureLog)
    }

    /// The default ``failureLog``: the line on standard error.
    public static func writeToStandardError(_ line: String) {
        try? FileHandle.standardError.write(contentsOf: Data((line + "\n").utf8))
    }

    /// Connects to keyjard as ``init(configuration:failureLog:)`` does, without holding a thread of the
    /// caller's meanwhile (connecting may start keyjard and wait for it).
    public static func connect(
        configuration: KeyjarClient.Configuration = .init()
    ) async throws(KeyjarClientError) -> SharedCredentialStorage {
        try await awaitBlockingCall { () throws(KeyjarClientError) in
            try SharedCredentialStorage(configuration: configuration)
        }
    }

    /// `store(_:for:makeDefault:)` without holding a thread of the caller's while keyjard and
    /// the Secret Service answer (storing into a locked keyring makes it prompt the user).
    public func store(
        _ credential: URLCredential,
        for space: URLProtectionSpace,
        makeDefault: Bool = false
    ) async throws(KeyjarClientError) {
        try await awaitBlockingCall { () throws(KeyjarClientError) in
            try self.store(credential, for: space, makeDefault: makeDefault)
        }
    }

    // MARK: - Keyjar's API (throwing)

    /// Stores a credential by its persistence; with `makeDefault` it becomes the space's default
    /// (the space's first credential becomes its default anyway).
    /// - Throws: `KeyjarClientError` `.refused` for `.synchronizable`, or keyjard's reason
    ///   (e.g. no Secret Service) for `.permanent`.
    public func store(
        _ credential: URLCredential,
        for space: URLProtectionSpace,
        makeDefault: Bool = false
    ) throws(KeyjarClientError) {
        guard let user = credential.user, let password = credential.password else {
            throw KeyjarClientError(code: .refused, message: "only user-and-password credentials can be stored")
        }
        let key = ProtectionSpace(space)
        switch credential.persistence {
        case .none:
            return
        case .forSession:
            session.store(
                user: user,
                password: password,
                for: key,
                makeDefault: makeDefault,
                permanent: permanentCredentials.filter { $0.space == key }
            )
            NotificationCenter.default.post(name: KeyjarNotifications.credentialStorageChanged, object: self)
        case .permanent:
            try client.setCredential(user: user, password: password, for: key, makeDefault: makeDefault)
        case .synchronizable:
            throw KeyjarClientError(
                code: .refused,
                message:
                    "synchronizable credentials are not supported: there is no cross-device keychain on Linux; use .permanent"
            )
        @unknown default:
            throw KeyjarClientError(code: .refused, message: "unknown credential persistence")
        }
    }

    /// Removes a user's credential from the space (exactly that space), wherever it lives.
    public func removeCredential(user: String, for space: URLProtectionSpace) throws(KeyjarClientError) {
        let key = ProtectionSpace(space)
        if session.remove(user: user, from: key) {
            NotificationCenter.default.post(name: KeyjarNotifications.credentialStorageChanged, object: self)
        }
        if permanentCredentials.contains(where: { $0.space == key && $0.user == user }) {
            try client.removeCredential(user: user, for: key)
        }
    }

    /// `removeCredential(user:for:)` without holding a thread of the caller's while keyjard and
    /// the Secret Service answer.
    public func removeCredential(user: String, for space: URLProtectionSpace) async throws(KeyjarClientError) {
        try await awaitBlockingCall { () throws(KeyjarClientError) in try self.removeCredential(user: user, for: space)
        }
    }

    /// The stored permanent credentials' metadata (never passwords), from the replica.
    public var permanentCredentials: [CredentialRecord] { client.withReplica { $0.credentials } }

    /// Which stored credentials (permanent and this process's session ones) may answer a
    /// challenge for `space`, and which answers unasked: Keyjar's matching rule. No password is
    /// fetched.
    public func choice(for space: ProtectionSpace) -> CredentialChoice {
        CredentialChoice(for: space, among: permanentCredentials + session.records)
    }

    /// `credential(for:)` without holding a thread of the caller's while keyjard fetches a
    /// permanent credential's password from the Secret Service (which may prompt).
    public func credential(for record: CredentialRecord) async -> URLCredential? {
        await awaitBlockingCall { () -> URLCredential? in self.credential(for: record) }
    }

    /// A chosen record with its password (fetched from keyjard for a permanent one); nil when
    /// the secret is gone.
    public func credential(for record: CredentialRecord) -> URLCredential? {
        let password: String?
        switch record.persistence {
        case .forSession:
            password = session.password(user: record.user, space: record.space)
        default:
            password =
                record.space.authenticationMethod.keepsSecret ? fetchPassword(record.space, user: record.user) : ""
        }
        return password.map {
            URLCredential(user: record.user, password: $0, persistence: record.persistence.foundation)
        }
    }

    /// The credential to propose to a delegate for `space`: the one that answers unasked, else
    /// the most specific candidate.
    public func proposedCredential(for space: URLProtectionSpace) -> URLCredential? {
        choice(for: ProtectionSpace(space)).proposed.flatMap(credential(for:))
    }

    private func fetchPassword(_ key: ProtectionSpace, user: String) -> String? {
        (try? client.password(user: user, for: key)) ?? nil
    }

    // MARK: - URLCredentialStorage

    /// The credentials stored for exactly `space` (compared by value), by user: the permanent
    /// ones and this process's session ones, a user's session credential over its permanent
    /// one. What ``remove(_:for:)`` removes for that space; which credential answers a
    /// challenge there is ``defaultCredential(for:)``'s question (``choice(for:)`` lists the
    /// candidates).
    /// The usable credentials stored for exactly `space`: an expired or revoked one is not a
    /// credential anybody should use (``permanentCredentials`` still lists it).
    public override func credentials(for space: URLProtectionSpace) -> [String: URLCredential]? {
        let key = ProtectionSpace(space)
        var result: [String: URLCredential] = [:]
        let now = Date().timeIntervalSince1970
        for record in permanentCredentials + session.records where record.space == key && record.isOffered(at: now) {
            // A session record whose password is gone must not erase the permanent credential.
            if let credential = credential(for: record) { result[record.user] = credential }
        }
        return result.isEmpty ? nil : result
    }

    /// Every usable credential (none expired or revoked, as ``credentials(for:)``).
    public override var allCredentials: [URLProtectionSpace: [String: URLCredential]] {
        var result: [URLProtectionSpace: [String: URLCredential]] = [:]
        let now = Date().timeIntervalSince1970
        for record in permanentCredentials + session.records where record.isOffered(at: now) {
            guard let credential = credential(for: record) else { continue }
            result[record.space.foundationSpace, default: [:]][record.user] = credential
        }
        return result
    }

    /// `store(_:for:makeDefault:)`; a failure goes to ``failureLog``.
    public override func set(_ credential: URLCredential, for space: URLProtectionSpace) {
        reportingFailure("store a credential", for: space) { () throws(KeyjarClientError) in
            try store(credential, for: space)
        }
    }

    /// `removeCredential(user:for:)` for the credential's user; a failure goes to
    /// ``failureLog``.
    public override func remove(_ credential: URLCredential, for space: URLProtectionSpace) {
        remove(credential, for: space, options: nil)
    }

    /// As ``remove(_:for:)``: Keyjar stores no synchronizable credential, so there is nothing
    /// for `NSURLCredentialStorageRemoveSynchronizableCredentials` to allow.
    public override func remove(
        _ credential: URLCredential,
        for space: URLProtectionSpace,
        options: [String: AnyObject]?
    ) {
        guard let user = credential.user else { return }
        reportingFailure("remove a credential", for: space) { () throws(KeyjarClientError) in
            try removeCredential(user: user, for: space)
        }
    }

    /// The credential that answers a challenge for `space` without asking, by Keyjar's
    /// matching rule.
    public override func defaultCredential(for space: URLProtectionSpace) -> URLCredential? {
        choice(for: ProtectionSpace(space)).preferred.flatMap(credential(for:))
    }

    /// `store(_:for:makeDefault:)` as the space's default; a failure goes to
    /// ``failureLog``.
    public override func setDefaultCredential(_ credential: URLCredential, for space: URLProtectionSpace) {
        reportingFailure("store a default credential", for: space) { () throws(KeyjarClientError) in
            try store(credential, for: space, makeDefault: true)
        }
    }

    /// Runs an override's write; a failure is reported to ``failureLog`` (nothing changed, so
    /// nothing is posted).
    private func reportingFailure(
        _ action: String,
        for space: URLProtectionSpace,
        _ write: () throws(KeyjarClientError) -> Void
    ) {
        do {
            try write()
        } catch {
            failureLog("keyjar: could not \(action) for \(ProtectionSpace(space).summary): \(error.message)")
        }
    }
}

extension ProtectionSpace {
    /// The space in a log line: `https://example.com:443 realm "Admin"`, `http proxy p.lan:3128`.
    var summary: String {
        let place = isProxy ? "\(proxyType.rawValue) proxy \(host):\(port)" : "\(`protocol`)://\(host):\(port)"
        return realm.map { place + " realm \"\($0)\"" } ?? place
    }
}

extension CredentialPersistence {
    /// Foundation's form.
    var foundation: URLCredential.Persistence {
        switch self {
        case .none: .none
        case .forSession: .forSession
        // Never stored, so never read back.
        case .permanent, .synchronizable: .permanent
        }
    }
}
