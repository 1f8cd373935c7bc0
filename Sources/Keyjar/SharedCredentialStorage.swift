import Foundation
public import FoundationNetworking
public import KeyjarCore
import KeyjarProtocol
import Synchronization

/// The user's shared credential storage, as a `URLCredentialStorage` subclass: set
/// `URLSessionConfiguration.urlCredentialStorage` to one and URLSession's lookups go through
/// keyjard.
///
/// Persistence decides where a credential lives: `.permanent` in keyjard (metadata) and the
/// Secret Service (password), shared by every process; `.forSession` in this process only;
/// `.none` nowhere; `.synchronizable` is refused (there is no cross-device keychain). Spaces are
/// compared by value, unlike Foundation on Linux, which compares `URLProtectionSpace` objects by
/// identity. Passwords of permanent credentials are fetched from keyjard when asked for.
///
/// ```swift
/// let storage = try SharedCredentialStorage()
/// let space = URLProtectionSpace(host: "example.com", port: 443, protocol: "https", realm: "Admin",
///                                authenticationMethod: NSURLAuthenticationMethodHTTPBasic)
/// try storage.store(URLCredential(user: "alice", password: "s3cret", persistence: .permanent),
///                   for: space, makeDefault: true)
/// configuration.urlCredentialStorage = storage
/// ```
public final class SharedCredentialStorage: URLCredentialStorage, @unchecked Sendable {
    // @unchecked: the only mutable state, `session`, is behind its Mutex; `client` is Sendable.
    public let client: KeyjarClient

    /// `.forSession` credentials: space → user → (password, is default).
    private let session = Mutex<[ProtectionSpace: [String: SessionEntry]]>([:])

    private struct SessionEntry: Sendable {
        var password: String
        var isDefault: Bool
    }

    public init(client: KeyjarClient) {
        self.client = client
        super.init()
    }

    /// Connects to keyjard (starting it if needed).
    public convenience init(configuration: KeyjarClient.Configuration = .init()) throws(KeyjarClientError) {
        self.init(client: try KeyjarClient(configuration: configuration))
    }

    // MARK: - Keyjar's API (throwing)

    /// Stores a credential by its persistence; with `makeDefault` it becomes the space's default.
    /// - Throws: ``KeyjarClientError`` `.refused` for `.synchronizable`, or keyjard's reason
    ///   (e.g. no Secret Service) for `.permanent`.
    public func store(_ credential: URLCredential, for space: URLProtectionSpace, makeDefault: Bool = false) throws(KeyjarClientError) {
        guard let user = credential.user, let password = credential.password else {
            throw KeyjarClientError(code: .refused, message: "only user-and-password credentials can be stored")
        }
        let key = ProtectionSpace(space)
        switch credential.persistence {
        case .none:
            return
        case .forSession:
            session.withLock { spaces in
                if makeDefault { for name in spaces[key, default: [:]].keys { spaces[key]?[name]?.isDefault = false } }
                let wasDefault = spaces[key]?[user]?.isDefault ?? false
                spaces[key, default: [:]][user] = SessionEntry(password: password, isDefault: makeDefault || wasDefault)
            }
            NotificationCenter.default.post(name: KeyjarNotifications.credentialStorageChanged, object: self)
        case .permanent:
            _ = try client.call(.setCredential(space: key, user: user, password: password, makeDefault: makeDefault))
        case .synchronizable:
            throw KeyjarClientError(
                code: .refused,
                message: "synchronizable credentials are not supported: there is no cross-device keychain on Linux; use .permanent")
        @unknown default:
            throw KeyjarClientError(code: .refused, message: "unknown credential persistence")
        }
    }

    /// Removes a user's credential from the space, wherever it lives.
    public func removeCredential(user: String, for space: URLProtectionSpace) throws(KeyjarClientError) {
        let key = ProtectionSpace(space)
        let removedLocally = session.withLock { $0[key]?.removeValue(forKey: user) != nil }
        if removedLocally { NotificationCenter.default.post(name: KeyjarNotifications.credentialStorageChanged, object: self) }
        if records(for: key).contains(where: { $0.user == user }) {
            _ = try client.call(.removeCredential(space: key, user: user))
        }
    }

    /// The stored permanent credentials' metadata (never passwords), from the replica.
    public var permanentCredentials: [CredentialRecord] { client.withReplica { $0.credentials } }

    private func records(for key: ProtectionSpace) -> [CredentialRecord] {
        client.withReplica { $0.credentials.filter { $0.space == key } }
    }

    private func fetchPassword(_ key: ProtectionSpace, user: String) -> String? {
        guard case .password(let password)? = try? client.call(.password(space: key, user: user)) else { return nil }
        return password
    }

    // MARK: - URLCredentialStorage

    public override func credentials(for space: URLProtectionSpace) -> [String: URLCredential]? {
        let key = ProtectionSpace(space)
        var result: [String: URLCredential] = [:]
        for record in records(for: key) {
            if let password = fetchPassword(key, user: record.user) {
                result[record.user] = URLCredential(user: record.user, password: password, persistence: .permanent)
            }
        }
        for (user, entry) in session.withLock({ $0[key] ?? [:] }) {
            result[user] = URLCredential(user: user, password: entry.password, persistence: .forSession)
        }
        return result.isEmpty ? nil : result
    }

    public override var allCredentials: [URLProtectionSpace: [String: URLCredential]] {
        var spaces = Set(permanentCredentials.map(\.space))
        spaces.formUnion(session.withLock { Array($0.keys) })
        var result: [URLProtectionSpace: [String: URLCredential]] = [:]
        for space in spaces {
            let foundation = space.foundationSpace
            if let credentials = credentials(for: foundation) { result[foundation] = credentials }
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

    public override func defaultCredential(for space: URLProtectionSpace) -> URLCredential? {
        let key = ProtectionSpace(space)
        if let (user, entry) = session.withLock({ $0[key]?.first { $0.value.isDefault } }) {
            return URLCredential(user: user, password: entry.password, persistence: .forSession)
        }
        guard let record = records(for: key).first(where: \.isDefault), let password = fetchPassword(key, user: record.user)
        else { return nil }
        return URLCredential(user: record.user, password: password, persistence: .permanent)
    }

    public override func setDefaultCredential(_ credential: URLCredential, for space: URLProtectionSpace) {
        try? store(credential, for: space, makeDefault: true)
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
            host: space.host, port: space.port, protocol: space.protocol ?? proxyType.rawValue, realm: space.realm,
            authenticationMethod: AuthenticationMethod(foundation: space.authenticationMethod), proxyType: proxyType)
    }

    /// Foundation's form of this space.
    public var foundationSpace: URLProtectionSpace {
        if isProxy {
            return URLProtectionSpace(
                proxyHost: host, port: port, type: proxyType.rawValue.uppercased(), realm: realm,
                authenticationMethod: authenticationMethod.foundation)
        }
        return URLProtectionSpace(
            host: host, port: port, protocol: self.protocol, realm: realm, authenticationMethod: authenticationMethod.foundation)
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
