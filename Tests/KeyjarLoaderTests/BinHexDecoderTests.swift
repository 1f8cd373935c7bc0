import KeyjarTestSupport
import Testing

@testable import KeyjarLoader

/// BinHex 4.0 files built from the format's definition (`MacFileVectors`): the data fork comes
/// out whatever the pieces the text arrives in, every CRC is checked, and a damaged, truncated
/// or foreign text is refused with the reason.
struct BinHexDecoderTests {
    /// Runs the encoder shortens, 0x90 (the run marker) alone and in a run, a run longer than 255.
    static let data: [UInt8] =
        Array("The data fork.\n".utf8) + [UInt8](repeating: 0x41, count: 600) + [0x90] + [0x00, 0x00]
        + [UInt8](repeating: 0x90, count: 5) + Array("end".utf8)
    static let resource = [UInt8](repeating: 0, count: 70) + [1, 2, 3]

    static func decode(_ bytes: [UInt8]) throws(MacFileDecodingError) -> (header: MacFileHeader, dataFork: [UInt8]) {
        var decoder = BinHexDecoder()
        return try decoder.decode(bytes)
    }

    static func decode(_ bytes: [UInt8], inPiecesOf size: Int) -> Result<[UInt8], MacFileDecodingError> {
        var decoder = BinHexDecoder()
        var dataFork: [UInt8] = []
        do throws(MacFileDecodingError) {
            for start in stride(from: 0, to: bytes.count, by: size) {
                try decoder.decode(Array(bytes[start..<min(start + size, bytes.count)]), into: &dataFork)
            }
            _ = try decoder.finish()
            return .success(dataFork)
        } catch {
            return .failure(error)
        }
    }

    static let stream = MacFileVectors.binHexStream(name: "Report", data: data, resource: resource)

    @Test func aFileGivesItsDataForkAndHeaderInAnyPieces() throws {
        let text = MacFileVectors.binHexText(Self.stream, preamble: "From: someone\r\nSubject: the report\r\n\r\n")
        let decoded = try Self.decode(text)
        #expect(decoded.dataFork == Self.data)
        #expect(decoded.header.name == Array("Report".utf8))
        #expect(decoded.header.type == 0x5445_5854)
        #expect(decoded.header.creator == 0x7474_7874)
        #expect(decoded.header.dataLength == UInt32(Self.data.count))
        #expect(decoded.header.resourceLength == UInt32(Self.resource.count))
        for size in [1, 3, 64, 65, 1000] {
            #expect(Self.decode(text, inPiecesOf: size) == .success(Self.data), "pieces of \(size)")
        }
        // Without run-length encoding (0x90 still escaped) the same file decodes the same.
        let escaped = Self.stream.flatMap { $0 == 0x90 ? [0x90, 0x00] : [$0] }
        #expect(try Self.decode(MacFileVectors.binHexText(escaped, runLengthEncode: false)).dataFork == Self.data)
    }

    @Test func theTextAroundTheDataDoesNotMatter() throws {
        // Indented line, Unix line ends, text after the closing colon, lines of another length
        let characters = MacFileVectors.sixBitEncoded(MacFileVectors.runLengthEncoded(Self.stream))
        var text = Array("  (This file must be converted with BinHex 4.0)\n\n:".utf8)
        for start in stride(from: 0, to: characters.count, by: 50) {
            text += characters[start..<min(start + 50, characters.count)] + [UInt8(ascii: "\n")]
        }
        text += Array(":\n-- \nA signature with a : colon\n".utf8)
        #expect(try Self.decode(text).dataFork == Self.data)
        // Empty forks
        let empty = MacFileVectors.binHexText(MacFileVectors.binHexStream(name: "E", data: [], resource: []))
        #expect(try Self.decode(empty).dataFork.isEmpty)
    }

