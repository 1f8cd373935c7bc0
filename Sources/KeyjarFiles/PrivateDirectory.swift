import Glibc

/// Directories Keyjar keeps its files in. Missing ones are always made 0700 with their missing
/// parents (mkdir, so that the system's reason reaches the error).
///
/// - ``make(_:)``: a directory that is Keyjar's alone — the socket's (with keyjard's lock and the
///   sequence page) and a response cache's (bodies can hold anything a site sent). An existing
///   one must be a directory of this user (a file or another user's directory is refused: someone
///   else could read or replace what goes in) and is tightened to 0700.
/// - ``makeIfMissing(_:)``: a directory a user may have chosen and shares with other files — the
///   store's and the secrets file's (`--database /srv/keyjar/store.sqlite3`, or `/tmp`): an
///   existing one is used as it is, its files being 0600 themselves.
public enum PrivateDirectory {
    /// Why a directory could not be made private: which path and what the system said.
    public struct Failure: Error, Sendable, Hashable, CustomStringConvertible {
        public var path: String
        public var reason: String
        public var description: String { "\(path) \(reason)" }
    }

    /// Makes `path` a private directory of this user, creating it (and missing parents) if needed.
    public static func make(_ path: String) throws(Failure) {
        let status = try directory(path)
        guard status.st_uid == getuid() else {
            throw Failure(path: path, reason: "belongs to uid \(status.st_uid), not to you (uid \(getuid()))")
        }
        if status.st_mode & 0o777 != 0o700, chmod(path, 0o700) != 0 {
            throw Failure(path: path, reason: "cannot be made private (0700): \(reason())")
        }
    }

    /// Makes `path` (and missing parents) 0700 if it is missing; an existing directory is left as
    /// it is.
    public static func makeIfMissing(_ path: String) throws(Failure) {
        _ = try directory(path)
    }

    /// The directory at `path`, made first if missing; anything else there is refused.
    private static func directory(_ path: String) throws(Failure) -> stat {
        var status = stat()
        if stat(path, &status) != 0 {
            try create(path)
            guard stat(path, &status) == 0 else { throw Failure(path: path, reason: "cannot be read: \(reason())") }
        }
        guard status.st_mode & S_IFMT == S_IFDIR else { throw Failure(path: path, reason: "is not a directory") }
        return status
    }

    /// mkdir of each missing ancestor, outermost first; one made meanwhile by another process
    /// (EEXIST) is fine.
    private static func create(_ path: String) throws(Failure) {
        var missing = [String]()
        var current = path
        var status = stat()
        while !current.isEmpty, current != "/", stat(current, &status) != 0 {
            missing.append(current)
            guard let slash = current.utf8.lastIndex(of: UInt8(ascii: "/")) else { break }
            current = String(current[..<slash])
        }
        for directory in missing.reversed() where mkdir(directory, 0o700) != 0 && errno != EEXIST {
            throw Failure(path: path, reason: "cannot be created: \(reason())")
        }
    }

    private static func reason() -> String { String(cString: strerror(errno)) }
}
