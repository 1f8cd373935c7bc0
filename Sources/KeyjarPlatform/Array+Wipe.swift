import Glibc

extension Array where Element == UInt8 {
    /// Zeroes every byte, in a way the compiler may not drop as a dead store (explicit_bzero):
    /// for buffers that held key material, just before they are let go.
    package mutating func wipe() {
        withUnsafeMutableBytes { bytes in
            guard let base = bytes.baseAddress else { return }
            explicit_bzero(base, bytes.count)
        }
    }
}
