import Foundation
import KeyjarCore
import KeyjarTestSupport
import Testing

/// Partitioned cookies (CHIPS): the `Partitioned` attribute, the partition key (the top-level
/// site), keeping and sending per partition, and Chromium's per-partition limits.
struct PartitionedCookieTests {
    /// A widget embedded by two unrelated top-level sites.
    static let widget = "https://embed.widget.com/frame"
    static let news = "https://www.news.com/"
    static let shop = "https://shop.example.co.uk/"
    static let chips = "id=1; Secure; Path=/; SameSite=None; Partitioned"

    static func key(_ serialized: String, sourceLocation: SourceLocation = #_sourceLocation) -> CookiePartitionKey? {
        let key = CookiePartitionKey(serialized: serialized)
        if key == nil { Issue.record("bad test key \(serialized)", sourceLocation: sourceLocation) }
        return key
    }

    // MARK: The attribute

    @Test(arguments: ["Partitioned", "partitioned", "PARTITIONED", " Partitioned ", "Partitioned=no"])
    func partitionedIsAFlagInAnyCase(attribute: String) throws {
        #expect(try SetCookieParser.parse("a=1; Secure; \(attribute)").partitioned)
    }

    @Test func cookiesWithoutTheAttributeAreNotPartitioned() throws {
        #expect(try SetCookieParser.parse("a=1; Secure; Partition; Partitioneded").partitioned == false)
        var jar = CookieJar()
        jar.accept("a=1; Secure; SameSite=None", from: Self.widget, main: Self.news)
        #expect(jar.allCookies.map(\.partitionKey) == [nil])
    }

    @Test func partitionedWithoutSecureIsRejected() {
        var jar = CookieJar()
        let rejection = jar.setEmbedded("id=1; Path=/; SameSite=None; Partitioned", under: Self.news)
        #expect(rejection == .partitionedWithoutSecure)
        #expect(rejection?.description == "A Partitioned cookie requires the Secure attribute")
        #expect(jar.count == 0)
        // Also from a top-level response, and for a cookie built by a program.
        #expect(jar.set("id=1; Partitioned", from: Self.news) == .partitionedWithoutSecure)
        let built = Cookie(name: "id", value: "1", domain: "news.com", partitionKey: Self.key("https://news.com"))
        #expect(jar.insert(built, now: testNow) == .failure(.partitionedWithoutSecure))
        #expect(jar.count == 0)
    }

    // MARK: The partition key

    @Test func theKeyIsTheMainDocumentsSchemefulSite() throws {
        var jar = CookieJar()
        #expect(jar.setEmbedded(Self.chips, under: "https://www.news.com/article/1") == nil)
        let cookie = try #require(jar.allCookies.first)
        #expect(cookie.partitionKey == Self.key("https://news.com"))
        #expect(cookie.isPartitioned)
        #expect(cookie.description.hasSuffix("; partitioned=https://news.com"))
        // Stored for the widget's own domain: the embedded site's cookie, in the news partition.
        #expect(cookie.domain == "embed.widget.com")
    }

    @Test func withoutAMainDocumentTheKeyIsTheRequestsOwnSite() throws {
        var jar = CookieJar()
        jar.accept(Self.chips, from: "https://embed.widget.com/")
        #expect(try #require(jar.allCookies.first).partitionKey == Self.key("https://widget.com"))
        // A top-level visit reads that partition, and so does a frame under the widget's site...
        #expect(jar.header(for: "https://embed.widget.com/") == "id=1")
        #expect(jar.embeddedHeader(under: "https://www.widget.com/") == "id=1")
        // ...but not a frame under another site.
        #expect(jar.embeddedHeader(under: Self.news) == "")
    }

    @Test func aPartitionedCookieIsSentOnlyUnderItsOwnTopLevelSite() {
        var jar = CookieJar()
        #expect(jar.setEmbedded(Self.chips, under: Self.news) == nil)
        #expect(jar.embeddedHeader(under: Self.news) == "id=1")
        // Same site, another page and another host of it.
        #expect(jar.embeddedHeader(under: "https://news.com/sport") == "id=1")
        // Another top-level site, and the widget visited directly.
        #expect(jar.embeddedHeader(under: Self.shop) == "")
        #expect(jar.header(for: Self.widget) == "")
    }

