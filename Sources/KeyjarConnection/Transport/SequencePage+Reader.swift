import Atomics
import Glibc
package import KeyjarProtocol

extension SequencePage {
    /// A client's side: the page mapped read-only.
    package final class Reader: @unchecked Sendable {
        // @unchecked: a read-only mapping, read through atomic loads, unmapped at deinit.
        private let base: UnsafeMutableRawPointer
        private let sequence: UnsafeAtomic<UInt64>
        /// The file's identity, to tell a page that keyjard replaced from the one mapped.
        package let device: UInt64
        package let inode: UInt64

        /// Maps the page at `path`; fails when it is missing (a keyjard without one), not the
        /// user's, readable by others, or not a page keyjard wrote.
        package init(path: String) throws(Failure) {
            let descriptor = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
            guard descriptor >= 0 else { throw systemFailure(path, "open") }
            defer { close(descriptor) }
            var status = stat()
            guard fstat(descriptor, &status) == 0 else { throw systemFailure(path, "fstat") }
            guard status.st_mode & S_IFMT == S_IFREG, status.st_uid == getuid(), status.st_mode & 0o077 == 0,
                status.st_size >= SequencePage.size
            else {
                throw Failure(path: path, reason: "not a private, page-sized file of this user")
            }
            let mapped = mmap(nil, SequencePage.size, PROT_READ, MAP_SHARED, descriptor, 0)
            guard let mapped, mapped != MAP_FAILED else { throw systemFailure(path, "mmap") }
            guard
                UnsafeAtomic<UInt64>(at: mapped.assumingMemoryBound(to: UInt64.AtomicRepresentation.self))
                    .load(ordering: .acquiring) == SequencePage.magic
            else {
                munmap(mapped, SequencePage.size)
                throw Failure(path: path, reason: "not a keyjard sequence page")
            }
            base = mapped
            sequence = UnsafeAtomic(
                at: (mapped + SequencePage.sequenceOffset).assumingMemoryBound(to: UInt64.AtomicRepresentation.self)
            )
            device = UInt64(status.st_dev)
            inode = UInt64(status.st_ino)
        }

        deinit {
            munmap(base, SequencePage.size)
        }

        /// keyjard's last committed sequence number.
        @inline(__always)
        package var latest: UInt64 { sequence.load(ordering: .acquiring) }

        /// Whether `path` still names the file this reader mapped.
        package func isCurrent(at path: String) -> Bool {
            var status = stat()
            guard lstat(path, &status) == 0 else { return false }
            return UInt64(status.st_dev) == device && UInt64(status.st_ino) == inode
        }
    }
}
