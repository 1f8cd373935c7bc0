import Foundation
import KeyjarHTTPCache
import Testing

/// Several stored variants of one URL (RFC 9111 §4.1, §4.3.1, §4.3.4): which answers a request,
/// how a request none answers is validated, which one a 304 selects.
struct CacheVariantRulesTests {
    static let epoch = Date(timeIntervalSince1970: 1_700_000_000)

    static func variant(
        _ language: String?,
        etag: String? = nil,
        vary: String = "Accept-Language",
        lastModified: String? = nil,
        dateOffset: TimeInterval = 0
    ) -> StoredResponse {
        var fields: [(String, String)] = [("Cache-Control", "max-age=600"), ("Vary", vary)]
        if let etag { fields.append(("ETag", etag)) }
        if let lastModified { fields.append(("Last-Modified", lastModified)) }
        return StoredResponse(
            statusCode: 200,
            headers: HTTPHeaderFields(fields),
            requestTime: epoch.addingTimeInterval(dateOffset),
            responseTime: epoch.addingTimeInterval(dateOffset),
            requestHeaders: HTTPHeaderFields(language.map { [("Accept-Language", $0)] } ?? [])
        )
    }

    static func language(_ value: String) -> HTTPHeaderFields { HTTPHeaderFields([("Accept-Language", value)]) }

    @Test func theVariantWhoseValuesMatchAnswers() {
        let variants = [Self.variant("en"), Self.variant("fr"), Self.variant(nil)]
        #expect(HTTPCacheRules.selectVariant(variants, for: Self.language("en")) == 0)
        #expect(HTTPCacheRules.selectVariant(variants, for: Self.language("fr")) == 1)
        // Absent in the request and in the stored one's: a match.
        #expect(HTTPCacheRules.selectVariant(variants, for: HTTPHeaderFields()) == 2)
        #expect(HTTPCacheRules.selectVariant(variants, for: Self.language("de")) == nil)
        #expect(HTTPCacheRules.selectVariant([], for: Self.language("de")) == nil)
    }

    /// Two variants matching (stored under different Vary lists): the most recent answers.
    @Test func ofSeveralMatchingTheMostRecentAnswers() {
        let older = Self.variant("en", vary: "Accept-Language", dateOffset: 0)
        let newer = Self.variant("en", vary: "Accept-Encoding", dateOffset: 60)
        #expect(HTTPCacheRules.selectVariant([older, newer], for: Self.language("en")) == 1)
        #expect(HTTPCacheRules.selectVariant([newer, older], for: Self.language("en")) == 0)
    }

    @Test func aRequestMatchingNoneListsEveryEntityTag() {
        let variants = [
            Self.variant("en", etag: "\"en\""), Self.variant("fr", etag: "W/\"fr\""), Self.variant("it"),
            Self.variant("es", etag: "\"en\""),
        ]
        #expect(
            HTTPCacheRules.variantValidation(
                policy: .useProtocol,
                requestHeaders: Self.language("de"),
                variants: variants
            )
                == HTTPHeaderFields([("If-None-Match", "\"en\", W/\"fr\"")])
        )
        // Nothing to list, a policy or request that does not use the cache, or the request's
        // own If-None-Match: no variant validation.
        #expect(
            HTTPCacheRules.variantValidation(
                policy: .useProtocol,
                requestHeaders: Self.language("de"),
                variants: [Self.variant("it")]
            ) == nil
        )
        for policy in [RequestCachePolicy.reloadIgnoringCache, .returnCacheDataDontLoad] {
            #expect(
                HTTPCacheRules.variantValidation(
                    policy: policy,
                    requestHeaders: Self.language("de"),
                    variants: variants
                )
                    == nil
            )
        }
        #expect(
            HTTPCacheRules.variantValidation(
                policy: .useProtocol,
                requestHeaders: HTTPHeaderFields([("Accept-Language", "de"), ("Cache-Control", "no-store")]),
                variants: variants
            ) == nil
        )
        #expect(
            HTTPCacheRules.variantValidation(
                policy: .useProtocol,
                requestHeaders: HTTPHeaderFields([("Accept-Language", "de"), ("If-None-Match", "\"mine\"")]),
                variants: variants
            ) == nil
        )
    }

    @Test func a304SelectsTheVariantItsValidatorNames() {
        let modified = "Tue, 14 Nov 2023 22:13:20 GMT"
        let variants = [
            Self.variant("en", etag: "\"en\""), Self.variant("fr", etag: "W/\"fr\""),
            Self.variant("it", lastModified: modified),
        ]
        func selected(_ fields: [(String, String)], among: [StoredResponse] = variants) -> Int? {
            HTTPCacheRules.variantSelected(byNotModified: HTTPHeaderFields(fields), among: among)
        }
        #expect(selected([("ETag", "\"en\"")]) == 0)
        // A strong tag matches strong tags only; a weak one matches weakly.
        #expect(selected([("ETag", "\"fr\"")]) == nil)
        #expect(selected([("ETag", "W/\"fr\"")]) == 1)
        #expect(selected([("ETag", "W/\"en\"")]) == 0)
        #expect(selected([("ETag", "\"de\"")]) == nil)
        #expect(selected([("Last-Modified", modified)]) == 2)
        // No validator: only a single variant without validators.
        #expect(selected([]) == nil)
        #expect(selected([], among: [Self.variant("en")]) == 0)
        #expect(selected([], among: [Self.variant("en", etag: "\"en\"")]) == nil)
        // The same tag on two variants: the most recent.
        let twins = [
            Self.variant("en", etag: "\"x\"", dateOffset: 0), Self.variant("fr", etag: "\"x\"", dateOffset: 60),
        ]
        #expect(selected([("ETag", "\"x\"")], among: twins) == 1)
    }

    @Test func aSelectedVariantTakesTheValuesOfTheRequestItAnswers() {
        let french = Self.variant("fr", etag: "\"fr\"")
        let forGerman = french.selected(for: Self.language("de"))
        #expect(forGerman.varyMatches(Self.language("de")) && !forGerman.varyMatches(Self.language("fr")))
        #expect(forGerman.headers == french.headers)
    }
}
