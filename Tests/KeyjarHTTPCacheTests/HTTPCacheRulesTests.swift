import Foundation
import KeyjarHTTPCache
import Testing

/// RFC 9111 for a private cache, one rule at a time.
struct HTTPCacheRulesTests {
    static let epoch = Date(timeIntervalSince1970: 1_700_000_000)
    static let dateLine = "Tue, 14 Nov 2023 22:13:20 GMT"  // `epoch` as an HTTP date

    static func stored(
        _ fields: [(String, String)],
        status: Int = 200,
        requestHeaders: [(String, String)] = [],
        receivedAfter delay: TimeInterval = 0
    ) -> StoredResponse {
        StoredResponse(
            statusCode: status,
            headers: HTTPHeaderFields([("Date", dateLine)] + fields),
            requestTime: epoch,
            responseTime: epoch.addingTimeInterval(delay),
            requestHeaders: HTTPHeaderFields(requestHeaders)
        )
    }

    static func decide(
        _ stored: StoredResponse?,
        at seconds: TimeInterval,
        request: [(String, String)] = [],
        policy: RequestCachePolicy = .useProtocol,
        method: String = "GET"
    ) -> CacheDecision {
        HTTPCacheRules.decision(
            policy: policy,
            method: method,
            requestHeaders: HTTPHeaderFields(request),
            stored: stored,
            now: epoch.addingTimeInterval(seconds)
        )
    }

    // MARK: Cache-Control

    @Test func directivesAreReadCaseInsensitivelyWithQuotedArguments() {
        let control = CacheControl(
            HTTPHeaderFields([
                ("Cache-Control", #"Max-Age=60, PRIVATE, no-cache="Set-Cookie, X-Secret""#),
                ("cache-control", "must-revalidate, foo=\"a,b\""),
            ])
        )
        // A qualified no-cache names fields; it is not the unqualified directive (§5.2.2.4).
        #expect(control.maxAge == 60 && control.isPrivate && !control.noCache && control.mustRevalidate)
        #expect(control.noCacheFields == ["set-cookie", "x-secret"])
        #expect(!control.noStore && !control.isPublic)
    }

    @Test func anInvalidOrConflictingMaxAgeMakesTheResponseStale() {
        for value in ["max-age=abc", "max-age=", "max-age=-1", "max-age=10, max-age=20"] {
            let response = Self.stored([("Cache-Control", value)])
            #expect(CacheControl(response.headers).hasInvalidMaxAge, "\(value)")
            #expect(!CacheFreshness(of: response, at: Self.epoch).isFresh, "\(value)")
        }
        // A huge delta-seconds is 2^31, not an overflow.
        #expect(CacheControl(HTTPHeaderFields([("Cache-Control", "max-age=99999999999999999999")])).maxAge == 1 << 31)
    }

    @Test func pragmaNoCacheCountsOnlyInARequestWithoutCacheControl() {
        #expect(CacheControl(HTTPHeaderFields([("Pragma", "no-cache")]), isRequest: true).noCache)
        #expect(
            !CacheControl(HTTPHeaderFields([("Pragma", "no-cache"), ("Cache-Control", "max-age=5")]), isRequest: true)
                .noCache
        )
        #expect(!CacheControl(HTTPHeaderFields([("Pragma", "no-cache")])).noCache)
    }

    // MARK: Freshness and age (§4.2)

    @Test func maxAgeWinsOverExpiresAndExpiresCountsFromDate() {
        let both = Self.stored([("Cache-Control", "max-age=100"), ("Expires", "Tue, 14 Nov 2023 23:13:20 GMT")])
        #expect(CacheFreshness(of: both, at: Self.epoch).lifetime == 100)
        let expires = Self.stored([("Expires", "Tue, 14 Nov 2023 23:13:20 GMT")])
        #expect(CacheFreshness(of: expires, at: Self.epoch).lifetime == 3_600)
        // An Expires that is not a date, or two of them: already expired.
        #expect(CacheFreshness(of: Self.stored([("Expires", "0")]), at: Self.epoch).lifetime == 0)
        let twice = Self.stored([
            ("Expires", "Tue, 14 Nov 2023 23:13:20 GMT"), ("Expires", "Tue, 14 Nov 2023 23:13:21 GMT"),
        ])
        #expect(CacheFreshness(of: twice, at: Self.epoch).lifetime == 0)
        // The other two date formats of RFC 9110 §5.6.7.
        for other in ["Tuesday, 14-Nov-23 23:13:20 GMT", "Tue Nov 14 23:13:20 2023"] {
            #expect(CacheFreshness(of: Self.stored([("Expires", other)]), at: Self.epoch).lifetime == 3_600, "\(other)")
        }
    }

