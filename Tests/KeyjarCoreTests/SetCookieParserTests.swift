import Foundation
import KeyjarCore
import KeyjarTestSupport
import Testing

struct SetCookieParserTests {
    @Test func parsesNameValueAndEveryAttribute() throws {
        // Given a header with every attribute, in mixed case and with stray spaces
        let parsed = try SetCookieParser.parse(
            " sid = 42 ; pAtH=/app ; DOMAIN=.Example.COM; secure; HttpOnly ; samesite=strict; max-age=60;"
                + " expires=Wed, 09 Jun 2021 10:18:14 GMT; unknown=x"
        )
        // Then each is read, names case-insensitively, values trimmed
        #expect(parsed.name == "sid")
        #expect(parsed.value == "42")
        #expect(parsed.path == "/app")
        #expect(parsed.domain == "example.com")
        #expect(parsed.secure)
        #expect(parsed.httpOnly)
        #expect(parsed.sameSite == .strict)
        #expect(parsed.maxAge == 60)
        #expect(parsed.expires == Date(timeIntervalSince1970: 1_623_233_894))
    }

    @Test func lastOccurrenceOfAnAttributeWins() throws {
        let parsed = try SetCookieParser.parse("a=b; Path=/one; Path=/two; SameSite=Lax; SameSite=None")
        #expect(parsed.path == "/two")
        #expect(parsed.sameSite == .none)
    }

    @Test func pathNotStartingWithSlashMeansDefaultPath() throws {
        #expect(try SetCookieParser.parse("a=b; Path=relative").path == nil)
        #expect(try SetCookieParser.parse("a=b; Path=/x; Path=").path == nil)
    }

    @Test func emptyDomainIsIgnoredButALoneDotResetsIt() throws {
        #expect(try SetCookieParser.parse("a=b; Domain=example.com; Domain=").domain == "example.com")
        #expect(try SetCookieParser.parse("a=b; Domain=example.com; Domain=.").domain == nil)
    }

    @Test func maxAgeAcceptsOnlyAnOptionalMinusAndDigits() throws {
        #expect(try SetCookieParser.parse("a=b; Max-Age=-5").maxAge == -5)
        #expect(try SetCookieParser.parse("a=b; Max-Age=2.63").maxAge == nil)
        #expect(try SetCookieParser.parse("a=b; Max-Age=+5").maxAge == nil)
        #expect(try SetCookieParser.parse("a=b; Max-Age=").maxAge == nil)
        #expect(try SetCookieParser.parse("a=b; Max-Age=99999999999999999999999").maxAge == Int64.max)
    }

    @Test func unknownSameSiteValueIsUnspecified() throws {
        #expect(try SetCookieParser.parse("a=b; SameSite=Bogus").sameSite == .unspecified)
        #expect(try SetCookieParser.parse("a=b; SameSite").sameSite == .unspecified)
        #expect(SameSite.unspecified.enforced == .lax)
    }

    @Test func namelessCookiesKeepTheirValue() throws {
        let bare = try SetCookieParser.parse("token")
        #expect(bare.name == "" && bare.value == "token")
        let leadingEquals = try SetCookieParser.parse("=a=b")
        #expect(leadingEquals.name == "" && leadingEquals.value == "a=b")
    }

    @Test func commasDoNotSplitCookies() throws {
        let parsed = try SetCookieParser.parse("z=y, a=b")
        #expect(parsed.name == "z" && parsed.value == "y, a=b")
    }

    @Test(arguments: ["a=b\u{0}c", "a=b\rc", "a=b\nc", "a=b; Path=/\u{1}", "a=\u{7F}"])
    func controlCharactersRejectTheWholeHeader(header: String) {
        #expect(throws: CookieParseError.self) { try SetCookieParser.parse(header) }
    }

    @Test func horizontalTabIsAllowed() throws {
        #expect(try SetCookieParser.parse("a=b\tc").value == "b\tc")
    }

    @Test func emptyNameAndValueIsAnError() {
        #expect(throws: CookieParseError.emptyNameAndValue) { try SetCookieParser.parse("") }
        #expect(throws: CookieParseError.emptyNameAndValue) { try SetCookieParser.parse(" = ; Path=/") }
    }

    @Test func nameAndValueLimitIs4096Bytes() throws {
        let name = String(repeating: "n", count: 96)
        #expect(try SetCookieParser.parse(name + "=" + String(repeating: "v", count: 4000)).value.count == 4000)
        #expect(throws: CookieParseError.nameValueTooLong(bytes: 4097)) {
            try SetCookieParser.parse(name + "=" + String(repeating: "v", count: 4001))
        }
    }

    @Test func attributeValuesOver1024BytesAreIgnored() throws {
        let longPath = "/" + String(repeating: "p", count: 1024)
        #expect(try SetCookieParser.parse("a=b; Path=/ok; Path=\(longPath)").path == "/ok")
        let okPath = "/" + String(repeating: "p", count: 1023)
        #expect(try SetCookieParser.parse("a=b; Path=\(okPath)").path == okPath)
    }

    @Test func errorsDescribeThemselves() {
        #expect(CookieParseError.controlCharacter(offset: 3).description.contains("byte 3"))
        #expect(CookieParseError.nameValueTooLong(bytes: 5000).description.contains("4096"))
    }
}
