import Foundation
import KeyjarAuth
import KeyjarTestSupport
import Testing

/// Random and mutated fields: the parser must never crash or hang, and what it returns must
/// always be well formed. Generated well-formed fields must parse back exactly.
struct ChallengeParserFuzzTests {
    static let seeds = [
        #"Newauth realm="apps", type=1, title="Login to \"apps\"", Basic realm="simple""#,
        #"Digest realm="http-auth@example.org", qop="auth, auth-int", algorithm=SHA-256, nonce="7ypf/xlj9XX", opaque="FQ""#,
        "Negotiate YIIBhgYGKwYBBQUCoIIBejCCAXagGDAWBgk==, NTLM, Basic realm=x",
        " , ,Basic realm = \"a\" , , charset\t=\tUTF-8,, ",
        #"Bearer realm="a\\b", error="invalid_token", error_description="x, y""#,
    ]
    static let alphabet = Array("=,; \"\\\t/+-_~.aZ09".utf8) + [0x00, 0x01, 0x0D, 0x0A, 0x7F, 0xC3, 0xA9, 0xFF]

    static func mutate(_ input: String, using random: inout SplitMix64) -> String {
        Mutation.mutate(input, alphabet: alphabet, using: &random)
    }

    static func isToken(_ text: String) -> Bool {
        !text.isEmpty
            && text.utf8.allSatisfy { byte in
                (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte)
                    || "!#$%&'*+-.^_`|~".utf8.contains(byte)
            }
    }

    @Test(arguments: 0..<4)
    func neverCrashesAndReturnsWellFormedChallenges(seed: UInt64) {
        var random = SplitMix64(state: seed)
        for iteration in 0..<3_000 {
            let fields = (0..<Int.random(in: 1...3, using: &random)).map { _ in
                iteration.isMultiple(of: 4)
                    ? String(
                        decoding: (0..<Int.random(in: 0..<80, using: &random)).map { _ in
                            Self.alphabet.randomElement(using: &random) ?? 0
                        },
                        as: UTF8.self
                    )
                    : Self.mutate(Self.seeds.randomElement(using: &random) ?? "", using: &random)
            }
            let result = ChallengeParser.parse(fields)
            for challenge in result.challenges {
                #expect(Self.isToken(challenge.scheme))
                let names = challenge.parameters.map { $0.name.lowercased() }
                #expect(names.allSatisfy(Self.isToken))
                #expect(Set(names).count == names.count)
                #expect(challenge.token68 == nil || challenge.parameters.isEmpty)
                for parameter in challenge.parameters {
                    #expect(!parameter.value.utf8.contains { ($0 < 0x20 && $0 != 0x09) || $0 == 0x7F })
                }
                // Whatever was accepted must survive being written out and read again.
                #expect(ChallengeParser.parse([challenge.description]).challenges == [challenge])
            }
            for diagnostic in result.diagnostics {
                #expect(diagnostic.field < fields.count)
                #expect(diagnostic.offset >= 0 && diagnostic.offset <= fields[diagnostic.field].utf8.count)
            }
            _ = ChallengeParser.parameters(fields[0])
        }
    }

    /// Random challenges written with random (legal) spacing, empty elements, quoting choices
    /// and field splits parse back to exactly the same list.
    @Test(arguments: 0..<4)
    func wellFormedChallengesRoundTrip(seed: UInt64) {
        var random = SplitMix64(state: seed)
        let tokenCharacters = Array("abcXYZ09!#$%&'*+-.^_`|~")
        let token68Characters = Array("abcXYZ09-._~+/")
        let valueCharacters = Array("abc XYZ09,;=\"\\\t/é")
        func string(from characters: [Character], _ range: ClosedRange<Int>) -> String {
            String(
                (0..<Int.random(in: range, using: &random)).map { _ in characters.randomElement(using: &random) ?? "a" }
            )
        }
        func spaces(_ range: ClosedRange<Int>) -> String { string(from: [" ", "\t"], range) }
        func separator() -> String {
            spaces(0...2) + "," + (0..<Int.random(in: 0...2, using: &random)).map { _ in spaces(0...1) + "," }.joined()
                + spaces(0...2)
        }

        for _ in 0..<500 {
            var challenges: [AuthenticationChallenge] = []
            var written: [String] = []
            for _ in 0..<Int.random(in: 1...4, using: &random) {
                var challenge = AuthenticationChallenge(scheme: string(from: tokenCharacters, 1...8))
                var text = challenge.scheme
                switch Int.random(in: 0..<3, using: &random) {
                case 0:
                    break
                case 1:
                    let token68 =
                        string(from: token68Characters, 1...20)
                        + String(repeating: "=", count: Int.random(in: 0...2, using: &random))
                    challenge.token68 = token68
                    text += " " + spaces(0...2) + token68
                default:
                    var used = Set<String>()
                    var pieces: [String] = []
                    for _ in 0..<Int.random(in: 1...4, using: &random) {
                        let name = string(from: tokenCharacters, 1...6)
                        guard used.insert(name.lowercased()).inserted else { continue }
                        let quote = Bool.random(using: &random)
                        let value =
                            quote ? string(from: valueCharacters, 0...10) : string(from: tokenCharacters, 1...10)
                        challenge.parameters.append(AuthenticationParameter(name: name, value: value))
                        var escaped = ""
                        for character in value {
                            if character == "\"" || character == "\\" || Int.random(in: 0..<8, using: &random) == 0 {
                                escaped.append("\\")
                            }
                            escaped.append(character)
                        }
                        pieces.append(name + spaces(0...1) + "=" + spaces(0...1) + (quote ? "\"\(escaped)\"" : value))
                    }
                    text += " " + spaces(0...1) + pieces.joined(separator: separator())
                }
                challenges.append(challenge)
                written.append(text)
            }
            // Split the list over one or more fields at challenge boundaries.
            var fields: [String] = []
            var current = separator()
            for text in written {
                if !current.trimmingCharacters(in: [" ", "\t", ","]).isEmpty, Bool.random(using: &random) {
                    fields.append(current)
                    current = ""
                }
                current += (current.trimmingCharacters(in: [" ", "\t", ","]).isEmpty ? "" : separator()) + text
            }
            fields.append(current + (Bool.random(using: &random) ? separator() : ""))
            let result = ChallengeParser.parse(fields)
            #expect(result.diagnostics.isEmpty, "\(fields)")
            #expect(result.challenges == challenges, "\(fields)")
        }
    }
}
