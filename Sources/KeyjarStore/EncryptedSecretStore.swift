public import KeyjarCore
import KeyjarLocks
public import KeyjarSealing

/// Keeps passwords and tokens in a file sealed under a passphrase: the secret store for
/// machines without a desktop keyring (SSH logins, servers, containers, CI), which needs no
/// D-Bus.
///
/// Each secret is sealed with ChaCha20-Poly1305 under the file's data key, and the data key
/// under a key scrypt derives from the passphrase (``SealedSecretsFile``, ``PassphraseKey``). The
/// file is 0600 and replaced atomically (``PrivateFile``). No secret and no key is ever written
/// in clear.
///
/// The store starts locked. ``unlock(passphrase:)`` (or ``create(passphrase:)`` for a new file)
/// keeps the data key in memory, on a page locked against swapping (``ProtectedKey``), until
/// ``lock()``. While locked, reading or storing a secret fails at once with
/// ``SecretStoreError/Code/fileLocked`` — never a prompt, never a wait — and what needs no secret
/// still works: listing which credentials have secrets, and removing them. A wrong passphrase
/// is refused with ``SecretStoreError/Code/wrongPassphrase`` and changes nothing.
///
/// ```swift
/// let store = try EncryptedSecretStore(path: "/home/alice/.local/share/keyjar/secrets.sealed")
/// try store.create(passphrase: "correct horse battery staple")
/// try store.storePassword("s3cret", for: space, user: "alice")
/// store.lock()
/// try store.unlock(passphrase: "correct horse battery staple")
/// try store.password(for: space, user: "alice")  // "s3cret"
/// ```
public final class EncryptedSecretStore: SecretStore {
    /// The sealed file.
    public let path: String
    private let cost: PassphraseKey.Cost

    /// The data key while unlocked, with the sealed copy it came from: a file replaced since
    /// (another data key) is not written with this one.
    struct Unlocked {
        var key: ProtectedKey
        var kdf: PassphraseKey
        var sealedKey: [UInt8]
        /// When a secret was last read or stored (or the store unlocked): what an idle timeout
        /// counts from.
        var lastUse = ContinuousClock.now
    }

    /// The key, and the file's read-modify-write sequences, one at a time.
    let unlocked = Locked<Unlocked?>(nil)

    /// A locked store on the file at `path`, which need not exist yet (``create(passphrase:)``).
    /// - Parameter cost: scrypt's cost for a passphrase set here; a file records its own.
    /// - Throws: ``SecretStoreError`` when a file is there but is not a sealed secrets file
    ///   that only this user may read.
    public init(path: String, cost: PassphraseKey.Cost = .secrets) throws {
        self.path = path
        self.cost = cost
        _ = try readFile()
    }

    /// Whether the file exists (a passphrase has been set).
    /// - Throws: ``SecretStoreError`` when a file is there that cannot be used (another user's,
    ///   open to others, a link, not a sealed secrets file): never taken for "no file yet".
    public func exists() throws -> Bool {
        try unlocked.withLock { _ in try readFile() != nil }
    }

    /// Whether a secret can be read and stored now.
    public var isUnlocked: Bool { unlocked.withLock { $0 != nil } }

    /// When a secret was last read or stored, or the store unlocked; nil while locked. Listing
    /// and removing, which need no key, do not count.
    public var lastUse: ContinuousClock.Instant? { unlocked.withLock { $0?.lastUse } }

    /// Creates the file, its data key sealed under `passphrase`, and leaves the store unlocked.
    /// - Throws: ``SecretStoreError`` `.unreadableFile` when a file is already there (it is
    ///   never replaced: unlock it, or change its passphrase).
    public func create(passphrase: String) throws {
        try unlocked.withLock { unlocked in
            guard try readFile() == nil else {
                throw SecretStoreError(.unreadableFile, "\(path) already exists; unlock it with its passphrase")
            }
            let (file, dataKey) = try SealedSecretsFile.create(passphrase: passphrase, cost: cost)
            try PrivateFile.replace(path, with: file.bytes)
            unlocked = Unlocked(key: ProtectedKey(dataKey), kdf: file.kdf, sealedKey: file.sealedKey)
        }
    }

    /// Opens the data key with `passphrase` and keeps it until ``lock()``.
    /// - Throws: ``SecretStoreError`` `.wrongPassphrase` (the store stays as it was), or
    ///   `.unreadableFile` when there is no file yet.
    public func unlock(passphrase: String) throws {
        try unlocked.withLock { unlocked in
            guard let file = try readFile() else {
                throw SecretStoreError(.unreadableFile, "\(path) does not exist yet: set a passphrase first")
            }
            let dataKey = try file.dataKey(passphrase: passphrase, path: path)
            unlocked = Unlocked(key: ProtectedKey(dataKey), kdf: file.kdf, sealedKey: file.sealedKey)
        }
    }

    /// Forgets the data key (its page is zeroed).
    public func lock() {
        unlocked.withLock { $0 = nil }
    }

