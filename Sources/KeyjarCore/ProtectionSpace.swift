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
        /// An OAuth 2 bearer token (RFC 6750), sent as `Authorization: Bearer`: the password is
        /// the token. A password stored with method `default` never answers it.
        case httpBearer

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
        while canonical.count > 1, canonical.hasSuffix(".") { canonical.removeLast() }
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

    /// The `protocol` of a space that answers every scheme and port of its host over an
    /// encrypted scheme (``encryptedSchemes``), and any scheme to this machine.
    public static let anyScheme = "*"
    /// The `protocol` of a space that answers every scheme and port of its host, unencrypted
    /// ones to other machines too: only when the user asked for it at import.
    public static let anySchemeInClearToo = "*+clear"

    /// Schemes whose channel is encrypted: where a wildcard credential may go to another machine.
    public static let encryptedSchemes: Set<String> = ["https", "wss", "ftps"]

    /// A space for every scheme and port of `host`, with no realm and method `default`: what a
    /// `.netrc` `machine` means to curl (`--netrc`), which sends its login to that host whatever
    /// the URL's scheme and port. Such a credential answers below every credential stored for
    /// the challenge's own origin (``CredentialChoice``), and over an unencrypted scheme only
    /// to this machine unless `inClearToo`.
    public init(anySchemeAndPortOf host: String, inClearToo: Bool = false) {
        self.init(
            verbatimHost: ProtectionSpace(host: host, protocol: "https").host,
            port: 0,
            protocol: inClearToo ? Self.anySchemeInClearToo : Self.anyScheme,
            realm: nil,
            authenticationMethod: .default,
            proxyType: .none
        )
    }

    /// The space of a `.netrc` `default` entry: every scheme and port of every host, answering
    /// only where nothing else does (over an unencrypted scheme only to this machine).
    public static let anyServer = ProtectionSpace(
        verbatimHost: "*",
        port: 0,
        protocol: anyScheme,
        realm: nil,
        authenticationMethod: .default,
        proxyType: .none
    )

    /// ``anyServer``, or with `inClearToo` one that answers over unencrypted schemes too.
    public static func anyServer(inClearToo: Bool) -> ProtectionSpace {
        inClearToo ? ProtectionSpace(anySchemeAndPortOf: "*", inClearToo: true) : anyServer
    }

    /// Whether a space's `protocol` is a wildcard's (either kind).
    public static func isWildcard(protocol: String) -> Bool {
        `protocol` == anyScheme || `protocol` == anySchemeInClearToo
    }

    /// Whether the space stands for several origins (``init(anySchemeAndPortOf:inClearToo:)``,
    /// ``anyServer``).
    public var isWildcard: Bool { Self.isWildcard(protocol: `protocol`) }

    /// The space as Keyjar's own initialisers make it: host lower-cased (no trailing dot,
    /// IPv6 without brackets), the effective port, no empty realm, a proxy's protocol its
    /// type; a wildcard with port 0, no realm and method `default`. The secret store keys a
    /// password by this form, so keyjard stores no credential of another form (a client of
    /// another language could send one): its password would read back as another's.
    public var canonical: ProtectionSpace {
        if isWildcard {
            return host == Self.anyServer.host
                ? Self.anyServer(inClearToo: `protocol` == Self.anySchemeInClearToo)
                : ProtectionSpace(anySchemeAndPortOf: host, inClearToo: `protocol` == Self.anySchemeInClearToo)
        }
        return ProtectionSpace(
            host: host,
            port: port,
            protocol: `protocol`,
            realm: realm,
            authenticationMethod: authenticationMethod,
            proxyType: proxyType
        )
    }

    /// A wildcard's `*` host: every server.
    public var isEveryServer: Bool { isWildcard && host == Self.anyServer.host }

    /// Whether a wildcard space's credential may go over an unencrypted scheme to another machine.
    public var goesInClearToo: Bool { `protocol` == Self.anySchemeInClearToo }

    /// Whether the space is only ever offered over an encrypted channel.
    public var receivesCredentialSecurely: Bool {
        Self.encryptedSchemes.contains(`protocol`) || authenticationMethod == .httpDigest
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

/// A user and password for a protection space. `description` never shows the password, and it
/// is not `Codable`: a password is written only where a format means to carry one (the wire's
/// `password` reply, a backup), never by a generic encoder into a file or a log.
public struct Credential: Sendable, Hashable, CustomStringConvertible, CustomDebugStringConvertible,
    CustomReflectable
{
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
    /// What `dump` and debuggers' summaries show: the password hidden there too.
    public var customMirror: Mirror {
        Mirror(self, children: ["user": user, "password": "<hidden>", "persistence": persistence])
    }
}

/// What keyjard stores of a credential besides its secrets (the password and an OAuth refresh
/// token, which live in the Secret Service).
public struct CredentialRecord: Sendable, Hashable {
    public var space: ProtectionSpace
    public var user: String
    public var persistence: CredentialPersistence
    public var isDefault: Bool
    public var created: Double
    public var lastUsed: Double?
    /// When the password (an access token, say) stops working, in seconds since 1970; nil when
    /// it does not expire. An expired credential is never offered (``isOffered(at:)``); it stays
    /// stored until the user removes it or it is refreshed.
    public var expires: Double?
    /// Whether an OAuth refresh token is stored beside the password (git's
    /// `oauth_refresh_token`, or one Keyjar refreshes with, ``tokenRefresh``).
    public var hasRefreshToken: Bool
    /// Where and as which client Keyjar itself may refresh the token (RFC 6749 §6); only with
    /// ``hasRefreshToken``.
    public var tokenRefresh: TokenRefresh?
    /// The token endpoint refused the refresh token (`invalid_grant`): the credential is never
    /// offered again until it is stored anew (the user logs in again).
    public var isRevoked: Bool
    /// When its secret was last stored (a new password, a refreshed token), seconds since 1970;
    /// nil in a record from before keyjard kept it, or in one not yet stored. What a sync
    /// compares when two machines changed one credential.
    public var modified: Double?

    /// When it last changed: ``modified``, else when it was first stored.
    public var lastChanged: Double { modified ?? created }

    public init(
        space: ProtectionSpace,
        user: String,
        persistence: CredentialPersistence,
        isDefault: Bool,
        created: Double,
        lastUsed: Double? = nil,
        expires: Double? = nil,
        hasRefreshToken: Bool = false,
        tokenRefresh: TokenRefresh? = nil,
        isRevoked: Bool = false,
        modified: Double? = nil
    ) {
        self.space = space
        self.user = user
        self.persistence = persistence
        self.isDefault = isDefault
        self.created = created
        self.lastUsed = lastUsed
        self.expires = expires
        self.hasRefreshToken = hasRefreshToken
        self.tokenRefresh = tokenRefresh
        self.isRevoked = isRevoked
        self.modified = modified
    }

    /// Whether the password has expired at `now` (seconds since 1970).
    public func isExpired(at now: Double) -> Bool { expires.map { $0 <= now } ?? false }

    /// Whether the credential may answer anything at `now`: neither expired nor revoked.
    public func isOffered(at now: Double) -> Bool { !isRevoked && !isExpired(at: now) }

    /// Whether Keyjar can get a new password for it by itself (RFC 6749 §6).
    public var canRefresh: Bool { hasRefreshToken && tokenRefresh != nil && !isRevoked }
}

/// A permanent credential a client asks keyjard to store: the space and user, the secrets (to
/// the Secret Service) and the token's metadata. `description` never shows a secret.
public struct CredentialWrite: Sendable, Hashable, CustomStringConvertible, CustomDebugStringConvertible {
    public var space: ProtectionSpace
    public var user: String
    public var password: String
    public var makeDefault: Bool
    /// ``CredentialRecord/expires``.
    public var expires: Double?
    /// The OAuth refresh token, stored in the Secret Service beside the password.
    public var refreshToken: String?
    /// Where Keyjar refreshes with ``refreshToken``; requires it.
    public var tokenRefresh: TokenRefresh?
    /// When the secret changed, for a copy of a credential changed elsewhere (`keyjar sync`
    /// bringing another machine's change); nil for a change made now.
    public var modified: Double?

    public init(
        space: ProtectionSpace,
        user: String,
        password: String,
        makeDefault: Bool = false,
        expires: Double? = nil,
        refreshToken: String? = nil,
        tokenRefresh: TokenRefresh? = nil,
        modified: Double? = nil
    ) {
        self.space = space
        self.user = user
        self.password = password
        self.makeDefault = makeDefault
        self.expires = expires
        self.refreshToken = refreshToken
        self.tokenRefresh = tokenRefresh
        self.modified = modified
    }

    public var description: String {
        "CredentialWrite(\(space.host) \(space.protocol) \(space.authenticationMethod.rawValue), user: \(user),"
            + " password: <hidden>\(refreshToken == nil ? "" : ", refresh token: <hidden>"))"
    }
    public var debugDescription: String { description }
}
