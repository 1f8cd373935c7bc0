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
/// (there is no cross-device keychain). Lookups follow Keyjar's matching rule
/// (`CredentialChoice`): a credential stored for a whole server answers a challenge of any
/// realm and HTTP method there, the most specific stored space first. Spaces are compared by
/// value, unlike Foundation on Linux, which compares `URLProtectionSpace` objects by identity.
/// Passwords of permanent credentials are fetched from keyjard when asked for.
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
    // @unchecked: no stored state of its own beyond `client` (Sendable) and `session`
    // (Sendable, behind its lock).
    public let client: KeyjarClient
    private let session: SessionCredentials

    public init(client: KeyjarClient) {
        self.client = client
        session = .shared
        super.init()
    }

    /// Connects to keyjard (starting it if needed).
    public convenience init(configuration: KeyjarClient.Configuration = .init()) throws(KeyjarClientError) {
        self.init(client: try KeyjarClient(configuration: configuration))
    }

    /// Connects to keyjard as ``init(configuration:)`` does, without holding a thread of the
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
    /// - Throws: ``KeyjarClientError`` `.refused` for `.synchronizable`, or keyjard's reason
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

    /// The credentials that may answer a challenge for `space`, one per user (each user's most
    /// specific), by Keyjar's matching rule.
    public override func credentials(for space: URLProtectionSpace) -> [String: URLCredential]? {
        var result: [String: URLCredential] = [:]
        for candidate in choice(for: ProtectionSpace(space)).candidates {
            result[candidate.record.user] = credential(for: candidate.record)
        }
        return result.isEmpty ? nil : result
    }

    public override var allCredentials: [URLProtectionSpace: [String: URLCredential]] {
        var result: [URLProtectionSpace: [String: URLCredential]] = [:]
        for record in permanentCredentials + session.records {
            guard let credential = credential(for: record) else { continue }
            result[record.space.foundationSpace, default: [:]][record.user] = credential
        }
        return result
    }

    public override func set(_ credential: URLCredential, for space: URLProtectionSpace) {
        try? store(credential, for: space)
    }

    public override func remove(_ credential: URLCredential, for space: URLProtectionSpace) {
        guard let user = credential.user else { return }
        try? removeCredential(user: user, for: space)
    }

    /// The credential that answers a challenge for `space` without asking, by Keyjar's
    /// matching rule.
    public override func defaultCredential(for space: URLProtectionSpace) -> URLCredential? {
        choice(for: ProtectionSpace(space)).preferred.flatMap(credential(for:))
    }

    public override func setDefaultCredential(_ credential: URLCredential, for space: URLProtectionSpace) {
        try? store(credential, for: space, makeDefault: true)
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

extension ProtectionSpace {
    /// Keyjar's value-type space from Foundation's.
    public init(_ space: URLProtectionSpace) {
        let proxyType: ProxyType
        switch space.proxyType?.lowercased() {
        case "http"?: proxyType = .http
        case "https"?: proxyType = .https
        case "ftp"?: proxyType = .ftp
        case "socks"?, "socksv5"?: proxyType = .socks
        default: proxyType = .none
        }
        self.init(
            host: space.host,
            port: space.port,
            protocol: space.protocol ?? proxyType.rawValue,
            realm: space.realm,
            authenticationMethod: AuthenticationMethod(foundation: space.authenticationMethod),
            proxyType: proxyType
        )
    }

    /// Foundation's form of this space.
    public var foundationSpace: URLProtectionSpace {
        if isProxy {
            return URLProtectionSpace(
                proxyHost: host,
                port: port,
                type: proxyType.rawValue.uppercased(),
                realm: realm,
                authenticationMethod: authenticationMethod.foundation
            )
        }
        return URLProtectionSpace(
            host: host,
            port: port,
            protocol: self.protocol,
            realm: realm,
            authenticationMethod: authenticationMethod.foundation
        )
    }
}

extension ProtectionSpace.AuthenticationMethod {
    // Foundation on Linux marks these two constants unavailable; their values are Apple's.
    static let clientCertificateMethod = "NSURLAuthenticationMethodClientCertificate"
    static let serverTrustMethod = "NSURLAuthenticationMethodServerTrust"

    /// From Foundation's `NSURLAuthenticationMethod…` strings.
    public init(foundation method: String) {
        switch method {
        case NSURLAuthenticationMethodHTTPBasic: self = .httpBasic
        case NSURLAuthenticationMethodHTTPDigest: self = .httpDigest
        case NSURLAuthenticationMethodHTMLForm: self = .htmlForm
        case NSURLAuthenticationMethodNTLM: self = .ntlm
        case NSURLAuthenticationMethodNegotiate: self = .negotiate
        case Self.clientCertificateMethod: self = .clientCertificate
        case Self.serverTrustMethod: self = .serverTrust
        default: self = .default
        }
    }

    public var foundation: String {
        switch self {
        case .default: return NSURLAuthenticationMethodDefault
        case .httpBasic: return NSURLAuthenticationMethodHTTPBasic
        case .httpDigest: return NSURLAuthenticationMethodHTTPDigest
        case .htmlForm: return NSURLAuthenticationMethodHTMLForm
        case .ntlm: return NSURLAuthenticationMethodNTLM
        case .negotiate: return NSURLAuthenticationMethodNegotiate
        case .clientCertificate: return Self.clientCertificateMethod
        case .serverTrust: return Self.serverTrustMethod
        }
    }
}
