import Foundation
import KeyjarAuth
import KeyjarCore
import KeyjarDigest
import KeyjarTestSupport
import Testing

/// RFC 7616's worked examples, the session's nonce counting, and every response checked
/// against the RFC's formula computed by Python's hashlib.
struct DigestAuthorizationTests {
    static let rfcChallenges = [
        """
        Digest realm="http-auth@example.org", qop="auth, auth-int", algorithm=SHA-256, \
        nonce="7ypf/xlj9XXwfDPEoM4URrv/xwf94BcCAzFZH4GiTo0v", opaque="FQhe/qaU925kfnzjCev0ciny7QMkPqMAFRtzCUYo5tdS"
        """,
        """
        Digest realm="http-auth@example.org", qop="auth, auth-int", algorithm=MD5, \
        nonce="7ypf/xlj9XXwfDPEoM4URrv/xwf94BcCAzFZH4GiTo0v", opaque="FQhe/qaU925kfnzjCev0ciny7QMkPqMAFRtzCUYo5tdS"
        """,
    ]

    static func session(_ fieldValue: String) throws -> DigestSession {
        let challenges = try ChallengeParser.challenges(in: [fieldValue])
        return DigestSession(challenge: try DigestChallenge(try #require(challenges.first)))
    }

    /// RFC 7616 §3.9.1, both responses and the whole header, byte for byte.
    @Test func rfc7616Section391Examples() throws {
        let cnonce = "f2/wE4q74E6zIJEtWaHKaf5wv/H5QzzpXusqGemxURZJ"
        var sha256 = try Self.session(Self.rfcChallenges[0])
        let sha256Answer = try sha256.authorize(
            user: "Mufasa",
            password: "Circle of Life",
            method: "GET",
            uri: "/dir/index.html",
            cnonce: cnonce
        )
        #expect(sha256Answer.response == "753927fa0e85d155564e2e272a28d1802ca10daf4496794697cf8db5856cb6c1")
        #expect(
            sha256Answer.headerValue == """
                Digest username="Mufasa", realm="http-auth@example.org", uri="/dir/index.html", algorithm=SHA-256, \
                nonce="7ypf/xlj9XXwfDPEoM4URrv/xwf94BcCAzFZH4GiTo0v", nc=00000001, \
                cnonce="f2/wE4q74E6zIJEtWaHKaf5wv/H5QzzpXusqGemxURZJ", qop=auth, \
                response="753927fa0e85d155564e2e272a28d1802ca10daf4496794697cf8db5856cb6c1", \
                opaque="FQhe/qaU925kfnzjCev0ciny7QMkPqMAFRtzCUYo5tdS"
                """
        )

        var md5 = try Self.session(Self.rfcChallenges[1])
        let md5Answer = try md5.authorize(
            user: "Mufasa",
            password: "Circle of Life",
            method: "GET",
            uri: "/dir/index.html",
            cnonce: cnonce
        )
        #expect(md5Answer.response == "8ca523f5e9506fed4657c9700eebdbec")
        #expect(
            md5Answer.headerValue == """
                Digest username="Mufasa", realm="http-auth@example.org", uri="/dir/index.html", algorithm=MD5, \
                nonce="7ypf/xlj9XXwfDPEoM4URrv/xwf94BcCAzFZH4GiTo0v", nc=00000001, \
                cnonce="f2/wE4q74E6zIJEtWaHKaf5wv/H5QzzpXusqGemxURZJ", qop=auth, \
                response="8ca523f5e9506fed4657c9700eebdbec", opaque="FQhe/qaU925kfnzjCev0ciny7QMkPqMAFRtzCUYo5tdS"
                """
        )
        #expect(md5Answer.headerName == "Authorization")
    }

