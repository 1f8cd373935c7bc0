internal import Glibc

/// Byte-level string helpers for the lookup hot path: the generic `UTF8View` algorithms cost
/// several times a `memcmp` on the string's own storage (docs/performance.md, Engine and wire
/// coding).
enum Bytes {
    /// Runs `body` on the UTF-8 bytes of `string` without copying native strings.
    @inline(__always)
    static func with<Result>(_ string: String, _ body: (UnsafeBufferPointer<UInt8>) -> Result) -> Result {
        if let result = string.utf8.withContiguousStorageIfAvailable(body) { return result }
        var copy = string
        return copy.withUTF8(body)
    }

    /// Whether `a[offset..<offset+b.count] == b`.
    @inline(__always)
    static func equal(_ a: UnsafeBufferPointer<UInt8>, at offset: Int, _ b: UnsafeBufferPointer<UInt8>) -> Bool {
        guard offset >= 0, offset + b.count <= a.count else { return false }
        guard let aBase = a.baseAddress, let bBase = b.baseAddress else { return b.isEmpty }
        return memcmp(aBase + offset, bBase, b.count) == 0
    }
}
