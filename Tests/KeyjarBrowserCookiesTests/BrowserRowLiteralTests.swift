import Foundation
import KeyjarBrowserCookies
import KeyjarCore
import Testing

/// One browser row at a time, with literal stored values: what the browser keeps, read as the
/// browser would send it.
struct BrowserRowLiteralTests {
    static let now = Date(timeIntervalSince1970: 1_800_000_000)
    /// 2100-01-01T00:00:00Z.
    static let year2100 = Date(timeIntervalSince1970: 4_102_444_800)
    /// Seconds between 1601-01-01 and 1970-01-01, Chromium's epoch.
    static let windowsEpoch: Int64 = 11_644_473_600

    static func chromium(
        host: String = ".example.com",
        path: String = "/",
        expiresUTC: Int64 = (4_102_444_800 + windowsEpoch) * 1_000_000,
        persistent: Bool = true
    ) -> ChromiumCookieRow {
        ChromiumCookieRow(
            hostKey: host,
            name: "sid",
            value: Array("42".utf8),
            path: path,
            expiresUTC: expiresUTC,
            creationUTC: (1_700_000_000 + windowsEpoch) * 1_000_000,
            lastAccessUTC: (1_700_000_000 + windowsEpoch) * 1_000_000,
            isPersistent: persistent,
            isSecure: true,
            isHttpOnly: false,
            sameSite: -1,
            topFrameSiteKey: ""
        )
    }

    static func firefox(expiry: Int64, milliseconds: Bool) -> FirefoxCookieRow {
        FirefoxCookieRow(
            name: "sid",
            value: "42",
            host: "example.com",
            path: "/",
            expiry: expiry,
            expiryInMilliseconds: milliseconds,
            creationTime: 1_700_000_000_000_000,
            lastAccessed: 1_700_000_000_000_000,
            isSecure: true,
            isHttpOnly: false,
            sameSite: 1,
            rawSameSite: 1,
            originAttributes: ""
        )
    }

    @Test func firefoxExpiryIsSecondsBeforeSchema16AndMillisecondsFrom() throws {
        let seconds = try BrowserCookieRowDecoder.cookie(
            Self.firefox(expiry: 4_102_444_800, milliseconds: false),
            container: 0,
            now: Self.now
        ).get()
        let milliseconds = try BrowserCookieRowDecoder.cookie(
            Self.firefox(expiry: 4_102_444_800_000, milliseconds: true),
            container: 0,
            now: Self.now
        ).get()
        #expect(seconds.expires == Self.year2100)
        #expect(milliseconds.expires == Self.year2100)
        #expect(milliseconds.creation == Date(timeIntervalSince1970: 1_700_000_000))
    }

    @Test func chromiumTimesCountFrom1601AndHasExpiresDecidesASession() throws {
        let persistent = try BrowserCookieRowDecoder.cookie(Self.chromium(), now: Self.now).get()
        #expect(persistent.expires == Self.year2100)
        #expect(persistent.creation == Date(timeIntervalSince1970: 1_700_000_000))
        // has_expires = 0: a session cookie, whatever expires_utc holds.
        #expect(try BrowserCookieRowDecoder.cookie(Self.chromium(persistent: false), now: Self.now).get().isSession)
        // A persistent cookie whose expiry is 0 (1601) or before now is expired; a huge one is
        // capped, not an overflow.
        #expect(BrowserCookieRowDecoder.cookie(Self.chromium(expiresUTC: 0), now: Self.now) == .failure(.expired))
        let far = try BrowserCookieRowDecoder.cookie(Self.chromium(expiresUTC: .max), now: Self.now).get()
        #expect(far.expires.map { $0 > Self.year2100 } == true)
    }

    @Test func anIPv6HostIsStoredAsTheJarHasItAndAnIPIsOnlyItself() throws {
        let ipv6 = try BrowserCookieRowDecoder.cookie(Self.chromium(host: "[::1]"), now: Self.now).get()
        #expect(ipv6.domain == "::1" && ipv6.hostOnly)
        // A Domain cookie on an IP address matches only that address: host-only, as the jar makes it.
        let ipv4 = try BrowserCookieRowDecoder.cookie(Self.chromium(host: ".192.0.2.1"), now: Self.now).get()
        #expect(ipv4.domain == "192.0.2.1" && ipv4.hostOnly)
        let named = try BrowserCookieRowDecoder.cookie(Self.chromium(host: ".Example.COM"), now: Self.now).get()
        #expect(named.domain == "example.com" && !named.hostOnly)
    }

    /// Found by fuzzing: `[.]` lost its brackets as an IPv6 address does and left the domain `.`.
    @Test(arguments: ["[.]", ".[.]", "[..example.com]", "[example.com]", "[]", "..", "[.]."])
    func aHostThatIsNoHostIsSkipped(host: String) throws {
        #expect(BrowserCookieRowDecoder.cookie(Self.chromium(host: host), now: Self.now) == .failure(.badDomain))
        var row = Self.firefox(expiry: 4_102_444_800, milliseconds: false)
        row.host = host
        #expect(BrowserCookieRowDecoder.cookie(row, container: 0, now: Self.now) == .failure(.badDomain))
    }

    @Test func aPathThatIsNoPathIsSkippedNotWidened() throws {
        #expect(BrowserCookieRowDecoder.cookie(Self.chromium(path: "admin"), now: Self.now) == .failure(.badPath))
        #expect(try BrowserCookieRowDecoder.cookie(Self.chromium(path: "/admin"), now: Self.now).get().path == "/admin")
    }
}
