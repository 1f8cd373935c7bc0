import Foundation
import FoundationNetworking
import KeyjarHTTPCache
import KeyjarResponseCache
import Testing

@testable import KeyjarLoader

/// What the cache's part of a load decides before a request goes out, against a cache in
/// memory and without a transfer or a server: which stored response answers and how much of
/// it, which validators go with the request, and when the load fails.
@Suite("Cache consultation")
struct CacheConsultationTests {
    static let url = URL(string: "http://127.0.0.1/page")!
    static let body = Data("0123456789".utf8)
    /// The stored responses below arrived at 1,001 s and are fresh for 60 s.
    static let fresh = Date(timeIntervalSince1970: 1_010)
    static let stale = Date(timeIntervalSince1970: 2_000)

    static func cache(storing fields: [(String, String)]) throws -> ResponseCache {
        let cache = try ResponseCache(configuration: .init())
        let response = StoredResponse(
            statusCode: 200,
            headers: HTTPHeaderFields(fields + [("Content-Length", String(body.count))]),
            requestTime: Date(timeIntervalSince1970: 1_000),
            responseTime: Date(timeIntervalSince1970: 1_001),
            requestHeaders: HTTPHeaderFields()
        )
        cache.store(CachedEntry(url: url, response: response), body: body)
        return cache
    }

    static func request(_ method: String = "GET", _ fields: [String: String] = [:]) -> URLRequest {
        var request = URLRequest(url: url)
        request.httpMethod = method
        for (name, value) in fields { request.setValue(value, forHTTPHeaderField: name) }
        return request
    }

    static func consult(
        _ request: URLRequest,
        in cache: ResponseCache?,
        now: Date = fresh,
        caching: inout LoadCaching
    ) -> CacheConsultation {
        let fields = HTTPHeaderFields((request.allHTTPHeaderFields ?? [:]).map { ($0.key, $0.value) })
        return caching.consult(request, requestHeaders: fields, in: cache, now: now)
    }

    /// The answer of a consultation that must be one, its body let go of.
    static func answer(_ consultation: CacheConsultation) throws -> (CachedAnswer, CacheConsultation.Revalidation?) {
        guard case .answer(let answer, let url, let revalidation) = consultation else {
            Issue.record("expected a stored response to answer, got \(consultation)")
            throw CancellationError()
        }
        #expect(url == Self.url)
        answer.body.close()
        return (answer, revalidation)
    }

    @Test func aFreshResponseAnswersWholeWithItsAge() throws {
        let cache = try Self.cache(storing: [("Cache-Control", "max-age=60"), ("ETag", "\"a\"")])
        var caching = LoadCaching()
        let (answer, revalidation) = try Self.answer(Self.consult(Self.request(), in: cache, caching: &caching))
        #expect(answer.entry.response.statusCode == 200)
        #expect(answer.content == .whole)
        #expect(answer.age == 10)
        #expect(answer.body.size == Self.body.count)
        #expect(revalidation == nil)
        #expect(LoadCachingTests.isNone(caching.state))
    }

    @Test func aHeadIsAnsweredWithTheFieldsAlone() throws {
        let cache = try Self.cache(storing: [("Cache-Control", "max-age=60")])
        var caching = LoadCaching()
        let (answer, _) = try Self.answer(Self.consult(Self.request("HEAD"), in: cache, caching: &caching))
        #expect(answer.entry.response.statusCode == 200)
        #expect(answer.content == .none)
    }

    @Test func aRangeIsASliceAndAnUnsatisfiableOneA416() throws {
        let cache = try Self.cache(storing: [("Cache-Control", "max-age=60")])
        var caching = LoadCaching()
        let (slice, _) = try Self.answer(
            Self.consult(Self.request("GET", ["Range": "bytes=2-5"]), in: cache, caching: &caching)
        )
        #expect(slice.entry.response.statusCode == 206)
        #expect(slice.entry.response.headers["Content-Range"] == "bytes 2-5/10")
        #expect(slice.content == .slice(2...5))
        let (beyond, _) = try Self.answer(
            Self.consult(Self.request("GET", ["Range": "bytes=50-"]), in: cache, caching: &caching)
        )
        #expect(beyond.entry.response.statusCode == 416)
        #expect(beyond.content == .none)
    }

