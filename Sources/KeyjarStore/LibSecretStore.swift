internal import CLibSecret
public import KeyjarCore
import KeyjarFiles
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Keeps passwords in the freedesktop.org Secret Service (GNOME Keyring, KeePassXC, …) through
/// libsecret, in the default collection under the schema `org.keyjar.Credential`.
///
/// Items are keyed by the attributes `keyjar-server`, `keyjar-port`, `keyjar-protocol`,
/// `keyjar-realm`, `keyjar-authtype`, `keyjar-proxytype` and `keyjar-user` (see
/// `Schemas/secret-schema.md`): Keyjar's own names, which another program's store cannot match
/// and replace. Nothing secret goes into an attribute or the label. Storing the same space and
/// user again replaces the item.
///
/// Items stored under the common names (`server`, `user`, …) before are still found, and moved
/// to Keyjar's names by ``upgradeItems()`` (keyjard at start) or by storing again.
///
/// Uses libsecret's synchronous API, which blocks on D-Bus: call it off any event loop. Storing
/// into a locked collection makes the Secret Service show its unlock prompt, as any desktop
/// application would; ``health()`` never prompts.
///
/// ```swift
/// let store = LibSecretStore()
/// guard case .available = store.health() else { … }
/// try store.storePassword("s3cret", for: space, user: "alice")
/// ```
public final class LibSecretStore: SecretStore {
    /// Creates a store; it connects to the Secret Service lazily, on first use.
    public init() {}

    /// Set once ``upgradeItems()`` found nothing left under the common names: lookups and
    /// stores then skip them (each is a search of the whole collection, which gnome-keyring
    /// makes cost more with every item: an import of 1,000 credentials took twice as long).
    private let sharedNamesGone = Atomic<Bool>(false)

    public func storeSecret(_ password: String, _ kind: SecretKind, for space: ProtectionSpace, user: String) throws {
        try checkSessionBus()
        guard !password.utf8.contains(0) else {
            throw SecretStoreError(.invalidInput, "the \(kind.noun) contains a NUL character")
        }
        try store(password, kind, for: space, user: user)
        // An item under the common names would answer again once this one is removed; one
        // that cannot be removed now is removed with the credential (removeSecret).
        if !sharedNamesGone.load(ordering: .relaxed) { _ = try? remove(kind, for: space, user: user, layout: .shared) }
    }

    private func store(_ password: String, _ kind: SecretKind, for space: ProtectionSpace, user: String) throws {
        let attributes = try Self.attributes(for: space, user: user, layout: .own)
        defer { g_hash_table_unref(attributes) }
        var error: UnsafeMutablePointer<GError>?
        let stored = secret_password_storev_sync(
            kind.schema(.own),
            attributes,
            SECRET_COLLECTION_DEFAULT,
            Self.label(for: space, user: user, kind: kind),
            password,
            nil,
            &error
        )
        if let error {
            let failure = Self.consume(error, while: "storing a \(kind.noun)")
            // With no default collection libsecret only says that an object path does not
            // exist; say what is missing and what to do.
            if failure.code == .operationFailed, Self.lacksDefaultCollection() {
                throw SecretStoreError(.noDefaultCollection, failure.detail)
            }
            throw failure
        }
        guard stored != 0 else {
            throw SecretStoreError(.operationFailed, "libsecret did not store the \(kind.noun) and gave no reason")
        }
    }

    public func secret(_ kind: SecretKind, for space: ProtectionSpace, user: String) throws -> String? {
        try checkSessionBus()
        if let secret = try lookup(kind, for: space, user: user, layout: .own) { return secret }
        guard !sharedNamesGone.load(ordering: .relaxed) else { return nil }
        return try lookup(kind, for: space, user: user, layout: .shared)
    }

    private func lookup(
        _ kind: SecretKind,
        for space: ProtectionSpace,
        user: String,
        layout: ItemLayout
    ) throws -> String? {
        let attributes = try Self.attributes(for: space, user: user, layout: layout)
        defer { g_hash_table_unref(attributes) }
        var error: UnsafeMutablePointer<GError>?
        let secret = secret_password_lookupv_sync(kind.schema(layout), attributes, nil, &error)
        if let error {
            secret_password_free(secret)
            throw Self.consume(error, while: "looking up a \(kind.noun)")
        }
        guard let secret else { return nil }
        // secret_password_free overwrites the C copy; the Swift copy is the caller's to keep.
        defer { secret_password_free(secret) }
        return String(cString: secret)
    }

