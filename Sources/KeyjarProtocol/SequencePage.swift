import Atomics
import Glibc

/// keyjard's last committed sequence number, in a page of shared memory beside the socket.
///
/// keyjard stores the number after each commit and before it acknowledges it; a client maps
/// the page read-only and compares it with its replica's sequence before each lookup (one
/// atomic load). When they differ the replica is behind and catches up first, so a lookup that
/// starts after any process's write was acknowledged sees that write, without every process
/// being woken for every change. The page holds no cookie data.
///
/// Layout (`Schemas/protocol.md`, "The sequence page"): bytes 0–7 the magic `KJSEQ1` padded
/// with zeros, 8–15 the sequence number, 16–23 keyjard's process id; native byte order (the
/// file never leaves the machine); the file is one page long, mode 0600, in the socket's 0700
/// directory. keyjard reuses the file across restarts rather than replacing it: a replaced
/// file would leave running clients reading a page nobody writes any more.
public enum SequencePage {
    /// `keyjard.sequence` in the socket's directory.
    public static func path(forSocket socketPath: String) -> String {
        guard let slash = socketPath.utf8.lastIndex(of: UInt8(ascii: "/")) else { return "keyjard.sequence" }
        return String(socketPath[..<slash]) + "/keyjard.sequence"
    }

    static let size = 4096
    static let magic: UInt64 = {
        var value: UInt64 = 0
        withUnsafeMutableBytes(of: &value) { bytes in
            for (index, byte) in "KJSEQ1".utf8.enumerated() { bytes[index] = byte }
        }
        return value
    }()
    static let sequenceOffset = 8
    static let pidOffset = 16

    /// Why the page could not be opened or made.
    public struct Failure: Error, Sendable, CustomStringConvertible {
        public var path: String
        public var reason: String
        public var description: String { "sequence page \(path): \(reason)" }
    }

    static func systemFailure(_ path: String, _ call: String) -> Failure {
        Failure(path: path, reason: "\(call): \(String(cString: strerror(errno)))")
    }

    /// keyjard's side: maps the page writable and publishes sequence numbers.
    public final class Publisher: @unchecked Sendable {
        // @unchecked: the mapping lives as long as this object and is only written through
        // atomic stores; keyjard publishes from its one event loop.
        private let base: UnsafeMutableRawPointer
        private let sequence: UnsafeAtomic<UInt64>

        /// Opens (or creates) the page at `path`, private to the user, and publishes `sequence`.
        public init(path: String, sequence initial: UInt64) throws(Failure) {
            let descriptor = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0o600)
            guard descriptor >= 0 else { throw systemFailure(path, "open") }
            defer { close(descriptor) }
            var status = stat()
            guard fstat(descriptor, &status) == 0 else { throw systemFailure(path, "fstat") }
            guard status.st_mode & S_IFMT == S_IFREG else { throw Failure(path: path, reason: "not a regular file") }
            guard status.st_uid == getuid() else {
                throw Failure(path: path, reason: "belongs to uid \(status.st_uid), not to you (uid \(getuid()))")
            }
            guard fchmod(descriptor, 0o600) == 0 else { throw systemFailure(path, "fchmod") }
            if status.st_size != SequencePage.size {
                guard ftruncate(descriptor, off_t(SequencePage.size)) == 0 else {
                    throw systemFailure(path, "ftruncate")
                }
            }
            let mapped = mmap(nil, SequencePage.size, PROT_READ | PROT_WRITE, MAP_SHARED, descriptor, 0)
            guard let mapped, mapped != MAP_FAILED else { throw systemFailure(path, "mmap") }
            base = mapped
            sequence = UnsafeAtomic(
                at: (mapped + SequencePage.sequenceOffset).assumingMemoryBound(to: UInt64.AtomicRepresentation.self)
            )
            // The number before the magic: a client never reads a valid page with a number
            // left by a keyjard that served another database.
            sequence.store(initial, ordering: .releasing)
            mapped.storeBytes(of: UInt64(getpid()), toByteOffset: SequencePage.pidOffset, as: UInt64.self)
            UnsafeAtomic<UInt64>(at: mapped.assumingMemoryBound(to: UInt64.AtomicRepresentation.self))
                .store(SequencePage.magic, ordering: .releasing)
        }

        deinit {
            munmap(base, SequencePage.size)
        }

        /// Makes `value` the published number; call before the commit it ends is acknowledged.
        public func publish(_ value: UInt64) {
            sequence.store(value, ordering: .releasing)
        }

        public var published: UInt64 { sequence.load(ordering: .relaxed) }
    }

    /// A client's side: the page mapped read-only.
    public final class Reader: @unchecked Sendable {
        // @unchecked: a read-only mapping, read through atomic loads, unmapped at deinit.
        private let base: UnsafeMutableRawPointer
        private let sequence: UnsafeAtomic<UInt64>
        /// The file's identity, to tell a page that keyjard replaced from the one mapped.
        public let device: UInt64
        public let inode: UInt64

        /// Maps the page at `path`; fails when it is missing (a keyjard without one), not the
        /// user's, readable by others, or not a page keyjard wrote.
        public init(path: String) throws(Failure) {
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
        public var latest: UInt64 { sequence.load(ordering: .acquiring) }

        /// Whether `path` still names the file this reader mapped.
        public func isCurrent(at path: String) -> Bool {
            var status = stat()
            guard lstat(path, &status) == 0 else { return false }
            return UInt64(status.st_dev) == device && UInt64(status.st_ino) == inode
        }
    }
}
