import KeyjarCommands
import Testing

/// What a terminal is shown of text someone else wrote: every control character (C0, DEL, C1)
/// and bidirectional formatting character escaped, everything else as it is.
struct TerminalTextTests {
    @Test func controlsAreShownEscapedAndTheRestAsItIs() {
        #expect(TerminalText.safe("plain ünïcode 🍪 text") == "plain ünïcode 🍪 text")
        #expect(TerminalText.safe("\u{1B}[2J\u{7}") == #"\u{1B}[2J\u{7}"#)
        #expect(TerminalText.safe("a\u{9B}31m\u{7F}b") == #"a\u{9B}31m\u{7F}b"#)
        #expect(
            TerminalText.safe("invoice\u{202E}fdp.exe\u{2066}\u{061C}") == #"invoice\u{202E}fdp.exe\u{2066}\u{61C}"#
        )
        #expect(TerminalText.safe("one\ntwo\r") == #"one\u{A}two\u{D}"#)
        #expect(TerminalText.safe("one\ntwo\r", keepingLineBreaks: true) == "one\ntwo\\u{D}")
        // Every scalar: escaped exactly when it is one of those.
        let wrong = (UInt32(0)...0x10FFFF).compactMap(Unicode.Scalar.init).filter { scalar in
            let value = scalar.value
            let control =
                value < 0x20 || (0x7F...0x9F).contains(value) || [0x061C, 0x200E, 0x200F].contains(value)
                || (0x202A...0x202E).contains(value) || (0x2066...0x2069).contains(value)
            return (TerminalText.safe(String(scalar)) != String(scalar)) != control
        }
        #expect(wrong.isEmpty, "\(wrong.prefix(10).map { String($0.value, radix: 16) })")
    }

    @Test func anExcerptIsCutAndSafe() {
        #expect(TerminalText.excerpt("abcdef", limit: 3) == "abc…")
        #expect(TerminalText.excerpt("a\u{1B}b", limit: 10) == #"a\u{1B}b"#)
    }
}
