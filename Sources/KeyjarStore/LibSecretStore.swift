public import KeyjarCore
import KeyjarLibSecret
import KeyjarPlatform
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
        do {
            try LibSecret.store(
                password,
                kind.schema(.own),
                attributes,
                label: Self.label(for: space, user: user, kind: kind)
            )
        } catch {
            guard error.message != nil else {
                throw SecretStoreError(.operationFailed, "libsecret did not store the \(kind.noun) and gave no reason")
            }
            let failure = SecretStoreError(error, while: "storing a \(kind.noun)")
            // With no default collection libsecret only says that an object path does not
            // exist; say what is missing and what to do.
            if failure.code == .operationFailed, LibSecret.lacksDefaultCollection() {
                throw SecretStoreError(.noDefaultCollection, failure.detail)
            }
            throw failure
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
        do {
            return try LibSecret.lookup(kind.schema(layout), attributes)
        } catch {
            throw SecretStoreError(error, while: "looking up a \(kind.noun)")
        }
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
        do {
            return try LibSecret.clear(kind.schema(layout), attributes)
        } catch {
            throw SecretStoreError(error, while: "removing a \(kind.noun)")
        }
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
        let names = ["server", "port", "protocol", "realm", "authtype", "proxytype", "user"].map(layout.name)
        let items: [[String: String]]
        do {
            items = try LibSecret.items(kind.schema(layout), having: layout.name("server"), reading: names)
        } catch {
            throw SecretStoreError(error, while: "listing Keyjar's \(kind.noun)s")
        }
        return items.compactMap { item in
            func value(_ name: String) -> String { item[layout.name(name)] ?? "" }
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
        do {
            return try LibSecret.itemExists(kind.schema(layout), attributes)
        } catch {
            throw SecretStoreError(error, while: "looking for a \(kind.noun)")
        }
    }

    /// Watches every collection's item signals on the session bus (``SecretServiceItemWatch``).
    public func watchItems(_ changed: @escaping @Sendable () -> Void) throws -> (any SecretStoreWatch)? {
        try checkSessionBus()
        return try SecretServiceItemWatch(changed)
    }

    public func health() -> SecretStoreHealth {
        // Nothing here prompts: a missing or locked default collection is reported, as storing
        // into it would prompt (to create it, or to unlock it).
        let problem: SecretStoreError
        switch LibSecret.defaultCollection() {
        case .unlocked(let label):
            return .available(backend: "Secret Service, default collection \"\(label)\"")
        case .unreachable(let reason):
            problem = SecretStoreError(.serviceUnavailable, reason)
        case .failed(let failure, let action):
            problem = SecretStoreError(failure, while: action)
        case .missing:
            problem = SecretStoreError(.noDefaultCollection, "")
        case .locked:
            problem = SecretStoreError(.locked, "")
        }
        return .unavailable(reason: problem.description)
    }

    // MARK: - Attributes and errors

    private func checkSessionBus() throws {
        if let problem = SessionBus.problem() {
            throw SecretStoreError(.serviceUnavailable, problem)
        }
    }

    /// The attribute table libsecret matches on.
    private static func attributes(
        for space: ProtectionSpace,
        user: String,
        layout: ItemLayout
    ) throws -> LibSecretAttributes {
        let values: [(String, String)] = [
            ("server", space.host),
            ("port", String(space.port)),
            ("protocol", space.protocol),
            ("realm", space.realm ?? ""),
            ("authtype", space.authenticationMethod.rawValue),
            ("proxytype", space.proxyType.rawValue),
            ("user", user),
        ]
        let table: LibSecretAttributes
        do {
            table = try LibSecretAttributes()
        } catch {
            throw SecretStoreError(.operationFailed, "cannot allocate an attribute table")
        }
        for (name, value) in values {
            do {
                try table.set(layout.name(name), value)
            } catch {
                // The table refuses a NUL, which would silently truncate the C string and make
                // two different keys collide: say which of the credential's parts holds one.
                throw SecretStoreError(.invalidInput, "the \(name) contains a NUL character")
            }
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
}

extension SecretStoreError {
    /// libsecret's failure while doing `action` ("storing a password", …): its kind picks the
    /// code, its message follows the action; a failure without a message says only that.
    init(_ failure: LibSecretFailure, while action: String) {
        guard let message = failure.message else {
            self.init(.operationFailed, "\(action) failed without a reason")
            return
        }
        let code: Code =
            switch failure.kind {
            case .serviceUnavailable: .serviceUnavailable
            case .locked: .locked
            case .invalidInput: .invalidInput
            case .failed: .operationFailed
            }
        self.init(code, "\(action): \(message)")
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
    fileprivate func schema(_ layout: ItemLayout) -> LibSecretSchema {
        switch (self, layout) {
        case (.password, .own): .credential
        case (.refreshToken, .own): .refreshToken
        case (.password, .shared): .sharedCredential
        case (.refreshToken, .shared): .sharedRefreshToken
        }
    }
}

extension SecretKind {
    /// The secret in words, for an error message (never the secret itself).
    var noun: String { self == .password ? "password" : "refresh token" }
}

extension LibSecretStore {
    /// What the Secret Service offers now, asked without a prompt: how keyjard's first start
    /// chooses where passwords go (KeyjarServer's SecretsBackendChoice).
    public enum Offer: Sendable, Hashable {
        /// A default collection, open.
        case unlockedCollection
        /// A default collection, locked: usable where a prompt can unlock it (a desktop).
        case lockedCollection
        /// A service without a default collection: usable where a prompt can create one.
        case noCollection
        /// No session bus, no service, or a call failed; why.
        case unreachable(String)
    }

    public static func offer() -> Offer {
        switch LibSecret.defaultCollection() {
        case .unlocked: .unlockedCollection
        case .locked: .lockedCollection
        case .missing: .noCollection
        case .unreachable(let reason): .unreachable(reason)
        case .failed(let failure, let action): .unreachable(SecretStoreError(failure, while: action).description)
        }
    }
}
