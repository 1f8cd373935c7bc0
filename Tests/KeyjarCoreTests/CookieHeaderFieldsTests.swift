import Foundation
import KeyjarCore
import KeyjarTestSupport
import Testing

/// Header fields to cookies and back, with no store: `HTTPCookie`'s class methods on Keyjar's
/// cookie, by RFC 6265bis's storage model.
struct CookieHeaderFieldsTests {
    @Test func aResponsesFieldsGiveTheCookiesAStorageWouldTakeFromThatURL() throws {
        let url = try #require(URL(string: "https://www.example.com/account/login"))
        let expiry = "Tue, 09 Jun 2026 10:18:14 GMT"
        let cookies = Cookie.cookies(
            withResponseHeaderFields: [
                // Repeated Set-Cookie fields, joined with ", " as Foundation joins them.
                "set-cookie": [
                    "sid=42; Domain=example.com; Secure; HttpOnly; SameSite=Strict",
                    "theme=dark; Max-Age=60",
                    "wide=1; Domain=com",
                    "other=1; Domain=other.org",
                    "gone=1; Max-Age=0",
                    "when=1; Path=/; Expires=\(expiry)",
                ].joined(separator: ", "),
                "Content-Type": "text/html; charset=utf-8",
            ],
            for: url,
            now: testNow
        )
        // A public suffix and a domain the host is not in give no cookie.
        #expect(cookies.map(\.name) == ["sid", "theme", "gone", "when"])
        let sid = try #require(cookies.first)
        #expect(sid.domain == "example.com" && !sid.hostOnly && sid.path == "/account")
        #expect(sid.secure && sid.httpOnly && sid.sameSite == .strict && sid.isSession)
        let theme = cookies[1]
        #expect(theme.domain == "www.example.com" && theme.hostOnly)
        #expect(theme.expires == theme.creation.addingTimeInterval(60))
        // Kept though expired: storing it deletes its twin.
        #expect(cookies[2].isExpired(at: testNow))
        #expect(cookies[3].expires == CookieDate.parse(expiry) && cookies[3].path == "/")
        // Creation times keep the header's order.
        #expect(zip(cookies, cookies.dropFirst()).allSatisfy { $0.creation < $1.creation })
    }

    @Test func theOriginDecidesWhatASecureOrPrefixedCookieMayBe() throws {
        let insecure = try #require(URL(string: "http://example.com/"))
        #expect(Cookie.cookies(withResponseHeaderFields: ["Set-Cookie": "a=1; Secure"], for: insecure).isEmpty)
        let secure = try #require(URL(string: "https://example.com/"))
        let fields = ["Set-Cookie": "__Host-a=1; Secure; Path=/, __Host-b=1; Secure; Path=/; Domain=example.com"]
        #expect(Cookie.cookies(withResponseHeaderFields: fields, for: secure).map(\.name) == ["__Host-a"])
        // A URL without a host sets nothing; other fields are ignored.
        let file = try #require(URL(string: "file:///tmp/x"))
        #expect(Cookie.cookies(withResponseHeaderFields: ["Set-Cookie": "a=1"], for: file).isEmpty)
        #expect(Cookie.cookies(withResponseHeaderFields: ["Cookie": "a=1"], for: secure).isEmpty)
    }

    @Test func cookiesGiveTheCookieFieldInTheirOrder() {
        #expect(Cookie.requestHeaderFields(with: []) == [:])
        let cookies = [
            Cookie(name: "b", value: "2", domain: "example.com"),
            Cookie(name: "", value: "bare", domain: "example.com"),
            Cookie(name: "a", value: "1", domain: "example.com"),
        ]
        #expect(Cookie.requestHeaderFields(with: cookies) == ["Cookie": "b=2; bare; a=1"])
    }

    /// From a response's fields to a request's through a jar: the field the jar sends.
    @Test func whatAResponseSetsGoesBackAsTheJarWouldSendIt() throws {
        let url = try #require(URL(string: "https://example.com/app/page"))
        let fields = ["Set-Cookie": "a=1; Path=/app, b=2; Path=/"]
        let cookies = Cookie.cookies(withResponseHeaderFields: fields, for: url, now: testNow)
        var jar = CookieJar()
        for cookie in cookies { #expect((try? jar.insert(cookie, now: testNow).get()) != nil) }
        let context = try #require(CookieContext(url: url))
        let sent = jar.cookieHeader(for: context, now: testNow)
        let cookiesSent = jar.cookies(for: context, now: testNow)
        #expect(sent == "a=1; b=2")
        #expect(Cookie.requestHeaderFields(with: cookiesSent) == ["Cookie": sent])
    }
}
