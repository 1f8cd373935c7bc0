/// Where a credential applies: a server or proxy, its realm and its authentication method —
/// Foundation's `URLProtectionSpace` as a value type, compared by value, not identity.
///
/// ```swift
/// let space = ProtectionSpace(host: "Example.COM", protocol: "https", realm: "admin",
///                             authenticationMethod: .httpBasic)
/// space.port   // 443 (the effective port)
/// space.host   // "example.com"
/// ```
public struct ProtectionSpace: Sendable, Hashable {
    public enum AuthenticationMethod: String, Sendable, Hashable, Codable, CaseIterable {
        case `default`, httpBasic, httpDigest, ntlm, negotiate, htmlForm, clientCertificate, serverTrust

        /// Whether a credential of this method has a secret for the Secret Service: all but a
        /// server-trust decision, which is a certificate's fingerprint (public).
        public var keepsSecret: Bool { self != .serverTrust }
    }

    public enum ProxyType: String, Sendable, Hashable, Codable, CaseIterable {
        case none, http, https, ftp, socks
    }

    /// Lower-cased host name or IP address (IPv6 without brackets).
    public let host: String
    /// The effective port: the protocol's default when none was given.
    public let port: Int
    /// Lower-cased scheme for a server space (`http`, `https`, `ftp`, …); for a proxy space the
    /// proxy's type (`http`, `https`, `ftp`, `socks`).
    public let `protocol`: String
    public let realm: String?
    public let authenticationMethod: AuthenticationMethod
    public let proxyType: ProxyType

    public init(
        host: String,
        port: Int? = nil,
        protocol: String,
        realm: String? = nil,
        authenticationMethod: AuthenticationMethod = .default,
        proxyType: ProxyType = .none
    ) {
        // `example.com.` names the same server as `example.com` (DNS's root label), so one
        // credential answers both; an empty realm is no realm.
        var canonical = CookieURL.canonicalHost(host)
        if canonical.count > 1, canonical.hasSuffix(".") { canonical.removeLast() }
        self.host = canonical
        let scheme = proxyType == .none ? `protocol`.lowercased() : proxyType.rawValue
        self.protocol = scheme
        self.port = port.flatMap { $0 > 0 ? $0 : nil } ?? Self.defaultPort(for: scheme, proxyType: proxyType)
        self.realm = realm?.isEmpty == true ? nil : realm
        self.authenticationMethod = authenticationMethod
        self.proxyType = proxyType
    }

    /// A space with its fields exactly as given, for a decoder: a peer's space is kept as it
    /// was sent, as the protocol always did.
    package init(
        verbatimHost host: String,
        port: Int,
        protocol: String,
        realm: String?,
        authenticationMethod: AuthenticationMethod,
        proxyType: ProxyType
    ) {
        self.host = host
        self.port = port
        self.protocol = `protocol`
        self.realm = realm
        self.authenticationMethod = authenticationMethod
        self.proxyType = proxyType
    }

    public var isProxy: Bool { proxyType != .none }

    /// Whether the space is only ever offered over an encrypted channel.
    public var receivesCredentialSecurely: Bool {
        ["https", "ftps", "wss"].contains(`protocol`) || authenticationMethod == .httpDigest
            || authenticationMethod == .ntlm || authenticationMethod == .negotiate
    }

    static func defaultPort(for scheme: String, proxyType: ProxyType) -> Int {
        switch proxyType {
        case .socks: return 1080
        case .http, .https: return proxyType == .https ? 443 : 8080
        case .ftp: return 21
        case .none: break
        }
        switch scheme {
        case "https", "wss": return 443
        case "ftp": return 21
        case "ftps": return 990
        default: return 80
        }
    }
}

/// How long a credential is kept (Foundation's `URLCredential.Persistence`).
public enum CredentialPersistence: String, Sendable, Hashable, Codable, CaseIterable {
    /// Used for one request and never stored.
    case none
    /// Kept by the process that stored it until it exits.
    case forSession
    /// Kept by keyjard, the password in the Secret Service, shared by every process.
    case permanent
    /// Refused: there is no cross-device keychain to synchronise to.
    case synchronizable
}

/// A user and password for a protection space. `description` never shows the password.
public struct Credential: Sendable, Hashable, Codable, CustomStringConvertible, CustomDebugStringConvertible {
    public var user: String
    public var password: String
    public var persistence: CredentialPersistence

    public init(user: String, password: String, persistence: CredentialPersistence) {
        self.user = user
        self.password = password
        self.persistence = persistence
    }

    public var description: String {
        "Credential(user: \(user), password: <hidden>, persistence: \(persistence.rawValue))"
    }
    public var debugDescription: String { description }
}

/// What keyjard stores of a credential besides its password (which lives in the Secret Service).
public struct CredentialRecord: Sendable, Hashable {
    public var space: ProtectionSpace
    public var user: String
    public var persistence: CredentialPersistence
    public var isDefault: Bool
    public var created: Double
    public var lastUsed: Double?

    public init(
        space: ProtectionSpace,
        user: String,
        persistence: CredentialPersistence,
        isDefault: Bool,
        created: Double,
        lastUsed: Double? = nil
    ) {
        self.space = space
        self.user = user
        self.persistence = persistence
        self.isDefault = isDefault
        self.created = created
        self.lastUsed = lastUsed
    }
}
