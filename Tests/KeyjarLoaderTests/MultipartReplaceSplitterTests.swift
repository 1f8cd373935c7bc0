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
    }
}
