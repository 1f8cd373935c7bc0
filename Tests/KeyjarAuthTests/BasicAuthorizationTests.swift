import KeyjarAuth
import Testing

struct BasicAuthorizationTests {
    /// RFC 7617 §2's example.
    @Test func rfc7617Example() throws {
        let basic = try BasicAuthorization(user: "Aladdin", password: "open sesame")
        #expect(basic.headerValue == "Basic QWxhZGRpbjpvcGVuIHNlc2FtZQ==")
        #expect(basic.headerName == "Authorization")
        let proxy = try BasicAuthorization(user: "Aladdin", password: "open sesame", target: .proxy)
        #expect(proxy.headerName == "Proxy-Authorization" && proxy.headerValue == basic.headerValue)
    }

    /// RFC 7617 §2.1's example: charset="UTF-8", password "123£".
    @Test func rfc7617CharsetExample() throws {
        let challenge = try #require(ChallengeParser.parse([#"Basic realm="foo", charset="UTF-8""#]).challenges.first)
        let basic = try BasicAuthorization(user: "test", password: "123\u{A3}", challenge: challenge)
        #expect(basic.headerValue == "Basic dGVzdDoxMjPCow==")
    }

    /// With charset="UTF-8" the text is normalised to NFC (§2.1): a decomposed é goes out as
    /// the two bytes C3 A9 ("dGVzdDrDqQ==" is base64 of "test:é" precomposed).
    @Test func charsetUTF8NormalisesToNFC() throws {
        let utf8 = try #require(ChallengeParser.parse([#"Basic realm="foo", charset=utf-8"#]).challenges.first)
        let decomposed = "e\u{301}"
        #expect(
            try BasicAuthorization(user: "test", password: decomposed, challenge: utf8).headerValue
                == "Basic dGVzdDrDqQ=="
        )
        #expect(try BasicAuthorization(user: "test", password: decomposed).headerValue == "Basic dGVzdDplzIE=")
    }

    @Test func refusesWhatBasicCannotCarry() {
        #expect(throws: AuthenticationError.colonInUserID) { try BasicAuthorization(user: "a:b", password: "p") }
        #expect(throws: AuthenticationError.controlCharacterInCredential) {
            try BasicAuthorization(user: "a", password: "p\n")
        }
        #expect(throws: Never.self) { try BasicAuthorization(user: "a", password: "p:q") }
    }

    @Test func descriptionNeverShowsThePassword() throws {
        let basic = try BasicAuthorization(user: "Aladdin", password: "open sesame")
        for text in [basic.description, String(reflecting: basic), "\(basic)", dumped(basic)] {
            #expect(text.contains("Aladdin"))
            #expect(!text.contains("open sesame"))
            #expect(!text.contains("QWxhZGRpbjpvcGVuIHNlc2FtZQ=="))
        }
    }
}
