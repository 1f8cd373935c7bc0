internal import CLibSecret
public import KeyjarCore
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

    /// The keys of the items already listed, by path, while a watch keeps them true
    /// (``watchItems(_:)``; `items` is nil otherwise): comparing the store with keyjard's
    /// records after each signal then reads only the items new since (one call per item, which
    /// for a thousand credentials is most of a listing's cost). `generation` counts signals, so
    /// that a listing a signal overtook does not keep what it read.
    private let knownItems = Mutex(KnownItems())

    struct KnownItems {
        var items: [KnownItem: SecretStoreKey?]?
        var generation: UInt64 = 0
    }

    struct KnownItem: Hashable {
        var kind: SecretKind
        var layout: ItemLayout
        var path: String
        init(_ kind: SecretKind, _ layout: ItemLayout, _ path: String) {
            self.kind = kind
            self.layout = layout
            self.path = path
        }
    }

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
        var keys = try self.keys(.password, layout: .own)
        guard !sharedNamesGone.load(ordering: .relaxed) else { return keys }
        var seen = Set(keys)
        for key in try self.keys(.password, layout: .shared) where seen.insert(key).inserted { keys.append(key) }
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
            for key in try keys(kind, layout: .shared) {
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

    /// The keys of the items of `kind` stored with `layout`'s attribute names. While a watch
    /// keeps ``knownItems`` true, only the items new since the last listing are read.
    private func keys(_ kind: SecretKind, layout: ItemLayout) throws -> [SecretStoreKey] {
        final class Found {
            let kind: SecretKind
            let layout: ItemLayout
            let known: [KnownItem: SecretStoreKey?]
            var keys: [SecretStoreKey] = []
            var read: [KnownItem: SecretStoreKey?] = [:]
            init(_ kind: SecretKind, _ layout: ItemLayout, known: [KnownItem: SecretStoreKey?]) {
                self.kind = kind
                self.layout = layout
                self.known = known
            }
        }
        let (snapshot, generation) = knownItems.withLock { ($0.items ?? [:], $0.generation) }
        let found = Found(kind, layout, known: snapshot)
        var error: UnsafeMutablePointer<GError>?
        let listed = keyjar_each_item(
            kind.schema(layout),
            { context, path in
                guard let context, let path else { return 0 }
                let found = Unmanaged<Found>.fromOpaque(context).takeUnretainedValue()
                guard let key = found.known[KnownItem(found.kind, found.layout, String(cString: path))] else {
                    return 0
                }
                if let key { found.keys.append(key) }
                return 1
            },
            { context, path, attributes in
                guard let context, let path, let attributes else { return }
                let found = Unmanaged<Found>.fromOpaque(context).takeUnretainedValue()
                let key = LibSecretStore.key(in: attributes, layout: found.layout)
                found.read[KnownItem(found.kind, found.layout, String(cString: path))] = .some(key)
                if let key { found.keys.append(key) }
            },
            Unmanaged.passUnretained(found).toOpaque(),
            &error
        )
        if let error { throw Self.consume(error, while: "listing Keyjar's \(kind.noun)s") }
        guard listed != 0 else {
            throw SecretStoreError(.operationFailed, "listing Keyjar's \(kind.noun)s failed without a reason")
        }
        return withExtendedLifetime(found) {
            knownItems.withLock { known in
                // Read before a signal that came meanwhile: perhaps already stale, not kept.
                guard known.generation == generation else { return }
                known.items?.merge(found.read) { _, new in new }
            }
            return found.keys
        }
    }

    /// The key an item's attributes name in `layout`, or nil for an item without one.
    private static func key(in attributes: OpaquePointer, layout: ItemLayout) -> SecretStoreKey? {
        guard keyjar_attributes_get(attributes, layout.name("server")) != nil else { return nil }
        func value(_ name: String) -> String {
            keyjar_attributes_get(attributes, layout.name(name)).map { String(cString: $0) } ?? ""
        }
        return SecretStoreKey(
            server: value("server"),
            port: value("port"),
            protocol: value("protocol"),
            realm: value("realm"),
            authtype: value("authtype"),
            proxytype: value("proxytype"),
            user: value("user")
        )
    }

    /// Watches every collection's item signals on the session bus (``SecretServiceItemWatch``),
    /// and while it lasts keeps the keys of the items listed (``knownItems``): a signal drops
    /// its item's, and another Secret Service taking the bus name drops them all.
    public func watchItems(_ changed: @escaping @Sendable () -> Void) throws -> (any SecretStoreWatch)? {
        try checkSessionBus()
        let watch = try SecretServiceItemWatch(
            changed: { signal, path in
                self.knownItems.withLock { known in
                    known.generation &+= 1
                    if signal == "NameOwnerChanged" {
                        if known.items != nil { known.items = [:] }
                    } else if signal != "ItemCreated" {
                        known.items = known.items?.filter { $0.key.path != path }
                    }
                }
                changed()
            },
            cancelled: { self.knownItems.withLock { $0.items = nil } }
        )
        knownItems.withLock { $0.items = [:] }
        return watch
    }

    public func health() -> SecretStoreHealth {
        if let problem = sessionBusProblem(environment: currentEnvironment()) {
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
        if let problem = sessionBusProblem(environment: currentEnvironment()) {
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

/// Why no session bus can be reached, or `nil` if one may be.
///
/// Checked before any libsecret call because, without `DBUS_SESSION_BUS_ADDRESS`, GLib falls back
/// to `$XDG_RUNTIME_DIR/bus` and then to X11 autolaunch, whose failure message does not say that
/// the real problem is a missing Secret Service.
func sessionBusProblem(environment: [String: String]) -> String? {
    if let address = environment["DBUS_SESSION_BUS_ADDRESS"], !address.isEmpty { return nil }
    if let runtime = environment["XDG_RUNTIME_DIR"], !runtime.isEmpty {
        var info = stat()
        if stat(runtime + "/bus", &info) == 0, info.st_mode & S_IFMT == S_IFSOCK { return nil }
        return "DBUS_SESSION_BUS_ADDRESS is not set and there is no session bus socket at \(runtime)/bus"
    }
    return "neither DBUS_SESSION_BUS_ADDRESS nor XDG_RUNTIME_DIR is set"
}

/// The process environment; read per call because keyjard may be started before the bus.
func currentEnvironment() -> [String: String] {
    var result: [String: String] = [:]
    for name in ["DBUS_SESSION_BUS_ADDRESS", "XDG_RUNTIME_DIR"] {
        if let value = getenv(name) { result[name] = String(cString: value) }
    }
    return result
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
