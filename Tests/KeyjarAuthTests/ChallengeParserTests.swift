import KeyjarAuth
import Testing

struct ChallengeParserTests {
    func parse(_ fields: String...) -> ChallengeParser.Result { ChallengeParser.parse(fields) }

    /// RFC 9110 §11.6.1's example: two challenges in one field, an escaped quote in a value.
    @Test func rfc9110Example() {
        let result = parse(#"Newauth realm="apps", type=1, title="Login to \"apps\"", Basic realm="simple""#)
        #expect(result.diagnostics.isEmpty)
        #expect(
            result.challenges == [
                AuthenticationChallenge(
                    scheme: "Newauth",
                    parameters: [
                        .init(name: "realm", value: "apps"), .init(name: "type", value: "1"),
                        .init(name: "title", value: #"Login to "apps""#),
                    ]
                ),
                AuthenticationChallenge(scheme: "Basic", parameters: [.init(name: "realm", value: "simple")]),
            ]
        )
    }

    @Test func challengesAcrossFieldsKeepTheirOrder() {
        let result = parse(#"Digest realm="a", nonce="n""#, "Negotiate, NTLM", #"Basic realm="b""#)
        #expect(result.challenges.map(\.scheme) == ["Digest", "Negotiate", "NTLM", "Basic"])
        #expect(result.challenges[3].realm == "b")
    }

    @Test func token68() {
        let result = parse(
            "Negotiate YIIBhgYGKwYBBQUCoIIBejCCAXagGDAWBgk+/qGSIb3EgE==, Basic realm=x, NTLM abc, Foo a="
        )
        #expect(result.diagnostics.isEmpty)
        #expect(
            result.challenges.map(\.token68) == ["YIIBhgYGKwYBBQUCoIIBejCCAXagGDAWBgk+/qGSIb3EgE==", nil, "abc", "a="]
        )
        #expect(result.challenges[1].parameters == [.init(name: "realm", value: "x")])
    }

    @Test func schemesAndParameterNamesIgnoreCase() throws {
        let challenge = try #require(parse(#"DIGEST REALM="r", Nonce=n"#).challenges.first)
        #expect(challenge.hasScheme("digest"))
        #expect(challenge.realm == "r")
        #expect(challenge.parameter("NONCE") == "n")
    }

    @Test func whitespaceAroundEqualsAndEmptyElements() {
        let result = parse(" , ,Basic realm = \"a\" , , charset\t=\tUTF-8,, ,Digest  realm=b,nonce=\"n\" ,,")
        #expect(result.diagnostics.isEmpty)
        #expect(
            result.challenges == [
                AuthenticationChallenge(
                    scheme: "Basic",
                    parameters: [.init(name: "realm", value: "a"), .init(name: "charset", value: "UTF-8")]
                ),
                AuthenticationChallenge(
                    scheme: "Digest",
                    parameters: [.init(name: "realm", value: "b"), .init(name: "nonce", value: "n")]
                ),
            ]
        )
    }

    @Test func commasAndEscapesInsideQuotedStrings() throws {
        let challenge = try #require(parse(#"Basic realm="a, b=c \\ \"d\"", x=y"#).challenges.first)
        #expect(challenge.realm == #"a, b=c \ "d""#)
        #expect(challenge.parameter("x") == "y")
    }

    @Test func duplicateParameterKeepsTheFirst() throws {
        let result = parse(#"Basic realm="a", Realm="b""#)
        #expect(result.challenges.first?.realm == "a")
        #expect(result.challenges.first?.parameters.count == 1)
        #expect(
            result.diagnostics == [ChallengeDiagnostic(kind: .duplicateParameter(name: "Realm"), field: 0, offset: 17)]
        )
    }

    @Test func malformedPiecesAreSkippedAndTheRestKept() {
        let result = parse(
            #"Basic foo bar, Digest realm="x", nonce="y""#,
            #"Basic"x", Bearer realm="a"junk, error="e""#,
            "Newauth realm=\"a\u{1}b\", charset=\"UTF-8\"",
            #"Basic realm="unterminated, nonce=x"#
        )
        #expect(result.challenges.map(\.scheme) == ["Digest", "Bearer", "Newauth", "Basic"])
        #expect(result.challenges[0].parameter("nonce") == "y")
        #expect(result.challenges[1].parameters == [.init(name: "error", value: "e")])
        #expect(result.challenges[2].parameters == [.init(name: "charset", value: "UTF-8")])
        #expect(result.challenges[3].parameters.isEmpty)
        #expect(
            result.diagnostics.map(\.kind) == [
                .unexpectedCharacter, .missingSpaceAfterScheme, .unexpectedCharacter, .controlCharacter,
                .unterminatedQuotedString,
            ]
        )
        #expect(result.diagnostics.map(\.field) == [0, 1, 1, 2, 3])
        #expect(result.diagnostics[0].offset == 6)
    }

    @Test func garbageThrowsWithTheReasons() {
        #expect(
            throws: ChallengeParseError(diagnostics: [
                ChallengeDiagnostic(kind: .expectedScheme, field: 0, offset: 0),
                ChallengeDiagnostic(kind: .expectedScheme, field: 1, offset: 0),
                ChallengeDiagnostic(kind: .missingSpaceAfterScheme, field: 1, offset: 11),
            ])
        ) {
            try ChallengeParser.challenges(in: ["=====", #""quoted", x="#])
        }
        #expect(throws: ChallengeParseError(diagnostics: [])) { try ChallengeParser.challenges(in: ["", " , "]) }
        #expect(throws: Never.self) { try ChallengeParser.challenges(in: ["===", "Basic"]) }
    }

    @Test func descriptionParsesBack() {
        let challenge = AuthenticationChallenge(
            scheme: "Digest",
            parameters: [
                .init(name: "realm", value: #"a "b" \ c, d"#), .init(name: "nonce", value: ""),
            ]
        )
        #expect(ChallengeParser.parse([challenge.description]).challenges == [challenge])
        #expect(AuthenticationChallenge(scheme: "NTLM").description == "NTLM")
        #expect(AuthenticationChallenge(scheme: "Negotiate", token68: "abc=").description == "Negotiate abc=")
    }

    @Test func authenticationInfoParameters() {
        let (parameters, diagnostics) = ChallengeParser.parameters(
            #"rspauth="abc", cnonce="x,y" , nc=00000001, , qop=auth, junk, nextnonce="n""#
        )
        #expect(parameters.map(\.name) == ["rspauth", "cnonce", "nc", "qop", "nextnonce"])
        #expect(parameters.map(\.value) == ["abc", "x,y", "00000001", "auth", "n"])
        #expect(diagnostics.map(\.kind) == [.malformedParameter])
    }
}
