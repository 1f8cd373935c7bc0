import KeyjarTestSupport
import Testing

@testable import KeyjarLoader

/// MacBinary I, II and III files built from the format's definition (`MacFileVectors`): the data
/// fork comes out whatever the pieces the file arrives in; damage and truncation are refused
/// with the reason.
struct MacBinaryDecoderTests {
    static let data = Array("The data fork.\n".utf8) + [UInt8](repeating: 0xAB, count: 200)
    static let resource = [UInt8](repeating: 0x5A, count: 130)

    static func decode(_ bytes: [UInt8]) throws(MacFileDecodingError) -> (header: MacFileHeader, dataFork: [UInt8]) {
        var decoder = MacBinaryDecoder()
        return try decoder.decode(bytes)
    }

    /// The same input fed in pieces of `size`.
    static func decode(_ bytes: [UInt8], inPiecesOf size: Int) -> Result<[UInt8], MacFileDecodingError> {
        var decoder = MacBinaryDecoder()
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

    @Test func theChecksumIsCRC16XMODEM() {
        // The catalogued check value of CRC-16/XMODEM, and the vectors' own bitwise CRC agrees.
        var crc = CRC16XMODEM()
        crc.update(Array("123456789".utf8))
        #expect(crc.value == 0x31C3)
        #expect(MacFileVectors.crc16(Array("123456789".utf8)) == 0x31C3)
    }

    @Test(arguments: [1, 2, 3])
    func eachVersionGivesItsDataForkAndHeader(_ version: Int) throws {
        let file = MacFileVectors.macBinary(
            version: version,
            name: "Read Me",
            type: "TEXT",
            creator: "ttxt",
            data: Self.data,
            resource: Self.resource,
            comment: version >= 2 ? Array("a Get Info comment".utf8) : [],
            secondaryHeader: version >= 2 ? [1, 2, 3] : []
        )
        var decoder = MacBinaryDecoder()
        let decoded = try decoder.decode(file)
        #expect(decoded.dataFork == Self.data)
        #expect(decoder.version == version)
        #expect(decoded.header.name == Array("Read Me".utf8))
        #expect(decoded.header.type == 0x5445_5854)  // TEXT
        #expect(decoded.header.creator == 0x7474_7874)  // ttxt
        #expect(decoded.header.dataLength == UInt32(Self.data.count))
        #expect(decoded.header.resourceLength == UInt32(Self.resource.count))
        for size in [1, 7, 128, 129, 4096] {
            #expect(Self.decode(file, inPiecesOf: size) == .success(Self.data), "pieces of \(size)")
        }
    }

    @Test func emptyForksAndAMissingLastPaddingAreFine() throws {
        let empty = MacFileVectors.macBinary(version: 2, name: "Empty", data: [], resource: [])
        #expect(empty.count == 128)
        #expect(try Self.decode(empty).dataFork.isEmpty)
        // A resource-only file (an application, say) has an empty data fork.
        let resourceOnly = MacFileVectors.macBinary(version: 3, name: "App", data: [], resource: Self.resource)
        #expect(try Self.decode(resourceOnly).dataFork.isEmpty)
        // Writers that leave the last fork unpadded
        let unpadded = MacFileVectors.macBinary(version: 2, name: "Short", data: Self.data, resource: [])
        #expect(try Self.decode(Array(unpadded.prefix(128 + Self.data.count))).dataFork == Self.data)
    }

    @Test func damageAndTruncationAreRefusedWithTheReason() {
        let file = MacFileVectors.macBinary(version: 2, name: "Report", data: Self.data, resource: Self.resource)
        // A header byte changed after its CRC was computed
        var damaged = file
        damaged[3] ^= 0x01
        let stored = UInt16(file[124]) << 8 | UInt16(file[125])
        #expect(
            throws: MacFileDecodingError.checksumMismatch(
                .macBinary,
                .header,
                stored: stored,
                computed: MacFileVectors.crc16(damaged[0..<124])
            )
        ) { try Self.decode(damaged) }
        // Cut inside each part
        #expect(throws: MacFileDecodingError.truncated(.macBinary, .header)) {
            try Self.decode(Array(file.prefix(100)))
        }
        #expect(throws: MacFileDecodingError.truncated(.macBinary, .dataFork)) {
            try Self.decode(Array(file.prefix(200)))
        }
        // (The resource fork starts after the header and the data fork padded to 256 bytes.)
        #expect(throws: MacFileDecodingError.truncated(.macBinary, .resourceFork)) {
            try Self.decode(Array(file.prefix(128 + 256 + 50)))
        }
        let commented = MacFileVectors.macBinary(
            version: 2,
            name: "C",
            data: [],
            resource: [],
            comment: Array("comment".utf8)
        )
        #expect(throws: MacFileDecodingError.truncated(.macBinary, .comment)) {
            try Self.decode(Array(commented.prefix(130)))
        }
        // More than the header announced
        #expect(throws: MacFileDecodingError.trailingData(.macBinary)) { try Self.decode(file + [0]) }
        #expect(throws: MacFileDecodingError.notEncoded(.macBinary, "the file is empty")) { try Self.decode([]) }
    }

    @Test func aHeaderThatIsNotMacBinaryIsRefused() {
        let file = MacFileVectors.macBinary(version: 1, name: "Old", data: Self.data, resource: [])
        var text = file
        text[0] = UInt8(ascii: "H")
        #expect(throws: MacFileDecodingError.notEncoded(.macBinary, "bytes 0, 74 and 82 of its header are not zero")) {
            try Self.decode(text)
        }
        for length in [0, 64] {
            var named = file
            named[1] = UInt8(length)
            #expect(
                throws: MacFileDecodingError.malformed(
                    .macBinary,
                    "a file name of \(length) bytes (1 to 63 are allowed)"
                )
            ) { try Self.decode(named) }
        }
        // MacBinary I cannot hold a fork of more than 8 MiB: such a header is not one.
        var huge = file
        huge.replaceSubrange(83..<87, with: MacFileVectors.bigEndian32(0x80_0000))
        #expect(throws: MacFileDecodingError.malformed(.macBinary, "a fork of more than 8 MiB in a MacBinary I header"))
        {
            try Self.decode(huge)
        }
        // A MacBinary II header that asks for a newer reader
        var newer = MacFileVectors.macBinary(version: 2, name: "New", data: [], resource: [])
        newer[123] = 131
        newer.replaceSubrange(124..<126, with: MacFileVectors.bigEndian16(Int(MacFileVectors.crc16(newer[0..<124]))))
        #expect(
            throws: MacFileDecodingError.malformed(
                .macBinary,
                "it needs a reader newer than MacBinary III (version byte 131)"
            )
        ) { try Self.decode(newer) }
    }

    /// Random damage never crashes, and a file decodes the same in any pieces.
    @Test func damagedFilesDecodeTheSameInAnyPieces() {
        var random = SplitMix64(state: 7)
        let file = MacFileVectors.macBinary(version: 3, name: "Fuzz", data: Self.data, resource: Self.resource)
        for _ in 0..<2_000 {
            var bytes = file
            for _ in 0..<Int.random(in: 1...4, using: &random) {
                bytes[Int.random(in: 0..<bytes.count, using: &random)] = UInt8.random(in: 0...255, using: &random)
            }
            bytes = Array(bytes.prefix(Int.random(in: 0...bytes.count, using: &random)))
            let whole = Self.decode(bytes, inPiecesOf: max(1, bytes.count))
            let pieces = Self.decode(bytes, inPiecesOf: Int.random(in: 1...300, using: &random))
            #expect(whole == pieces)
            if case .success(let dataFork) = whole { #expect(dataFork.count <= bytes.count) }
        }
    }
}
