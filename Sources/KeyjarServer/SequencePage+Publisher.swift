import Atomics
import Glibc
public import KeyjarProtocol

extension SequencePage {
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
}
