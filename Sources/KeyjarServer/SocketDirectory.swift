import Foundation
import Glibc
import KeyjarPlatform

/// The socket's directory, made private to the user, and the lock that makes keyjard the only
/// server on that socket.
///
/// The directory is 0700 and must belong to keyjard's user (an existing one with looser
/// permissions is tightened, one owned by someone else is refused). `keyjard.lock` beside the
/// socket is held with `flock` for the whole life of the process: a second keyjard fails to
/// take it and exits with a clear error, and a socket file left by a dead keyjard is known to
/// be stale once the lock is ours.
final class SocketDirectory {
    let socketPath: String
    private let lockDescriptor: CInt

    init(socketPath: String) throws {
        self.socketPath = socketPath
        let directory = (socketPath as NSString).deletingLastPathComponent
        guard socketPath.utf8.count < 108 else {
            throw ServerError("the socket path \(socketPath) is longer than the 107 bytes a Unix socket allows")
        }
        do {
            try PrivateDirectory.make(directory)
        } catch {
            throw ServerError("the socket directory \(error)")
        }
        let lockPath = directory + "/keyjard.lock"
        let descriptor = open(lockPath, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            throw ServerError("cannot open \(lockPath): \(String(cString: strerror(errno)))")
        }
        guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else {
            let holder = (try? String(contentsOfFile: lockPath, encoding: .utf8))?.trimmingCharacters(
                in: .whitespacesAndNewlines
            )
            close(descriptor)
            throw ServerError(
                "another keyjard is already serving \(socketPath)"
                    + (holder.map { $0.isEmpty ? "" : " (pid \($0))" } ?? "")
            )
        }
        lockDescriptor = descriptor
        ftruncate(descriptor, 0)
        let pid = "\(getpid())\n"
        _ = pid.withCString { write(descriptor, $0, strlen($0)) }
    }

    deinit {
        close(lockDescriptor)
    }

    /// Removes a socket file left by a keyjard that died without cleaning up. Safe: we hold the lock.
    func removeStaleSocket() throws {
        var status = stat()
        guard lstat(socketPath, &status) == 0 else { return }
        guard status.st_mode & S_IFMT == S_IFSOCK else {
            throw ServerError("\(socketPath) exists and is not a socket; refusing to replace it")
        }
        unlink(socketPath)
    }

    func removeSocket() {
        unlink(socketPath)
    }
}
