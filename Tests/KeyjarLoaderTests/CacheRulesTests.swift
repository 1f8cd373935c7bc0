import Foundation
import FoundationNetworking
import Keyjar
import KeyjarCore
import KeyjarLocks
import KeyjarResponseCache
import KeyjarTestSupport
import Testing

@testable import KeyjarLoader

/// RFC 9111's date, Age, max-age and qualified-directive rules and RFC 5861's stale responses,
/// through the loader against `/cache-rules` in Servers/loader_server.py (headers from the
/// query; its body says which fetch it is: "rules #N"). Staleness comes from Age and date
/// values, never from waiting: a slow machine only makes a stale response staler.
@Suite(.timeLimit(hangLimit), .servicesStopCleanly)
struct CacheRulesTests {
    let server: LoaderTestServer

    init() async throws { server = try await LoaderTestServer() }

    func cachingLoader() throws -> (URLLoader, ResponseCache) {
        let cache = try ResponseCache(configuration: .init())
        return (URLLoader(configuration: .init(cookieStorage: .ephemeral(), responseCache: cache)), cache)
    }

    static func encoded(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? text
    }

    /// `/cache-rules` for `key`: `headers` on every response, `first` on the first only,
    /// `later` on the others.
    func url(
        _ key: String,
        _ headers: [(String, String)],
        first: [(String, String)] = [],
        later: [(String, String)] = [],
        extra: String = ""
    ) -> URL {
        var query = "key=" + key
        for (name, value) in headers { query += "&h=" + Self.encoded(name + ":" + value) }
        for (name, value) in first { query += "&first=" + Self.encoded(name + ":" + value) }
        for (name, value) in later { query += "&later=" + Self.encoded(name + ":" + value) }
        return server.url("/cache-rules?" + query + extra)
    }

    func request(
        _ url: URL,
        fields: [String: String] = [:],
        policy: URLRequest.CachePolicy = .useProtocolCachePolicy
    )
        -> URLRequest
    {
        var request = URLRequest(url: url, cachePolicy: policy)
        for (name, value) in fields { request.setValue(value, forHTTPHeaderField: name) }
        return request
    }

    // MARK: HTTP-date (RFC 9110 §5.6.7)

    /// A form the cookie-date parser reads (UTC instead of GMT) is no HTTP-date: an Expires an
    /// hour ahead in it is already past (§5.3), so the response is loaded again.
    @Test func anExpiresThatIsNotAnHTTPDateIsAlreadyPast() async throws {
        let (loader, _) = try cachingLoader()
        let hourAhead = CookieDate.httpDate(Date(timeIntervalSinceNow: 3_600)).replacingOccurrences(
            of: "GMT",
            with: "UTC"
        )
        let target = url("badexpires", [("Expires", hourAhead)])
        #expect(await load(request(target), with: loader).body == "rules #1")
        #expect(await load(request(target), with: loader).body == "rules #2")
        // The same instant as an IMF-fixdate: fresh.
        let valid = url("goodexpires", [("Expires", CookieDate.httpDate(Date(timeIntervalSinceNow: 3_600)))])
        _ = await load(request(valid), with: loader)
        #expect(await load(request(valid), with: loader).body == "rules #1")
    }

    /// A Date that is not an HTTP-date is no Date: the time received stands for it. Read as the
    /// cookie parser reads it (a year ahead), it would leave no lifetime before Expires.
    @Test func aDateThatIsNotAnHTTPDateCountsAsAbsent() async throws {
        let (loader, _) = try cachingLoader()
        let yearAhead = CookieDate.httpDate(Date(timeIntervalSinceNow: 365 * 86_400))
            .replacingOccurrences(of: "GMT", with: "UTC")
        let target = url(
            "baddate",
            [("Date", yearAhead), ("Expires", CookieDate.httpDate(Date(timeIntervalSinceNow: 3_600)))]
        )
        _ = await load(request(target), with: loader)
        #expect(await load(request(target), with: loader).body == "rules #1")
        #expect(try server.count("baddate") == 1)
    }

