import Foundation
import KeyjarCore
import Testing

/// KeyjarCore trims as Foundation's `CharacterSet.whitespaces` and `.whitespacesAndNewlines`
/// do, without Foundation (the `keyjar` front links only FoundationEssentials).
struct StringTrimmingTests {
    @Test func everyScalarIsClassedAsFoundationClassesIt() {
        var differences: [UInt32] = []
        for value in UInt32(0)...0x10FFFF {
            guard let scalar = Unicode.Scalar(value) else { continue }
            if scalar.isHorizontalWhitespace != CharacterSet.whitespaces.contains(scalar)
                || scalar.isWhitespaceOrNewline != CharacterSet.whitespacesAndNewlines.contains(scalar)
            {
                differences.append(value)
            }
        }
        #expect(differences.isEmpty, "differ from Foundation: \(differences.prefix(20).map { String($0, radix: 16) })")
    }

    @Test(arguments: [
        "", " ", "\t", "a", " a ", "\t a b \t", "\u{A0}x\u{3000}", "\n a \n", "\r\na\u{2028}", "\u{85}a\u{2029}",
        " \u{301}a", "é ", "  \u{1F600}  ", "\u{B}x\u{C}",
    ])
    func textIsTrimmedAsFoundationTrimsIt(text: String) {
        #expect(text.trimmingWhitespace() == text.trimmingCharacters(in: .whitespaces))
        #expect(text.trimmingWhitespaceAndNewlines() == text.trimmingCharacters(in: .whitespacesAndNewlines))
        let sub = Substring(text)
        #expect(sub.trimmingWhitespace() == sub.trimmingCharacters(in: .whitespaces))
    }
}