    @Test func theHeuristicIsATenthOfTheTimeSinceLastModifiedAtMostADay() {
        let tenDays = Self.stored([("Last-Modified", "Sat, 04 Nov 2023 22:13:20 GMT")])
        let freshness = CacheFreshness(of: tenDays, at: Self.epoch)
        #expect(freshness.lifetime == 86_400 && freshness.isHeuristic)
        let tenHours = Self.stored([("Last-Modified", "Tue, 14 Nov 2023 12:13:20 GMT")])
        #expect(CacheFreshness(of: tenHours, at: Self.epoch).lifetime == 3_600)
        // Not for a status that is not heuristically cacheable, nor without Last-Modified.
        #expect(
            CacheFreshness(
                of: Self.stored([("Last-Modified", "Sat, 04 Nov 2023 22:13:20 GMT")], status: 302),
                at: Self.epoch
            ).lifetime == 0
        )
        #expect(CacheFreshness(of: Self.stored([]), at: Self.epoch).lifetime == 0)
    }

    @Test func theCurrentAgeAddsAgeTheDelayAndTheTimeResident() {
        // Age 30 from upstream, 2 s between request and response, 100 s in the store.
        let response = Self.stored([("Age", "30"), ("Cache-Control", "max-age=200")], receivedAfter: 2)
        let freshness = CacheFreshness(of: response, at: Self.epoch.addingTimeInterval(102))
        #expect(freshness.age == 132)
        #expect(freshness.isFresh)
        // A Date in the past counts too (apparent age), when larger.
        let late = StoredResponse(
            statusCode: 200,
            headers: HTTPHeaderFields([("Date", "Tue, 14 Nov 2023 22:12:20 GMT")]),
            requestTime: Self.epoch,
            responseTime: Self.epoch,
            requestHeaders: HTTPHeaderFields()
        )
        #expect(CacheFreshness(of: late, at: Self.epoch).age == 60)
    }

    // MARK: Storing (§3)

    @Test func whatMayBeStored() {
        func storability(
            _ fields: [(String, String)],
            status: Int = 200,
            method: String = "GET",
            request: [(String, String)] = []
        ) -> Bool {
            HTTPCacheRules.storability(
                method: method,
                requestHeaders: HTTPHeaderFields(request),
                statusCode: status,
                responseHeaders: HTTPHeaderFields(fields)
            ) == .storable
        }
        #expect(storability([]))
        #expect(storability([("Cache-Control", "private, max-age=60")]))
        #expect(!storability([("Cache-Control", "no-store")]))
        #expect(!storability([], request: [("Cache-Control", "no-store")]))
        #expect(!storability([], method: "POST"))
        #expect(!storability([("Vary", "Accept, *")]))
        // Varying on a credential would keep the credential in the index.
        #expect(!storability([("Vary", "Accept, Authorization")], request: [("Authorization", "Basic eDp5")]))
        #expect(!storability([("Vary", "proxy-authorization")]))
        // And a session: a caller's Cookie would be in the index, and the jar's cookies are
        // added after the Vary values are taken.
        #expect(!storability([("Vary", "Cookie")], request: [("Cookie", "sid=secret")]))
        #expect(storability([("Vary", "Accept-Encoding")]))
        #expect(!storability([], status: 206) && !storability([], status: 304))
        // 302 only with explicit freshness; 404 by the heuristic's list.
        #expect(!storability([], status: 302))
        #expect(storability([("Cache-Control", "max-age=60")], status: 302))
        #expect(storability([], status: 404))
        // A private cache stores authenticated responses.
        #expect(storability([], request: [("Authorization", "Basic eDp5")]))
    }

    @Test func hopByHopFieldsAreNotStored() {
        let kept = HTTPCacheRules.fieldsToStore(
            HTTPHeaderFields([
                ("Connection", "close, X-Hop"), ("Keep-Alive", "5"), ("X-Hop", "1"), ("Transfer-Encoding", "chunked"),
                ("ETag", "\"a\""),
            ])
        )
        #expect(kept.fields.map(\.name) == ["ETag"])
    }

    // MARK: Answering a request (§4)

    @Test func aFreshResponseIsServedAndAStaleOneValidated() {
        let response = Self.stored([("Cache-Control", "max-age=60"), ("ETag", "\"v1\"")])
        #expect(Self.decide(response, at: 59) == .serve(age: 59))
        guard case .validate(let conditional) = Self.decide(response, at: 61) else {
            Issue.record("a stale response with an ETag should be validated")
            return
        }
        #expect(conditional["If-None-Match"] == "\"v1\"")
        // Stale without a validator: loaded again.
        #expect(Self.decide(Self.stored([("Cache-Control", "max-age=60")]), at: 61) == .load)
        // Last-Modified validates with If-Modified-Since.
        let modified = Self.stored([("Cache-Control", "max-age=0"), ("Last-Modified", "Sat, 04 Nov 2023 22:13:20 GMT")])
        guard case .validate(let byDate) = Self.decide(modified, at: 1) else {
            Issue.record("a stale response with Last-Modified should be validated")
            return
        }
        #expect(byDate["If-Modified-Since"] == "Sat, 04 Nov 2023 22:13:20 GMT")
    }

    @Test func noCacheAndTheRequestsLimitsForceValidation() {
        let tagged = [("ETag", "\"v1\"")]
        let noCache = Self.stored([("Cache-Control", "no-cache, max-age=600")] + tagged)
        #expect(Self.decide(noCache, at: 1) == .validate(HTTPHeaderFields([("If-None-Match", "\"v1\"")])))
        let fresh = Self.stored([("Cache-Control", "max-age=600")] + tagged)
        #expect(Self.decide(fresh, at: 1, request: [("Cache-Control", "no-cache")]) != .serve(age: 1))
        #expect(Self.decide(fresh, at: 1, request: [("Pragma", "no-cache")]) != .serve(age: 1))
        #expect(Self.decide(fresh, at: 100, request: [("Cache-Control", "max-age=50")]) != .serve(age: 100))
        #expect(Self.decide(fresh, at: 100, request: [("Cache-Control", "max-age=150")]) == .serve(age: 100))
        #expect(Self.decide(fresh, at: 550, request: [("Cache-Control", "min-fresh=60")]) != .serve(age: 550))
        #expect(Self.decide(fresh, at: 1, request: [("Cache-Control", "no-store")]) == .load)
    }

    @Test func maxStaleServesAStaleResponseUnlessItMustBeRevalidated() {
        let response = Self.stored([("Cache-Control", "max-age=60")])
        #expect(Self.decide(response, at: 100, request: [("Cache-Control", "max-stale")]) == .serve(age: 100))
        #expect(Self.decide(response, at: 100, request: [("Cache-Control", "max-stale=50")]) == .serve(age: 100))
        #expect(Self.decide(response, at: 100, request: [("Cache-Control", "max-stale=30")]) == .load)
        let strict = Self.stored([("Cache-Control", "max-age=60, must-revalidate")])
        #expect(Self.decide(strict, at: 100, request: [("Cache-Control", "max-stale")]) == .load)
    }

    @Test func onlyIfCachedNeverLoads() {
        let request = [("Cache-Control", "only-if-cached")]
        #expect(Self.decide(nil, at: 0, request: request) == .fail)
        #expect(Self.decide(Self.stored([("Cache-Control", "max-age=60")]), at: 100, request: request) == .fail)
        #expect(
            Self.decide(Self.stored([("Cache-Control", "max-age=60")]), at: 10, request: request) == .serve(age: 10)
        )
    }

    @Test func varyMatchesOnTheFieldsItNames() {
        let response = Self.stored(
            [("Cache-Control", "max-age=60"), ("Vary", "Accept-Language, accept-encoding")],
            requestHeaders: [("Accept-Language", "fr, en;q=0.5"), ("Accept-Encoding", "gzip")]
        )
        #expect(
            Self.decide(response, at: 1, request: [("accept-language", "fr,en;q=0.5"), ("Accept-Encoding", "gzip")])
                == .serve(age: 1)
        )
        #expect(
            Self.decide(response, at: 1, request: [("Accept-Language", "de"), ("Accept-Encoding", "gzip")]) == .load
        )
        // A field present at storing time and absent now does not match.
        #expect(Self.decide(response, at: 1, request: [("Accept-Language", "fr, en;q=0.5")]) == .load)
    }

    @Test func thePoliciesOfTheURLLoadingSystem() {
        let stale = Self.stored([("Cache-Control", "max-age=60, must-revalidate"), ("ETag", "\"v\"")])
        #expect(Self.decide(stale, at: 1_000, policy: .returnCacheDataElseLoad) == .serve(age: 1_000))
        #expect(Self.decide(stale, at: 1_000, policy: .returnCacheDataDontLoad) == .serve(age: 1_000))
        #expect(Self.decide(nil, at: 0, policy: .returnCacheDataDontLoad) == .fail)
        #expect(Self.decide(nil, at: 0, policy: .returnCacheDataElseLoad) == .load)
        #expect(
            Self.decide(Self.stored([("Cache-Control", "max-age=600")]), at: 1, policy: .reloadIgnoringCache) == .load
        )
        // Only GET is answered from the store.
        #expect(
            Self.decide(
                Self.stored([("Cache-Control", "max-age=600")]),
                at: 1,
                policy: .returnCacheDataDontLoad,
                method: "POST"
            ) == .fail
        )
    }

    // MARK: Validation and invalidation

    @Test func a304UpdatesTheStoredFieldsButNotThoseOfTheBody() {
        let response = Self.stored([
            ("Cache-Control", "max-age=60"), ("ETag", "\"v1\""), ("Content-Length", "5"), ("X-Old", "kept"),
        ])
        let updated = HTTPCacheRules.updated(
            response,
            notModified: HTTPHeaderFields([
                ("Cache-Control", "max-age=120"), ("ETag", "\"v1\""), ("Content-Length", "0"), ("Connection", "close"),
                ("X-New", "1"), ("X-New", "2"),
            ]),
            requestTime: Self.epoch.addingTimeInterval(500),
            responseTime: Self.epoch.addingTimeInterval(501)
        )
        #expect(updated.headers["Cache-Control"] == "max-age=120")
        #expect(updated.headers["Content-Length"] == "5")
        #expect(updated.headers["X-Old"] == "kept" && updated.headers.values("X-New") == ["1", "2"])
        #expect(!updated.headers.contains("Connection"))
        #expect(updated.responseTime == Self.epoch.addingTimeInterval(501))
    }

    @Test func anUnsafeRequestThatSucceededInvalidatesItsTargetAndSameOriginLocations() throws {
        let url = try #require(URL(string: "https://shop.example/cart"))
        let headers = HTTPHeaderFields([("Location", "/cart/1"), ("Content-Location", "https://other.example/x")])
        #expect(
            HTTPCacheRules.invalidatedURLs(method: "POST", statusCode: 303, requestURL: url, responseHeaders: headers)
                .map(\.absoluteString) == ["https://shop.example/cart", "https://shop.example/cart/1"]
        )
        #expect(
            HTTPCacheRules.invalidatedURLs(method: "POST", statusCode: 500, requestURL: url, responseHeaders: headers)
                .isEmpty
        )
        #expect(
            HTTPCacheRules.invalidatedURLs(method: "GET", statusCode: 200, requestURL: url, responseHeaders: headers)
                .isEmpty
        )
        #expect(
            HTTPCacheRules.invalidatedURLs(
                method: "DELETE",
                statusCode: 204,
                requestURL: url,
                responseHeaders: HTTPHeaderFields()
            ).count == 1
        )
    }

    @Test func listsSplitOutsideQuotesOnly() {
        let fields = HTTPHeaderFields([("X", #"a, "b,c", d"#), ("x", " e ,, f")])
        #expect(fields.listMembers("x") == ["a", #""b,c""#, "d", "e", "f"])
        #expect(fields["X"] == #"a, "b,c", d,  e ,, f"#)
    }
}
