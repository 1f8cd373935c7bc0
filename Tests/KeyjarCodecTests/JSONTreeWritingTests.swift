import Foundation
import KeyjarCodec
import Testing

/// The tree writer: compact text the reader gives back unchanged, and the readable layout the
/// command's `--json` and the secrets file promised while Foundation's JSONEncoder wrote them.
struct JSONTreeWritingTests {
    private struct Sample: Encodable {
        var name = "a/b \"quoted\" \\ \u{1} é"
        var count = 42
        var ratio = 0.1
        var whole = 3.0
        var large: UInt64 = .max
        var flag = true
        var absent: String? = nil
        var list = [1, 2]
        var nested = ["zeta": 1, "Beta": 2, "alpha": 3]
        var objects = [["b": "2", "a": "1"]]
    }

    private var sampleTree: JSONValue {
        let sample = Sample()
        return .object(omittingAbsent: [
            "name": .string(sample.name), "count": .integer(sample.count), "ratio": .number(of: sample.ratio),
            "whole": .number(of: sample.whole), "large": .integer(sample.large), "flag": .bool(sample.flag),
            "absent": sample.absent.map(JSONValue.string), "list": .array(sample.list.map(JSONValue.integer)),
            "nested": .object(sample.nested.map { ($0.key, .integer($0.value)) }),
            "objects": .array(sample.objects.map { .object($0.map { ($0.key, .string($0.value)) }) }),
        ])
    }

    @Test func theReadableLayoutIsFoundationsPrettySortedLayout() throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        let foundation = String(decoding: try encoder.encode(Sample()), as: UTF8.self)
        #expect(String(decoding: sampleTree.encoded(.readable), as: UTF8.self) == foundation)
    }

    @Test func compactTextReadsBackAsTheSameTreeInItsOrder() throws {
        let text = sampleTree.encoded()
        #expect(!text.contains(UInt8(ascii: "\n")))
        let parsed = try #require(JSONReader.parse(text))
        #expect(parsed.encoded() == text)
        #expect(try parsed.members().map(\.key) == (try sampleTree.members().map(\.key)))
        #expect(try parsed.string("name") == Sample().name)
        #expect(try parsed.integer("large", as: UInt64.self) == .max)
        #expect(try parsed.double("ratio") == 0.1)
        #expect(try parsed.optionalMember("absent") == nil)
    }

    @Test func emptyContainersAreWrittenClosed() {
        let tree = JSONValue.object([("list", .array([])), ("map", .object([]))])
        #expect(String(decoding: tree.encoded(.readable), as: UTF8.self) == "{\n  \"list\" : [],\n  \"map\" : {}\n}")
        #expect(String(decoding: tree.encoded(), as: UTF8.self) == #"{"list":[],"map":{}}"#)
    }

    @Test func numbersAreWrittenExactlyAndNonFiniteOnesAsZero() {
        #expect(JSONValue.number(of: 3).encoded() == Array("3".utf8))
        #expect(JSONValue.number(of: -2.5).encoded() == Array("-2.5".utf8))
        #expect(JSONValue.number(of: 1e300).encoded() == Array("1e+300".utf8))
        #expect(JSONValue.number(of: .nan).encoded() == Array("0".utf8))
        #expect(JSONValue.integer(Int64.min).encoded() == Array("-9223372036854775808".utf8))
        #expect(JSONValue.string(orNull: nil).encoded() == Array("null".utf8))
    }
}
