import Foundation
import KeyjarCore
import KeyjarTestSupport
import Testing

/// The storage model (RFC 6265bis §5.7): expiry, replacement, domains, Secure, HttpOnly,
/// SameSite and prefixes.
struct CookieJarStorageTests {
    @Test func maxAgeWinsOverExpiresInEitherOrder() throws {
        var jar = CookieJar()
        #expect(jar.set("a=1; Max-Age=60; Expires=Wed, 01 Jan 2031 00:00:00 GMT", from: "http://example.com/") == nil)
        #expect(jar.set("b=1; Expires=Wed, 01 Jan 2031 00:00:00 GMT; Max-Age=60", from: "http://example.com/") == nil)
        for cookie in jar.allCookies { #expect(cookie.expires == testNow.addingTimeInterval(60)) }
    }

    @Test func expiryIsCappedAt400Days() throws {
        var jar = CookieJar()
        jar.accept("a=1; Max-Age=999999999", from: "http://example.com/")
        jar.accept("b=1; Expires=Fri, 31 Dec 9999 23:59:59 GMT", from: "http://example.com/")
        for cookie in jar.allCookies { #expect(cookie.expires == testNow.addingTimeInterval(400 * 86_400)) }
    }

    @Test func nonPositiveMaxAgeDeletesTheStoredCookie() throws {
        var jar = CookieJar()
        jar.accept("a=1", from: "http://example.com/")
        let result = jar.setCookie("a=gone; Max-Age=0", context: context("http://example.com/"), now: testNow)
        guard case .success(let changes) = result, case .removed(let removed, .deleted)? = changes.first else {
            Issue.record("expected a deletion, got \(result)")
            return
        }
        #expect(removed.value == "1")
        #expect(jar.count == 0)
        // An already-expired cookie with nothing to delete changes nothing.
        #expect(
            try jar.setCookie(
                "b=1; Expires=Thu, 01 Jan 1970 00:00:00 GMT",
                context: context("http://example.com/"),
                now: testNow
            ).get().isEmpty
        )
    }

    @Test func sessionAndPersistentCookiesAreMarked() {
        var jar = CookieJar()
        jar.accept("s=1", from: "http://example.com/")
        jar.accept("p=1; Max-Age=10", from: "http://example.com/")
        #expect(jar.allCookies.first { $0.name == "s" }?.isSession == true)
        #expect(jar.allCookies.first { $0.name == "p" }?.isSession == false)
        let ended = jar.endSession()
        #expect(ended.map(\.cookie.name) == ["s"])
        #expect(jar.allCookies.map(\.name) == ["p"])
    }

    @Test func replacementKeepsTheOldCreationTime() throws {
        var jar = CookieJar()
        jar.accept("a=1", from: "http://example.com/", now: testNow)
        let later = testNow.addingTimeInterval(100)
        let result = jar.setCookie("a=2", context: context("http://example.com/"), now: later)
        guard case .success(let changes) = result, case .replaced(let old, let new)? = changes.first else {
            Issue.record("expected a replacement, got \(result)")
            return
        }
        #expect(old.value == "1" && new.value == "2")
        #expect(new.creation == testNow)
        #expect(new.lastAccess == later)
        #expect(jar.count == 1)
    }

    @Test func identityIncludesHostOnlyFlagAndPath() {
        var jar = CookieJar()
        jar.accept("a=host", from: "http://example.com/")
        jar.accept("a=domain; Domain=example.com", from: "http://example.com/")
        jar.accept("a=deep; Path=/deep", from: "http://example.com/")
        #expect(jar.count == 3)
        #expect(jar.header(for: "http://example.com/deep/x") == "a=deep; a=host; a=domain")
        #expect(jar.header(for: "http://www.example.com/") == "a=domain")
    }

    @Test func headerOrderIsLongerPathThenEarlierCreation() {
        var jar = CookieJar()
        jar.accept("first=1; Path=/", from: "http://example.com/", now: testNow)
        jar.accept("second=2; Path=/a/b", from: "http://example.com/", now: testNow)
        jar.accept("third=3; Path=/a", from: "http://example.com/", now: testNow)
        jar.accept("fourth=4; Path=/", from: "http://example.com/", now: testNow)
        #expect(jar.header(for: "http://example.com/a/b/c") == "second=2; third=3; first=1; fourth=4")
    }

    @Test func lookupUpdatesLastAccess() throws {
        var jar = CookieJar()
        jar.accept("a=1", from: "http://example.com/")
        let later = testNow.addingTimeInterval(500)
        _ = jar.header(for: "http://example.com/", now: later)
        #expect(try #require(jar.allCookies.first).lastAccess == later)
    }

    @Test func expiredCookiesAreNotSentAndPurgeAsExpired() {
        var jar = CookieJar()
        jar.accept("a=1; Max-Age=10", from: "http://example.com/")
        jar.accept("b=1", from: "http://example.com/")
        let later = testNow.addingTimeInterval(11)
        #expect(jar.header(for: "http://example.com/", now: later) == "b=1")
        let purged = jar.removeExpired(now: later)
        #expect(purged == [.removed(purged[0].cookie, cause: .expired)] && purged[0].cookie.name == "a")
        #expect(jar.count == 1)
    }

    // MARK: Domains and public suffixes

    @Test func domainAttributeMustDomainMatchTheHost() {
        var jar = CookieJar()
        #expect(
            jar.set("a=1; Domain=other.com", from: "http://www.example.com/")
                == .domainMismatch(domain: "other.com", host: "www.example.com")
        )
        #expect(jar.set("a=1; Domain=www.example.com", from: "http://example.com/") != nil)
        #expect(jar.set("a=1; Domain=.EXAMPLE.com", from: "http://www.example.com/") == nil)
        #expect(jar.header(for: "http://deep.sub.example.com/") == "a=1")
        #expect(jar.header(for: "http://notexample.com/") == "")
    }