    @Test func everyChecksumIsChecked() {
        let headerLength = MacFileVectors.binHexHeaderLength(name: "Report")
        for (index, part) in [
            (2, MacFileDecodingError.Part.header),
            (headerLength + 1, .dataFork),
            (headerLength + Self.data.count + 2 + 71, .resourceFork),
        ] {
            var damaged = Self.stream
            damaged[index] ^= 0x04
            let result = Self.decode(MacFileVectors.binHexText(damaged), inPiecesOf: 4096)
            guard case .failure(.checksumMismatch(.binHex, let failedPart, _, _)) = result else {
                Issue.record("a change at \(index) gave \(result)")
                continue
            }
            #expect(failedPart == part)
        }
        // The stored value and the computed one are both named.
        var damaged = Self.stream
        damaged[headerLength + 1] ^= 0x04
        let computed = MacFileVectors.crc16(damaged[headerLength..<(headerLength + Self.data.count)])
        let stored =
            UInt16(Self.stream[headerLength + Self.data.count]) << 8
            | UInt16(Self.stream[headerLength + Self.data.count + 1])
        #expect(throws: MacFileDecodingError.checksumMismatch(.binHex, .dataFork, stored: stored, computed: computed)) {
            try Self.decode(MacFileVectors.binHexText(damaged))
        }
    }

    @Test func damagedTextIsRefusedWithTheReason() {
        let text = MacFileVectors.binHexText(Self.stream)
        let start = text.firstIndex(of: UInt8(ascii: ":"))!
        // A character outside the alphabet (7 is not in it)
        var foreign = text
        foreign[start + 10] = UInt8(ascii: "7")
        #expect(throws: MacFileDecodingError.invalidCharacter(UInt8(ascii: "7"), offset: start + 10)) {
            try Self.decode(foreign)
        }
        // No line naming the format, or nothing after it
        #expect(
            throws: MacFileDecodingError.notEncoded(
                .binHex,
                "no line starts with “(This file must be converted with BinHex”"
            )
        ) {
            try Self.decode(Array(text[start...]))
        }
        #expect(throws: MacFileDecodingError.notEncoded(.binHex, "no encoded data follows the BinHex line")) {
            try Self.decode(Array(text[..<start]))
        }
        #expect(
            throws: MacFileDecodingError.notEncoded(.binHex, "no colon opens the encoded data after the BinHex line")
        ) {
            try Self.decode(Array(text[..<start]) + Array("x:".utf8))
        }
        // Cut before the closing colon, inside each part
        #expect(throws: MacFileDecodingError.malformed(.binHex, "no colon closes the encoded data")) {
            try Self.decode(Array(text.dropLast(3)))
        }
        let headerLength = MacFileVectors.binHexHeaderLength(name: "Report")
        let insideResource = Array(Self.stream.prefix(headerLength + Self.data.count + 2 + 30))
        #expect(throws: MacFileDecodingError.truncated(.binHex, .resourceFork)) {
            try Self.decode(MacFileVectors.binHexText(insideResource))
        }
        #expect(throws: MacFileDecodingError.truncated(.binHex, .header)) {
            try Self.decode(Array(text[...(start + 5)]))
        }
        // A closing colon too early
        var early = Array(text[...(start + 40)])
        early.append(UInt8(ascii: ":"))
        #expect(throws: MacFileDecodingError.truncated(.binHex, .dataFork)) { try Self.decode(early) }
        // Bytes after the resource fork's CRC
        #expect(throws: MacFileDecodingError.trailingData(.binHex)) {
            try Self.decode(MacFileVectors.binHexText(Self.stream + [1, 2, 3]))
        }
        // A run with nothing before it to repeat
        #expect(throws: MacFileDecodingError.malformed(.binHex, "a run (0x90) with no byte before it to repeat")) {
            try Self.decode(MacFileVectors.binHexText([0x90, 0x05], runLengthEncode: false))
        }
        #expect(throws: MacFileDecodingError.malformed(.binHex, "a file name of 0 bytes (1 to 63 are allowed)")) {
            try Self.decode(MacFileVectors.binHexText([0x00, 0x01]))
        }
    }

    /// Random damage never crashes, and a text decodes the same in any pieces.
    @Test func damagedTextDecodesTheSameInAnyPieces() {
        var random = SplitMix64(state: 11)
        let text = MacFileVectors.binHexText(Self.stream)
        let alphabet = MacFileVectors.alphabet
        for _ in 0..<2_000 {
            var bytes = text
            for _ in 0..<Int.random(in: 1...4, using: &random) {
                let index = Int.random(in: 0..<bytes.count, using: &random)
                // Mostly characters of the alphabet, so that the damage reaches the CRCs.
                bytes[index] =
                    Bool.random(using: &random)
                    ? alphabet[Int.random(in: 0..<alphabet.count, using: &random)]
                    : UInt8.random(in: 0...255, using: &random)
            }
            bytes = Array(bytes.prefix(Int.random(in: 0...bytes.count, using: &random)))
            let whole = Self.decode(bytes, inPiecesOf: max(1, bytes.count))
            let pieces = Self.decode(bytes, inPiecesOf: Int.random(in: 1...200, using: &random))
            #expect(whole == pieces)
        }
    }
}
