/// Reads the challenges of `WWW-Authenticate` and `Proxy-Authenticate` fields (RFC 9110
/// §11.6.1, §11.2):
///
///     challenge  = auth-scheme [ 1*SP ( token68 / #auth-param ) ]
///     auth-param = token BWS "=" BWS ( token / quoted-string )
///
/// Challenges and their parameters are both comma-separated, so after a comma the parser looks
/// ahead: `token BWS "="` continues the current challenge, any other token starts a new one.
/// Empty list elements are skipped (§5.6.1). A malformed piece is skipped up to the next comma
/// outside quotes with a ``ChallengeDiagnostic``; parsing always terminates, every step
/// consuming at least one byte.
///
/// ```swift
/// let result = ChallengeParser.parse(["Newauth realm=\"apps\", type=1, title=\"Login to \\\"apps\\\"\", Basic realm=\"simple\""])
/// result.challenges.map(\.scheme)   // ["Newauth", "Basic"]
/// ```
public enum ChallengeParser {
    /// Every challenge and every skipped piece, in field order.
    public struct Result: Sendable, Hashable {
        public var challenges: [AuthenticationChallenge]
        public var diagnostics: [ChallengeDiagnostic]
    }

    /// Parses the values of all the fields of one response (several `WWW-Authenticate` lines
    /// are one list, RFC 9110 §5.3). Never fails; see ``challenges(in:)`` for a throwing form.
    public static func parse(_ fieldValues: [String]) -> Result {
        var result = Result(challenges: [], diagnostics: [])
        for (index, value) in fieldValues.enumerated() {
            var parser = FieldParser(bytes: Array(value.utf8), field: index)
            parser.parse()
            result.challenges += parser.challenges
            result.diagnostics += parser.diagnostics
        }
        return result
    }

    /// The challenges of the fields, malformed pieces skipped.
    /// - Throws: ``ChallengeParseError`` listing why, when not a single challenge could be read.
    public static func challenges(in fieldValues: [String]) throws(ChallengeParseError) -> [AuthenticationChallenge] {
        let result = parse(fieldValues)
        if result.challenges.isEmpty { throw ChallengeParseError(diagnostics: result.diagnostics) }
        return result.challenges
    }

    /// Parses a list of auth-params alone, as in `Authentication-Info` (RFC 9110 §11.6.3) and
    /// `Proxy-Authentication-Info`.
    public static func parameters(
        _ fieldValue: String
    ) -> (parameters: [AuthenticationParameter], diagnostics: [ChallengeDiagnostic]) {
        var parser = FieldParser(bytes: Array(fieldValue.utf8), field: 0)
        var challenge = AuthenticationChallenge(scheme: "")
        parser.parseParameters(into: &challenge)
        // Leftovers that are not parameters are not a new challenge here, only garbage.
        while parser.index < parser.bytes.count {
            parser.skipSeparators()
            guard parser.index < parser.bytes.count else { break }
            parser.report(.malformedParameter)
            parser.skipElement()
            parser.parseParameters(into: &challenge)
        }
        return (challenge.parameters, parser.diagnostics)
    }
}

/// The state of parsing one field value.
private struct FieldParser {
    let bytes: [UInt8]
    let field: Int
    var index = 0
    var challenges: [AuthenticationChallenge] = []
    var diagnostics: [ChallengeDiagnostic] = []

    private static let comma = UInt8(ascii: ",")
    private static let equals = UInt8(ascii: "=")
    private static let quote = UInt8(ascii: "\"")
    private static let backslash = UInt8(ascii: "\\")

    init(bytes: [UInt8], field: Int) {
        self.bytes = bytes
        self.field = field
    }

    private var atEnd: Bool { index >= bytes.count }
    private var current: UInt8? { atEnd ? nil : bytes[index] }

    private static func isWhitespace(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 }

    mutating func report(_ kind: ChallengeDiagnostic.Kind, at offset: Int? = nil) {
        diagnostics.append(ChallengeDiagnostic(kind: kind, field: field, offset: offset ?? index))
    }

    mutating func parse() {
        while true {
            skipSeparators()
            guard !atEnd else { return }
            let schemeStart = index
            let scheme = readToken()
            guard !scheme.isEmpty else {
                report(.expectedScheme)
                skipElement()
                continue
            }
            var challenge = AuthenticationChallenge(scheme: scheme)
            let afterScheme = index
            skipWhitespace()
            if atEnd || current == Self.comma {
                challenges.append(challenge)
                continue
            }
            guard index > afterScheme else {
                report(.missingSpaceAfterScheme)
                index = schemeStart
                skipElement()
                continue
            }
            if let token68 = readToken68() {
                challenge.token68 = token68
            } else if startsParameter() {
                parseParameters(into: &challenge)
            } else {
                // Neither a token68 nor a parameter ("Basic foo bar"): the whole challenge is
                // malformed, and reading "foo" as the next scheme would invent a challenge.
                report(.unexpectedCharacter)
                skipElement()
                continue
            }
            challenges.append(challenge)
        }
    }

