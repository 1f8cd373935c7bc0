import KeyjarAuth
import KeyjarTestSupport
import Testing

struct ChallengeSelectorTests {
    static let offered = [
        #"Basic realm="b""#,
        #"Digest realm="r", nonce="n", qop=auth, algorithm=MD5"#,
        #"Digest realm="r", nonce="n", qop=auth, algorithm=SHA-256-sess"#,
        "NTLM",
        #"Digest realm="r", nonce="n", qop=auth, algorithm=SHA-512-256"#,
        "Negotiate",
        #"Digest realm="r", nonce="n", qop=auth, algorithm=SHA-256"#,
    ]

    func order(
        _ fields: [String],
        supported: Set<AuthenticationScheme> = Set(AuthenticationScheme.allCases),
        canHashBody: Bool = false
    ) -> [String] {
        ChallengeSelector.candidates(
            in: ChallengeParser.parse(fields).challenges,
            supported: supported,
            canHashBody: canHashBody
        )
        .map { $0.scheme.rawValue + ($0.digest.map { " " + $0.algorithm.rawValue } ?? "") }
    }

    @Test func strongestFirstWhateverTheServersOrder() {
        let expected = [
            "Negotiate", "NTLM", "Digest SHA-512-256", "Digest SHA-256-sess", "Digest SHA-256", "Digest MD5", "Basic",
        ]
        #expect(order(Self.offered) == expected)
        var random = SplitMix64(state: 9)
        for _ in 0..<20 {
            let shuffled = order(Self.offered.shuffled(using: &random))
            #expect(shuffled.first == "Negotiate" && shuffled.last == "Basic")
            #expect(shuffled.filter { $0.hasPrefix("Digest") }.first == "Digest SHA-512-256")
        }
    }

    @Test func onlySupportedSchemes() {
        #expect(order(Self.offered, supported: [.basic, .digest]).first == "Digest SHA-512-256")
        #expect(order(Self.offered, supported: [.basic]) == ["Basic"])
        let choice = ChallengeSelector.strongest(
            in: ChallengeParser.parse(Self.offered).challenges,
            supported: [.ntlm, .basic]
        )
        #expect(choice?.scheme == .ntlm)
        // An unknown scheme is never chosen; Bearer only when the caller supports it.
        #expect(ChallengeSelector.strongest(in: ChallengeParser.parse(["Newauth realm=x"]).challenges) == nil)
        let bearer = ChallengeParser.parse(["Bearer realm=x", "Basic realm=x"]).challenges
        #expect(ChallengeSelector.strongest(in: bearer, supported: [.basic])?.scheme == .basic)
        #expect(ChallengeSelector.strongest(in: bearer)?.scheme == .bearer)
    }

    @Test func digestsKeyjarCannotAnswerAreSkipped() {
        let fields = [
            #"Digest realm="r", nonce="n", qop="auth-int", algorithm=SHA-512-256"#,
            #"Digest realm="r", nonce="n", algorithm=SHA-1"#,
            #"Digest realm="r", algorithm=SHA-256"#,
            #"Digest realm="r", nonce="n", algorithm=MD5-sess"#,
            #"Digest realm="r", nonce="n""#,
            #"Basic realm="b""#,
        ]
        #expect(order(fields) == ["Digest MD5", "Basic"])
        #expect(order(fields, canHashBody: true) == ["Digest SHA-512-256", "Digest MD5", "Basic"])
    }

    @Test func equalStrengthKeepsTheServersOrder() {
        let choice = ChallengeSelector.candidates(
            in: ChallengeParser.parse([#"Basic realm="first""#, #"basic realm="second""#]).challenges
        )
        #expect(choice.map(\.challenge.realm) == ["first", "second"])
    }
}
