import Glibc

/// Beside the database, which keyjard serves it and on which socket: `store.sqlite3.keyjard`.
///
/// keyjard holds an `flock` on the file for its whole life, so there is one keyjard per
/// database whatever socket each was asked to serve (a shell without `XDG_RUNTIME_DIR`
/// computes another socket than the desktop's, for the same database). The holder writes
/// where it listens; a client whose own socket has no keyjard reads it, and connects there
/// (checked as every socket is: its directory, and that its peer is the user) instead of
/// starting a second keyjard. The lock says whether the file is live: a file nobody holds is a
/// dead keyjard's, and is not followed.
///
/// Format: text, `keyjar-database-pointer 1`, then `socket PATH` and `pid N`, one a line.
public struct DatabasePointer: Sendable, Equatable {
    public var socketPath: String
    public var pid: Int32

    public init(socketPath: String, pid: Int32) {
        self.socketPath = socketPath
        self.pid = pid
    }

    /// `DATABASE.keyjard`.
    public static func path(forDatabase databasePath: String) -> String {
        KeyjarPaths.databasePointer(forDatabase: databasePath)
    }

    static let header = "keyjar-database-pointer 1"
    /// No pointer is longer: a socket path fits in 108 bytes.
    static let maximumSize = 1024

    public var encoded: String { "\(Self.header)\nsocket \(socketPath)\npid \(pid)\n" }

    /// Nil for anything that is not a pointer of this version.
    public init?(decoding text: String) {
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        guard lines.count >= 3, lines[0] == Self.header, lines[1].hasPrefix("socket /"),
            lines[2].hasPrefix("pid "), let pid = Int32(lines[2].dropFirst(4)), pid > 0
        else { return nil }
        self.init(socketPath: String(lines[1].dropFirst(7)), pid: pid)
    }

    /// The pointer at `path` when it is a small regular file of this user's, not reached
    /// through a link (another user cannot make a client follow one of theirs); nil otherwise.
    public static func read(at path: String) -> DatabasePointer? {
        let descriptor = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var entry = stat()
        guard fstat(descriptor, &entry) == 0, entry.st_mode & S_IFMT == S_IFREG, entry.st_uid == geteuid(),
            entry.st_size <= maximumSize
        else { return nil }
        var bytes = [UInt8](repeating: 0, count: maximumSize)
        let count = bytes.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, $0.count) }
        guard count > 0 else { return nil }
        return DatabasePointer(decoding: String(decoding: bytes[..<count], as: UTF8.self))
    }
}
