/// Why part of a `WWW-Authenticate` / `Proxy-Authenticate` field was skipped. The parser goes on
/// after each one, so a single bad challenge never hides the good ones beside it.
public struct ChallengeDiagnostic: Sendable, Hashable, CustomStringConvertible {
    public enum Kind: Sendable, Hashable {
        /// A list element does not start with an auth-scheme token.
        case expectedScheme
        /// The scheme is followed by something other than a space, a comma or the end.
        case missingSpaceAfterScheme
        /// A parameter is not `name = token` or `name = "quoted string"`.
        case malformedParameter
        /// A quoted string runs to the end of the field.
        case unterminatedQuotedString
        /// A control character (other than HTAB) inside a quoted string.
        case controlCharacter
        /// The parameter was already given in this challenge; the first value is kept
        /// (RFC 9110 §11.2: each name occurs at most once).
        case duplicateParameter(name: String)
        /// Something follows a parameter value or a token68 before the next comma.
        case unexpectedCharacter
    }

    public var kind: Kind
    /// Which of the field values passed to the parser (0-based).
    public var field: Int
    /// Byte offset in that field value.
    public var offset: Int

    public init(kind: Kind, field: Int, offset: Int) {
        self.kind = kind
        self.field = field
        self.offset = offset
    }

    public var description: String {
        let what: String
        switch kind {
        case .expectedScheme: what = "expected an authentication scheme"
        case .missingSpaceAfterScheme: what = "the scheme is not followed by a space"
        case .malformedParameter: what = "malformed parameter"
        case .unterminatedQuotedString: what = "unterminated quoted string"
        case .controlCharacter: what = "control character in a quoted string"
        case .duplicateParameter(let name): what = "duplicate parameter '\(name)' ignored"
        case .unexpectedCharacter: what = "unexpected character"
        }
        return "field \(field), byte \(offset): \(what)"
    }
}

/// No challenge could be read from any of the field values; `diagnostics` says why (it is empty
/// when the fields held nothing but whitespace and commas).
public struct ChallengeParseError: Error, Sendable, Hashable, CustomStringConvertible {
    public var diagnostics: [ChallengeDiagnostic]

    public init(diagnostics: [ChallengeDiagnostic]) { self.diagnostics = diagnostics }

    public var description: String {
        diagnostics.isEmpty
            ? "no authentication challenge in the header"
            : "no authentication challenge in the header: "
                + diagnostics.map(\.description).joined(separator: "; ")
    }
}
