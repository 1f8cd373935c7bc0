public import KeyjarCore

/// Where keyjard keeps credential passwords, keyed by protection space and user.
///
/// SQLite holds everything about a credential except its password; the password goes to a
/// `SecretStore`. ``LibSecretStore`` (the Secret Service, e.g. GNOME Keyring or KeePassXC) is the
/// default; ``FileSecretStore`` is an explicit opt-in for hosts without one.
///
/// Every method is synchronous and may block on I/O (D-Bus or the disk), so call it from a
/// thread that may block, never from an event loop.
///
/// ```swift
/// let store: any SecretStore = LibSecretStore()
/// let space = ProtectionSpace(host: "example.com", protocol: "https", realm: "admin",
///                             authenticationMethod: .httpBasic)
/// try store.storePassword("s3cret", for: space, user: "alice")
/// try store.password(for: space, user: "alice")        // "s3cret"
/// try store.removePassword(for: space, user: "alice")  // true
/// ```
///
/// A space's realm `nil` and realm `""` are the same key: the Secret Service has no "absent"
/// attribute value.
public protocol SecretStore: Sendable {
    /// Stores a secret of `kind` for `user` in `space`, replacing any secret of that kind
    /// already stored there.
    ///
    /// - Parameters:
    ///   - secret: The secret. It is never logged or put into an error message.
    ///   - kind: The password, or the OAuth refresh token kept beside it.
    ///   - space: The protection space the secret applies to.
    ///   - user: The user name within `space`.
    /// - Throws: ``SecretStoreError`` when the backend is unreachable, locked or fails.
    func storeSecret(_ secret: String, _ kind: SecretKind, for space: ProtectionSpace, user: String) throws

    /// Looks up the secret of `kind` stored for `user` in `space`.
    ///
    /// - Returns: The secret, or `nil` when none is stored.
    /// - Throws: ``SecretStoreError`` when the backend is unreachable, locked or fails.
    func secret(_ kind: SecretKind, for space: ProtectionSpace, user: String) throws -> String?

    /// Removes the secret of `kind` stored for `user` in `space`.
    ///
    /// - Returns: `true` if a secret was removed, `false` if there was none.
    /// - Throws: ``SecretStoreError`` when the backend is unreachable, locked or fails.
    @discardableResult
    func removeSecret(_ kind: SecretKind, for space: ProtectionSpace, user: String) throws -> Bool

    /// Lists the key of every password this store holds for Keyjar, without reading a password.
    ///
    /// keyjard compares it with its credential records to find a credential whose password is
    /// missing, or a password that no credential owns (left by a crash between the two writes).
    ///
    /// - Returns: One key per stored password, in no particular order.
    /// - Throws: ``SecretStoreError`` when the backend is unreachable or fails.
    func keys() throws -> [SecretStoreKey]

    /// Brings items an older Keyjar stored to the layout this one stores (for the Secret
    /// Service, Keyjar's own attribute names), never leaving a moment without a secret.
    ///
    /// - Returns: How many items were moved.
    /// - Throws: ``SecretStoreError`` when the backend is unreachable, locked or fails.
    func upgradeItems() throws -> Int

    /// Checks, without prompting the user, whether the store can be used right now.
    ///
    /// keyjard calls this at start-up and for status requests, so that a missing or locked
    /// Secret Service is reported once, clearly, rather than as the first failed lookup.
    ///
    /// - Returns: ``SecretStoreHealth/available(backend:)`` or
    ///   ``SecretStoreHealth/unavailable(reason:)`` with a sentence saying what to do.
    func health() -> SecretStoreHealth

    /// Starts calling `changed` whenever an item of the store may have been changed or removed,
    /// by another program or by this one: keyjard then checks its credentials' passwords (one
    /// another program deleted leaves a credential without it). `changed`
    /// runs on a thread of the store's and must return at once, without calling ``SecretStoreWatch/cancel()``.
    ///
    /// - Returns: The watch, which lasts until cancelled or released; `nil` for a store that
    ///   cannot be watched.
    /// - Throws: ``SecretStoreError`` when the store could be watched but cannot be now.
    func watchItems(_ changed: @escaping @Sendable () -> Void) throws -> (any SecretStoreWatch)?

    /// The keys among `keys` whose password this store does not hold, read without a password.
    /// keyjard asks it of its own credentials whenever the store changes behind it.
    ///
    /// - Throws: ``SecretStoreError`` when the backend is unreachable or fails.
    func missingPasswords(among keys: [SecretStoreKey]) throws -> Set<SecretStoreKey>
}

