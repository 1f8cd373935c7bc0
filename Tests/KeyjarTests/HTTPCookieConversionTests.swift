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
}
