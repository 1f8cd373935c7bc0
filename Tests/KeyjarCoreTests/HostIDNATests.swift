import Foundation
import KeyjarCore
import Testing

/// ``Host/asciiName(_:)`` (libidn2, as libcurl resolves a host) against Foundation's URL parser
/// (ICU), which named Unicode hosts before: stored cookies and credentials keep their names.
struct HostIDNATests {
    @Test(arguments: [
        "b\u{FC}cher.example", "B\u{DC}CHER.Example", "m\u{FC}nchen.de", "fa\u{DF}.de", "\u{3B5}\u{3BB}.example",
        "\u{4F8B}\u{3048}.\u{30C6}\u{30B9}\u{30C8}", "caf\u{65}\u{301}.example", "xn--bcher-kva.example.b\u{FC}cher",
        "\u{0645}\u{062B}\u{0627}\u{0644}.example", "\u{1F600}.example",
    ])
    func aUnicodeHostHasFoundationsALabels(_ name: String) throws {
        let foundation = try #require(URL(string: "http://\(name)/")?.host)
        #expect(Host.asciiName(name) == foundation, "\(name)")
        #expect(Host.asciiName(name)?.utf8.allSatisfy { $0 < 0x80 } == true)
    }

    @Test func asciiStaysAsWritten() {
        #expect(Host.asciiName("Example.COM") == "Example.COM")
        #expect(Host.asciiName("xn--bcher-kva.example") == "xn--bcher-kva.example")
        #expect(Host.asciiName("") == "")
    }

    /// Names IDNA refuses name no host: nil, never the text as it came.
    @Test(arguments: ["b\u{FC}cher\u{0}.example", "\u{FC}" + String(repeating: "a", count: 70) + ".example"])
    func aNameIDNARefusesIsNil(_ name: String) {
        #expect(Host.asciiName(name) == nil, "\(name)")
    }

    /// A name that decodes or maps to a delimiter names no host: `evil.example/.bank.example`
    /// must never domain-match `bank.example`. ASCII with a NUL is refused too.
    @Test(arguments: [
        "evil.example%2F.bank.example", "evil.example%2f.bank.example", "a%40bank.example", "a%3A443.bank.example",
        "a%00.bank.example", "evil.example%EF%BC%8F.bank.example", "%5Bbank.example",
    ])
    func anEscapeThatDecodesToADelimiterNamesNoHost(_ host: String) throws {
        #expect(Host.asciiName(percentEncoded: host) == nil, "\(host)")
        let url = try #require(URL(string: "https://\(host)/"))
        #expect(CookieURL(url) == nil, "\(host)")
    }

    @Test func aDelimiterMappedFromUnicodeOrANulNamesNoHost() {
        #expect(Host.asciiName("evil.example\u{FF0F}.bank.example") == nil)
        #expect(Host.asciiName("evil.example\u{FF20}bank.example") == nil)
        #expect(Host.asciiName("bank.example\u{0}") == nil)
        #expect(Host.normalisedDomain("evil.example\u{FF0F}.bank.example") == nil)
        #expect(Host.asciiName(percentEncoded: "ex%41mple.com") == "exAmple.com")
    }

    /// Every way a Unicode host reaches Keyjar names it the same: a URL's percent-encoded host,
    /// a domain a person types, git's `host=`.
    @Test func everyPathGivesTheSameName() throws {
        let url = try #require(URL(string: "https://b%C3%BCcher.example/path"))
        #expect(CookieURL(url)?.host == "xn--bcher-kva.example")
        #expect(
            CookieURL(foundationAccessorsOf: try #require(URL(string: "https://B\u{FC}cher.example/")))?.host
                == "xn--bcher-kva.example"
        )
        #expect(Host.normalisedDomain(".B\u{FC}cher.Example.") == "xn--bcher-kva.example")
        #expect(Host.normalisedDomain("b\u{FC}cher\u{0}.example") == nil)
    }
}
