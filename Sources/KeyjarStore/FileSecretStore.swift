import KeyjarCodec
public import KeyjarCore
import KeyjarLocks

/// Keeps passwords in a JSON file: the explicit opt-in fallback (`keyjard --secrets file`) for
/// headless hosts without a Secret Service.
///
/// - Important: This is weaker than ``LibSecretStore``. The passwords are plain text on disk,
///   protected only by the file's permissions: anyone who can read the file as you (root, a
///   backup, a process running as you, a stolen unencrypted disk) reads every password. Prefer
///   the Secret Service wherever one can run.
///
/// The file is created with mode 0600 (its directory, if missing, with 0700). An existing file
/// that is not a regular file owned by the current user with no group or other permission bits
/// is refused with ``SecretStoreError/Code/insecureFile`` rather than silently used or fixed.
/// Every change rewrites the whole file atomically: a 0600 temporary file in the same directory
/// is written, synced and renamed over the old one, so a crash leaves the old or the new file,
/// never a torn one. The format is described in `Schemas/secret-schema.md`.
///
/// The file is re-read on every call, so edits by other tools are seen; a lock serialises calls
/// within the process, but two processes writing the same file may lose each other's changes.
///
/// ```swift
/// let store = try FileSecretStore(path: "/home/alice/.local/share/keyjar/secrets.json")
/// try store.storePassword("s3cret", for: space, user: "alice")
/// ```
public final class FileSecretStore: SecretStore {
    /// The secrets file.
    public let path: String
    /// The file is the state; the lock makes each read-modify-write sequence atomic within the
    /// process, so concurrent stores cannot lose each other's updates.
    private let lock = Locked(0)

    /// Opens the secrets file at `path`, creating it (mode 0600) if it does not exist.
    ///
    /// - Parameter path: The JSON file to keep passwords in.
    /// - Throws: ``SecretStoreError`` with code ``SecretStoreError/Code/insecureFile`` if the
    ///   file exists with group/other permissions, is not a regular file or is not owned by the
    ///   current user; ``SecretStoreError/Code/unreadableFile`` if it cannot be created, read or
    ///   parsed.
    public init(path: String) throws {
        self.path = path
        try lock.withLock { _ in
            if try readItems() == nil { try replaceFile(with: []) }
        }
    }

    public func storeSecret(_ password: String, _ kind: SecretKind, for space: ProtectionSpace, user: String) throws {
        let item = Item(key: SecretFileKey(space: space, user: user, kind: kind), password: password)
        try lock.withLock { _ in
            var items = try readItems() ?? []
            if let index = items.firstIndex(where: { $0.key == item.key }) {
                items[index] = item
            } else {
                items.append(item)
            }
            try replaceFile(with: items)
        }
    }

    public func secret(_ kind: SecretKind, for space: ProtectionSpace, user: String) throws -> String? {
        let key = SecretFileKey(space: space, user: user, kind: kind)
        return try lock.withLock { _ in
            try readItems()?.first(where: { $0.key == key })?.password
        }
    }

    @discardableResult
    public func removeSecret(_ kind: SecretKind, for space: ProtectionSpace, user: String) throws -> Bool {
        let key = SecretFileKey(space: space, user: user, kind: kind)
        return try lock.withLock { _ in
            var items = try readItems() ?? []
            let count = items.count
            items.removeAll { $0.key == key }
            guard items.count != count else { return false }
            try replaceFile(with: items)
            return true
        }
    }

    public func keys() throws -> [SecretStoreKey] {
        try lock.withLock { _ in
            (try readItems() ?? []).compactMap(\.key.passwordKey)
        }
    }

    public func health() -> SecretStoreHealth {
        do {
            _ = try lock.withLock { _ in try readItems() }
            return .available(backend: "plain-text file \(path) (weaker than the Secret Service)")
        } catch let error as SecretStoreError {
            return .unavailable(reason: error.description)
        } catch {
            return .unavailable(reason: SecretStoreError(.unreadableFile, "\(path): \(error)").description)
        }
    }

    // MARK: - File format

    /// The whole file: `{"format", "items", "version"}`, laid out for reading (members sorted,
    /// indented). `format` and `version` let a future keyjard recognise and migrate it.
    private struct Contents {
        static let currentFormat = "org.keyjar.secrets"
        static let currentVersion = 1

        var items: [Item]

        /// The items of a file of the current format and version.
        static func items(of json: JSONValue, path: String) throws -> [Item] {
            try SecretsFileFormat.check(
                json,
                format: currentFormat,
                version: currentVersion,
                kind: "a Keyjar secrets file",
                path: path
            )
            do throws(JSONShapeError) {
                return try json.required("items") { items throws(JSONShapeError) in try items.elements(Item.init) }
            } catch {
                // The error names where, never the value there (which may be a password).
                throw SecretStoreError(.unreadableFile, "\(path) is not a Keyjar secrets file (\(error))")
            }
        }

        var json: JSONValue {
            .object([
                ("format", .string(Self.currentFormat)), ("items", .array(items.map(\.json))),
                ("version", .integer(Self.currentVersion)),
            ])
        }
    }

    /// One password (or refresh token) under its key.
    private struct Item {
        var key: SecretFileKey
        var password: String

        init(key: SecretFileKey, password: String) {
            self.key = key
            self.password = password
        }

        init(json: JSONValue) throws(JSONShapeError) {
            key = try SecretFileKey(json: json)
            password = try json.string("password")
        }

        var json: JSONValue { key.json(with: "password", .string(password)) }
    }

    // MARK: - Reading and writing

    /// The file's items, or `nil` if the file does not exist. Call with the lock held.
    private func readItems() throws -> [Item]? {
        guard let bytes = try PrivateFile.read(path) else { return nil }
        // An empty file (e.g. made with touch and chmod 600) is an empty store.
        guard !bytes.isEmpty else { return [] }
        guard let json = JSONReader.parse(bytes) else {
            throw SecretStoreError(.unreadableFile, "\(path) is not a Keyjar secrets file (invalid JSON)")
        }
        return try Contents.items(of: json, path: path)
    }

    /// Replaces the file atomically with `items`. Call with the lock held.
    private func replaceFile(with items: [Item]) throws {
        try PrivateFile.replace(path, with: Contents(items: items).json.encoded(.readable))
    }
}
