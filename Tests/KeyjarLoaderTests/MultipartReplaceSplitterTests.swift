import Foundation
import KeyjarTestSupport
import Testing

@testable import KeyjarLoader

@Suite("multipart/x-mixed-replace splitting")
struct MultipartReplaceSplitterTests {
    static let body = Data(
        "preamble\r\n--b\r\nContent-Type: text/a\r\n\r\nfirst\r\n--b\r\nContent-Type: text/b\r\n\r\nsecond part\r\n--b--\r\nepilogue"
            .utf8
    )

    /// Parts and their bodies, whatever the chunking.
    private func split(_ chunks: [Data]) -> [(type: String?, body: String)] {
        guard var splitter = MultipartReplaceSplitter(contentType: "multipart/x-mixed-replace; boundary=\"b\"") else {
            return []
        }
        var parts: [(type: String?, body: String)] = []
        for chunk in chunks {
            for piece in splitter.feed(chunk) {
                switch piece {
                case .part(let fields): parts.append((fields["Content-Type"], ""))
                case .data(let data): parts[parts.count - 1].body += String(decoding: data, as: UTF8.self)
                case .failed(let reason): parts.append(("failed", reason))
                }
            }
        }
        return parts
    }

    @Test func wholeAndByteByByteGiveTheSameParts() {
        let whole = split([Self.body])
        #expect(whole.map(\.type) == ["text/a", "text/b"])
        #expect(whole.map(\.body) == ["first", "second part"])
        let bytes = split(Self.body.map { Data([$0]) })
        #expect(bytes.map(\.type) == whole.map(\.type))
        #expect(bytes.map(\.body) == whole.map(\.body))
    }

    @Test func everyChunkingGivesTheSameParts() {
        // Seeded: a failing chunking is the same on every run.
        var generator = SplitMix64(state: 42)
        for _ in 0..<200 {
            var chunks: [Data] = []
            var index = 0
            while index < Self.body.count {
                let length = Int.random(in: 1...9, using: &generator)
                chunks.append(Self.body.subdata(in: index..<min(index + length, Self.body.count)))
                index += length
            }
            #expect(split(chunks).map(\.body) == ["first", "second part"])
        }
    }

    @Test func otherContentTypesAreNotSplit() {
        #expect(MultipartReplaceSplitter(contentType: "text/html") == nil)
        #expect(MultipartReplaceSplitter(contentType: "multipart/x-mixed-replace") == nil)
        // RFC 2046: a boundary has at most 70 characters.
        let long = String(repeating: "b", count: 71)
        #expect(MultipartReplaceSplitter(contentType: "multipart/x-mixed-replace; boundary=\(long)") == nil)
    }

    /// A server cannot make the splitter hold more than its bounds: a header block that never
    /// ends (fed a byte at a time, each byte searched once), too many fields, a delimiter's
    /// line that never ends.
    @Test func whatAPartHoldsIsBounded() {
        let endless = Data("--b\r\nX-Field: ".utf8) + Data(repeating: UInt8(ascii: "x"), count: 70_000)
        let bytewise = split(endless.map { Data([$0]) })
        #expect(bytewise.last?.type == "failed" && bytewise.last?.body.contains("over 64 KiB") == true, "\(bytewise)")
        let fields = (0...100).map { "X-\($0): v" }.joined(separator: "\r\n")
        let many = split([Data("--b\r\n\(fields)\r\n\r\nbody".utf8)])
        #expect(many.last?.body.contains("more than 100 header fields") == true, "\(many)")
        let line = split([Data("--b".utf8) + Data(repeating: UInt8(ascii: " "), count: 2_000)])
        #expect(line.last?.body.contains("delimiter's line") == true, "\(line)")
        // At the bounds: taken.
        let hundred = (0..<99).map { "X-\($0): v" }.joined(separator: "\r\n")
        #expect(split([Data("--b\r\n\(hundred)\r\n\r\nbody\r\n--b--".utf8)]).map(\.body) == ["body"])
    }
}