    @discardableResult
    public func removeSecret(_ kind: SecretKind, for space: ProtectionSpace, user: String) throws -> Bool {
        try checkSessionBus()
        let removed = try remove(kind, for: space, user: user, layout: .own)
        guard !sharedNamesGone.load(ordering: .relaxed) else { return removed }
        return try remove(kind, for: space, user: user, layout: .shared) || removed
    }

    private func remove(
        _ kind: SecretKind,
        for space: ProtectionSpace,
        user: String,
        layout: ItemLayout
    ) throws -> Bool {
        let attributes = try Self.attributes(for: space, user: user, layout: layout)
        defer { g_hash_table_unref(attributes) }
        var error: UnsafeMutablePointer<GError>?
        let removed = secret_password_clearv_sync(kind.schema(layout), attributes, nil, &error)
        if let error { throw Self.consume(error, while: "removing a \(kind.noun)") }
        return removed != 0
    }

    public func keys() throws -> [SecretStoreKey] {
        try checkSessionBus()
        var keys = try Self.keys(.password, layout: .own)
        guard !sharedNamesGone.load(ordering: .relaxed) else { return keys }
        var seen = Set(keys)
        for key in try Self.keys(.password, layout: .shared) where seen.insert(key).inserted { keys.append(key) }
        return keys
    }

    /// Moves every item still stored under the common attribute names to Keyjar's own: the
    /// secret is stored under Keyjar's names first and the old item removed after, so there is
    /// no moment without it (and ``secret(_:for:user:)`` finds either meanwhile). An item
    /// already stored under Keyjar's names is newer and kept. Returns how many were moved.
    public func upgradeItems() throws -> Int {
        try checkSessionBus()
        var moved = 0
        // Refresh tokens first, as a credential is stored: its password never without its token.
        for kind in [SecretKind.refreshToken, .password] {
            for key in try Self.keys(kind, layout: .shared) {
                if let secret = try lookup(kind, for: key.space, user: key.user, layout: .shared),
                    try lookup(kind, for: key.space, user: key.user, layout: .own) == nil
                {
                    try store(secret, kind, for: key.space, user: key.user)
                }
                if try remove(kind, for: key.space, user: key.user, layout: .shared) { moved += 1 }
            }
        }
        // Only this process writes Keyjar's items under this store: none come back (an older
        // keyjard on another database and the same keyring would, which Keyjar does not support).
        sharedNamesGone.store(true, ordering: .relaxed)
        return moved
    }

    /// The keys of the items of `kind` stored with `layout`'s attribute names.
    private static func keys(_ kind: SecretKind, layout: ItemLayout) throws -> [SecretStoreKey] {
        final class Found {
            let layout: ItemLayout
            var keys: [SecretStoreKey] = []
            init(_ layout: ItemLayout) { self.layout = layout }
        }
        let found = Found(layout)
        var error: UnsafeMutablePointer<GError>?
        let listed = keyjar_each_item(
            kind.schema(layout),
            layout.name("server"),
            { context, attributes in
                guard let context, let attributes else { return }
                let found = Unmanaged<Found>.fromOpaque(context).takeUnretainedValue()
                func value(_ name: String) -> String {
                    keyjar_attributes_get(attributes, found.layout.name(name)).map { String(cString: $0) } ?? ""
                }
                if let key = SecretStoreKey(
                    server: value("server"),
                    port: value("port"),
                    protocol: value("protocol"),
                    realm: value("realm"),
                    authtype: value("authtype"),
                    proxytype: value("proxytype"),
                    user: value("user")
                ) {
                    found.keys.append(key)
                }
            },
            Unmanaged.passUnretained(found).toOpaque(),
            &error
        )
        if let error { throw Self.consume(error, while: "listing Keyjar's \(kind.noun)s") }
        guard listed != 0 else {
            throw SecretStoreError(.operationFailed, "listing Keyjar's \(kind.noun)s failed without a reason")
        }
        return withExtendedLifetime(found) { found.keys }
    }

    /// Whether each key's password is in the Secret Service: one search per key (no secret
    /// loaded, nothing prompted), so that the cost follows the keys asked about, not the size of
    /// the keyring (which other programs, and other stores, share).
    public func missingPasswords(among keys: [SecretStoreKey]) throws -> Set<SecretStoreKey> {
        try checkSessionBus()
        var missing = Set<SecretStoreKey>()
        for key in keys where try !hasItem(.password, for: key, layout: .own) {
            if !sharedNamesGone.load(ordering: .relaxed), try hasItem(.password, for: key, layout: .shared) { continue }
            missing.insert(key)
        }
        return missing
    }

