import Glibc
import KeyjarProtocol

/// The lock that makes keyjard the only server of its database, whatever socket it serves:
/// an `flock` on ``DatabasePointer``'s file beside the database, held for the whole life of
/// the process, with where this keyjard listens written in it for clients to find. Taken
/// before the database is opened: opening migrates and checkpoints it.
final class DatabaseLock {
    private let descriptor: CInt

    init(databasePath: String, socketPath: String) throws {
        let path = DatabasePointer.path(forDatabase: databasePath)
        // The database's directory may be a shared one (`--database /tmp/…`): the pointer is
        // never a link, and always the user's own file.
        let descriptor = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw ServerError("cannot open \(path): \(String(cString: strerror(errno)))") }
        var entry = stat()
        guard fstat(descriptor, &entry) == 0, entry.st_mode & S_IFMT == S_IFREG, entry.st_uid == geteuid() else {
            close(descriptor)
            throw ServerError("\(path) is not a file of yours; refusing to serve \(databasePath) beside it")
        }
        guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else {
            close(descriptor)
            let holder = DatabasePointer.read(at: path)
            throw ServerError(
                "another keyjard\(holder.map { " (pid \($0.pid))" } ?? "") already serves the database \(databasePath)"
                    + (holder.map { " at \($0.socketPath); a client of \(socketPath) reaches it there" } ?? "")
            )
        }
        self.descriptor = descriptor
        let pointer = Array(DatabasePointer(socketPath: socketPath, pid: getpid()).encoded.utf8)
        ftruncate(descriptor, 0)
        _ = pointer.withUnsafeBytes { pwrite(descriptor, $0.baseAddress, $0.count, 0) }
    }

    deinit { close(descriptor) }
}
