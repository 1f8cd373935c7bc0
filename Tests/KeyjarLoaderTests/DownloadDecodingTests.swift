import Foundation
import FoundationNetworking
import KeyjarTestSupport
import Testing

@testable import KeyjarLoader

/// Downloads of MacBinary and BinHex files (NSURLDownload's `shouldDecodeSourceDataOfMIMEType`):
/// the delegate is asked under every name the documentation gives the format, a yes saves the
/// data fork, a corrupt file fails the download and leaves nothing. BinHex over HTTP from
/// lighttpd (which serves `.hqx` as `application/mac-binhex40`); the other types as `data:` URLs,
/// which go through the same download with the type they name.
@Suite(.timeLimit(hangLimit), .servicesStopCleanly)
final class DownloadDecodingTests {
    let server: DownloadServer
    let directory: String

    init() async throws {
        server = try await DownloadServer()
        directory = NSTemporaryDirectory() + "keyjar-decoding-test-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(atPath: directory) }

    func contents() -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []).sorted()
    }

    func download(_ url: URL, _ delegate: DownloadRecorder) async -> DownloadRecorder {
        _ = ephemeralLoader().download(with: URLRequest(url: url), delegate: delegate, directory: directory)
        #expect(await delegate.wait())
        return delegate
    }

    /// A `data:` URL of `bytes` with the MIME type `type`.
    static func dataURL(_ type: String, _ bytes: [UInt8]) -> URL {
        URL(string: "data:\(type);base64,\(Data(bytes).base64EncodedString())")!
    }

    /// Runs of every length the encodings treat specially, and 0x90 (BinHex's run marker).
    static let dataFork: [UInt8] =
        Array("A data fork with runs: ".utf8) + [UInt8](repeating: 0x41, count: 300)
        + [0x90, 0x90, 0x90, 0x00, 0x90, 0x01, 0x90] + Array("\nthe end\n".utf8)
    static let resourceFork: [UInt8] = [0, 0, 1, 0] + [UInt8](repeating: 0, count: 40) + Array("rsrc".utf8)

    @Test func binHexIsDecodedWhenTheDelegateSaysYesToAnyOfItsNames() async throws {
        let hqx = MacFileVectors.binHex(
            name: "Report",
            data: Self.dataFork,
            resource: Self.resourceFork,
            preamble: "Saved from a mail archive\r\n\r\n"
        )
        try server.put(Data(hqx), as: "report.txt.hqx")
        let url = server.url("/files/report.txt.hqx")

        // A delegate written from the guide's listing says yes to application/binhex only.
        let guide = await download(url, DownloadRecorder(decodeTypes: ["application/binhex"]))
        #expect(guide.asked == ["application/mac-binhex40", "application/binhex"])
        #expect(guide.error == nil)
        // The name is the server's without the encoding's extension; the header's is not used.
        #expect(guide.suggested == ["report.txt"])
        #expect(guide.created == [directory + "/report.txt"])
        #expect(guide.events.last == "finish")
        #expect(FileManager.default.contents(atPath: directory + "/report.txt") == Data(Self.dataFork))

        // One written from the reference says yes to the first name it is asked.
        let reference = await download(url, DownloadRecorder(decodeTypes: ["application/mac-binhex40"]))
        #expect(reference.asked == ["application/mac-binhex40"])
        #expect(FileManager.default.contents(atPath: directory + "/report-1.txt") == Data(Self.dataFork))

        // No to every name: the file is saved as it came.
        let raw = await download(url, DownloadRecorder())
        #expect(raw.asked == ["application/mac-binhex40", "application/binhex"])
        #expect(FileManager.default.contents(atPath: directory + "/report.txt.hqx") == Data(hqx))
        #expect(contents() == ["report-1.txt", "report.txt", "report.txt.hqx"])
    }

    /// A type a server may send, and the names the delegate is asked with, in order: the type
    /// itself, then each name the documentation gives its format; none for other types.
    static let askedNames: [(String, [String])] = [
        ("application/macbinary", ["application/macbinary", "application/x-macbinary"]),
        ("application/x-macbinary", ["application/x-macbinary", "application/macbinary"]),
        ("application/mac-binhex40", ["application/mac-binhex40", "application/binhex"]),
        ("application/binhex", ["application/binhex", "application/mac-binhex40"]),
        ("application/x-binhex40", ["application/x-binhex40", "application/mac-binhex40", "application/binhex"]),
        ("application/gzip", ["application/gzip", "application/x-gzip"]),
        ("application/x-gzip", ["application/x-gzip", "application/gzip"]),
        ("application/x-gunzip", ["application/x-gunzip", "application/gzip", "application/x-gzip"]),
        // Not encodings NSURLDownload decodes: nobody is asked.
        ("application/x-stuffit", []),
        ("application/octet-stream", []),
    ]

    @Test(arguments: DownloadDecodingTests.askedNames)
    func everyNameOfTheFormatIsAsked(_ type: String, _ names: [String]) async throws {
        let bytes = Array("not decoded\n".utf8)
        let declining = DownloadRecorder(destination: (directory + "/saved", false))
        let recorded = await download(Self.dataURL(type, bytes), declining)
        #expect(recorded.asked == names)
        #expect(recorded.error == nil)
        #expect(FileManager.default.contents(atPath: directory + "/saved") == Data(bytes))
    }

    @Test(arguments: [1, 2, 3])
    func macBinaryIsDecodedToItsDataFork(_ version: Int) async throws {
        let file = MacFileVectors.macBinary(
            version: version,
            name: "Read Me",
            data: Self.dataFork,
            resource: Self.resourceFork,
            comment: version >= 2 ? Array("a comment".utf8) : []
        )
        // Answering yes to the last name asked: every one before it was a no.
        let decoding = DownloadRecorder(
            decodeTypes: ["application/macbinary"],
            destination: (directory + "/out", false)
        )
        let recorded = await download(Self.dataURL("application/x-macbinary", file), decoding)
        #expect(recorded.asked == ["application/x-macbinary", "application/macbinary"])
        #expect(recorded.error == nil)
        #expect(recorded.events.last == "finish")
        #expect(FileManager.default.contents(atPath: directory + "/out") == Data(Self.dataFork))
        #expect(contents() == ["out"])
    }

    @Test func aCorruptFileFailsTheDownloadAndLeavesNothing() async throws {
        // A BinHex file whose data fork was damaged after its CRC was computed
        var stream = MacFileVectors.binHexStream(name: "Report", data: Self.dataFork, resource: Self.resourceFork)
        stream[MacFileVectors.binHexHeaderLength(name: "Report") + 5] ^= 0x20
        try server.put(Data(MacFileVectors.binHexText(stream)), as: "damaged.hqx")
        let damaged = await download(server.url("/files/damaged.hqx"), DownloadRecorder(decode: true))
        #expect(damaged.error?.code == .cannotDecodeContentData)
        #expect(damaged.error?.localizedDescription.contains("BinHex") == true)
        #expect(damaged.error?.localizedDescription.contains("data fork") == true)
        #expect(damaged.events.last == "fail \(URLError.Code.cannotDecodeContentData.rawValue)")
        #expect(contents().isEmpty)

        // A MacBinary file cut short in its data fork
        let whole = MacFileVectors.macBinary(version: 2, name: "Cut", data: Self.dataFork, resource: [])
        let cut = DownloadRecorder(decode: true, destination: (directory + "/cut", false))
        let truncated = await download(Self.dataURL("application/macbinary", Array(whole.prefix(200))), cut)
        #expect(truncated.error?.code == .cannotDecodeContentData)
        #expect(truncated.error?.localizedDescription.contains("MacBinary") == true)
        #expect(truncated.error?.localizedDescription.contains("ends inside its data fork") == true)
        #expect(contents().isEmpty)
    }
}

