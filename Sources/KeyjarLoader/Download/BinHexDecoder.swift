/// BinHex 4.0 (RFC 1741's `application/mac-binhex40`): text of any kind, then the line
/// `(This file must be converted with BinHex 4.0)`, then the encoded data between two colons:
/// characters of a 64-character alphabet, six bits each (line breaks and spaces ignored),
/// run-length encoded (0x90 and a count repeats the byte before it; 0x90 0x00 is 0x90 itself).
/// Decoded, it is a header (name, Finder type and creator, flags, the forks' lengths) with its
/// CRC-16, the data fork with its CRC-16, and the resource fork with its CRC-16. The data fork
/// comes out; every CRC is checked, the resource fork's too, so damage anywhere is refused.
package struct BinHexDecoder: MacFileStreamDecoder {
    /// Where the reader is in the text.
    private enum Phase {
        /// Before the line that names the format: looking for it.
        case preamble
        /// After that line: blank space, then the opening colon.
        case awaitingColon
        /// Between the colons.
        case encoded
        /// After the closing colon: the rest of the text is not read.
        case ended
    }

    /// Where the decoded bytes go.
    private enum Stage {
        case header
        case dataFork(remaining: UInt32)
        case dataChecksum
        case resourceFork(remaining: UInt32)
        case resourceChecksum
        case done
    }

    package static let formatLine = Array("(This file must be converted with BinHex".utf8)
    /// Each byte's six-bit value in the alphabet, 0xFF for a byte outside it.
    private static let values: [UInt8] = {
        var values = [UInt8](repeating: 0xFF, count: 256)
        let alphabet = Array("!\"#$%&'()*+,-012345689@ABCDEFGHIJKLMNPQRSTUVXYZ[`abcdefhijklmpqr".utf8)
        for (value, character) in alphabet.enumerated() { values[Int(character)] = UInt8(value) }
        return values
    }()

    private var phase = Phase.preamble
    /// The start of the current line of the preamble (as long as the format line's).
    private var line: [UInt8] = []
    private var lineHasText = false
    /// Bytes of text read, for naming where a bad character is.
    private var offset = 0
    /// Six-bit groups not yet made into bytes.
    private var bits: UInt32 = 0
    private var bitCount: UInt32 = 0
    /// The last byte run-length decoding produced, and whether a 0x90 awaits its count.
    private var previous: UInt8?
    private var runPending = false

    private var stage = Stage.header
    private var headerBytes: [UInt8] = []
    private var checksumBytes: [UInt8] = []
    private var crc = CRC16XMODEM()
    package private(set) var header: MacFileHeader?

    package init() {}

    package mutating func decode(
        _ bytes: UnsafeRawBufferPointer,
        into dataFork: inout [UInt8]
    ) throws(MacFileDecodingError) {
        for byte in bytes {
            defer { offset += 1 }
            switch phase {
            case .preamble: readPreamble(byte)
            case .awaitingColon:
                if Self.isSpace(byte) { continue }
                guard byte == UInt8(ascii: ":") else {
                    throw .notEncoded(.binHex, "no colon opens the encoded data after the BinHex line")
                }
                phase = .encoded
            case .encoded:
                if Self.isSpace(byte) { continue }
                if byte == UInt8(ascii: ":") {
                    try endEncoded()
                    continue
                }
                let value = Self.values[Int(byte)]
                guard value != 0xFF else { throw .invalidCharacter(byte, offset: offset) }
                bits = bits << 6 | UInt32(value)
                bitCount += 6
                if bitCount >= 8 {
                    bitCount -= 8
                    let decoded = UInt8(truncatingIfNeeded: bits >> bitCount)
                    bits &= (1 << bitCount) - 1
                    try expandRun(decoded, into: &dataFork)
                }
            case .ended:
                return
            }
        }
    }

    package mutating func finish() throws(MacFileDecodingError) -> MacFileHeader {
        switch phase {
        case .preamble:
            throw .notEncoded(.binHex, "no line starts with “(This file must be converted with BinHex”")
        case .awaitingColon:
            throw .notEncoded(.binHex, "no encoded data follows the BinHex line")
        case .encoded:
            if case .done = stage { throw .malformed(.binHex, "no colon closes the encoded data") }
            throw .truncated(.binHex, part)
        case .ended:
            guard let header else { throw .truncated(.binHex, .header) }
            return header
        }
    }

    private static func isSpace(_ byte: UInt8) -> Bool {
        byte == UInt8(ascii: "\n") || byte == UInt8(ascii: "\r") || byte == UInt8(ascii: " ")
            || byte == UInt8(ascii: "\t")
    }

    /// Looks for the line that names the format (indentation allowed).
    private mutating func readPreamble(_ byte: UInt8) {
        if byte == UInt8(ascii: "\n") || byte == UInt8(ascii: "\r") {
            if line == Self.formatLine { phase = .awaitingColon }
            line.removeAll(keepingCapacity: true)
            lineHasText = false
        } else if lineHasText || (byte != UInt8(ascii: " ") && byte != UInt8(ascii: "\t")) {
            lineHasText = true
            if line.count < Self.formatLine.count { line.append(byte) }
        }
    }

    /// The closing colon: everything the header announced must have arrived.
    private mutating func endEncoded() throws(MacFileDecodingError) {
        if runPending { throw .malformed(.binHex, "it ends inside a run (0x90 without its count)") }
        guard case .done = stage else { throw .truncated(.binHex, part) }
        phase = .ended
    }

    /// The part the decoded bytes are in now.
    private var part: MacFileDecodingError.Part {
        switch stage {
        case .header: .header
        case .dataFork, .dataChecksum: .dataFork
        case .resourceFork, .resourceChecksum, .done: .resourceFork
        }
    }

    /// Run-length decoding: 0x90 then a count n repeats the byte before it to n in all (so n − 1
    /// more); 0x90 then 0 is a 0x90.
    private mutating func expandRun(_ byte: UInt8, into dataFork: inout [UInt8]) throws(MacFileDecodingError) {
        if runPending {
            runPending = false
            if byte == 0 {
                previous = 0x90
                return try take(0x90, into: &dataFork)
            }
            guard let previous else {
                throw .malformed(.binHex, "a run (0x90) with no byte before it to repeat")
            }
            for _ in 1..<Int(byte) { try take(previous, into: &dataFork) }
        } else if byte == 0x90 {
            runPending = true
        } else {
            previous = byte
            try take(byte, into: &dataFork)
        }
    }

    /// One decoded byte into the header, a fork or a checksum.
    private mutating func take(_ byte: UInt8, into dataFork: inout [UInt8]) throws(MacFileDecodingError) {
        switch stage {
        case .header:
            headerBytes.append(byte)
            let nameLength = Int(headerBytes[0])
            guard (1...63).contains(nameLength) else {
                throw .malformed(.binHex, "a file name of \(nameLength) bytes (1 to 63 are allowed)")
            }
            // Name length, name, version, type, creator, flags, the two lengths, the CRC.
            if headerBytes.count == 1 + nameLength + 1 + 4 + 4 + 2 + 4 + 4 + 2 { try readHeader(nameLength) }
        case .dataFork(let remaining):
            dataFork.append(byte)
            crc.update(byte)
            stage = remaining > 1 ? .dataFork(remaining: remaining - 1) : .dataChecksum
        case .dataChecksum:
            if try checksum(byte, of: .dataFork) {
                let length = header?.resourceLength ?? 0
                stage = length > 0 ? .resourceFork(remaining: length) : .resourceChecksum
            }
        case .resourceFork(let remaining):
            crc.update(byte)
            stage = remaining > 1 ? .resourceFork(remaining: remaining - 1) : .resourceChecksum
        case .resourceChecksum:
            if try checksum(byte, of: .resourceFork) { stage = .done }
        case .done:
            throw .trailingData(.binHex)
        }
    }

    private mutating func readHeader(_ nameLength: Int) throws(MacFileDecodingError) {
        let fields = headerBytes.dropFirst(1 + nameLength + 1)
        let start = fields.startIndex
        var crc = CRC16XMODEM()
        crc.update(headerBytes.dropLast(2))
        let stored = UInt16(headerBytes[headerBytes.count - 2]) << 8 | UInt16(headerBytes[headerBytes.count - 1])
        guard crc.value == stored else {
            throw .checksumMismatch(.binHex, .header, stored: stored, computed: crc.value)
        }
        let header = MacFileHeader(
            name: Array(headerBytes[1...nameLength]),
            type: UInt32(bigEndianBytes: fields[start..<(start + 4)]),
            creator: UInt32(bigEndianBytes: fields[(start + 4)..<(start + 8)]),
            dataLength: UInt32(bigEndianBytes: fields[(start + 10)..<(start + 14)]),
            resourceLength: UInt32(bigEndianBytes: fields[(start + 14)..<(start + 18)])
        )
        self.header = header
        stage = header.dataLength > 0 ? .dataFork(remaining: header.dataLength) : .dataChecksum
    }

    /// A byte of a fork's CRC; true once both arrived and match (the next fork starts afresh).
    private mutating func checksum(
        _ byte: UInt8,
        of part: MacFileDecodingError.Part
    ) throws(MacFileDecodingError) -> Bool {
        checksumBytes.append(byte)
        guard checksumBytes.count == 2 else { return false }
        let stored = UInt16(checksumBytes[0]) << 8 | UInt16(checksumBytes[1])
        checksumBytes.removeAll(keepingCapacity: true)
        guard crc.value == stored else {
            throw .checksumMismatch(.binHex, part, stored: stored, computed: crc.value)
        }
        crc = CRC16XMODEM()
        return true
    }
}
