import Foundation
import KeyjarPlatform

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A file of secrets that only its owner may read: how the secrets files (``FileSecretStore``,
/// ``EncryptedSecretStore``) are read and replaced.
///
/// Reading opens with O_NOFOLLOW and checks the opened descriptor: a symbolic link planted at
/// the path is refused rather than followed, and a file that is not a regular file owned by the
/// current user with no group or other permission bits is refused rather than silently used or
/// fixed. Replacing writes a 0600 temporary file in the same directory (the directory made 0700
/// if missing), syncs it and renames it over the old one, then syncs the directory: a crash or a
/// full disk leaves the old file or the new one, never a torn one.
enum PrivateFile {
    /// The largest secrets file read: 64 MiB, a few hundred thousand items. A larger one is
    /// refused before it is read, rather than filling keyjard's memory.
    static let sizeLimit = 64 << 20

    /// The file's bytes, or nil if there is no file at `path`.
    /// - Throws: ``SecretStoreError`` `.insecureFile` or `.unreadableFile` (also for a file
    ///   larger than ``sizeLimit``).
    static func read(_ path: String) throws -> [UInt8]? {
        let fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
        guard fd >= 0 else {
            let code = errno
            if code == ENOENT { return nil }
            if code == ELOOP {
                throw SecretStoreError(.insecureFile, "\(path) is a symbolic link; point keyjard at the real file")
            }
            throw SecretStoreError(.unreadableFile, "cannot open \(path): \(errorText(code))")
        }
        let handle = FileHandle(fileDescriptor: fd, closeOnDealloc: true)
        var info = stat()
        guard fstat(fd, &info) == 0 else {
            throw SecretStoreError(.unreadableFile, "cannot inspect \(path): \(errorText(errno))")
        }
        try checkPermissions(info, path: path)
        guard info.st_size <= sizeLimit else {
            throw SecretStoreError(.unreadableFile, "\(path) is larger than \(sizeLimit >> 20) MiB")
        }
        do {
            // Bounded again as read: the file may grow between fstat and the read.
            let data = try handle.read(upToCount: sizeLimit + 1) ?? Data()
            guard data.count <= sizeLimit else {
                throw SecretStoreError(.unreadableFile, "\(path) is larger than \(sizeLimit >> 20) MiB")
            }
            return Array(data)
        } catch let error as SecretStoreError {
            throw error
        } catch {
            throw SecretStoreError(.unreadableFile, "cannot read \(path)", underlying: error)
        }
    }

    private static func checkPermissions(_ info: stat, path: String) throws {
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

    /// Replaces the file at `path` atomically with `bytes`.
    /// - Throws: ``SecretStoreError`` `.unreadableFile`.
    static func replace(_ path: String, with bytes: [UInt8]) throws {
        let file = URL(fileURLWithPath: path)
        let directory = file.deletingLastPathComponent().path
        do {
            try PrivateDirectory.makeIfMissing(directory)
        } catch {
            throw SecretStoreError(.unreadableFile, "the directory \(error)", underlying: error)
        }
        let temporary = directory + "/." + file.lastPathComponent + "." + UUID().uuidString + ".tmp"
        // 0600 from creation, so the secrets are never briefly readable by others; fchmod
        // because a restrictive umask could have left it even narrower, which would break reads.
        let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            throw SecretStoreError(.unreadableFile, "cannot create \(temporary): \(errorText(errno))")
        }
        var renamed = false
        defer { if !renamed { unlink(temporary) } }
        do {
            defer { close(fd) }
            guard fchmod(fd, 0o600) == 0 else {
                throw SecretStoreError(.unreadableFile, "cannot chmod \(temporary): \(errorText(errno))")
            }
            if let failure = FileDescriptor.writeAll(bytes, to: fd) {
                throw SecretStoreError(.unreadableFile, "cannot write \(temporary): \(errorText(failure))")
            }
            guard fsync(fd) == 0 else {
                throw SecretStoreError(.unreadableFile, "cannot sync \(temporary): \(errorText(errno))")
            }
        }
        guard rename(temporary, path) == 0 else {
            throw SecretStoreError(.unreadableFile, "cannot replace \(path): \(errorText(errno))")
        }
        renamed = true
        // The rename is only durable once the directory entry is on disk too.
        let directoryFD = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if directoryFD >= 0 {
            _ = fsync(directoryFD)
            close(directoryFD)
        }
    }

    static func errorText(_ code: Int32) -> String {
        String(cString: strerror(code))
    }
}
