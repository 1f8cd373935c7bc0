public import Crypto

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A 256-bit key held on a memory page of its own: locked in RAM so that it is never written to
/// swap, left out of core dumps, and overwritten with zeros when the key is released.
///
/// The key is made into a `SymmetricKey` only for the length of one operation
/// (``withKey(_:)``); swift-crypto keeps that copy in memory it zeroes when it is freed.
/// Locking needs RLIMIT_MEMLOCK room for one page (64 KiB is the usual least); where there is
/// none the key still works and ``isLockedInMemory`` says it may be swapped out.
public final class ProtectedKey: @unchecked Sendable {
    // Written once, in init; read-only until deinit, which no other reference can race with.
    private let page: UnsafeMutableRawPointer
    private let pageSize: Int
    public static let byteCount = 32
    /// Whether the page is locked in RAM (mlock succeeded).
    public let isLockedInMemory: Bool

    /// Copies `key` (32 bytes) onto a page of its own.
    /// - Precondition: `key` is 256 bits.
    public init(_ key: SymmetricKey) {
        precondition(key.bitCount == Self.byteCount * 8, "a ProtectedKey holds a 256-bit key")
        pageSize = max(Int(sysconf(Int32(_SC_PAGESIZE))), Self.byteCount)
        guard let mapped = mmap(nil, pageSize, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0),
            mapped != MAP_FAILED
        else {
            // Without a page of its own there is nowhere safe to keep it.
            fatalError("cannot map a page for a key: \(String(cString: strerror(errno)))")
        }
        page = mapped
        _ = madvise(page, pageSize, Int32(MADV_DONTDUMP))
        isLockedInMemory = mlock(page, pageSize) == 0
        key.withUnsafeBytes { bytes in
            UnsafeMutableRawBufferPointer(start: page, count: Self.byteCount).copyMemory(from: bytes)
        }
    }

    /// Runs `body` with the key.
    public func withKey<T, E: Error>(_ body: (SymmetricKey) throws(E) -> T) throws(E) -> T {
        try body(SymmetricKey(data: UnsafeRawBufferPointer(start: page, count: Self.byteCount)))
    }

    deinit {
        explicit_bzero(page, pageSize)
        if isLockedInMemory { _ = munlock(page, pageSize) }
        _ = munmap(page, pageSize)
    }
}
