import Foundation
import KeyjarCodec
import KeyjarCore
import KeyjarTestSupport
import Testing

/// The byte-level decimal conversion must give exactly what `Double(String)` gives, bit for
/// bit, wherever it answers, and must leave every other form to it.
struct DecimalDoubleTests {
    static func parse(_ text: String) -> Double? {
        Array(text.utf8).withUnsafeBufferPointer(DecimalDouble.parse)
    }

    /// Checks the fast path's answer, when it gives one; returns whether it did.
    @discardableResult
    static func expectSameAsFoundation(_ text: String, sourceLocation: SourceLocation = #_sourceLocation) -> Bool {
        let reference = Double(text)
        guard let fast = Self.parse(text) else { return false }
        #expect(
            fast.bitPattern == reference?.bitPattern,
            "\(text): \(fast) against \(String(describing: reference))",
            sourceLocation: sourceLocation
        )
        return true
    }

    @Test func timestampsAsKeyjardWritesThemConvertExactly() {
        var random = SplitMix64(state: 7)
        var answered = 0
        for _ in 0..<200_000 {
            // Times around now, to the sub-microsecond, and across the whole range of dates.
            let seconds = Double.random(in: 1.7e9...1.9e9, using: &random)
            let text = "\(seconds)"
            Self.expectSameAsFoundation(text)
            if Self.parse(text) != nil { answered += 1 }
            Self.expectSameAsFoundation("\(Double.random(in: 0...4e10, using: &random))")
        }
        // The point of the fast path: it answers for (nearly) every timestamp, 17 digits too.
        #expect(answered == 200_000)
    }

    @Test func randomDecimalsOfUpToNineteenDigitsConvertExactly() {
        var random = SplitMix64(state: 11)
        for _ in 0..<300_000 {
            let digitCount = Int.random(in: 1...21, using: &random)
            var digits = (0..<digitCount).map { _ in Character(String(Int.random(in: 0...9, using: &random))) }
            if digits.count > 1, digits[0] == "0", Bool.random(using: &random) { digits[0] = "7" }
            var text = String(digits)
            if Bool.random(using: &random) {
                let point = Int.random(in: 1...text.count, using: &random)
                if point < text.count { text.insert(".", at: text.index(text.startIndex, offsetBy: point)) }
            }
            if Bool.random(using: &random) { text = "-" + text }
            // The handled form: at most 19 significant digits (leading zeros do not count) and
            // 19 after the point. Those must be answered (and rightly); the rest left alone.
            let significant = text.drop { $0 == "-" || $0 == "0" || $0 == "." }.filter(\.isNumber).count
            let fraction = text.firstIndex(of: ".").map { text[$0...].dropFirst().count } ?? 0
            let handled = significant <= 19 && fraction <= 19
            #expect(Self.expectSameAsFoundation(text) == handled, "\(text)")
        }
    }

    @Test func halfwayCasesRoundToEven() {
        // Between 2^53 and 2^64 consecutive doubles are 2 or more apart, so odd integers there
        // include exact midpoints: the rounding rule decides.
        var random = SplitMix64(state: 3)
        for _ in 0..<100_000 {
            let integer = UInt64.random(in: (UInt64(1) << 53)...9_999_999_999_999_999_999, using: &random)
            #expect(Self.expectSameAsFoundation(String(integer)))
            #expect(Self.expectSameAsFoundation(String(integer | 1)))
        }
        #expect(Self.parse("9007199254740993") == 9_007_199_254_740_992)
        #expect(Self.parse("9007199254740995") == 9_007_199_254_740_996)
        #expect(Self.parse("9007199254740993.01") == 9_007_199_254_740_994)
        #expect(Self.parse("9007199254740993.0000000001") == nil)  // 26 digits: left to Foundation
        #expect(Self.parse("0.1") == 0.1)
        #expect(Self.parse("1795454576.3484323") == 1_795_454_576.3484323)
    }

    @Test func zeroKeepsItsSign() throws {
        #expect(try #require(Self.parse("-0")).sign == .minus)
        #expect(try #require(Self.parse("0.000")).bitPattern == 0)
    }

    @Test func otherFormsAreLeftToFoundation() {
        for text in [
            "", "-", ".", "1.", ".5", "1e5", "1E-3", "1.5e2", "12345678901234567890", "0.00000000000000000001",
            "1.2.3", "--1", "+1", " 1", "1 ", "0x10", "inf", "nan", "1_000",
        ] {
            #expect(Self.parse(text) == nil, "\(text)")
        }
    }

    @Test func theKnownLayoutReaderReadsNumbersAsTheTreeDoes() {
        var random = SplitMix64(state: 5)
        var texts = [
            "0", "-0", "1e400", "-1e400", "1.5E-3", "12345678901234567890123", "18446744073709551615",
            "18446744073709551616", "-3", "-00", "-0.0", "0.0", "1795454576.3484323",
        ]
        for _ in 0..<2_000 { texts.append("\(Double.random(in: -1e12...1e12, using: &random))") }
        for text in texts {
            let tree = JSONReader.parse(Array(text.utf8))
            Array(text.utf8).withUnsafeBufferPointer { bytes in
                // Input left over (as after the "-0" of "-00") fails the layout's next step, and
                // the tree refuses the whole text.
                var reader = JSONReader(bytes: bytes)
                let double: Double? = reader.readDouble().flatMap { reader.isAtEnd ? $0 : nil }
                #expect(double?.bitPattern == tree?.double?.bitPattern, "\(text)")
                var again = JSONReader(bytes: bytes)
                let integer: UInt64? = again.readUInt64().flatMap { again.isAtEnd ? $0 : nil }
                // What the layout reads, the tree reads the same (the tree also takes `1e2`).
                #expect(integer == nil || integer == tree.flatMap { try? $0.decodeUInt64() }, "\(text)")
            }
        }
    }
}
