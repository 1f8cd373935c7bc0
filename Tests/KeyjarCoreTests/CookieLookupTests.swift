import Foundation
import KeyjarCore
import KeyjarTestSupport
import Testing

/// The Cookie header's lookup (each site's lookup index, `CookieBucket`) against the retrieval
/// algorithm of RFC 6265bis §5.8.3 written out plainly, over random jars that change between
/// lookups; and the reading of a plain URL against Foundation's accessors.
struct CookieLookupTests {
    private static let hosts = ["example.com", "www.example.com", "a.b.example.com", "other.org", "127.0.0.1"]
    private static let paths = ["/", "/a", "/a/", "/a/b", "/ab", "/b/c"]

    /// A cookie with random attributes for one of `hosts`.
    private static func randomCookie(_ random: inout SplitMix64, sequence: Int) -> Cookie {
        let host = hosts.randomElement(using: &random)!
        let isIP = host == "127.0.0.1"
        let hostOnly = isIP || Bool.random(using: &random)
        // A domain cookie's domain is the host or one of its parents below the public suffix.
        var domain = host
        if !hostOnly, host.hasSuffix("example.com"), Bool.random(using: &random) { domain = "example.com" }
        let expiry: Date? = [nil, testNow.addingTimeInterval(-1), testNow, testNow.addingTimeInterval(3600)]
            .randomElement(using: &random)!
        let partitioned = Int.random(in: 0..<6, using: &random) == 0
        return Cookie(
            // Names repeat so that some cookies replace others; one in eight has no name.
            name: Int.random(in: 0..<8, using: &random) == 0 ? "" : "n\(Int.random(in: 0..<6, using: &random))",
            value: "v\(sequence)",
            domain: domain,
            hostOnly: hostOnly,
            path: paths.randomElement(using: &random)!,
            expires: expiry,
            secure: Bool.random(using: &random),
            httpOnly: Int.random(in: 0..<3, using: &random) == 0,
            sameSite: [.unspecified, .lax, .strict, .none].randomElement(using: &random)!,
            // Few distinct creation times: header order must settle ties the same way.
            creation: testNow.addingTimeInterval(-Double(Int.random(in: 0..<5, using: &random))),
            partitionKey: partitioned
                ? CookiePartitionKey(
                    scheme: "https",
                    site: ["example.com", "other.org"].randomElement(using: &random)!
                )
                : nil
        )
    }

    private static func randomContext(_ random: inout SplitMix64) -> CookieContext {
        let scheme = Bool.random(using: &random) ? "https" : "http"
        let url = "\(scheme)://\(hosts.randomElement(using: &random)!)\(paths.randomElement(using: &random)!)"
        let main: String? = [nil, "https://example.com/", "https://other.org/", "http://www.example.com/"]
            .randomElement(using: &random)!
        return context(
            url,
            main: main,
            topLevel: Bool.random(using: &random),
            method: Bool.random(using: &random) ? "GET" : "POST",
            api: Int.random(in: 0..<4, using: &random) == 0 ? .nonHTTP : .http
        )
    }

    /// RFC 6265bis §5.8.3 step by step over every stored cookie.
    private static func expected(_ jar: inout CookieJar, _ context: CookieContext, now: Date) -> [Cookie] {
        let request = context.url
        let hostIsName = !Host.isIPAddress(request.host)
        let sameSite: Bool
        if let site = context.siteForCookies {
            let secureSchemes = ["https", "wss"]
            sameSite =
                secureSchemes.contains(site.scheme) == secureSchemes.contains(request.scheme)
                && jar.siteKey(for: site.host) == jar.siteKey(for: request.host)
        } else {
            sameSite = true
        }
        let requestPartition = jar.partitionKey(for: context)
        // `noThirdParty` sends a third-party request its partitioned cookies only.
        let partitionedOnly =
            jar.policy.acceptPolicy == .noThirdParty
            && context.siteForCookies.map { jar.siteKey(for: $0.host) != jar.siteKey(for: request.host) } == true
        let candidates = jar.allCookies.filter { cookie in
            let domainMatches =
                cookie.hostOnly || !hostIsName
                ? cookie.domain == request.host
                : cookie.domain == request.host || request.host.hasSuffix("." + cookie.domain)
            guard domainMatches, CookiePath.matches(request.path, cookie.path),
                !cookie.secure || request.isSecure,
                !cookie.httpOnly || context.api == .http,
                !cookie.isExpired(at: now)
            else { return false }
            if !sameSite {
                switch cookie.sameSite {
                case .strict: return false
                case .lax, .unspecified:
                    guard context.isTopLevelNavigation && context.isSafeMethod else { return false }
                case .none: break
                }
            }
            guard let partition = cookie.partitionKey else { return !partitionedOnly }
            return partition == requestPartition
        }
        // Stable: ties keep the stored order.
        return candidates.enumerated().sorted { a, b in
            let (aLength, bLength) = (a.element.path.utf8.count, b.element.path.utf8.count)
            if aLength != bLength { return aLength > bLength }
            if a.element.creation != b.element.creation { return a.element.creation < b.element.creation }
            return a.offset < b.offset
        }.map(\.element)
    }

