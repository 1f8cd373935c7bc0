import Foundation
import FoundationNetworking
import KeyjarHTTPCache
import KeyjarResponseCache
import Testing

@testable import KeyjarLoader

/// The response cache's part of a load, without a transfer, a server or a disk: what each step
/// of a validation, a reload, a background revalidation and a write leaves, and what each
/// answer takes (once).
@Suite("Load caching")
struct LoadCachingTests {
    static let url = URL(string: "http://127.0.0.1/page")!

    static func entry(etag: String, vary: String? = nil, language: String? = nil) -> CachedEntry {
        var headers = HTTPHeaderFields([("ETag", etag), ("Cache-Control", "max-age=60")])
        if let vary { headers.append("Vary", vary) }
        let request = HTTPHeaderFields(language.map { [("Accept-Language", $0)] } ?? [])
        let response = StoredResponse(
            statusCode: 200,
            headers: headers,
            requestTime: Date(timeIntervalSince1970: 1_000),
            responseTime: Date(timeIntervalSince1970: 1_001),
            requestHeaders: request
        )
        return CachedEntry(url: url, response: response)
    }

    static func isNone(_ state: LoadCaching.State) -> Bool {
        if case .none = state { return true }
        return false
    }

    @Test func aValidationAnswersOnceAndResendsAsTheCallerMadeIt() {
        var caching = LoadCaching()
        let stored = Self.entry(etag: "\"a\"")
        let request = URLRequest(url: Self.url)
        caching.validate(stored, unconditional: request)
        #expect(caching.unconditionalRequest == request)
        let resend = caching.takeUnconditionalRequest()
        #expect(resend == request)
        let resendAgain = caching.takeUnconditionalRequest()
        #expect(resendAgain == nil)
        let validated = caching.takeValidated(HTTPHeaderFields())
        #expect(validated?.response.headers == stored.response.headers)
        let validatedAgain = caching.takeValidated(HTTPHeaderFields())
        #expect(validatedAgain == nil)
        #expect(Self.isNone(caching.state))
    }

    /// Of several variants, a 304 names the one its entity tag matches; one naming none
    /// selects none, and the validation is over either way.
    @Test func aNotModifiedSelectsTheVariantItNames() {
        let english = Self.entry(etag: "\"en\"", vary: "Accept-Language", language: "en")
        let french = Self.entry(etag: "\"fr\"", vary: "Accept-Language", language: "fr")
        var caching = LoadCaching()
        caching.validateVariants([english, french], unconditional: URLRequest(url: Self.url))
        let selected = caching.takeValidated(HTTPHeaderFields([("ETag", "\"fr\"")]))
        #expect(selected?.response.headers == french.response.headers)
        #expect(Self.isNone(caching.state))
        caching.validateVariants([english, french], unconditional: URLRequest(url: Self.url))
        #expect(caching.takeValidated(HTTPHeaderFields([("ETag", "\"de\"")])) == nil)
        #expect(Self.isNone(caching.state))
    }

    /// A stale entry reloading answers a failure (once), but not once the reload has its
    /// response; a validated entry does too; variants and a plain load never.
    @Test func onlyAStaleEntryBeingReloadedOrValidatedAnswersAFailure() {
        let stale = Self.entry(etag: "\"s\"")
        var caching = LoadCaching()
        caching.reload(stale)
        let reloadValidated = caching.takeValidated(HTTPHeaderFields())
        #expect(reloadValidated == nil, "a reload is no validation")
        let staleEntry = caching.takeStaleEntry()
        #expect(staleEntry?.response.headers == stale.response.headers)
        let staleAgain = caching.takeStaleEntry()
        #expect(staleAgain == nil)
        caching.reload(stale)
        caching.reloadAnswered()
        let afterAnswer = caching.takeStaleEntry()
        #expect(afterAnswer == nil)
        caching.validate(stale, unconditional: URLRequest(url: Self.url))
        caching.reloadAnswered()
        let validatedStale = caching.takeStaleEntry()
        #expect(validatedStale != nil, "an answered reload leaves a validation alone")
        caching.validateVariants([stale], unconditional: URLRequest(url: Self.url))
        let variantsStale = caching.takeStaleEntry()
        #expect(variantsStale == nil)
    }

    /// A background revalidation sends its conditional fields and then validates its entry;
    /// without fields it is a plain load; any other load is none.
    @Test func aBackgroundRevalidationValidatesWhenItHasValidators() {
        let stale = Self.entry(etag: "\"b\"")
        var caching = LoadCaching()
        let plainLoad = caching.beginBackgroundRevalidation()
        #expect(plainLoad == nil)
        let conditional = HTTPHeaderFields([("If-None-Match", "\"b\"")])
        caching.revalidateInBackground(stale, conditional: conditional)
        let fields = caching.beginBackgroundRevalidation()
        #expect(fields == conditional)
        let resend = caching.takeUnconditionalRequest()
        #expect(resend == nil, "nothing to send again for a caller")
        let validated = caching.takeValidated(HTTPHeaderFields())
        #expect(validated != nil)
        caching.revalidateInBackground(stale, conditional: HTTPHeaderFields())
        let noFields = caching.beginBackgroundRevalidation()
        #expect(noFields == HTTPHeaderFields())
        #expect(Self.isNone(caching.state))
        let afterwards = caching.beginBackgroundRevalidation()
        #expect(afterwards == nil)
    }

    /// A new hop forgets the last one's validation; a new attempt, a second response or a
    /// drop cancels the response being written (it then stores nothing), and the attempt's
    /// time is the stored request time.
    @Test func aWriteEndsWithItsAttemptAndAHopForgetsItsValidation() throws {
        let cache = try ResponseCache(configuration: .init())
        func writing(_ etag: String) -> LoadCaching.Writing {
            let entry = Self.entry(etag: etag)
            let response = HTTPURLResponse(url: Self.url, statusCode: 200, httpVersion: nil, headerFields: nil)!
            return .init(entry: entry, writer: cache.makeWriter(for: entry), response: response)
        }
        var caching = LoadCaching()
        caching.validate(Self.entry(etag: "\"old\""), unconditional: URLRequest(url: Self.url))
        caching.beginHop()
        #expect(Self.isNone(caching.state) && caching.unconditionalRequest == nil)

        let first = writing("\"1\"")
        caching.startWriting(first)
        let second = writing("\"2\"")
        caching.startWriting(second)
        first.writer.finish()
        #expect(cache.lookup(Self.url) == nil, "a replaced write stores nothing")
        caching.append(Data("body".utf8))
        #expect(second.writer.bodyForInspection() == Data("body".utf8))
        let writingTaken = caching.takeWriting()
        let taken = try #require(writingTaken)
        let takenAgain = caching.takeWriting()
        #expect(takenAgain == nil)
        taken.writer.finish()
        #expect(cache.lookup(Self.url)?.entry.response.headers == second.entry.response.headers)

        let third = writing("\"3\"")
        caching.startWriting(third)
        let time = Date(timeIntervalSince1970: 5_000)
        caching.attemptStarting(at: time)
        #expect(caching.requestTime == time && caching.writing == nil)
        third.writer.finish()
        #expect(cache.lookup(Self.url)?.entry.response.headers == second.entry.response.headers)
        caching.startWriting(writing("\"4\""))
        caching.dropWriting()
        #expect(caching.writing == nil)
    }
}
