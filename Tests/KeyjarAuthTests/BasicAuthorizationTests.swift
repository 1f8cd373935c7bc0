import Foundation
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

    /// The normalisation is the standard library's (the `keyjar` front links no Foundation):
    /// it gives what Foundation's `precomposedStringWithCanonicalMapping` gives.
    @Test(arguments: [
        "e\u{301}", "A\u{30A}", "\u{212B}", "\u{FB03}", "\u{1100}\u{1161}\u{11A8}", "e\u{301}\u{327}",
        "q\u{307}\u{323}",
        "\u{2126}", "plain", "",
    ])
    func normalisationIsFoundationsNFC(text: String) throws {
        let utf8 = try #require(ChallengeParser.parse([#"Basic realm="foo", charset=utf-8"#]).challenges.first)
        let normalised = try BasicAuthorization(user: text, password: text, challenge: utf8)
        let byFoundation = text.precomposedStringWithCanonicalMapping
        #expect(
            normalised.headerValue == (try BasicAuthorization(user: byFoundation, password: byFoundation).headerValue)
        )
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