    /// A qualified no-cache's fields are not reused without validation.
    @Test func theFieldsANoCacheNamesAreLeftOut() throws {
        let cache = try Self.cache(storing: [
            ("Cache-Control", "max-age=60, no-cache=\"Set-Cookie\""), ("Set-Cookie", "id=1"), ("ETag", "\"a\""),
        ])
        var caching = LoadCaching()
        let (answer, _) = try Self.answer(Self.consult(Self.request(), in: cache, caching: &caching))
        #expect(!answer.entry.response.headers.contains("Set-Cookie"))
        #expect(answer.entry.response.headers["ETag"] == "\"a\"")
    }

    @Test func aStaleResponseWithAValidatorSendsItAndIsRemembered() throws {
        let cache = try Self.cache(storing: [("Cache-Control", "max-age=60"), ("ETag", "\"a\"")])
        var caching = LoadCaching()
        let request = Self.request()
        guard case .load(let sending?) = Self.consult(request, in: cache, now: Self.stale, caching: &caching) else {
            Issue.record("expected a conditional request")
            return
        }
        #expect(sending.value(forHTTPHeaderField: "If-None-Match") == "\"a\"")
        guard case .validating(let entry) = caching.state else {
            Issue.record("expected the stored entry to be validated, got \(caching.state)")
            return
        }
        #expect(entry.response.headers["ETag"] == "\"a\"")
        let unconditional = caching.takeUnconditionalRequest()
        #expect(unconditional == request)
    }

    @Test func aStaleResponseWithoutAValidatorIsReloadedAndKeptForAnError() throws {
        let cache = try Self.cache(storing: [("Cache-Control", "max-age=60, stale-if-error=600")])
        var caching = LoadCaching()
        guard case .load(nil) = Self.consult(Self.request(), in: cache, now: Self.stale, caching: &caching) else {
            Issue.record("expected the request to go as it is")
            return
        }
        guard case .reloading = caching.state else {
            Issue.record("expected the stale entry to be kept while reloading, got \(caching.state)")
            return
        }
    }

    /// Served at once within its stale-while-revalidate window, the entry as stored (not as
    /// served) named for the background request.
    @Test func aResponseWithinStaleWhileRevalidateAnswersAndIsRevalidated() throws {
        let cache = try Self.cache(storing: [
            ("Cache-Control", "max-age=60, stale-while-revalidate=3600, no-cache=\"X-Secret\""), ("X-Secret", "1"),
            ("ETag", "\"a\""),
        ])
        var caching = LoadCaching()
        let (answer, revalidation) = try Self.answer(
            Self.consult(Self.request(), in: cache, now: Self.stale, caching: &caching)
        )
        #expect(answer.content == .whole)
        let stored = try #require(revalidation)
        #expect(stored.conditional["If-None-Match"] == "\"a\"")
        #expect(stored.entry.response.headers["X-Secret"] == "1")
    }

    @Test func aLoadThatMayNotReachTheNetworkFailsWithoutAStoredResponse() throws {
        var caching = LoadCaching()
        var request = Self.request()
        request.cachePolicy = .returnCacheDataDontLoad
        guard case .fail(let withoutCache) = Self.consult(request, in: nil, caching: &caching) else {
            Issue.record("expected a failure without a cache")
            return
        }
        #expect(withoutCache.contains("No cache"))
        let empty = try ResponseCache(configuration: .init())
        guard case .fail(let notStored) = Self.consult(request, in: empty, caching: &caching) else {
            Issue.record("expected a failure with nothing stored")
            return
        }
        #expect(notStored.contains("not in the cache"))
        guard case .load(nil) = Self.consult(Self.request(), in: nil, caching: &caching) else {
            Issue.record("expected a load without a cache to go on")
            return
        }
    }

    /// Stored as the loader decoded it: a caller that undoes content codings itself is not
    /// answered with it.
    @Test func aDecodedBodyDoesNotAnswerACallerThatDecodes() throws {
        let cache = try Self.cache(storing: [("Cache-Control", "max-age=60"), ("Content-Encoding", "gzip")])
        var caching = LoadCaching()
        let consultation = Self.consult(Self.request("GET", ["Accept-Encoding": "gzip"]), in: cache, caching: &caching)
        guard case .load(nil) = consultation else {
            Issue.record("expected the request to go as it is, got \(consultation)")
            return
        }
        let (answer, _) = try Self.answer(Self.consult(Self.request(), in: cache, caching: &caching))
        #expect(answer.content == .whole)
    }
}
