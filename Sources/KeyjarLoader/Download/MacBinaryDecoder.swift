/// MacBinary I, II and III: a 128-byte header (the file's name, Finder information and fork
/// lengths; from II on a CRC-16 of its first 124 bytes; III adds the `mBIN` signature), then an
/// optional secondary header, the data fork, the resource fork and (II) the Get Info comment,
/// each padded with zeros to a multiple of 128 bytes. The data fork comes out; the rest is
/// checked and dropped.
///
/// A header whose CRC matches is II (III with the signature). A MacBinary I header has no CRC:
/// it is taken as one when the bytes II added (99 to 125) are all zero and its forks are within
/// MacBinary I's 8 MiB; any other CRC mismatch is damage. Padding after the last part may be
/// missing (writers differ); anything beyond it is refused.
package struct MacBinaryDecoder: MacFileStreamDecoder {
    /// Where each part lies in the file, from its first byte.
    private struct Layout {
        var secondaryHeaderEnd: UInt64
        var dataStart: UInt64
        var dataEnd: UInt64
        var resourceEnd: UInt64
        var commentEnd: UInt64
        /// The end of the file with the last part's padding.
        var end: UInt64
    }

    private var headerBytes: [UInt8] = []
    private var layout: Layout?
    /// Bytes consumed so far.
    private var offset: UInt64 = 0
    package private(set) var header: MacFileHeader?
    /// 1, 2 or 3, once the header was read.
    package private(set) var version: Int?

    package init() { headerBytes.reserveCapacity(128) }

    package mutating func decode(
        _ bytes: UnsafeRawBufferPointer,
        into dataFork: inout [UInt8]
    ) throws(MacFileDecodingError) {
        var start = 0
        if layout == nil {
            start = min(128 - headerBytes.count, bytes.count)
            headerBytes.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[0..<start]))
            offset += UInt64(start)
            guard headerBytes.count == 128 else { return }
            layout = try readHeader()
        }
        guard let layout else { return }
        let count = UInt64(bytes.count - start)
        guard offset + count <= layout.end else { throw .trailingData(.macBinary) }
        let first = max(offset, layout.dataStart)
        let last = min(offset + count, layout.dataEnd)
        if first < last {
            let from = start + Int(first - offset)
            dataFork.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[from..<(from + Int(last - first))]))
        }
        offset += count
    }

    package mutating func finish() throws(MacFileDecodingError) -> MacFileHeader {
        guard let layout, let header else {
            throw headerBytes.isEmpty ? .notEncoded(.macBinary, "the file is empty") : .truncated(.macBinary, .header)
        }
        if offset < layout.secondaryHeaderEnd { throw .truncated(.macBinary, .header) }
        if offset < layout.dataEnd { throw .truncated(.macBinary, .dataFork) }
        if offset < layout.resourceEnd { throw .truncated(.macBinary, .resourceFork) }
        if offset < layout.commentEnd { throw .truncated(.macBinary, .comment) }
        return header
    }

    private mutating func readHeader() throws(MacFileDecodingError) -> Layout {
        let bytes = headerBytes
        guard bytes[0] == 0, bytes[74] == 0, bytes[82] == 0 else {
            throw .notEncoded(.macBinary, "bytes 0, 74 and 82 of its header are not zero")
        }
        let nameLength = Int(bytes[1])
        guard (1...63).contains(nameLength) else {
            throw .malformed(.macBinary, "a file name of \(nameLength) bytes (1 to 63 are allowed)")
        }
        var crc = CRC16XMODEM()
        crc.update(bytes[0..<124])
        let stored = UInt16(bytes[124]) << 8 | UInt16(bytes[125])
        let dataLength = UInt32(bigEndianBytes: bytes[83..<87])
        let resourceLength = UInt32(bigEndianBytes: bytes[87..<91])
        var secondaryLength: UInt64 = 0
        var commentLength: UInt64 = 0
        if crc.value == stored {
            version = Array(bytes[102..<106]) == Array("mBIN".utf8) ? 3 : 2
            // Byte 123 names the oldest reader that understands the file (129: II, 130: III).
            guard bytes[123] <= 130 else {
                throw .malformed(.macBinary, "it needs a reader newer than MacBinary III (version byte \(bytes[123]))")
            }
            secondaryLength = UInt64(bytes[120]) << 8 | UInt64(bytes[121])
            commentLength = UInt64(bytes[99]) << 8 | UInt64(bytes[100])
        } else if bytes[99..<126].allSatisfy({ $0 == 0 }) {
            guard dataLength <= 0x7F_FFFF, resourceLength <= 0x7F_FFFF else {
                throw .malformed(.macBinary, "a fork of more than 8 MiB in a MacBinary I header")
            }
            version = 1
        } else {
            throw .checksumMismatch(.macBinary, .header, stored: stored, computed: crc.value)
        }
        header = MacFileHeader(
            name: Array(bytes[2..<(2 + nameLength)]),
            type: UInt32(bigEndianBytes: bytes[65..<69]),
            creator: UInt32(bigEndianBytes: bytes[69..<73]),
            dataLength: dataLength,
            resourceLength: resourceLength
        )
        func padded(_ length: UInt64) -> UInt64 { (length + 127) / 128 * 128 }
        let dataStart = 128 + padded(secondaryLength)
        let resourceStart = dataStart + padded(UInt64(dataLength))
        let commentStart = resourceStart + padded(UInt64(resourceLength))
        return Layout(
            secondaryHeaderEnd: 128 + secondaryLength,
            dataStart: dataStart,
            dataEnd: dataStart + UInt64(dataLength),
            resourceEnd: resourceLength > 0 ? resourceStart + UInt64(resourceLength) : 0,
            commentEnd: commentLength > 0 ? commentStart + commentLength : 0,
            end: commentStart + padded(commentLength)
        )
    }
}
