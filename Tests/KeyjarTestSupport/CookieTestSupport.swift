public import Foundation
public import KeyjarCore
public import Testing

/// A fixed "now" so expiry arithmetic in tests is exact: 2026-01-01T00:00:00Z.
public let testNow = Date(timeIntervalSince1970: 1_767_225_600)

/// A request context from URL strings; a test that passes a bad URL fails loudly.
public func context(
    _ url: String,
    main: String? = nil,
    topLevel: Bool = true,
    method: String = "GET",
    api: CookieAPI = .http,
    sourceLocation: SourceLocation = #_sourceLocation
) -> CookieContext {
    guard let parsed = URL(string: url),
        let built = CookieContext(
            url: parsed,
            mainDocumentURL: main.flatMap(URL.init(string:)),
            isTopLevelNavigation: topLevel,
            httpMethod: method,
            api: api
        )
    else {
        Issue.record("bad test URL \(url)", sourceLocation: sourceLocation)
        return CookieContext(url: CookieURL(scheme: "http", host: "invalid.test"))
    }
    return built
}

extension CookieJar {
    /// Stores a header and returns the rejection, or nil when it was stored.
    public mutating func set(
        _ header: String,
        from url: String,
        main: String? = nil,
        topLevel: Bool = true,
        api: CookieAPI = .http,
        now: Date = testNow
    ) -> CookieRejection? {
        switch setCookie(header, context: context(url, main: main, topLevel: topLevel, api: api), now: now) {
        case .success: return nil
        case .failure(let rejection): return rejection
        }
    }

    /// Stores a header that the test needs stored; a rejection fails the test.
    public mutating func accept(
        _ header: String,
        from url: String,
        main: String? = nil,
        now: Date = testNow,
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        if let rejection = set(header, from: url, main: main, now: now) {
            Issue.record("'\(header)' from \(url) was rejected: \(rejection)", sourceLocation: sourceLocation)
        }
    }

    /// The Cookie header for a URL, "" when none.
    public mutating func header(
        for url: String,
        main: String? = nil,
        topLevel: Bool = true,
        method: String = "GET",
        api: CookieAPI = .http,
        now: Date = testNow
    ) -> String {
        cookieHeader(for: context(url, main: main, topLevel: topLevel, method: method, api: api), now: now) ?? ""
    }
}