    @Test(arguments: 0..<8)
    func lookupsFollowTheRetrievalAlgorithmAcrossChanges(seed: UInt64) {
        var random = SplitMix64(seed: seed)
        // Odd seeds refuse third-party cookies, which leaves third-party requests their
        // partitioned cookies only.
        var jar = CookieJar(policy: CookiePolicy(acceptPolicy: seed % 2 == 0 ? .always : .noThirdParty))
        var sequence = 0
        var lookups = 0
        var nonEmpty = 0
        for _ in 0..<60 {
            // Change the jar (adds, replacements, removals), then look up several times: the
            // first lookup after a change rebuilds the site's index, the others reuse it.
            for _ in 0..<Int.random(in: 1...6, using: &random) {
                sequence += 1
                let cookie = Self.randomCookie(&random, sequence: sequence)
                if Int.random(in: 0..<5, using: &random) == 0, let victim = jar.allCookies.randomElement(using: &random)
                {
                    jar.remove(victim.identity)
                } else {
                    jar.restore(cookie)
                }
            }
            for _ in 0..<8 {
                let context = Self.randomContext(&random)
                let want = Self.expected(&jar, context, now: testNow)
                let got = jar.cookies(for: context, now: testNow)
                #expect(got.map(\.identity) == want.map(\.identity), "seed \(seed), \(context.url)")
                #expect(got.map(\.value) == want.map(\.value), "seed \(seed), \(context.url)")
                let header = jar.cookieHeader(for: context, now: testNow)
                let wantHeader = want.isEmpty ? nil : want.map(\.headerPair).joined(separator: "; ")
                #expect(header == wantHeader, "seed \(seed), \(context.url)")
                lookups += 1
                if !want.isEmpty { nonEmpty += 1 }
            }
        }
        // The comparison must have had cookies to compare.
        #expect(nonEmpty > lookups / 4, "only \(nonEmpty) of \(lookups) lookups sent a cookie")
    }

    @Test func aReplacedValueIsSentAfterTheSiteWasLookedUp() {
        var jar = CookieJar()
        jar.accept("a=1", from: "https://example.com/")
        jar.accept("b=2; Path=/x", from: "https://example.com/x")
        #expect(jar.header(for: "https://example.com/x") == "b=2; a=1")
        jar.accept("a=changed", from: "https://example.com/")
        #expect(jar.header(for: "https://example.com/x") == "b=2; a=changed")
        jar.accept("c=3; Path=/x/y", from: "https://example.com/x/y")
        #expect(jar.header(for: "https://example.com/x/y") == "c=3; b=2; a=changed")
        jar.remove(Cookie.Identity(name: "b", domain: "example.com", hostOnly: true, path: "/x"))
        #expect(jar.header(for: "https://example.com/x/y") == "c=3; a=changed")
    }

    @Test func cookiesLeftOutInTheMiddleLeaveNoGap() {
        var jar = CookieJar()
        jar.accept("a=1; Path=/p", from: "https://example.com/p")
        jar.accept("secret=2; Path=/p; Secure", from: "https://example.com/p")
        jar.accept("=bare; Path=/p", from: "https://example.com/p")
        jar.accept("last=4", from: "https://example.com/")
        #expect(jar.header(for: "https://example.com/p") == "a=1; secret=2; bare; last=4")
        #expect(jar.header(for: "http://example.com/p") == "a=1; bare; last=4")
        #expect(jar.header(for: "http://example.com/") == "last=4")
    }

    @Test func aLookupUpdatesLastAccess() throws {
        var jar = CookieJar()
        jar.accept("a=1", from: "https://example.com/")
        let later = testNow.addingTimeInterval(60)
        _ = jar.cookieHeader(for: context("https://example.com/"), now: later)
        #expect(try #require(jar.allCookies.first).lastAccess == later)
        // A second lookup still finds it (the time is not part of the lookup index).
        #expect(jar.cookieHeader(for: context("https://example.com/"), now: later) == "a=1")
    }

    /// URLs that Foundation parses: where the plain reader answers, it answers as Foundation's
    /// accessors do.
    @Test func aPlainURLReadsAsFoundationReadsIt() throws {
        var strings = [
            "https://www.example.com/a/b?x=1#f", "http://EXAMPLE.com", "http://example.com:8080", "http://example.com:",
            "https://example.com:65535/", "https://example.com:65536/", "https://example.com:080/x",
            "http://user:pass@example.com/", "http://[::1]:8080/x", "http://ex%41mple.com/", "http://exa_mple.com/",
            "https://example.com?q", "https://example.com#f", "https://example.com/a/../b/./c",
            "https://example.com//x",
            "HTTPS://WWW.Example.COM:8443", "ftp://files.example.com/pub/", "x-y+z.w://host.example/p",
            "http://127.0.0.1/", "http://0x7f.1/", "https://bücher.example/", "https://example.com/ä?ö",
            "https://example.com/%7Euser", "https://example.com/a b", "http://example.com./", "http://-x-.com/",
            "https://example.com\\path", "mailto:someone@example.com", "file:///tmp/x", "https:///path",
            "https://example.com:+80/",
        ]
        var random = SplitMix64(seed: 35)
        let alphabet = Array("aZ09.-_:/?#@[]%+ ~ä")
        for _ in 0..<2000 {
            let length = Int.random(in: 0..<24, using: &random)
            let tail = String((0..<length).map { _ in alphabet.randomElement(using: &random)! })
            strings.append(
                ["https://", "http://", "hTTp://", "a:", "https://example.com"].randomElement(using: &random)! + tail
            )
        }
        var plainCount = 0
        for string in strings {
            guard let url = URL(string: string) else { continue }
            let reference = CookieURL(foundationAccessorsOf: url)
            guard let plain = CookieURL(plainAbsoluteString: url.relativeString) else { continue }
            plainCount += 1
            #expect(plain == reference, "\(string)")
            #expect(CookieURL(url) == reference, "\(string)")
        }
        // The common shapes take the plain reader.
        for string in ["https://www.example.com/a/b?x=1#f", "http://EXAMPLE.com", "http://localhost:8080/x"] {
            #expect(CookieURL(plainAbsoluteString: string) != nil, "\(string)")
        }
        #expect(plainCount > 200, "the plain reader answered only \(plainCount) times")
    }
}