    @Test(arguments: [("com", "www.example.com"), ("co.uk", "www.example.co.uk"), ("github.io", "user.github.io")])
    func publicSuffixDomainsAreRejected(domain: String, host: String) {
        var jar = CookieJar()
        let rejection = jar.set("super=1; Domain=\(domain)", from: "https://\(host)/")
        #expect(rejection == .publicSuffix(domain: domain))
        #expect(rejection?.description == "Domain=\(domain) is a public suffix")
    }

    @Test func publicSuffixEqualToTheHostBecomesHostOnly() throws {
        var jar = CookieJar()
        #expect(jar.set("a=1; Domain=github.io", from: "https://github.io/") == nil)
        let cookie = try #require(jar.allCookies.first)
        #expect(cookie.hostOnly && cookie.domain == "github.io")
        #expect(jar.header(for: "https://user.github.io/") == "")
    }

    @Test func ipHostsAreSettledBeforeThePublicSuffixList() {
        var jar = CookieJar()
        #expect(
            jar.set("a=1; Domain=0.0.1", from: "http://127.0.0.1/")
                == .domainMismatch(domain: "0.0.1", host: "127.0.0.1")
        )
        #expect(jar.set("b=1; Domain=127.0.0.1", from: "http://127.0.0.1/") == nil)
        #expect(jar.header(for: "http://127.0.0.1/") == "b=1")
        #expect(jar.set("c=1", from: "http://[::1]:8080/") == nil)
        #expect(jar.header(for: "http://[::1]/") == "c=1")
    }

    @Test func unavailableSuffixListFailsClosed() {
        var jar = CookieJar(publicSuffixes: .unavailable())
        #expect(
            jar.set("a=1; Domain=example.com", from: "http://www.example.com/")
                == .publicSuffixListUnavailable(domain: "example.com")
        )
        #expect(jar.set("b=1", from: "http://www.example.com/") == nil)
        #expect(jar.header(for: "http://www.example.com/") == "b=1")
    }

    @Test func nonASCIIDomainAttributeIsRejected() {
        var jar = CookieJar()
        #expect(
            jar.set("a=1; Domain=exämple.com", from: "http://www.xn--exmple-cua.com/")
                == .nonASCIIDomain(domain: "exämple.com")
        )
    }

    // MARK: Secure

    @Test func secureCookiesNeedASecureOrigin() {
        var jar = CookieJar()
        #expect(jar.set("a=1; Secure", from: "http://example.com/") == .secureFromInsecureOrigin)
        #expect(jar.set("a=1; Secure", from: "https://example.com/") == nil)
        #expect(jar.header(for: "http://example.com/") == "")
        #expect(jar.header(for: "https://example.com/") == "a=1")
    }

    @Test func loopbackHTTPIsASecureOrigin() {
        var jar = CookieJar()
        #expect(jar.set("a=1; Secure", from: "http://127.0.0.1:8080/") == nil)
        #expect(jar.header(for: "http://127.0.0.1:9090/") == "a=1")
        #expect(jar.set("b=1; Secure", from: "http://localhost/") == nil)
        #expect(jar.header(for: "http://localhost/") == "b=1")
    }

    @Test func insecureOriginCannotShadowASecureCookie() {
        var jar = CookieJar()
        jar.accept("sid=secret; Secure; Domain=example.com", from: "https://www.example.com/")
        #expect(jar.set("sid=evil", from: "http://www.example.com/") == .wouldOverwriteSecureCookie(name: "sid"))
        #expect(
            jar.set("sid=evil; Path=/deeper", from: "http://example.com/") == .wouldOverwriteSecureCookie(name: "sid")
        )
        // A different name, or a secure origin, is fine.
        #expect(jar.set("other=1", from: "http://www.example.com/") == nil)
        #expect(jar.set("sid=new", from: "https://www.example.com/") == nil)
    }

    // MARK: HttpOnly

    @Test func httpOnlyIsInvisibleToNonHTTPAPIs() {
        var jar = CookieJar()
        jar.accept("h=1; HttpOnly", from: "http://example.com/")
        jar.accept("p=1", from: "http://example.com/")
        #expect(jar.header(for: "http://example.com/") == "h=1; p=1")
        #expect(jar.header(for: "http://example.com/", api: .nonHTTP) == "p=1")
        #expect(jar.set("x=1; HttpOnly", from: "http://example.com/", api: .nonHTTP) == .httpOnlyFromNonHTTPAPI)
        #expect(jar.set("h=2", from: "http://example.com/", api: .nonHTTP) == .wouldOverwriteHttpOnlyCookie(name: "h"))
    }

    // MARK: SameSite

    @Test func sameSiteIsEnforcedOnCrossSiteRequests() {
        var jar = CookieJar()
        jar.accept("strict=1; SameSite=Strict", from: "https://example.com/")
        jar.accept("lax=1; SameSite=Lax", from: "https://example.com/")
        jar.accept("default=1", from: "https://example.com/")
        jar.accept("none=1; SameSite=None; Secure", from: "https://example.com/")
        let all = "strict=1; lax=1; default=1; none=1"
        // Same site, including another subdomain of the same registrable domain
        #expect(jar.header(for: "https://example.com/", main: "https://www.example.com/") == all)
        // Cross-site top-level GET navigation: Lax (and unspecified, treated as Lax) go, Strict does not
        #expect(jar.header(for: "https://example.com/", main: "https://other.org/") == "lax=1; default=1; none=1")
        // Cross-site POST navigation and cross-site subresources: only None
        #expect(jar.header(for: "https://example.com/", main: "https://other.org/", method: "POST") == "none=1")
        #expect(jar.header(for: "https://example.com/", main: "https://other.org/", topLevel: false) == "none=1")
        // Schemeful same-site: an http main document is another site for an https request
        #expect(jar.header(for: "https://example.com/", main: "http://example.com/", topLevel: false) == "none=1")
    }

    @Test func crossSiteSubresourcesCannotSetLaxOrStrictCookies() {
        var jar = CookieJar()
        #expect(
            jar.set("a=1; SameSite=Lax", from: "https://tracker.net/", main: "https://news.org/", topLevel: false)
                == .sameSiteFromCrossSiteRequest(.lax)
        )
        #expect(
            jar.set("b=1", from: "https://tracker.net/", main: "https://news.org/", topLevel: false)
                == .sameSiteFromCrossSiteRequest(.unspecified)
        )
        #expect(
            jar.set(
                "c=1; SameSite=None; Secure",
                from: "https://tracker.net/",
                main: "https://news.org/",
                topLevel: false
            ) == nil
        )
        #expect(jar.set("d=1; SameSite=Strict", from: "https://tracker.net/", main: "https://news.org/") == nil)
    }

    @Test func sameSiteNoneRequiresSecure() {
        var jar = CookieJar()
        #expect(jar.set("a=1; SameSite=None", from: "https://example.com/") == .sameSiteNoneWithoutSecure)
    }

    // MARK: Prefixes

    @Test func securePrefixNeedsSecure() {
        var jar = CookieJar()
        #expect(jar.set("__Secure-a=1", from: "https://example.com/") != nil)
        #expect(jar.set("__SECURE-a=1", from: "https://example.com/") != nil)
        #expect(jar.set("__Secure-a=1; Secure; Domain=example.com", from: "https://www.example.com/") == nil)
    }

    @Test func hostPrefixNeedsSecureHostOnlyAndRootPath() {
        var jar = CookieJar()
        #expect(jar.set("__Host-a=1; Secure; Path=/", from: "https://example.com/x/y") == nil)
        #expect(jar.set("__Host-b=1; Path=/", from: "https://example.com/") != nil)
        #expect(
            jar.set("__Host-b=1; Secure; Path=/; Domain=example.com", from: "https://example.com/")
                == .prefixRequirementsUnmet(prefix: "__Host-", requirement: "have no Domain attribute")
        )
        #expect(
            jar.set("__host-b=1; Secure", from: "https://example.com/x/y")
                == .prefixRequirementsUnmet(prefix: "__Host-", requirement: "have Path=/")
        )
    }

    @Test func namelessCookiesCannotFakeAPrefix() {
        var jar = CookieJar()
        #expect(jar.set("__Host-a", from: "https://example.com/") == .nameLooksLikePrefix)
        #expect(jar.set("=__secure-x", from: "https://example.com/") == .nameLooksLikePrefix)
    }

    @Test func malformedHeadersAreRejectedWithTheParserReason() {
        var jar = CookieJar()
        #expect(jar.set("a=b\u{0}", from: "http://example.com/") == .malformed(.controlCharacter(offset: 3)))
        #expect(jar.set("a=b\u{0}", from: "http://example.com/")?.description.hasPrefix("Malformed Set-Cookie") == true)
    }
}
