import Foundation
import KeyjarHTTPCache
import Testing

/// HTTP-date (RFC 9110 §5.6.7), Age (RFC 9111 §5.1), max-age's validity (§4.2.1), qualified
/// no-cache and private (§5.2.2.4, §5.2.2.7), only-if-cached (§5.2.1.7), and RFC 5861's
/// stale-while-revalidate and stale-if-error, as pure rules.
struct CacheRulesRFCTests {
    static let epoch = HTTPCacheRulesTests.epoch
    static let dateLine = HTTPCacheRulesTests.dateLine

    static func stored(
        _ fields: [(String, String)],
        date: String? = dateLine,
        receivedAfter delay: TimeInterval = 0
    )
        -> StoredResponse
    {
        StoredResponse(
            statusCode: 200,
            headers: HTTPHeaderFields((date.map { [("Date", $0)] } ?? []) + fields),
            requestTime: epoch,
            responseTime: epoch.addingTimeInterval(delay),
            requestHeaders: HTTPHeaderFields()
        )
    }

    static func decide(
        _ stored: StoredResponse,
        at seconds: TimeInterval,
        request: [(String, String)] = []
    )
        -> CacheDecision
    {
        HTTPCacheRules.decision(
            policy: .useProtocol,
            method: "GET",
            requestHeaders: HTTPHeaderFields(request),
            stored: stored,
            now: epoch.addingTimeInterval(seconds)
        )
    }

    // MARK: HTTP-date

    @Test func theThreeFormsParseToTheSameInstant() throws {
        let instant = Date(timeIntervalSince1970: 784_111_777)  // Sun, 06 Nov 1994 08:49:37 GMT
        let now = Date(timeIntervalSince1970: 1_700_000_000)
        #expect(HTTPDate.parse("Sun, 06 Nov 1994 08:49:37 GMT", now: now) == instant)
        #expect(HTTPDate.parse("Sunday, 06-Nov-94 08:49:37 GMT", now: now) == instant)
        #expect(HTTPDate.parse("Sun Nov  6 08:49:37 1994", now: now) == instant)
        #expect(HTTPDate.parse("  Sun, 06 Nov 1994 08:49:37 GMT\t", now: now) == instant)
        #expect(HTTPDate.format(instant) == "Sun, 06 Nov 1994 08:49:37 GMT")
    }

    /// What the cookie-date parser (RFC 6265) takes and HTTP-date does not.
    @Test func everythingElseIsNotAnHTTPDate() {
        for text in [
            "Thu, 01 Jan 2099 23:59:59 UTC", "Thu, 01 Jan 2099 23:59:59", "01 Jan 2099 23:59:59 GMT",
            "Thu, 1 Jan 2099 23:59:59 GMT", "thu, 01 jan 2099 23:59:59 gmt", "Thu, 01 Jan 99 23:59:59 GMT",
            "Thu, 01-Jan-2099 23:59:59 GMT", "Thursday, 01-Jan-2099 23:59:59 GMT", "Thu Jan 1 23:59:59 2099",
            "Thu, 31 Feb 2099 23:59:59 GMT", "Thu, 01 Jan 2099 24:00:00 GMT", "Thu, 01 Jan 2099 23:60:00 GMT",
            "0", "-1", "", "2099-01-01T23:59:59Z", "Thu,  01 Jan 2099 23:59:59 GMT", "Thu, 01 Jan 2099 23:59:59 GMT x",
        ] {
            #expect(HTTPDate.parse(text) == nil, "\(text)")
        }
    }

