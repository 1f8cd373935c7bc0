// Trimming as Foundation's `CharacterSet.whitespaces` and `.whitespacesAndNewlines` trim, here
// so that the modules the `keyjar` front links need only FoundationEssentials (which has no
// `CharacterSet`): Foundation's start-up is a millisecond of every `cookie get`
// (docs/performance.md, The command).

extension Unicode.Scalar {
    /// `CharacterSet.whitespaces`: general category Zs, the tab, and U+200B (a space in the
    /// older Unicode tables Foundation's set comes from; a format character now).
    package var isHorizontalWhitespace: Bool {
        // ASCII without the Unicode tables: the text trimmed is nearly always ASCII.
        if value < 0x80 { return value == 0x20 || value == 0x09 }
        return value == 0x200B || properties.generalCategory == .spaceSeparator
    }

    /// `CharacterSet.whitespacesAndNewlines`: general category Z*, U+0009–U+000D, U+0085 and
    /// U+200B.
    package var isWhitespaceOrNewline: Bool {
        switch value {
        case 0x09...0x0D, 0x20, 0x85, 0x200B: return true
        case 0..<0x80: return false
        default:
            switch properties.generalCategory {
            case .spaceSeparator, .lineSeparator, .paragraphSeparator: return true
            default: return false
            }
        }
    }
}

extension StringProtocol {
    /// The text without leading and trailing spaces and tabs (`CharacterSet.whitespaces`).
    package func trimmingWhitespace() -> String { trimming(\.isHorizontalWhitespace) }

    /// The text without leading and trailing white space and line breaks
    /// (`CharacterSet.whitespacesAndNewlines`).
    package func trimmingWhitespaceAndNewlines() -> String { trimming(\.isWhitespaceOrNewline) }

    /// The text between the first and the last scalar that `isTrimmed` keeps, sliced rather
    /// than rebuilt scalar by scalar.
    private func trimming(_ isTrimmed: (Unicode.Scalar) -> Bool) -> String {
        let scalars = unicodeScalars
        var start = scalars.startIndex
        var end = scalars.endIndex
        while start < end, isTrimmed(scalars[start]) { start = scalars.index(after: start) }
        while start < end {
            let last = scalars.index(before: end)
            guard isTrimmed(scalars[last]) else { break }
            end = last
        }
        return String(self[start..<end])
    }
}
