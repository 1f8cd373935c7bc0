import Foundation
import FoundationNetworking
import Keyjar
import KeyjarCore
import Testing

struct HTTPCookieConversionTests {
    @Test func aKeyjarCookieSurvivesARoundTripThroughHTTPCookie() throws {
        let cookie = Cookie(
            name: "sid",
            value: "42",
            domain: "example.com",
            hostOnly: false,
            path: "/app",
            expires: Date(timeIntervalSince1970: 1_800_000_000.5),
            secure: true,
            httpOnly: true,
            sameSite: .strict,
            creation: Date(timeIntervalSince1970: 1_700_000_000)
        )
        let foundation = try #require(HTTPCookie.make(from: cookie))
        #expect(foundation.domain == ".example.com" && foundation.isSecure && foundation.isHTTPOnly)
        #expect(foundation.expiresDate == cookie.expires)
        #expect(Cookie(foundation) == cookie)
    }

    @Test func aPartitionedCookieKeepsItsKeyInFoundationsForm() throws {
        let key = try #require(CookiePartitionKey(serialized: "https://news.example"))
        let cookie = Cookie(name: "id", value: "1", domain: "chat.example", secure: true, partitionKey: key)
        let http = try #require(HTTPCookie.make(from: cookie))
        #expect(http.properties?[HTTPCookie.partitionKeyProperty] as? String == "https://news.example")
        #expect(Cookie(http) == cookie)
        // One made from properties is unpartitioned: Foundation on Linux keeps no unknown property
        let plain = try #require(
            HTTPCookie(properties: [
                .name: "id", .value: "1", .domain: ".chat.example", .path: "/", .secure: "TRUE",
                HTTPCookie.partitionKeyProperty: "https://news.example",
            ])
        )
        #expect(Cookie(plain).partitionKey == nil)
    }

    @Test func plainHTTPCookiesAreReadAsAppleDefinesThem() throws {
        let now = Date(timeIntervalSince1970: 1_767_225_600)
        let hostOnly = try #require(
            HTTPCookie(properties: [.name: "a", .value: "1", .domain: "www.example.com", .path: "/"])
        )
        let converted = Cookie(hostOnly, now: now)
        #expect(converted.hostOnly && converted.domain == "www.example.com" && converted.isSession)
        // Max-Age is honoured even though Foundation on Linux leaves expiresDate nil for it.
        let maxAge = try #require(
            HTTPCookie(properties: [
                .name: "b", .value: "2", .domain: ".Example.com", .path: "/", .maximumAge: "60",
                HTTPCookiePropertyKey("HttpOnly"): "TRUE",
            ])
        )
        let withMaxAge = Cookie(maxAge, now: now)
        #expect(!withMaxAge.hostOnly && withMaxAge.domain == "example.com" && withMaxAge.httpOnly)
        let expires = try #require(withMaxAge.expires)
        #expect(abs(expires.timeIntervalSince(withMaxAge.creation) - 60) < 0.001)
    }

    /// Foundation's class methods, through Keyjar's cookie: a response's fields give the cookies
    /// a storage would accept, with SameSite kept; cookies give the Cookie field.
    @Test func headerFieldsConvertThroughKeyjarsCookie() throws {
        let url = try #require(URL(string: "https://www.example.com/"))
        let fromResponse = KeyjarHTTPCookie.cookies(
            withResponseHeaderFields: ["Set-Cookie": "a=1; SameSite=Lax, wide=1; Domain=com", "Content-Length": "0"],
            for: url
        )
        #expect(fromResponse.map(\.name) == ["a"])
        #expect((fromResponse.first as? KeyjarHTTPCookie)?.cookie.sameSite == .lax)
        let plain = try #require(
            HTTPCookie(properties: [.name: "c", .value: "3", .domain: "www.example.com", .path: "/"])
        )
        #expect(Cookie.requestHeaderFields(with: [plain] + fromResponse) == ["Cookie": "c=3; a=1"])
        #expect(KeyjarHTTPCookie.requestHeaderFields(with: fromResponse) == ["Cookie": "a=1"])
        #expect(Cookie.requestHeaderFields(with: [HTTPCookie]()) == [:])
    }
}