    /// §5.6.7: an rfc850 year more than 50 years ahead is the most recent past one with its digits.
    @Test func aTwoDigitYearIsNeverMoreThanFiftyYearsAhead() throws {
        let now = try #require(HTTPDate.parse("Sat, 01 Jan 2000 00:00:00 GMT"))
        #expect(
            HTTPDate.parse("Sunday, 01-Jan-50 00:00:00 GMT", now: now)
                == HTTPDate.parse("Sat, 01 Jan 2050 00:00:00 GMT")
        )
        #expect(
            HTTPDate.parse("Friday, 01-Jan-51 00:00:00 GMT", now: now)
                == HTTPDate.parse("Mon, 01 Jan 1951 00:00:00 GMT")
        )
    }

    /// Random strings never crash the parser and whatever it accepts is a finite instant;
    /// every instant formatted (years 0 to 9999) parses back to itself, to the second.
    @Test func randomTextNeverCrashesAndFormattingRoundTrips() {
        var generator = SystemRandomNumberGenerator()
        let alphabet = Array("0123456789 ,:-GMTSunMonTueWedThuFriSatJanFebMarAprMayJunJulAugSepOctNovDecday\t\u{0}é")
        for _ in 0..<5_000 {
            let length = Int.random(in: 0...36, using: &generator)
            let text = String((0..<length).map { _ in alphabet.randomElement(using: &generator)! })
            if let date = HTTPDate.parse(text) { #expect(date.timeIntervalSince1970.isFinite) }
        }
        // Fixed-date mutations: a valid IMF-fixdate with one byte replaced parses or not, never traps.
        let valid = Array("Sun, 06 Nov 1994 08:49:37 GMT".utf8)
        for index in valid.indices {
            for byte in [UInt8(0), 0x20, 0x39, 0x41, 0xFF] {
                var bytes = valid
                bytes[index] = byte
                _ = HTTPDate.parse(String(decoding: bytes, as: UTF8.self))
            }
        }
        let lowest = -62_167_219_200.0  // 0000-01-01
        let highest = 253_402_300_799.0  // 9999-12-31 23:59:59
        for _ in 0..<5_000 {
            let instant = Date(
                timeIntervalSince1970: Double.random(in: lowest...highest, using: &generator).rounded(.down)
            )
            let text = HTTPDate.format(instant)
            #expect(HTTPDate.parse(text) == instant, "\(text)")
        }
    }

    /// §5.3: an Expires that is not an HTTP-date is already past; an invalid Date is no Date
    /// (the time received stands for it); an invalid Last-Modified gives no heuristic and no
    /// If-Modified-Since.
    @Test func invalidDatesMeanWhatEachFieldSays() {
        let cookieForm = "Thu, 01 Jan 2099 23:59:59 UTC"
        let expiresCookieForm = Self.stored([("Expires", cookieForm)])
        #expect(CacheFreshness(of: expiresCookieForm, at: Self.epoch).lifetime == 0)
        // Expires an hour after the time received; a Date far in the future that is not an
        // HTTP-date is ignored, so the lifetime is that hour (read, it would make it 0).
        let futureDate = Self.stored(
            [("Expires", "Tue, 14 Nov 2023 23:13:20 GMT")],
            date: "Fri, 01 Jan 2099 00:00:00 UTC"
        )
        #expect(futureDate.date == Self.epoch)
        #expect(CacheFreshness(of: futureDate, at: Self.epoch).lifetime == 3_600)
        let lastModified = Self.stored([("Last-Modified", "Sat, 04 Nov 2023 22:13:20 UTC")])
        #expect(lastModified.lastModified == nil)
        #expect(CacheFreshness(of: lastModified, at: Self.epoch).lifetime == 0)
        #expect(!lastModified.hasValidators)
        let valid = Self.stored([("Last-Modified", "Sat, 04 Nov 2023 22:13:20 GMT")])
        #expect(CacheFreshness(of: valid, at: Self.epoch).lifetime == 86_400)
        #expect(valid.validators.values("If-Modified-Since") == ["Sat, 04 Nov 2023 22:13:20 GMT"])
        // An obsolete form is valid: used.
        let asctime = Self.stored([("Expires", "Tue Nov 14 23:13:20 2023")])
        #expect(CacheFreshness(of: asctime, at: Self.epoch).lifetime == 3_600)
    }

    // MARK: Age

    @Test func ageUsesTheFirstMemberAndIgnoresAnInvalidValue() {
        func age(_ values: [String]) -> Int { CacheFreshness.ageValue(HTTPHeaderFields(values.map { ("Age", $0) })) }
        #expect(age(["600, 0"]) == 600)
        #expect(age(["600", "0"]) == 600)
        #expect(age(["abc"]) == 0)
        #expect(age(["-5"]) == 0)
        #expect(age(["1.5"]) == 0)
        #expect(age(["abc, 600"]) == 0)
        #expect(age([]) == 0)
        let listed = Self.stored([("Cache-Control", "max-age=300"), ("Age", "600, 0")])
        #expect(!CacheFreshness(of: listed, at: Self.epoch).isFresh)
    }

    /// §4.2.3: the time a response took to arrive is added to its Age.
    @Test func aDelayedResponseAgesByItsDelay() {
        let delayed = Self.stored([("Cache-Control", "max-age=11"), ("Age", "10")], date: nil, receivedAfter: 1.5)
        let freshness = CacheFreshness(of: delayed, at: delayed.responseTime)
        #expect(freshness.age == 11.5)
        #expect(!freshness.isFresh)
    }

    // MARK: max-age

    @Test func aDecimalOrASecondDifferentMaxAgeIsStale() {
        #expect(Self.decide(Self.stored([("Cache-Control", "max-age=600.5")]), at: 1) == .load)
        #expect(Self.decide(Self.stored([("Cache-Control", "max-age=600, max-age=601")]), at: 1) == .load)
        #expect(
            Self.decide(Self.stored([("Cache-Control", "max-age=600"), ("Cache-Control", "max-age=0")]), at: 1) == .load
        )
        // The same value twice is the first occurrence: used.
        #expect(Self.decide(Self.stored([("Cache-Control", "max-age=600, max-age=600")]), at: 1) == .serve(age: 1))
    }

    // MARK: Qualified no-cache and private

    @Test func aQualifiedNoCacheHoldsBackItsFieldsOnly() {
        let response = Self.stored([
            ("Cache-Control", #"max-age=600, no-cache="Set-Cookie""#), ("Set-Cookie", "a=1"), ("X-Other", "kept"),
        ])
        #expect(Self.decide(response, at: 1) == .serve(age: 1))
        let reused = HTTPCacheRules.fieldsToReuse(response.headers)
        #expect(!reused.contains("Set-Cookie") && reused["X-Other"] == "kept")
        // Unqualified (or naming nothing): validated.
        for value in ["max-age=600, no-cache", #"max-age=600, no-cache="""#] {
            let unqualified = Self.stored([("Cache-Control", value), ("ETag", #""e""#)])
            #expect(Self.decide(unqualified, at: 1) == .validate(HTTPHeaderFields([("If-None-Match", #""e""#)])))
        }
    }

    @Test func aQualifiedPrivateKeepsItsFieldsOutOfTheStore() {
        let headers = HTTPHeaderFields([
            ("Cache-Control", #"max-age=600, private="X-Secret, X-Token""#), ("X-Secret", "s"), ("x-token", "t"),
            ("X-Public", "p"),
        ])
        let kept = HTTPCacheRules.fieldsToStore(headers)
        #expect(!kept.contains("X-Secret") && !kept.contains("X-Token") && kept["X-Public"] == "p")
        #expect(
            HTTPCacheRules.storability(
                method: "GET",
                requestHeaders: .init(),
                statusCode: 200,
                responseHeaders: headers
            )
                == .storable
        )
        // A 304 does not bring them back either.
        let updated = HTTPCacheRules.updated(
            Self.stored([("Cache-Control", "max-age=1")]),
            notModified: headers,
            requestTime: Self.epoch,
            responseTime: Self.epoch
        )
        #expect(!updated.headers.contains("X-Secret") && updated.headers["X-Public"] == "p")
    }

    // MARK: only-if-cached

    @Test func onlyIfCachedFailsOnAMissAndOnAStaleEntry() {
        let request = [("Cache-Control", "only-if-cached")]
        #expect(
            HTTPCacheRules.decision(
                policy: .useProtocol,
                method: "GET",
                requestHeaders: HTTPHeaderFields(request),
                stored: nil,
                now: Self.epoch
            ) == .fail
        )
        let swr = Self.stored([("Cache-Control", "max-age=10, stale-while-revalidate=600")])
        #expect(Self.decide(swr, at: 20, request: request) == .fail)
    }

    // MARK: RFC 5861

    @Test func staleWhileRevalidateServesWithinItsWindowAndRevalidates() {
        let tagged = Self.stored([("Cache-Control", "max-age=10, stale-while-revalidate=60"), ("ETag", #""v""#)])
        #expect(Self.decide(tagged, at: 5) == .serve(age: 5))
        #expect(
            Self.decide(tagged, at: 70)
                == .serveStale(age: 70, revalidation: HTTPHeaderFields([("If-None-Match", #""v""#)]))
        )
        #expect(Self.decide(tagged, at: 71) == .validate(HTTPHeaderFields([("If-None-Match", #""v""#)])))
        let untagged = Self.stored([("Cache-Control", "max-age=10, stale-while-revalidate=60")])
        #expect(Self.decide(untagged, at: 30) == .serveStale(age: 30, revalidation: HTTPHeaderFields()))
        // Staleness counts the Age received.
        let aged = Self.stored([("Cache-Control", "max-age=10, stale-while-revalidate=60"), ("Age", "100")])
        #expect(Self.decide(aged, at: 0) == .load)
        // Never for must-revalidate, nor against the request's own limits.
        let strict = Self.stored([("Cache-Control", "max-age=10, stale-while-revalidate=60, must-revalidate")])
        #expect(Self.decide(strict, at: 30) == .load)
        #expect(Self.decide(untagged, at: 30, request: [("Cache-Control", "max-age=20")]) == .load)
        #expect(Self.decide(untagged, at: 30, request: [("Cache-Control", "no-cache")]) == .load)
        // Not delta-seconds: no window.
        #expect(Self.decide(Self.stored([("Cache-Control", "max-age=10, stale-while-revalidate=x")]), at: 30) == .load)
    }

    @Test func staleIfErrorAllowsAStaleResponseWithinItsWindow() {
        func allows(_ control: String, at seconds: TimeInterval, request: [(String, String)] = []) -> Bool {
            HTTPCacheRules.mayServeStaleOnError(
                Self.stored([("Cache-Control", control)]),
                requestHeaders: HTTPHeaderFields(request),
                now: Self.epoch.addingTimeInterval(seconds)
            )
        }
        #expect(allows("max-age=10, stale-if-error=60", at: 70))
        #expect(!allows("max-age=10, stale-if-error=60", at: 71))
        #expect(!allows("max-age=10, stale-if-error=60", at: 5))  // fresh: not being validated for staleness
        #expect(!allows("max-age=10", at: 20))
        #expect(allows("max-age=10", at: 20, request: [("Cache-Control", "stale-if-error=30")]))
        #expect(!allows("max-age=10, stale-if-error=60, must-revalidate", at: 20))
        #expect(!allows("max-age=10, stale-if-error=60, no-cache", at: 20))
        #expect([500, 502, 503, 504].allSatisfy(HTTPCacheRules.isServerError))
        #expect(![200, 304, 404, 501].contains(where: HTTPCacheRules.isServerError))
    }
}
