import KeyjarPlatform

/// What MacBinary and BinHex 4.0 carry besides the data fork: a classic Mac OS file's name,
/// Finder type and creator, and the lengths of its two forks.
package struct MacFileHeader: Equatable, Sendable {
    /// The name the file had on the Mac: 1 to 63 bytes of Mac OS Roman, which may contain `/`
    /// (so it is never used as a path).
    package var name: [UInt8]
    /// The Finder's four-character type and creator codes (`TEXT`, `ttxt`), as big-endian numbers.
    package var type: UInt32
    package var creator: UInt32
    package var dataLength: UInt32
    package var resourceLength: UInt32
}

/// Why a MacBinary or BinHex file cannot be decoded. A download asked to decode it fails with
/// `URLError.cannotDecodeContentData` and this as its description; nothing is saved.
package enum MacFileDecodingError: Error, Equatable, CustomStringConvertible {
    package enum Format: String, Sendable {
        case macBinary = "MacBinary"
        case binHex = "BinHex 4.0"
    }

    /// A part of the encoded file, for saying where it went wrong.
    package enum Part: String, Sendable {
        case header
        case dataFork = "data fork"
        case resourceFork = "resource fork"
        case comment = "Get Info comment"
    }

    /// The input is not this format at all; the text says what is missing.
    case notEncoded(Format, String)
    /// A field or a sequence the format does not allow; the text says which.
    case malformed(Format, String)
    /// A part's CRC-16 is not the one stored with it: the file was damaged.
    case checksumMismatch(Format, Part, stored: UInt16, computed: UInt16)
    /// BinHex: a byte outside its 64-character alphabet between the colons.
    case invalidCharacter(UInt8, offset: Int)
    /// The input ends inside `Part`.
    case truncated(Format, Part)
    /// More data follows the end the header announced.
    case trailingData(Format)

    package var description: String {
        switch self {
        case .notEncoded(let format, let reason):
            "it is not a \(format.rawValue) file: \(reason)"
        case .malformed(let format, let reason):
            "the \(format.rawValue) file is malformed: \(reason)"
        case .checksumMismatch(let format, let part, let stored, let computed):
            "the \(format.rawValue) file is damaged: the CRC of its \(part.rawValue) is "
                + "\(Self.hex(computed)), not the \(Self.hex(stored)) stored with it"
        case .invalidCharacter(let byte, let offset):
            "the BinHex 4.0 file is damaged: byte \(offset) (\(Self.hex(UInt16(byte)))) is not one of its characters"
        case .truncated(let format, let part):
            "the \(format.rawValue) file ends inside its \(part.rawValue) (it is truncated)"
        case .trailingData(let format):
            "the \(format.rawValue) file has data after the end its header announces"
        }
    }

    private static func hex(_ value: UInt16) -> String { "0x" + Hex.digits(value, width: 4, uppercase: true) }
}

/// A decoder fed a file in pieces of any size: the data fork comes out as it is decoded, and
/// the same input gives the same output and the same error however it is cut.
package protocol MacFileStreamDecoder {
    /// Decodes the next `bytes`, appending the data fork's bytes among them to `dataFork`.
    mutating func decode(_ bytes: UnsafeRawBufferPointer, into dataFork: inout [UInt8]) throws(MacFileDecodingError)
    /// The input ended: the header, or why the file is incomplete.
    mutating func finish() throws(MacFileDecodingError) -> MacFileHeader
}

extension MacFileStreamDecoder {
    /// Decodes the next bytes, held in an array.
    package mutating func decode(_ bytes: [UInt8], into dataFork: inout [UInt8]) throws(MacFileDecodingError) {
        let result: Result<Void, MacFileDecodingError> = bytes.withUnsafeBytes { buffer in
            do throws(MacFileDecodingError) {
                try decode(buffer, into: &dataFork)
                return .success(())
            } catch {
                return .failure(error)
            }
        }
        try result.get()
    }

    /// Decodes a whole file at once: its header and data fork.
    package mutating func decode(
        _ bytes: [UInt8]
    ) throws(MacFileDecodingError) -> (header: MacFileHeader, dataFork: [UInt8]) {
        var dataFork: [UInt8] = []
        try decode(bytes, into: &dataFork)
        return (try finish(), dataFork)
    }
}

/// CRC-16/XMODEM (polynomial 0x1021, initial value 0, not reflected): the checksum of MacBinary
/// II's header and of each part of a BinHex 4.0 file. BinHex's description computes it bit by
/// bit with two zero bytes fed after the data; with an initial value of 0 that is this same
/// value, computed here a byte at a time from a table.
package struct CRC16XMODEM {
    package private(set) var value: UInt16 = 0

    package init() {}

    private static let table: [UInt16] = (0..<256).map { index in
        var crc = UInt16(index) << 8
        for _ in 0..<8 { crc = crc & 0x8000 != 0 ? (crc << 1) ^ 0x1021 : crc << 1 }
        return crc
    }

    package mutating func update(_ byte: UInt8) {
        value = (value << 8) ^ Self.table[Int(UInt8(value >> 8) ^ byte)]
    }

    package mutating func update(_ bytes: some Sequence<UInt8>) {
        for byte in bytes { update(byte) }
    }
}

extension UInt32 {
    /// Four bytes, most significant first.
    init(bigEndianBytes bytes: ArraySlice<UInt8>) {
        self = bytes.reduce(0) { $0 << 8 | UInt32($1) }
    }
}
