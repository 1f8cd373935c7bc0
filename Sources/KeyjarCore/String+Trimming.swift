// Trimming as Foundation's `CharacterSet.whitespaces` and `.whitespacesAndNewlines` trim, here
// so that the modules the `keyjar` front links need only FoundationEssentials (which has no
// `CharacterSet`): Foundation's start-up is a millisecond of every `cookie get`
// (docs/performance.md, The command).

extension Unicode.Scalar {
    /// `CharacterSet.whitespaces`: general category Zs, the tab, and U+200B (a space in the
    /// older Unicode tables Foundation's set comes from; a format character now).
    package var isHorizontalWhitespace: Bool {
        value == 0x09 || value == 0x200B || properties.generalCategory == .spaceSeparator
    }

    /// `CharacterSet.whitespacesAndNewlines`: general category Z*, U+0009–U+000D, U+0085 and
    /// U+200B.
    package var isWhitespaceOrNewline: Bool {
        switch value {
        case 0x09...0x0D, 0x85, 0x200B: return true
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

    private func trimming(_ isTrimmed: (Unicode.Scalar) -> Bool) -> String {
        let scalars = unicodeScalars
        guard let first = scalars.firstIndex(where: { !isTrimmed($0) }),
            let last = scalars.lastIndex(where: { !isTrimmed($0) })
        else { return "" }
        var trimmed = String.UnicodeScalarView()
        trimmed.append(contentsOf: scalars[first...last])
        return String(trimmed)
    }
}
