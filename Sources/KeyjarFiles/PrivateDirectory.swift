import Glibc

/// A directory only its user can enter: the socket's (with keyjard's lock and the sequence page),
/// the store's, the secrets file's, a response cache's (bodies can hold anything a site sent).
///
/// One rule for all of them: a missing directory is made 0700 with its missing parents; an
/// existing one must be a directory of this user (a file or another user's directory is refused:
/// someone else could read or replace what goes in) and is tightened to 0700.
public enum PrivateDirectory {
    /// Why a directory could not be made private: which path and what the system said.
    public struct Failure: Error, Sendable, Hashable, CustomStringConvertible {
        public var path: String
        public var reason: String
        public var description: String { "\(path) \(reason)" }
    }

    /// Makes `path` a private directory of this user, creating it (and missing parents) if needed.
    public static func make(_ path: String) throws(Failure) {
        var status = stat()
        if stat(path, &status) != 0 {
            try create(path)
            guard stat(path, &status) == 0 else { throw Failure(path: path, reason: "cannot be read: \(reason())") }
        }
        guard status.st_mode & S_IFMT == S_IFDIR else { throw Failure(path: path, reason: "is not a directory") }
        guard status.st_uid == getuid() else {
            throw Failure(path: path, reason: "belongs to uid \(status.st_uid), not to you (uid \(getuid()))")
        }
        if status.st_mode & 0o777 != 0o700, chmod(path, 0o700) != 0 {
            throw Failure(path: path, reason: "cannot be made private (0700): \(reason())")
        }
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