    @Test(arguments: [CookieAcceptPolicy.onlyFromMainDocumentDomain, .noThirdParty, .grandfatheredThirdParty])
    func thirdPartyPoliciesLetPartitionedCookiesThrough(policy: CookieAcceptPolicy) {
        // Given a jar that refuses third-party cookies
        var jar = CookieJar()
        jar.policy.acceptPolicy = policy
        // Then the embedded widget's ordinary cookie is refused, its partitioned one kept
        #expect(jar.setEmbedded("plain=1; Secure; SameSite=None", under: Self.news) != nil)
        #expect(jar.setEmbedded(Self.chips, under: Self.news) == nil)
        #expect(jar.allCookies.map(\.name) == ["id"])
        // ...and sent to the widget under that site only
        #expect(jar.embeddedHeader(under: Self.news) == "id=1")
        #expect(jar.embeddedHeader(under: Self.shop) == "")
    }

    @Test func aPartitionedCookieDoesNotGrandfatherItsSite() {
        // Given a jar that takes third-party cookies only from sites it has cookies of
        var jar = CookieJar()
        jar.policy.acceptPolicy = .grandfatheredThirdParty
        // When the embedded widget first sets a partitioned cookie (let through), then an ordinary one
        #expect(jar.setEmbedded(Self.chips, under: Self.news) == nil)
        // Then the ordinary one is still a third-party cookie of a site without first-party cookies
        #expect(jar.setEmbedded("plain=1; Secure; SameSite=None", under: Self.news) != nil)
        #expect(jar.allCookies.map(\.name) == ["id"])
        // ...until the widget is visited directly and sets one itself
        jar.accept("own=1; Secure; SameSite=None", from: Self.widget)
        #expect(jar.setEmbedded("plain=1; Secure; SameSite=None", under: Self.news) == nil)
    }

