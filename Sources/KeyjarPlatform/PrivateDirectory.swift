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
    /// The directory itself must be one, not a symbolic link to one: a link there (in /tmp,
    /// say) could be another user's, to a directory they chose.
    public static func make(_ path: String) throws(Failure) {
        _ = try directory(path)
        let descriptor = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        guard descriptor >= 0 else {
            let number = errno
            throw Failure(
                path: path,
                reason: number == ELOOP || number == ENOTDIR
                    ? "is a symbolic link, not a directory" : "cannot be opened: \(String(cString: strerror(number)))"
            )
        }
        defer { close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0 else { throw Failure(path: path, reason: "cannot be read: \(reason())") }
        guard status.st_uid == geteuid() else {
            throw Failure(path: path, reason: "belongs to uid \(status.st_uid), not to you (uid \(geteuid()))")
        }
        if status.st_mode & 0o777 != 0o700, fchmod(descriptor, 0o700) != 0 {
            throw Failure(path: path, reason: "cannot be made private (0700): \(reason())")
        }
    }

    /// Checks, without changing anything, that `path` is a private directory of this user (not
    /// a link, owned by the user, no access for anyone else): where a client trusts a socket.
    /// Nil when it is; else why not, naming the owner. A missing one is `ENOENT`'s reason.
    public static func problem(with path: String) -> Failure? {
        var status = stat()
        guard lstat(path, &status) == 0 else { return Failure(path: path, reason: "cannot be read: \(reason())") }
        switch status.st_mode & S_IFMT {
        case S_IFDIR: break
        case S_IFLNK: return Failure(path: path, reason: "is a symbolic link, not a directory")
        default: return Failure(path: path, reason: "is not a directory")
        }
        guard status.st_uid == geteuid() else {
            return Failure(path: path, reason: "belongs to uid \(status.st_uid), not to you (uid \(geteuid()))")
        }
        guard status.st_mode & 0o077 == 0 else {
            return Failure(
                path: path,
                reason: "is open to other users (mode \(String(status.st_mode & 0o777, radix: 8))), not 0700"
            )
        }
        return nil
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