    private func hasItem(_ kind: SecretKind, for key: SecretStoreKey, layout: ItemLayout) throws -> Bool {
        let attributes = try Self.attributes(for: key.space, user: key.user, layout: layout)
        defer { g_hash_table_unref(attributes) }
        var error: UnsafeMutablePointer<GError>?
        let found = keyjar_item_exists(kind.schema(layout), attributes, &error)
        if let error { throw Self.consume(error, while: "looking for a \(kind.noun)") }
        guard found >= 0 else {
            throw SecretStoreError(.operationFailed, "looking for a \(kind.noun) failed without a reason")
        }
        return found == 1
    }

    /// Watches every collection's item signals on the session bus (``SecretServiceItemWatch``).
    public func watchItems(_ changed: @escaping @Sendable () -> Void) throws -> (any SecretStoreWatch)? {
        try checkSessionBus()
        return try SecretServiceItemWatch(changed)
    }

    public func health() -> SecretStoreHealth {
        if let problem = SessionBus.problem() {
            return .unavailable(reason: SecretStoreError(.serviceUnavailable, problem).description)
        }
        // OPEN_SESSION makes a real call to the service, so a bus without a Secret Service fails
        // here instead of yielding a proxy with no owner. Neither call can prompt.
        var error: UnsafeMutablePointer<GError>?
        let service = secret_service_get_sync(SECRET_SERVICE_OPEN_SESSION, nil, &error)
        if let error {
            if let service { g_object_unref(UnsafeMutableRawPointer(service)) }
            return .unavailable(reason: Self.consume(error, while: "connecting to the Secret Service").description)
        }
        guard let service else {
            return .unavailable(
                reason: SecretStoreError(.serviceUnavailable, "libsecret returned no service").description
            )
        }
        defer { g_object_unref(UnsafeMutableRawPointer(service)) }
        guard let owner = g_dbus_proxy_get_name_owner(keyjar_service_proxy(service)) else {
            return .unavailable(
                reason: SecretStoreError(.serviceUnavailable, "org.freedesktop.secrets has no owner").description
            )
        }
        g_free(owner)

        let collection = secret_collection_for_alias_sync(
            service,
            SECRET_COLLECTION_DEFAULT,
            SECRET_COLLECTION_NONE,
            nil,
            &error
        )
        if let error {
            if let collection { g_object_unref(UnsafeMutableRawPointer(collection)) }
            return .unavailable(reason: Self.consume(error, while: "finding the default collection").description)
        }
        guard let collection else {
            // Storing would ask the service to create one, which prompts; say so instead.
            return .unavailable(reason: SecretStoreError(.noDefaultCollection, "").description)
        }
        defer { g_object_unref(UnsafeMutableRawPointer(collection)) }
        if secret_collection_get_locked(collection) != 0 {
            return .unavailable(reason: SecretStoreError(.locked, "").description)
        }
        let label = secret_collection_get_label(collection).map { label in
            defer { g_free(label) }
            return String(cString: label)
        }
        return .available(backend: "Secret Service, default collection \"\(label ?? "")\"")
    }

    /// Whether the Secret Service answers but has no collection under the `default` alias.
    /// Never prompts; false when the question itself fails (that failure is reported as is).
    private static func lacksDefaultCollection() -> Bool {
        var error: UnsafeMutablePointer<GError>?
        guard let service = secret_service_get_sync(SECRET_SERVICE_NONE, nil, &error) else {
            if let error { g_error_free(error) }
            return false
        }
        defer { g_object_unref(UnsafeMutableRawPointer(service)) }
        let collection = secret_collection_for_alias_sync(
            service,
            SECRET_COLLECTION_DEFAULT,
            SECRET_COLLECTION_NONE,
            nil,
            &error
        )
        if let collection { g_object_unref(UnsafeMutableRawPointer(collection)) }
        if let error {
            g_error_free(error)
            return false
        }
        return collection == nil
    }

    // MARK: - Attributes and errors

    private func checkSessionBus() throws {
        if let problem = SessionBus.problem() {
            throw SecretStoreError(.serviceUnavailable, problem)
        }
    }