    /// A Last-Modified that is not an HTTP-date gives no heuristic freshness (and no
    /// If-Modified-Since): loaded again, unconditionally.
    @Test func aLastModifiedThatIsNotAnHTTPDateGivesNoHeuristic() async throws {
        let (loader, _) = try cachingLoader()
        let tenDaysAgo = CookieDate.httpDate(Date(timeIntervalSinceNow: -864_000))
        let bad = url("badmodified", [("Last-Modified", tenDaysAgo.replacingOccurrences(of: "GMT", with: "UTC"))])
        _ = await load(request(bad), with: loader)
        #expect(await load(request(bad), with: loader).body == "rules #2")
        let good = url("goodmodified", [("Last-Modified", tenDaysAgo)])
        _ = await load(request(good), with: loader)
        #expect(await load(request(good), with: loader).body == "rules #1")
    }

    // MARK: Age (§5.1, §4.2.3)

    /// `Age: 600, 0`: the first member counts, so a max-age=300 response is stale.
    @Test func aListAgeUsesItsFirstMember() async throws {
        let (loader, _) = try cachingLoader()
        let target = url("agelist", [("Cache-Control", "max-age=300"), ("Age", "600, 0")])
        _ = await load(request(target), with: loader)
        #expect(await load(request(target), with: loader).body == "rules #2")
        // An invalid Age is ignored (taken as none): fresh.
        let invalid = url("ageinvalid", [("Cache-Control", "max-age=300"), ("Age", "old")])
        _ = await load(request(invalid), with: loader)
        #expect(await load(request(invalid), with: loader).body == "rules #1")
    }

    /// The server answers 1.5 s after reading the request with `Age: 10` and `max-age=11`: the
    /// response aged on its way (corrected_age_value = age_value + response_delay), so it is
    /// stale when next requested. A slower machine only adds to its age.
    @Test func aDelayedResponseAgesByItsDelay() async throws {
        let (loader, _) = try cachingLoader()
        let target = url("delayed", [("Cache-Control", "max-age=11"), ("Age", "10")], extra: "&delay=1.5")
        _ = await load(request(target), with: loader)
        #expect(await load(request(target), with: loader).body == "rules #2")
    }

    // MARK: max-age (§4.2.1, §1.2.2)

    /// Two different max-age values, or a decimal one: stale (already so before this change).
    @Test func aConflictingOrDecimalMaxAgeIsStale() async throws {
        let (loader, _) = try cachingLoader()
        for (key, control) in [("twice", "max-age=600, max-age=601"), ("decimal", "max-age=600.5")] {
            let target = url(key, [("Cache-Control", control)])
            _ = await load(request(target), with: loader)
            #expect(await load(request(target), with: loader).body == "rules #2", "\(control)")
        }
    }

    // MARK: Qualified no-cache and private (§5.2.2.4, §5.2.2.7)