/// A watch started by ``SecretStore/watchItems(_:)``.
public protocol SecretStoreWatch: AnyObject, Sendable {
    /// Stops the watch: once this returns, its closure is not called again. Never blocks.
    func cancel()
}

/// What a secret is: a credential's password, or the OAuth refresh token stored beside an
/// access token (RFC 6749 §6), kept apart so that a lookup of one never returns the other.
public enum SecretKind: String, Sendable, Hashable, CaseIterable {
    case password
    case refreshToken
}

extension SecretStore {
    /// A store with one layout has nothing to move.
    public func upgradeItems() throws -> Int { 0 }

    /// Compared with the whole listing: for a store that reads all of it at once.
    public func missingPasswords(among keys: [SecretStoreKey]) throws -> Set<SecretStoreKey> {
        Set(keys).subtracting(try self.keys())
    }

    /// A store no other program writes has nothing to watch.
    public func watchItems(_ changed: @escaping @Sendable () -> Void) throws -> (any SecretStoreWatch)? { nil }

    /// Stores `password` for `user` in `space` (``storeSecret(_:_:for:user:)`` of a password).
    public func storePassword(_ password: String, for space: ProtectionSpace, user: String) throws {
        try storeSecret(password, .password, for: space, user: user)
    }

    /// The password stored for `user` in `space`, or `nil`.
    public func password(for space: ProtectionSpace, user: String) throws -> String? {
        try secret(.password, for: space, user: user)
    }

    /// Removes the password stored for `user` in `space`; `true` if there was one.
    @discardableResult
    public func removePassword(for space: ProtectionSpace, user: String) throws -> Bool {
        try removeSecret(.password, for: space, user: user)
    }
}

/// Whether a ``SecretStore`` can be used, as reported by ``SecretStore/health()``.
///
/// ```swift
/// switch store.health() {
/// case .available(let backend): print("passwords go to \(backend)")
/// case .unavailable(let reason): print("cannot store passwords: \(reason)")
/// }
/// ```
public enum SecretStoreHealth: Sendable, Hashable {
    /// The store works; `backend` names it for people, e.g. "Secret Service (org.freedesktop.secrets)".
    case available(backend: String)
    /// The store cannot be used; `reason` is a sentence saying why and what to do about it.
    case unavailable(reason: String)
}

/// What a stored password is filed under: a protection space and a user. The realms `nil` and
/// `""` are the same key (the Secret Service has no absent attribute), so both become `nil`.
public struct SecretStoreKey: Sendable, Hashable {
    public let space: ProtectionSpace
    public let user: String

    public init(space: ProtectionSpace, user: String) {
        self.space =
            space.realm == ""
            ? ProtectionSpace(
                host: space.host,
                port: space.port,
                protocol: space.protocol,
                realm: nil,
                authenticationMethod: space.authenticationMethod,
                proxyType: space.proxyType
            )
            : space
        self.user = user
    }

    /// The key a password stored under these attribute values has, or `nil` when they name no
    /// space Keyjar could have written (another program's item under Keyjar's schema).
    init?(
        server: String,
        port: String,
        protocol: String,
        realm: String,
        authtype: String,
        proxytype: String,
        user: String
    ) {
        guard let port = Int(port), port > 0 || (port == 0 && ProtectionSpace.isWildcard(protocol: `protocol`)),
            let method = ProtectionSpace.AuthenticationMethod(rawValue: authtype),
            let proxy = ProtectionSpace.ProxyType(rawValue: proxytype)
        else { return nil }
        // Port 0 is only ever a wildcard space's (a `.netrc` login), which has no realm or method.
        if port == 0 {
            guard realm.isEmpty, method == .default, proxy == .none else { return nil }
            let inClearToo = `protocol` == ProtectionSpace.anySchemeInClearToo
            let space =
                server == ProtectionSpace.anyServer.host
                ? ProtectionSpace.anyServer(inClearToo: inClearToo)
                : ProtectionSpace(anySchemeAndPortOf: server, inClearToo: inClearToo)
            self.init(space: space, user: user)
            return
        }
        self.init(
            space: ProtectionSpace(
                host: server,
                port: port,
                protocol: `protocol`,
                realm: realm,
                authenticationMethod: method,
                proxyType: proxy
            ),
            user: user
        )
    }
}
