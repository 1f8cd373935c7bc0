import Foundation
import KeyjarCodec
public import KeyjarCore
import KeyjarLocks
import KeyjarPlatform
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

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
        let key = Item(space: space, user: user, password: password, kind: kind)
        try lock.withLock { _ in
            var items = try readItems() ?? []
            if let index = items.firstIndex(where: { $0.hasSameKey(as: key) }) {
                items[index] = key
            } else {
                items.append(key)
            }
            try replaceFile(with: items)
        }
    }

    public func secret(_ kind: SecretKind, for space: ProtectionSpace, user: String) throws -> String? {
        let key = Item(space: space, user: user, password: "", kind: kind)
        return try lock.withLock { _ in
            try readItems()?.first(where: { $0.hasSameKey(as: key) })?.password
        }
    }

    @discardableResult
    public func removeSecret(_ kind: SecretKind, for space: ProtectionSpace, user: String) throws -> Bool {
        let key = Item(space: space, user: user, password: "", kind: kind)
        return try lock.withLock { _ in
            var items = try readItems() ?? []
            let count = items.count
            items.removeAll { $0.hasSameKey(as: key) }
            guard items.count != count else { return false }
            try replaceFile(with: items)
            return true
        }
    }

    public func keys() throws -> [SecretStoreKey] {
        try lock.withLock { _ in
            (try readItems() ?? []).compactMap { item in
                guard item.kind == nil else { return nil }
                return SecretStoreKey(
                    server: item.server,
                    port: String(item.port),
                    protocol: item.protocol,
                    realm: item.realm,
                    authtype: item.authtype,
                    proxytype: item.proxytype,
                    user: item.user
                )
            }
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
            let format: String
            let version: Int
            do throws(JSONShapeError) {
                format = try json.string("format")
                version = try json.int("version")
            } catch {
                throw SecretStoreError(.unreadableFile, "\(path) is not a Keyjar secrets file (\(error))")
            }
            guard format == currentFormat, version == currentVersion else {
                throw SecretStoreError(
                    .unreadableFile,
                    "\(path) has format \(format) version \(version); "
                        + "this keyjard reads \(currentFormat) version \(currentVersion)"
                )
            }
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

    /// One password with the same attributes as a Secret Service item (see ``LibSecretStore``).
    private struct Item {
        var server: String
        var port: Int
        var `protocol`: String
        var realm: String
        var authtype: String
        var proxytype: String
        var user: String
        var password: String
        /// Absent for a password (as in files written before refresh tokens); `refreshToken`
        /// for the refresh token kept beside one.
        var kind: String?

        init(json: JSONValue) throws(JSONShapeError) {
            server = try json.string("server")
            port = try json.int("port")
            self.protocol = try json.string("protocol")
            realm = try json.string("realm")
            authtype = try json.string("authtype")
            proxytype = try json.string("proxytype")
            user = try json.string("user")
            password = try json.string("password")
            kind = try json.optionalString("kind")
        }

        var json: JSONValue {
            .object(omittingAbsent: [
                "authtype": .string(authtype), "kind": kind.map(JSONValue.string), "password": .string(password),
                "port": .integer(port), "protocol": .string(self.protocol), "proxytype": .string(proxytype),
                "realm": .string(realm), "server": .string(server), "user": .string(user),
            ])
        }

        init(space: ProtectionSpace, user: String, password: String, kind: SecretKind) {
            server = space.host
            port = space.port
            self.protocol = space.protocol
            realm = space.realm ?? ""
            authtype = space.authenticationMethod.rawValue
            proxytype = space.proxyType.rawValue
            self.user = user
            self.password = password
            self.kind = kind == .password ? nil : kind.rawValue
        }

        func hasSameKey(as other: Item) -> Bool {
            kind == other.kind && server == other.server && port == other.port && self.protocol == other.protocol
                && realm == other.realm && authtype == other.authtype && proxytype == other.proxytype
                && user == other.user
        }
    }

    // MARK: - Reading and writing

    /// The file's items, or `nil` if the file does not exist. Call with the lock held.
    private func readItems() throws -> [Item]? {
        // O_NOFOLLOW plus fstat on the opened descriptor: the checks apply to the very file read,
        // and a symlink planted at `path` is refused rather than followed.
        let fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
        guard fd >= 0 else {
            let code = errno
            if code == ENOENT { return nil }
            if code == ELOOP {
                throw SecretStoreError(.insecureFile, "\(path) is a symbolic link; point keyjard at the real file")
            }
            throw SecretStoreError(.unreadableFile, "cannot open \(path): \(Self.errorText(code))")
        }
        let handle = FileHandle(fileDescriptor: fd, closeOnDealloc: true)
        var info = stat()
        guard fstat(fd, &info) == 0 else {
            throw SecretStoreError(.unreadableFile, "cannot inspect \(path): \(Self.errorText(errno))")
        }
        try checkPermissions(info)

        let data: Data
        do {
            data = try handle.readToEnd() ?? Data()
        } catch {
            throw SecretStoreError(.unreadableFile, "cannot read \(path)", underlying: error)
        }
        // An empty file (e.g. made with touch and chmod 600) is an empty store.
        guard !data.isEmpty else { return [] }
        guard let json = JSONReader.parse(Array(data)) else {
            throw SecretStoreError(.unreadableFile, "\(path) is not a Keyjar secrets file (invalid JSON)")
        }
        return try Contents.items(of: json, path: path)
    }

    private func checkPermissions(_ info: stat) throws {
        guard info.st_mode & S_IFMT == S_IFREG else {
            throw SecretStoreError(.insecureFile, "\(path) is not a regular file")
        }
        guard info.st_uid == geteuid() else {
            throw SecretStoreError(
                .insecureFile,
                "\(path) is owned by uid \(info.st_uid), not by the current user (uid \(geteuid()))"
            )
        }
        let mode = info.st_mode & 0o777
        guard mode & 0o077 == 0 else {
            throw SecretStoreError(
                .insecureFile,
                "\(path) has mode \(String(mode, radix: 8)), so other users may read it; "
                    + "check whether it was exposed, then run chmod 600 \(path)"
            )
        }
    }

    /// Replaces the file atomically with `items`. Call with the lock held.
    private func replaceFile(with items: [Item]) throws {
        let data = Contents(items: items).json.encoded(.readable)

        let file = URL(fileURLWithPath: path)
        let directory = file.deletingLastPathComponent().path
        try makeDirectory(directory)
        let temporary = directory + "/." + file.lastPathComponent + "." + UUID().uuidString + ".tmp"
        // 0600 from creation, so the passwords are never briefly readable by others; fchmod
        // because a restrictive umask could have left it even narrower, which would break reads.
        let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            throw SecretStoreError(.unreadableFile, "cannot create \(temporary): \(Self.errorText(errno))")
        }
        var renamed = false
        defer { if !renamed { unlink(temporary) } }
        do {
            defer { close(fd) }
            guard fchmod(fd, 0o600) == 0 else {
                throw SecretStoreError(.unreadableFile, "cannot chmod \(temporary): \(Self.errorText(errno))")
            }
            if let failure = data.withUnsafeBytes({ FileDescriptor.writeAll($0, to: fd) }) {
                throw SecretStoreError(.unreadableFile, "cannot write \(temporary): \(Self.errorText(failure))")
            }
            guard fsync(fd) == 0 else {
                throw SecretStoreError(.unreadableFile, "cannot sync \(temporary): \(Self.errorText(errno))")
            }
        }
        guard rename(temporary, path) == 0 else {
            throw SecretStoreError(.unreadableFile, "cannot replace \(path): \(Self.errorText(errno))")
        }
        renamed = true
        // The rename is only durable once the directory entry is on disk too.
        let directoryFD = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if directoryFD >= 0 {
            _ = fsync(directoryFD)
            close(directoryFD)
        }
    }

    private func makeDirectory(_ directory: String) throws {
        do {
            try PrivateDirectory.makeIfMissing(directory)
        } catch {
            throw SecretStoreError(.unreadableFile, "the directory \(error)", underlying: error)
        }
    }

    private static func errorText(_ code: Int32) -> String {
        String(cString: strerror(code))
    }
}