    @Test func replacingAPartitionedCookieWithALongerValueHoldsThePartitionToItsBytes() throws {
        // Given a partition 100 bytes short of its 10,240 bytes of names and values
        var jar = CookieJar()
        for index in 0..<10 {
            let value = String(repeating: "v", count: 1_014 - "c\(index)".utf8.count)
            #expect(
                jar.setEmbedded(
                    "c\(index)=\(value); Secure; SameSite=None; Partitioned",
                    under: Self.news,
                    now: testNow.addingTimeInterval(Double(index))
                ) == nil
            )
        }
        #expect(jar.count == 10)
        // When the newest is set again with 200 more bytes
        let longer = String(repeating: "w", count: 1_212)
        #expect(
            jar.setEmbedded(
                "c9=\(longer); Secure; SameSite=None; Partitioned",
                under: Self.news,
                now: testNow.addingTimeInterval(20)
            ) == nil
        )
        // Then the least recently used goes, and the partition is within its bytes again
        #expect(jar.count == 9)
        #expect(!jar.allCookies.contains { $0.name == "c0" })
        #expect(jar.allCookies.reduce(0) { $0 + $1.name.utf8.count + $1.value.utf8.count } <= 10_240)
    }

    @Test func noThirdPartySendsAThirdPartyRequestItsPartitionedCookiesOnly() {
        // Given a widget's ordinary cookie set while it was visited directly, and its partitioned one
        var jar = CookieJar()
        jar.accept("plain=1; Secure; SameSite=None", from: Self.widget)
        #expect(jar.setEmbedded(Self.chips, under: Self.news) == nil)
        #expect(jar.embeddedHeader(under: Self.news) == "plain=1; id=1")
        // When third-party cookies are no longer sent
        jar.policy.acceptPolicy = .noThirdParty
        // Then the embedded widget gets its partitioned cookie only, and all of them first-party
        #expect(jar.embeddedHeader(under: Self.news) == "id=1")
        #expect(jar.header(for: Self.widget) == "plain=1")
        // ...while never and a blocking rule still refuse partitioned cookies too
        jar.policy.acceptPolicy = .never
        #expect(jar.setEmbedded("other=1; Secure; SameSite=None; Partitioned", under: Self.news) != nil)
        jar.policy.acceptPolicy = .always
        jar.policy.domainRules["widget.com"] = .block
        #expect(jar.setEmbedded("other=1; Secure; SameSite=None; Partitioned", under: Self.news) != nil)
        #expect(jar.embeddedHeader(under: Self.news) == "")
    }

    @Test func aDomainAttributeSharesTheCookieWithinItsPartitionOnly() {
        var jar = CookieJar()
        // CHIPS dropped its early "no Domain" rule; `__Host-` is recommended, not required.
        let header = "id=1; Domain=widget.com; Secure; Path=/; SameSite=None; Partitioned"
        #expect(jar.setEmbedded(header, under: Self.news) == nil)
        #expect(jar.header(for: "https://api.widget.com/", main: Self.news, topLevel: false) == "id=1")
        #expect(jar.header(for: "https://api.widget.com/", main: Self.shop, topLevel: false) == "")
        #expect(jar.setEmbedded("__Host-id=2; Secure; Path=/; SameSite=None; Partitioned", under: Self.news) == nil)
        #expect(jar.embeddedHeader(under: Self.news) == "id=1; __Host-id=2")
    }

    @Test func theKeysSchemeCounts() {
        var jar = CookieJar()
        #expect(jar.setEmbedded(Self.chips, under: Self.news) == nil)
        #expect(jar.embeddedHeader(under: "http://www.news.com/") == "")
        // wss and https are one scheme for a site; ws and http another.
        #expect(jar.embeddedHeader(under: "wss://www.news.com/") == "id=1")
    }

    @Test func eachPartitionKeepsItsOwnCookieOfTheSameIdentity() {
        var jar = CookieJar()
        #expect(jar.setEmbedded("id=news; Secure; SameSite=None; Path=/; Partitioned", under: Self.news) == nil)
        #expect(jar.setEmbedded("id=shop; Secure; SameSite=None; Path=/; Partitioned", under: Self.shop) == nil)
        #expect(jar.setEmbedded("id=plain; Secure; SameSite=None; Path=/", under: Self.news) == nil)
        #expect(jar.count == 3)
        // Earlier creation first: the partitioned cookies were set before the plain one.
        #expect(jar.embeddedHeader(under: Self.news) == "id=news; id=plain")
        #expect(jar.embeddedHeader(under: Self.shop) == "id=shop; id=plain")
        #expect(jar.header(for: Self.widget) == "id=plain")

        // Setting it again under one site replaces only that partition's cookie.
        let result = jar.setCookie(
            "id=news2; Secure; SameSite=None; Path=/; Partitioned",
            context: context(Self.widget, main: Self.news, topLevel: false),
            now: testNow.addingTimeInterval(1)
        )
        guard case .success(let changes) = result, case .replaced(let old, let new)? = changes.first else {
            Issue.record("expected a replacement, got \(result)")
            return
        }
        #expect(old.value == "news" && new.value == "news2")
        #expect(old.identity == new.identity)
        #expect(old.identity != jar.allCookies.first { $0.value == "shop" }?.identity)
        #expect(jar.count == 3)
        #expect(jar.embeddedHeader(under: Self.shop) == "id=shop; id=plain")
    }

    @Test func removingByIdentityRemovesOnlyThatPartitionsCookie() {
        var jar = CookieJar()
        #expect(jar.setEmbedded(Self.chips, under: Self.news) == nil)
        #expect(jar.setEmbedded(Self.chips, under: Self.shop) == nil)
        let unpartitioned = Cookie.Identity(name: "id", domain: "embed.widget.com", hostOnly: true, path: "/")
        #expect(jar.remove(unpartitioned) == nil)
        var newsCookie = unpartitioned
        newsCookie.partitionKey = Self.key("https://news.com")
        #expect(jar.remove(newsCookie)?.cookie.partitionKey == Self.key("https://news.com"))
        #expect(jar.count == 1)
        #expect(jar.embeddedHeader(under: Self.shop) == "id=1")
    }

    @Test func aPartitionedSecureCookieDoesNotBlockAnInsecureUnpartitionedOne() {
        var jar = CookieJar()
        jar.accept("id=1; Secure; Path=/; Partitioned", from: "https://www.widget.com/")
        // RFC 6265bis §5.7 step 16 looks only at cookies that could be sent with this one.
        #expect(jar.set("id=2; Path=/", from: "http://www.widget.com/") == nil)
        #expect(jar.count == 2)
        // Unpartitioned, a Secure cookie still blocks it.
        jar.accept("other=1; Secure; Path=/", from: "https://www.widget.com/")
        #expect(
            jar.set("other=2; Path=/", from: "http://www.widget.com/") == .wouldOverwriteSecureCookie(name: "other")
        )
    }

    @Test func lookupUpdatesAPartitionedCookiesLastAccess() throws {
        var jar = CookieJar()
        #expect(jar.setEmbedded(Self.chips, under: Self.news) == nil)
        let later = testNow.addingTimeInterval(50)
        #expect(jar.embeddedHeader(under: Self.shop, now: later) == "")
        #expect(try #require(jar.allCookies.first).lastAccess == testNow)
        #expect(jar.embeddedHeader(under: Self.news, now: later) == "id=1")
        #expect(try #require(jar.allCookies.first).lastAccess == later)
    }

    @Test func insertedCookiesKeepTheirPartitionUnderTheSitesKey() throws {
        var jar = CookieJar()
        let cookie = Cookie(
            name: "id",
            value: "1",
            domain: "embed.widget.com",
            hostOnly: true,
            secure: true,
            sameSite: .none,
            partitionKey: Self.key("https://www.news.com")
        )
        _ = try jar.insert(cookie, now: testNow).get()
        #expect(try #require(jar.allCookies.first).partitionKey == Self.key("https://news.com"))
        #expect(jar.embeddedHeader(under: Self.news) == "id=1")
        #expect(jar.embeddedHeader(under: Self.shop) == "")
    }

    // MARK: The key's form

    @Test func keysAreWrittenAsSchemeAndSite() throws {
        #expect(CookiePartitionKey(scheme: "HTTPS", site: "News.COM")?.serialized == "https://news.com")
        #expect(CookiePartitionKey(scheme: "wss", site: "news.com")?.serialized == "https://news.com")
        #expect(CookiePartitionKey(scheme: "ws", site: "news.com")?.serialized == "http://news.com")
        let ipv6 = try #require(CookiePartitionKey(scheme: "http", site: "[::1]"))
        #expect(ipv6.serialized == "http://[::1]")
        #expect(ipv6.site == "::1")
        #expect(ipv6.scheme == "http")
        for text in ["https://news.com", "http://[::1]", "http://192.168.0.1"] {
            #expect(CookiePartitionKey(serialized: text)?.serialized == text)
        }
    }

    @Test(arguments: [
        "news.com", "https:/news.com", "https://", "://news.com", "1https://news.com", "https://news.com:443",
        "https://news.com/", "https://a b.com", "https://ünï.com", "https://[news.com]",
    ])
    func malformedKeysAreRefused(text: String) {
        #expect(CookiePartitionKey(serialized: text) == nil)
    }

    // MARK: Limits

    @Test func aPartitionHoldsAtMost180CookiesOfASite() {
        var jar = CookieJar()
        for index in 0..<181 {
            let rejection = jar.setEmbedded(
                "c\(index)=1; Secure; SameSite=None; Path=/; Partitioned",
                under: Self.news,
                now: testNow.addingTimeInterval(Double(index))
            )
            #expect(rejection == nil)
        }
        // Chromium evicts down to the limit, not to a purge target: one cookie, the least
        // recently accessed.
        #expect(jar.count == 180)
        #expect(jar.allCookies.contains { $0.name == "c0" } == false)
        // Another partition has a limit of its own.
        #expect(jar.setEmbedded(Self.chips, under: Self.shop) == nil)
        #expect(jar.count == 181)
    }

    @Test func aPartitionHoldsAtMost10KiBOfNamesAndValuesOfASite() throws {
        var jar = CookieJar()
        // 40 cookies of 256 bytes each fill the 10,240 bytes exactly.
        for index in 0..<40 {
            let name = "c\(index)"
            let value = String(repeating: "v", count: 256 - name.utf8.count)
            let header = "\(name)=\(value); Secure; SameSite=None; Path=/; Partitioned"
            #expect(jar.setEmbedded(header, under: Self.news, now: testNow.addingTimeInterval(Double(index))) == nil)
        }
        #expect(jar.count == 40)
        let result = jar.setCookie(
            "big=\(String(repeating: "v", count: 600)); Secure; SameSite=None; Path=/; Partitioned",
            context: context(Self.widget, main: Self.news, topLevel: false),
            now: testNow.addingTimeInterval(60)
        )
        let changes = try result.get()
        let evicted = changes.compactMap { change -> String? in
            if case .removed(let cookie, .evicted) = change { return cookie.name }
            return nil
        }
        // 40 × 256 + 603 bytes: three of 256 must go, the least recently accessed, though only
        // the byte limit was passed.
        #expect(evicted == ["c0", "c1", "c2"])
        #expect(jar.count == 38)
    }

    @Test func expiredPartitionedCookiesAreEvictedFirst() throws {
        var jar = CookieJar(limits: CookieJar.Limits(perSiteInPartition: 3))
        let headers = ["old=1", "expiring=1; Max-Age=5", "newer=1"]
        for (offset, header) in headers.enumerated() {
            let full = header + "; Secure; SameSite=None; Path=/; Partitioned"
            #expect(jar.setEmbedded(full, under: Self.news, now: testNow.addingTimeInterval(Double(offset))) == nil)
        }
        let result = jar.setCookie(
            "latest=1; Secure; SameSite=None; Path=/; Partitioned",
            context: context(Self.widget, main: Self.news, topLevel: false),
            now: testNow.addingTimeInterval(10)
        )
        let removed = try result.get().compactMap { change -> String? in
            if case .removed(let cookie, let cause) = change { return "\(cookie.name):\(cause.rawValue)" }
            return nil
        }
        #expect(removed == ["expiring:expired"])
        #expect(Set(jar.allCookies.map(\.name)) == ["old", "newer", "latest"])
    }

    @Test func partitionedCookiesDoNotCountAgainstTheSitesLimit() {
        var jar = CookieJar(limits: CookieJar.Limits(perSite: 4, perSitePurgedTo: 2, perSiteInPartition: 4))
        for index in 0..<4 {
            #expect(
                jar.setEmbedded("p\(index)=1; Secure; SameSite=None; Path=/; Partitioned", under: Self.news) == nil
            )
            #expect(jar.setEmbedded("u\(index)=1; Secure; SameSite=None; Path=/", under: Self.news) == nil)
        }
        #expect(jar.count == 8)
        // The fifth unpartitioned cookie evicts unpartitioned ones only, down to 2.
        #expect(jar.setEmbedded("u4=1; Secure; SameSite=None; Path=/", under: Self.news) == nil)
        #expect(jar.allCookies.filter { !$0.isPartitioned }.map(\.name).sorted() == ["u3", "u4"])
        #expect(jar.allCookies.filter(\.isPartitioned).count == 4)
    }

    @Test func importedPartitionedCookiesAreHeldToThePartitionLimit() {
        var jar = CookieJar(limits: CookieJar.Limits(perSiteInPartition: 2))
        let entries = (0..<3).map { index in
            NumberedCookie(
                line: index + 1,
                cookie: Cookie(
                    name: "c\(index)",
                    value: "1",
                    domain: "embed.widget.com",
                    hostOnly: true,
                    secure: true,
                    creation: testNow.addingTimeInterval(Double(index)),
                    partitionKey: Self.key("https://news.com")
                )
            )
        }
        let report = jar.importCookies(entries, now: testNow.addingTimeInterval(10))
        #expect(report.problems.isEmpty)
        #expect(Set(jar.allCookies.map(\.name)) == ["c1", "c2"])
        #expect(report.changes.map(\.cookie.name).sorted() == ["c1", "c2"])
    }

    @Test func limitsEncodedBeforePartitionsStillDecode() throws {
        let json = #"{"perSite":10,"perSitePurgedTo":5,"total":100,"totalPurge":10,"maximumAge":60}"#
        let limits = try JSONDecoder().decode(CookieJar.Limits.self, from: Data(json.utf8))
        #expect(limits.perSite == 10)
        #expect(limits.perSiteInPartition == 180)
        #expect(limits.bytesPerSiteInPartition == 10_240)
        let roundTripped = try JSONDecoder().decode(CookieJar.Limits.self, from: JSONEncoder().encode(limits))
        #expect(roundTripped == limits)
    }
}

extension CookieJar {
    /// Stores a cookie the widget sets while embedded (a cross-site subresource) under `main`;
    /// the rejection, or nil when it was stored.
    fileprivate mutating func setEmbedded(_ header: String, under main: String, now: Date = testNow) -> CookieRejection?
    {
        set(header, from: PartitionedCookieTests.widget, main: main, topLevel: false, now: now)
    }

    /// The Cookie header the widget gets while embedded under `main`.
    fileprivate mutating func embeddedHeader(under main: String?, now: Date = testNow) -> String {
        header(for: PartitionedCookieTests.widget, main: main, topLevel: false, now: now)
    }
}