    /// The attribute table libsecret matches on; the caller unrefs it.
    private static func attributes(
        for space: ProtectionSpace,
        user: String,
        layout: ItemLayout
    ) throws
        -> OpaquePointer
    {
        let values: [(String, String)] = [
            ("server", space.host),
            ("port", String(space.port)),
            ("protocol", space.protocol),
            ("realm", space.realm ?? ""),
            ("authtype", space.authenticationMethod.rawValue),
            ("proxytype", space.proxyType.rawValue),
            ("user", user),
        ]
        // A NUL would silently truncate the C string and make two different keys collide.
        if let (name, _) = values.first(where: { $0.1.utf8.contains(0) }) {
            throw SecretStoreError(.invalidInput, "the \(name) contains a NUL character")
        }
        guard let table = keyjar_attributes_new() else {
            throw SecretStoreError(.operationFailed, "cannot allocate an attribute table")
        }
        for (name, value) in values {
            keyjar_attributes_set(table, layout.name(name), value)
        }
        return table
    }

    /// The item's label as Seahorse and `secret-tool` show it, e.g. `Keyjar: alice@example.com:443 (admin)`.
    static func label(for space: ProtectionSpace, user: String, kind: SecretKind = .password) -> String {
        let host = space.host.contains(":") ? "[\(space.host)]" : space.host
        let proxy = space.isProxy ? " proxy" : ""
        let realm = space.realm.flatMap { $0.isEmpty ? nil : " (\($0))" } ?? ""
        let what = kind == .refreshToken ? " refresh token" : ""
        return "Keyjar\(what):\(proxy) \(user)@\(host):\(space.port)\(realm)"
    }

    /// Turns a GError into a ``SecretStoreError`` and frees it.
    static func consume(_ error: UnsafeMutablePointer<GError>, while action: String) -> SecretStoreError {
        defer { g_error_free(error) }
        // libsecret keeps one service proxy per process, bound to the bus name and session of
        // the service it first reached. After that service restarts, every call through it fails
        // ("The name :1.3 was not provided", "The session … does not exist"): drop it, so that
        // the next call connects to whichever service is there now. Safe at any time, by its
        // documentation; calls in progress keep their own reference.
        secret_service_disconnect()
        let domain = error.pointee.domain
        let code = error.pointee.code
        let message = error.pointee.message.map { String(cString: $0) } ?? "no message"
        let detail = "\(action): \(message)"
        if domain == g_dbus_error_quark() {
            switch GDBusError(rawValue: UInt32(bitPattern: code)) {
            case G_DBUS_ERROR_SERVICE_UNKNOWN, G_DBUS_ERROR_NAME_HAS_NO_OWNER, G_DBUS_ERROR_NO_SERVER,
                G_DBUS_ERROR_SPAWN_SERVICE_NOT_FOUND, G_DBUS_ERROR_SPAWN_CHILD_EXITED, G_DBUS_ERROR_SPAWN_FAILED,
                G_DBUS_ERROR_DISCONNECTED, G_DBUS_ERROR_FILE_NOT_FOUND:
                return SecretStoreError(.serviceUnavailable, detail)
            default:
                break
            }
        }
        if domain == secret_error_get_quark(), code == Int32(SECRET_ERROR_IS_LOCKED.rawValue) {
            return SecretStoreError(.locked, detail)
        }
        return SecretStoreError(.operationFailed, detail)
    }
}

/// Which attribute names an item is keyed by: Keyjar's own (`keyjar-server`, …), or the common
/// names (`server`, …) items had before, which another program's store could match and replace.
enum ItemLayout {
    case own
    case shared

    /// The attribute's name in this layout, given its common name.
    func name(_ common: String) -> String { self == .own ? "keyjar-" + common : common }
}

extension SecretKind {
    /// The schema items of this kind are stored under (`Schemas/secret-schema.md`).
    fileprivate func schema(_ layout: ItemLayout) -> UnsafePointer<SecretSchema> {
        switch (self, layout) {
        case (.password, .own): keyjar_credential_schema()
        case (.refreshToken, .own): keyjar_refresh_token_schema()
        case (.password, .shared): keyjar_shared_credential_schema()
        case (.refreshToken, .shared): keyjar_shared_refresh_token_schema()
        }
    }
}

extension SecretKind {
    /// The secret in words, for an error message (never the secret itself).
    var noun: String { self == .password ? "password" : "refresh token" }
}