    @Test func aQualifiedNoCacheIsAHitWithoutItsFields() async throws {
        let (loader, _) = try cachingLoader()
        let target = url(
            "nocachefield",
            [("Cache-Control", #"max-age=600, no-cache="Set-Cookie""#), ("Set-Cookie", "c=1"), ("X-Other", "kept")]
        )
        let first = await load(request(target), with: loader)
        #expect(first.lastResponse?.value(forHTTPHeaderField: "Set-Cookie") == "c=1")
        let hit = await load(request(target), with: loader)
        #expect(hit.body == "rules #1")
        #expect(hit.lastResponse?.value(forHTTPHeaderField: "Set-Cookie") == nil)
        #expect(hit.lastResponse?.value(forHTTPHeaderField: "X-Other") == "kept")
        #expect(try server.count("nocachefield") == 1)
    }

    @Test func aQualifiedPrivateStoresTheRestOnly() async throws {
        let (loader, cache) = try cachingLoader()
        let target = url("privatefield", [("Cache-Control", #"max-age=600, private="X-Secret""#), ("X-Secret", "s")])
        let first = await load(request(target), with: loader)
        #expect(first.lastResponse?.value(forHTTPHeaderField: "X-Secret") == "s")
        let stored = try #require(cache.lookup(target))
        #expect(LoaderConnection.head(of: stored.entry).values(of: "X-Secret").isEmpty)
        let hit = await load(request(target), with: loader)
        #expect(hit.body == "rules #1" && hit.lastResponse?.value(forHTTPHeaderField: "X-Secret") == nil)
    }

    // MARK: only-if-cached (§5.2.1.7)

    /// A miss under only-if-cached or return-cache-data-don't-load fails with
    /// `.resourceUnavailable` and sends nothing (already so before this change).
    @Test func onlyIfCachedOnAMissSendsNothing() async throws {
        let (loader, _) = try cachingLoader()
        let target = url("onlyifcached", [("Cache-Control", "max-age=600")])
        let header = await load(request(target, fields: ["Cache-Control": "only-if-cached"]), with: loader)
        #expect(header.error?.code == .resourceUnavailable)
        let policy = await load(request(target, policy: .returnCacheDataDontLoad), with: loader)
        #expect(policy.error?.code == .resourceUnavailable)
        #expect(try server.count("onlyifcached") == 0)
    }

    // MARK: RFC 5861

    /// Stale by 90 s (Age 100, max-age 10) within stale-while-revalidate=86400: the second load
    /// gets the stale response at once with its Age, and nothing after its end; a background
    /// request reaches the server (awaited on its counter), and the third load gets what it
    /// stored.
    @Test(arguments: [false, true])
    func staleWhileRevalidateServesAtOnceAndRefreshes(withETag: Bool) async throws {
        let (loader, cache) = try cachingLoader()
        let key = withETag ? "swrtag" : "swr"
        let target = url(
            key,
            withETag ? [("ETag", #""v1""#)] : [],
            first: [("Cache-Control", "max-age=10, stale-while-revalidate=86400"), ("Age", "100")],
            // A 304 replaces the stored fields it carries (§4.3.4): the refreshed entry is
            // fresh for a day, however slow the machine.
            later: [("Cache-Control", "max-age=86400"), ("Age", "0")]
        )
        #expect(await load(request(target), with: loader).body == "rules #1")
        let stale = await load(request(target), with: loader)
        #expect(stale.body == "rules #1")
        let age = try #require(stale.lastResponse?.value(forHTTPHeaderField: "Age").flatMap { Int($0) })
        #expect(age >= 100)
        #expect(stale.events.last == .finished)
        try await waitUntil("the background revalidation reaches the server") { try server.count(key) == 2 }
        // Stored (a 304 refreshed the entry, a 200 replaced it: an Age of 0 either way).
        try await waitUntil("the background revalidation's response is stored") {
            guard let entry = cache.lookup(target)?.entry else { return false }
            return LoaderConnection.head(of: entry).values(of: "Age") == ["0"]
        }
        let refreshed = await load(request(target), with: loader)
        #expect(refreshed.body == (withETag ? "rules #1" : "rules #2"))
        #expect(try server.count(key) == 2)
        #expect(try server.count("304:" + key) == (withETag ? 1 : 0))
        #expect(stale.state.withLock { $0.afterEnd }.isEmpty)
    }

    /// Stale by 90 s within stale-if-error=86400: a 503 or a dropped connection when it is
    /// loaded again is answered by the stale response; outside the window the failure stands.
    @Test(arguments: ["503", "500", "drop"])
    func staleIfErrorServesTheStaleResponse(failure: String) async throws {
        let (loader, _) = try cachingLoader()
        let key = "sie" + failure
        let target = url(
            key,
            [("Cache-Control", "max-age=10, stale-if-error=86400")],
            first: [("Age", "100")],
            extra: "&then=" + failure
        )
        _ = await load(request(target), with: loader)
        let second = await load(request(target), with: loader)
        #expect(second.error == nil)
        #expect(second.body == "rules #1" && second.lastResponse?.statusCode == 200)
        #expect(try server.count(key) >= 2)
        // Validated with an ETag: the same.
        let tagged = url(
            key + "tag",
            [("Cache-Control", "max-age=10, stale-if-error=86400"), ("ETag", #""t""#)],
            first: [("Age", "100")],
            extra: "&then=" + failure
        )
        _ = await load(request(tagged), with: loader)
        #expect(await load(request(tagged), with: loader).body == "rules #1")
        // Stale by 90 s, a window of 60: the failure is the answer.
        let outside = url(
            key + "out",
            [("Cache-Control", "max-age=10, stale-if-error=60")],
            first: [("Age", "100")],
            extra: "&then=" + failure
        )
        _ = await load(request(outside), with: loader)
        let failed = await load(request(outside), with: loader)
        if failure == "drop" {
            #expect(failed.error != nil)
        } else {
            #expect(failed.lastResponse?.statusCode == Int(failure) && failed.body == "failed")
        }
    }
}