    /// A token68 followed only by whitespace before a comma or the end; otherwise leaves the
    /// index alone, since `realm=x` starts like a token68 too.
    private mutating func readToken68() -> String? {
        var end = index
        while end < bytes.count, HTTPSyntax.isToken68Character(bytes[end]) { end += 1 }
        guard end > index else { return nil }
        while end < bytes.count, bytes[end] == Self.equals { end += 1 }
        var after = end
        while after < bytes.count, Self.isWhitespace(bytes[after]) { after += 1 }
        guard after == bytes.count || bytes[after] == Self.comma else { return nil }
        let token = String(decoding: bytes[index..<end], as: UTF8.self)
        index = after
        return token
    }

    /// Parameters until the end of the field or the start of the next challenge, where the
    /// index is left.
    mutating func parseParameters(into challenge: inout AuthenticationChallenge) {
        while true {
            skipSeparators()
            guard !atEnd, startsParameter() else { return }
            parseParameter(into: &challenge)
        }
    }

    /// Whether `token BWS "="` starts at the index (not `==`, which only token68 padding has).
    private func startsParameter() -> Bool {
        var probe = index
        while probe < bytes.count, HTTPSyntax.isTokenCharacter(bytes[probe]) { probe += 1 }
        guard probe > index else { return false }
        while probe < bytes.count, Self.isWhitespace(bytes[probe]) { probe += 1 }
        return probe < bytes.count && bytes[probe] == Self.equals
    }

    private mutating func parseParameter(into challenge: inout AuthenticationChallenge) {
        let nameStart = index
        let name = readToken()
        skipWhitespace()
        // startsParameter() guarantees the "=" is here.
        index += 1
        skipWhitespace()
        let value: String
        if current == Self.quote {
            guard let quoted = readQuotedString() else { return }
            value = quoted
        } else {
            value = readToken()
            guard !value.isEmpty else {
                report(.malformedParameter)
                skipElement()
                return
            }
        }
        skipWhitespace()
        if !atEnd && current != Self.comma {
            report(.unexpectedCharacter)
            skipElement()
            return
        }
        let lowered = name.lowercased()
        if challenge.parameters.contains(where: { $0.name.lowercased() == lowered }) {
            report(.duplicateParameter(name: name), at: nameStart)
        } else {
            challenge.parameters.append(AuthenticationParameter(name: name, value: value))
        }
    }

    /// The unescaped content of the quoted string at the index, or nil (with a diagnostic,
    /// the element skipped) when it is unterminated or holds a control character.
    private mutating func readQuotedString() -> String? {
        let start = index
        index += 1
        var content: [UInt8] = []
        var controlAt: Int?
        while let byte = current {
            if byte == Self.quote {
                index += 1
                if let controlAt {
                    report(.controlCharacter, at: controlAt)
                    skipWhitespace()
                    if !atEnd && current != Self.comma { skipElement() }
                    return nil
                }
                return String(decoding: content, as: UTF8.self)
            }
            var literal = byte
            if byte == Self.backslash {
                index += 1
                guard let escaped = current else { break }
                literal = escaped
            }
            if (literal < 0x20 && literal != 0x09) || literal == 0x7F { controlAt = controlAt ?? index }
            content.append(literal)
            index += 1
        }
        report(.unterminatedQuotedString, at: start)
        return nil
    }

    private mutating func readToken() -> String {
        let start = index
        while let byte = current, HTTPSyntax.isTokenCharacter(byte) { index += 1 }
        return String(decoding: bytes[start..<index], as: UTF8.self)
    }

    private mutating func skipWhitespace() {
        while let byte = current, Self.isWhitespace(byte) { index += 1 }
    }

    /// Whitespace and commas: empty list elements are allowed anywhere (RFC 9110 §5.6.1).
    mutating func skipSeparators() {
        while let byte = current, Self.isWhitespace(byte) || byte == Self.comma { index += 1 }
    }

    /// Moves to the next comma outside a quoted string, or to the end.
    mutating func skipElement() {
        var quoted = false
        while let byte = current {
            if quoted {
                if byte == Self.backslash { index += 1 } else if byte == Self.quote { quoted = false }
            } else if byte == Self.quote {
                quoted = true
            } else if byte == Self.comma {
                return
            }
            index += 1
        }
        index = min(index, bytes.count)
    }
}