    /// Forgets the data key if no secret has been read or stored since `lastUse` (an idle
    /// timeout's lock, which a use just before it must win); says whether it did.
    public func lock(ifUnusedSince lastUse: ContinuousClock.Instant) -> Bool {
        unlocked.withLock { unlocked in
            guard unlocked?.lastUse == lastUse else { return false }
            unlocked = nil
            return true
        }
    }

    /// Seals the data key under `new`; every item stays as it was.
    /// - Throws: ``SecretStoreError`` `.wrongPassphrase` when `old` does not open the file.
    public func changePassphrase(from old: String, to new: String) throws {
        try unlocked.withLock { unlocked in
            guard var file = try readFile() else {
                throw SecretStoreError(.unreadableFile, "\(path) does not exist yet: set a passphrase first")
            }
            let dataKey = try file.dataKey(passphrase: old, path: path)
            try file.sealKey(dataKey, passphrase: new, cost: cost)
            try PrivateFile.replace(path, with: file.bytes)
            unlocked = Unlocked(key: ProtectedKey(dataKey), kdf: file.kdf, sealedKey: file.sealedKey)
        }
    }

    // MARK: - SecretStore

    public func storeSecret(_ secret: String, _ kind: SecretKind, for space: ProtectionSpace, user: String) throws {
        let key = SecretFileKey(space: space, user: user, kind: kind)
        try unlocked.withLock { unlocked in
            let (current, file) = try unlockedFile(&unlocked)
            unlocked?.lastUse = .now
            var items = file.items
            let sealed = try current.key.withKey { dataKey in
                try SealedSecretsFile.seal(secret, for: key, with: dataKey)
            }
            if let index = items.firstIndex(where: { $0.key == key }) {
                items[index].sealed = sealed
            } else {
                items.append(.init(key: key, sealed: sealed))
            }
            var written = file
            written.items = items
            try PrivateFile.replace(path, with: written.bytes)
        }
    }

    public func secret(_ kind: SecretKind, for space: ProtectionSpace, user: String) throws -> String? {
        let key = SecretFileKey(space: space, user: user, kind: kind)
        return try unlocked.withLock { unlocked in
            let (current, file) = try unlockedFile(&unlocked)
            unlocked?.lastUse = .now
            guard let item = file.items.first(where: { $0.key == key }) else { return nil }
            return try current.key.withKey { dataKey in
                try SealedSecretsFile.open(item.sealed, for: key, with: dataKey, path: path)
            }
        }
    }

    /// Needs no passphrase: removing a secret reads none.
    @discardableResult
    public func removeSecret(_ kind: SecretKind, for space: ProtectionSpace, user: String) throws -> Bool {
        let key = SecretFileKey(space: space, user: user, kind: kind)
        return try unlocked.withLock { _ in
            guard var file = try readFile() else { return false }
            let count = file.items.count
            file.items.removeAll { $0.key == key }
            guard file.items.count != count else { return false }
            try PrivateFile.replace(path, with: file.bytes)
            return true
        }
    }

    /// Needs no passphrase: the keys are not sealed.
    public func keys() throws -> [SecretStoreKey] {
        try unlocked.withLock { _ in (try readFile()?.items ?? []).compactMap(\.key.passwordKey) }
    }

    public func health() -> SecretStoreHealth {
        do {
            return try unlocked.withLock { unlocked in
                guard try readFile() != nil else {
                    return .unavailable(
                        reason: SecretStoreError(.fileLocked, "\(path) does not exist yet: set a passphrase")
                            .description
                    )
                }
                guard unlocked != nil else {
                    return .unavailable(reason: SecretStoreError(.fileLocked, path).description)
                }
                return .available(backend: "encrypted file \(path)")
            }
        } catch let error as SecretStoreError {
            return .unavailable(reason: error.description)
        } catch {
            return .unavailable(reason: SecretStoreError(.unreadableFile, "\(path): \(error)").description)
        }
    }

    // MARK: - The file

    /// The file, or nil when there is none. Call with the lock held.
    func readFile() throws -> SealedSecretsFile? {
        guard let bytes = try PrivateFile.read(path) else { return nil }
        return try SealedSecretsFile(bytes: bytes, path: path)
    }

    /// The key and the file it opens. A file that is gone is made again with the data key
    /// sealed as it was (the passphrase still opens it); a file whose data key is another (a
    /// copy restored over it) locks the store: only its passphrase may open it.
    private func unlockedFile(_ unlocked: inout Unlocked?) throws -> (Unlocked, SealedSecretsFile) {
        guard let current = unlocked else { throw SecretStoreError(.fileLocked, path) }
        guard let file = try readFile() else {
            return (current, SealedSecretsFile(kdf: current.kdf, sealedKey: current.sealedKey, items: []))
        }
        guard file.sealedKey == current.sealedKey else {
            unlocked = nil
            throw SecretStoreError(.fileLocked, "\(path) was replaced since it was unlocked")
        }
        return (current, file)
    }
}