/// MacBinary and BinHex 4.0 files built from the formats' definitions, their CRCs computed bit
/// by bit here (CRC-16/XMODEM: polynomial 0x1021, initial 0), not by the code under test.
enum MacFileVectors {
    static func crc16(_ bytes: some Sequence<UInt8>) -> UInt16 {
        var crc: UInt16 = 0
        for byte in bytes {
            crc ^= UInt16(byte) << 8
            for _ in 0..<8 { crc = crc & 0x8000 != 0 ? (crc << 1) ^ 0x1021 : crc << 1 }
        }
        return crc
    }

    static func bigEndian16(_ value: Int) -> [UInt8] { [UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)] }
    static func bigEndian32(_ value: Int) -> [UInt8] { bigEndian16(value >> 16) + bigEndian16(value & 0xFFFF) }

    /// `bytes` padded with zeros to a multiple of 128 (MacBinary's blocks).
    static func padded(_ bytes: [UInt8]) -> [UInt8] {
        bytes + [UInt8](repeating: 0, count: (128 - bytes.count % 128) % 128)
    }

    /// A MacBinary file: the 128-byte header (II and III: with their fields and the CRC of its
    /// first 124 bytes; III: the `mBIN` signature), then the secondary header, data fork,
    /// resource fork and Get Info comment, each padded to 128 bytes.
    static func macBinary(
        version: Int,
        name: String,
        type: String = "TEXT",
        creator: String = "ttxt",
        data: [UInt8],
        resource: [UInt8],
        comment: [UInt8] = [],
        secondaryHeader: [UInt8] = []
    ) -> [UInt8] {
        var header = [UInt8](repeating: 0, count: 128)
        let nameBytes = Array(name.utf8)
        header[1] = UInt8(nameBytes.count)
        header.replaceSubrange(2..<(2 + nameBytes.count), with: nameBytes)
        header.replaceSubrange(65..<69, with: Array(type.utf8))
        header.replaceSubrange(69..<73, with: Array(creator.utf8))
        header[73] = 0x01  // Finder flags (high byte): any value
        header.replaceSubrange(83..<87, with: bigEndian32(data.count))
        header.replaceSubrange(87..<91, with: bigEndian32(resource.count))
        header.replaceSubrange(91..<95, with: bigEndian32(0xB0A0_0000))  // created
        header.replaceSubrange(95..<99, with: bigEndian32(0xB0A0_0001))  // modified
        if version >= 2 {
            header.replaceSubrange(99..<101, with: bigEndian16(comment.count))
            header.replaceSubrange(120..<122, with: bigEndian16(secondaryHeader.count))
            header[122] = version == 3 ? 130 : 129
            header[123] = 129
            if version == 3 { header.replaceSubrange(102..<106, with: Array("mBIN".utf8)) }
            header.replaceSubrange(124..<126, with: bigEndian16(Int(crc16(header[0..<124]))))
        }
        return header + padded(secondaryHeader) + padded(data) + padded(resource) + padded(comment)
    }

    /// Bytes in BinHex's header for a file called `name`, its CRC included.
    static func binHexHeaderLength(name: String) -> Int { 1 + name.utf8.count + 1 + 4 + 4 + 2 + 4 + 4 + 2 }

    /// BinHex's binary stream (before run-length encoding): the header (name length, name, a
    /// version byte of 0, type, creator, Finder flags, the forks' lengths) and its CRC, the data
    /// fork and its CRC, the resource fork and its CRC.
    static func binHexStream(
        name: String,
        type: String = "TEXT",
        creator: String = "ttxt",
        data: [UInt8],
        resource: [UInt8]
    ) -> [UInt8] {
        let nameBytes = Array(name.utf8)
        var header = [UInt8(nameBytes.count)] + nameBytes + [0] + Array(type.utf8) + Array(creator.utf8)
        header += [0x01, 0x00] + bigEndian32(data.count) + bigEndian32(resource.count)
        header += bigEndian16(Int(crc16(header)))
        return header + data + bigEndian16(Int(crc16(data))) + resource + bigEndian16(Int(crc16(resource)))
    }

    /// BinHex's run-length encoding: a run of 3 to 255 equal bytes is the byte, 0x90 and the
    /// count; 0x90 itself is 0x90 0x00.
    static func runLengthEncoded(_ bytes: [UInt8]) -> [UInt8] {
        var encoded: [UInt8] = []
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            var run = 1
            while index + run < bytes.count, bytes[index + run] == byte, run < 255 { run += 1 }
            encoded += byte == 0x90 ? [0x90, 0x00] : [byte]
            if run >= 3 {
                encoded += [0x90, UInt8(run)]
                index += run
            } else {
                index += 1
            }
        }
        return encoded
    }

    static let alphabet = Array("!\"#$%&'()*+,-012345689@ABCDEFGHIJKLMNPQRSTUVXYZ[`abcdefhijklmpqr".utf8)

    /// Six bits a character of BinHex's alphabet; the last one's unused bits are zeros.
    static func sixBitEncoded(_ bytes: [UInt8]) -> [UInt8] {
        var characters: [UInt8] = []
        var accumulator: UInt32 = 0
        var bits = 0
        for byte in bytes {
            accumulator = accumulator << 8 | UInt32(byte)
            bits += 8
            while bits >= 6 {
                bits -= 6
                characters.append(alphabet[Int(accumulator >> UInt32(bits) & 0x3F)])
            }
            accumulator &= (1 << UInt32(bits)) - 1
        }
        if bits > 0 { characters.append(alphabet[Int(accumulator << UInt32(6 - bits) & 0x3F)]) }
        return characters
    }

    /// The text of a BinHex file carrying `stream` (run-length encoded here): any preamble, the
    /// line that names the format, then the characters between colons in lines of 64.
    static func binHexText(_ stream: [UInt8], preamble: String = "", runLengthEncode: Bool = true) -> [UInt8] {
        let characters =
            [UInt8(ascii: ":")] + sixBitEncoded(runLengthEncode ? runLengthEncoded(stream) : stream) + [
                UInt8(ascii: ":")
            ]
        var text = Array((preamble + "(This file must be converted with BinHex 4.0)\r\n").utf8)
        for start in stride(from: 0, to: characters.count, by: 64) {
            text += characters[start..<min(start + 64, characters.count)] + Array("\r\n".utf8)
        }
        return text
    }

    static func binHex(
        name: String,
        data: [UInt8],
        resource: [UInt8],
        preamble: String = ""
    ) -> [UInt8] {
        binHexText(binHexStream(name: name, data: data, resource: resource), preamble: preamble)
    }
}