    /// RFC 7616 §3.9.2 (SHA-512-256, charset, userhash). The RFC prints hashes made with an
    /// early draft of SHA-512/256; the values here are the corrected ones of erratum 4897.
    @Test func rfc7616Section392UserhashExample() throws {
        let challenge = """
            Digest realm="api@example.org", qop="auth", algorithm=SHA-512-256, \
            nonce="5TsQWLVdgBdmrQ0XsxbDODV+57QdFR34I9HAbC/RVvkK", \
            opaque="HRPCssKJSGjCrkzDg8OhwpzCiGPChXYjwrI2QmXDnsOS", charset=UTF-8, userhash=true
            """
        var session = try Self.session(challenge)
        let answer = try session.authorize(
            user: "J\u{E4}s\u{F8}n Doe",
            password: "Secret, or not?",
            method: "GET",
            uri: "/doe.json",
            cnonce: "NTg6RKcb9boFIAS3KrFK9BGeh+iDa/sm6jUMp2wds69v"
        )
        #expect(answer.username == "793263caabb707a56211940d90411ea4a575adeccb7e360aeb624ed06ece9b0b")
        #expect(answer.response == "3798d4131c277846293534c3edc11bd8a5e4cdcbff78b05db9d95eeb1cec68a5")
        #expect(
            answer.headerValue == """
                Digest username="793263caabb707a56211940d90411ea4a575adeccb7e360aeb624ed06ece9b0b", \
                realm="api@example.org", uri="/doe.json", algorithm=SHA-512-256, \
                nonce="5TsQWLVdgBdmrQ0XsxbDODV+57QdFR34I9HAbC/RVvkK", nc=00000001, \
                cnonce="NTg6RKcb9boFIAS3KrFK9BGeh+iDa/sm6jUMp2wds69v", qop=auth, \
                response="3798d4131c277846293534c3edc11bd8a5e4cdcbff78b05db9d95eeb1cec68a5", \
                opaque="HRPCssKJSGjCrkzDg8OhwpzCiGPChXYjwrI2QmXDnsOS", userhash=true
                """
        )
    }

    /// Without userhash, the same user goes out as `username*` (RFC 7616 §3.4.4, with the
    /// encoding the RFC prints for this user).
    @Test func nonASCIIUserNameUsesExtendedNotation() throws {
        var session = try Self.session(#"Digest realm="api@example.org", qop=auth, nonce="n", charset=UTF-8"#)
        let answer = try session.authorize(user: "J\u{E4}s\u{F8}n Doe", password: "p", method: "GET", uri: "/")
        #expect(answer.usesExtendedUsername)
        #expect(answer.headerValue.hasPrefix("Digest username*=UTF-8''J%C3%A4s%C3%B8n%20Doe, realm="))
        var ascii = try Self.session(#"Digest realm="r", qop=auth, nonce="n""#)
        let plain = try ascii.authorize(user: #"a "quoted" \ name"#, password: "p", method: "GET", uri: "/")
        #expect(!plain.usesExtendedUsername)
        #expect(plain.headerValue.hasPrefix(#"Digest username="a \"quoted\" \\ name", "#))
    }

    @Test func nonceCountGrowsPerNonceAndRestartsWithANewOne() throws {
        var session = try Self.session(Self.rfcChallenges[1])
        var random = SplitMix64(state: 1)
        let counts = try (0..<3).map { _ in
            try session.authorize(user: "u", password: "p", method: "GET", uri: "/", using: &random).nonceCount
        }
        #expect(counts == ["00000001", "00000002", "00000003"])
        #expect(session.nonceCount == 3)

        let stale = try DigestChallenge(
            try #require(
                ChallengeParser.challenges(in: [#"Digest realm="r", nonce="new", qop=auth, stale=TRUE"#]).first
            )
        )
        #expect(session.renew(with: stale) == .stale)
        let next = try session.authorize(user: "u", password: "p", method: "GET", uri: "/", using: &random)
        #expect(next.nonce == "new")
        #expect(next.nonceCount == "00000001")
    }

    @Test func renewalSaysWhetherTheAttemptFailed() throws {
        func challenge(_ nonce: String, stale: Bool) throws -> DigestChallenge {
            let field = #"Digest realm="r", qop=auth, nonce="\#(nonce)""# + (stale ? ", stale=true" : "")
            return try DigestChallenge(try #require(ChallengeParser.challenges(in: [field]).first))
        }
        var session = DigestSession(challenge: try challenge("one", stale: false))
        #expect(session.renew(with: try challenge("two", stale: false)) == .rejected)
        #expect(session.renew(with: try challenge("three", stale: true)) == .stale)
        // A "stale" nonce identical to the one just used would loop forever: a failure.
        #expect(session.renew(with: try challenge("three", stale: true)) == .rejected)
    }

    @Test func cnonceComesFromTheCallersGenerator() throws {
        var first = try Self.session(Self.rfcChallenges[0])
        var second = first
        var randomA = SplitMix64(state: 42)
        var randomB = SplitMix64(state: 42)
        let a = try first.authorize(user: "u", password: "p", method: "GET", uri: "/", using: &randomA)
        let b = try second.authorize(user: "u", password: "p", method: "GET", uri: "/", using: &randomB)
        #expect(a.cnonce == b.cnonce)
        #expect(a.cnonce?.count == 32)
        var other = SplitMix64(state: 43)
        let c = try second.authorize(user: "u", password: "p", method: "GET", uri: "/", using: &other)
        #expect(c.cnonce != a.cnonce)
        var system = try Self.session(Self.rfcChallenges[0])
        let d = try system.authorize(user: "u", password: "p", method: "GET", uri: "/")
        let e = try system.authorize(user: "u", password: "p", method: "GET", uri: "/")
        #expect(d.cnonce != e.cnonce)
    }

    @Test func legacyFormHasNoCountOrCnonce() throws {
        var session = try Self.session(
            #"Digest realm="testrealm@host.com", nonce="dcd98b7102dd2f0e8b11d0f600bfb0c093""#
        )
        let answer = try session.authorize(
            user: "Mufasa",
            password: "CircleOfLife",
            method: "GET",
            uri: "/dir/index.html"
        )
        #expect(answer.nonceCount == nil && answer.cnonce == nil && answer.qualityOfProtection == nil)
        #expect(!answer.headerValue.contains("nc=") && !answer.headerValue.contains("cnonce="))
        #expect(!answer.headerValue.contains("algorithm="))
        // RFC 2069 §2.4's example, with the response its erratum corrects.
        #expect(answer.response == "1949323746fe6a43ef61f9606e7febea")
    }

    /// RFC 2617 §3.5's example (MD5, qop=auth, no algorithm parameter).
    @Test func rfc2617Example() throws {
        var session = try Self.session(
            """
            Digest realm="testrealm@host.com", qop="auth,auth-int", nonce="dcd98b7102dd2f0e8b11d0f600bfb0c093", \
            opaque="5ccc069c403ebaf9f0171e9517f40e41"
            """
        )
        let answer = try session.authorize(
            user: "Mufasa",
            password: "Circle Of Life",
            method: "GET",
            uri: "/dir/index.html",
            cnonce: "0a4f113b"
        )
        #expect(answer.response == "6629fae49393a05397450978507c4ef1")
    }

    @Test func authIntNeedsTheBody() throws {
        var session = try Self.session(#"Digest realm="r", qop="auth-int", nonce="n""#)
        #expect(throws: AuthenticationError.unsupportedQualityOfProtection(["auth-int"])) {
            try session.authorize(user: "u", password: "p", method: "POST", uri: "/")
        }
        let answer = try session.authorize(user: "u", password: "p", method: "POST", uri: "/", body: Array("x".utf8))
        #expect(answer.qualityOfProtection == .authInt)
        #expect(answer.headerValue.contains("qop=auth-int"))
    }

    @Test func refusesWhatItCannotAnswer() throws {
        func digest(_ field: String) throws -> DigestChallenge {
            try DigestChallenge(try #require(ChallengeParser.challenges(in: [field]).first))
        }
        #expect(throws: AuthenticationError.missingParameter("nonce")) { try digest(#"Digest realm="r""#) }
        #expect(throws: AuthenticationError.missingParameter("realm")) { try digest(#"Digest nonce="n""#) }
        #expect(throws: AuthenticationError.unsupportedAlgorithm("SHA-1")) {
            try digest(#"Digest realm="r", nonce="n", algorithm=SHA-1"#)
        }
        #expect(throws: AuthenticationError.unsupportedQualityOfProtection(["auth-conf"])) {
            try digest(#"Digest realm="r", nonce="n", qop="auth-conf""#)
        }
        #expect(throws: AuthenticationError.sessionAlgorithmWithoutQualityOfProtection) {
            try digest(#"Digest realm="r", nonce="n", algorithm=MD5-sess"#)
        }
        #expect(throws: AuthenticationError.wrongScheme("Basic")) { try digest(#"Basic realm="r""#) }
        var session = DigestSession(challenge: try digest(#"Digest realm="r", nonce="n", qop=auth"#))
        #expect(throws: AuthenticationError.controlCharacterInCredential) {
            try session.authorize(user: "u\r\n", password: "p", method: "GET", uri: "/")
        }
    }

    /// The server's rspauth, computed by Python from RFC 7616 §3.5's formula, is accepted;
    /// a wrong one is not; a nextnonce replaces the nonce and restarts the count.
    @Test func authenticationInfoChecksRspauthAndTakesNextNonce() async throws {
        var session = try Self.session(Self.rfcChallenges[0])
        let answer = try session.authorize(
            user: "Mufasa",
            password: "Circle of Life",
            method: "GET",
            uri: "/dir/index.html",
            cnonce: "c"
        )
        let script = """
            import hashlib, sys
            H = lambda s: hashlib.sha256(s.encode()).hexdigest()
            ha1 = H("Mufasa:http-auth@example.org:Circle of Life")
            print(H(ha1 + ":7ypf/xlj9XXwfDPEoM4URrv/xwf94BcCAzFZH4GiTo0v:00000001:c:auth:" + H(":/dir/index.html")))
            """
        let rspauth = try await Python.run(script, input: "").trimmingCharacters(in: .whitespacesAndNewlines)
        var copy = session
        #expect(
            copy.receiveAuthenticationInfo(
                #"rspauth="\#(rspauth)", cnonce="c", nc=00000001, qop=auth"#,
                for: answer
            ) == .verified
        )
        #expect(copy.challenge.nonce == session.challenge.nonce)
        let wrong = String(rspauth.reversed())
        #expect(session.receiveAuthenticationInfo(#"rspauth="\#(wrong)", nextnonce="fresh""#, for: answer) == .mismatch)
        #expect(session.challenge.nonce == "fresh")
        #expect(session.nonceCount == 0)
        #expect(session.receiveAuthenticationInfo(#"nextnonce="fresh""#, for: answer) == .absent)
    }

    @Test func descriptionsNeverShowSecrets() throws {
        var session = try Self.session(Self.rfcChallenges[1])
        let password = "Circle of Life"
        let answer = try session.authorize(user: "Mufasa", password: password, method: "GET", uri: "/", cnonce: "c")
        let ha1 = "939e7578ed9e3c518a452acee763bce9"  // MD5("Mufasa:http-auth@example.org:Circle of Life")
        for text in [answer.description, String(reflecting: answer), "\(answer)", dumped(answer)] {
            #expect(text.contains("Mufasa"))
            #expect(!text.contains(password))
            #expect(!text.contains(ha1))
            #expect(!text.contains(answer.response))
        }
        let credential = Credential(user: "Mufasa", password: password, persistence: .forSession)
        #expect(!credential.description.contains(password))
        #expect(!String(reflecting: credential).contains(password))
    }

    /// Random users, passwords, realms, URIs, methods, algorithms and qops; Python computes
    /// RFC 7616 §3.4.1's response from the same inputs with hashlib.
    @Test(arguments: 0..<3)
    func responsesMatchAnIndependentImplementation(seed: UInt64) async throws {
        var random = SplitMix64(state: seed)
        let text = Array("abcXYZ019 :;,/\\\"'@é€😀".unicodeScalars)
        func randomText(_ range: ClosedRange<Int>) -> String {
            var result = String.UnicodeScalarView()
            for _ in 0..<Int.random(in: range, using: &random) {
                result.append(text.randomElement(using: &random) ?? "a")
            }
            return String(result)
        }
        var cases: [[String: String]] = []
        var responses: [String] = []
        for _ in 0..<60 {
            let algorithm = DigestAlgorithm.allCases.randomElement(using: &random) ?? .md5
            let qop =
                algorithm.isSession
                ? ["auth", "auth-int"].randomElement(using: &random) ?? "auth"
                : ["auth", "auth-int", ""].randomElement(using: &random) ?? ""
            let realm = randomText(0...12).replacingOccurrences(of: "\\", with: "").replacingOccurrences(
                of: "\"",
                with: ""
            )
            let nonce = hex((0..<12).map { _ in UInt8.random(in: 0...255, using: &random) })
            var field = #"Digest realm="\#(realm)", nonce="\#(nonce)", algorithm=\#(algorithm.rawValue)"#
            if !qop.isEmpty { field += ", qop=\"\(qop)\"" }
            var session = try Self.session(field)
            let user = randomText(1...10)
            let password = randomText(0...10)
            let method = ["GET", "POST", "PUT", "CONNECT"].randomElement(using: &random) ?? "GET"
            let uri = "/" + randomText(0...20)
            let body = (0..<Int.random(in: 0...100, using: &random)).map { _ in
                UInt8.random(in: 0...255, using: &random)
            }
            let uses = Int.random(in: 1...3, using: &random)
            var answer: DigestAuthorization?
            for _ in 0..<uses {
                answer = try session.authorize(
                    user: user,
                    password: password,
                    method: method,
                    uri: uri,
                    body: body,
                    using: &random
                )
            }
            let last = try #require(answer)
            responses.append(last.response)
            cases.append([
                "algorithm": algorithm.rawValue, "qop": qop, "realm": realm, "nonce": nonce, "user": user,
                "password": password, "method": method, "uri": uri, "body": hex(body),
                "nc": last.nonceCount ?? "", "cnonce": last.cnonce ?? "",
            ])
        }
        let script = """
            import hashlib, json, sys
            names = {"MD5": "md5", "SHA-256": "sha256", "SHA-512-256": "sha512_256"}
            for case in json.load(sys.stdin):
                algorithm = case["algorithm"]
                base = algorithm[:-5] if algorithm.endswith("-sess") else algorithm
                H = lambda data: hashlib.new(names[base], data if isinstance(data, bytes) else data.encode()).hexdigest()
                ha1 = H(case["user"] + ":" + case["realm"] + ":" + case["password"])
                if algorithm.endswith("-sess"):
                    ha1 = H(ha1 + ":" + case["nonce"] + ":" + case["cnonce"])
                a2 = case["method"] + ":" + case["uri"]
                if case["qop"] == "auth-int":
                    a2 += ":" + H(bytes.fromhex(case["body"]))
                if case["qop"]:
                    print(H(":".join([ha1, case["nonce"], case["nc"], case["cnonce"], case["qop"], H(a2)])))
                else:
                    print(H(":".join([ha1, case["nonce"], H(a2)])))
            """
        let input = String(decoding: try JSONSerialization.data(withJSONObject: cases), as: UTF8.self)
        let expected = try await Python.run(script, input: input).split(separator: "\n").map(String.init)
        #expect(expected == responses)
    }
}
