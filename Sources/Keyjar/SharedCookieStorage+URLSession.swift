public import Foundation
public import FoundationNetworking
import KeyjarCore

/// Using the shared jar with URLSession: Foundation's `HTTPCookieStorage` cannot be subclassed
/// on Linux, so instead a request gets its Cookie header here, and a response's Set-Cookie
/// lines are stored here. ``prepare(_:)`` first takes cookies away from Foundation, which would
/// otherwise keep a copy of its own (in `HTTPCookieStorage.shared`, for every session of the
/// process) and send that.
///
/// ```swift
/// let configuration = URLSessionConfiguration.default
/// storage.prepare(configuration)
/// let session = URLSession(configuration: configuration)
/// var request = URLRequest(url: url)
/// storage.addCookies(to: &request)
/// let (_, response) = try await session.data(for: request)
/// try storage.storeCookies(from: response as! HTTPURLResponse)
/// ```
extension SharedCookieStorage {
    /// Leaves cookies to this store in sessions made with `configuration`: Foundation keeps
    /// none (`httpCookieStorage = nil`) and adds no Cookie header of its own
    /// (`httpShouldSetCookies = false`); ``addCookies(to:mainDocumentURL:isTopLevelNavigation:)``
    /// and `storeCookies(from:mainDocumentURL:)` do both.
    public func prepare(_ configuration: URLSessionConfiguration) {
        configuration.httpCookieStorage = nil
        configuration.httpShouldSetCookies = false
    }

    /// Sets the request's Cookie header from the jar (replacing one already there), unless the
    /// request opted out with `httpShouldHandleCookies = false`.
    public func addCookies(to request: inout URLRequest, mainDocumentURL: URL? = nil, isTopLevelNavigation: Bool = true)
    {
        guard request.httpShouldHandleCookies, let url = request.url else { return }
        let header = cookieHeader(
            for: url,
            mainDocumentURL: mainDocumentURL ?? request.mainDocumentURL,
            isTopLevelNavigation: isTopLevelNavigation,
            httpMethod: request.httpMethod ?? "GET"
        )
        request.setValue(header, forHTTPHeaderField: "Cookie")
    }

    /// Stores every Set-Cookie line of a response, under the accept policy.
    /// - Returns: per line, whether it was stored or why not.
    @discardableResult
    public func storeCookies(
        from response: HTTPURLResponse,
        mainDocumentURL: URL? = nil
    ) throws(KeyjarClientError) -> [CookieStoreOutcome] {
        let lines = Self.setCookieLines(of: response)
        guard let url = response.url, !lines.isEmpty else { return [] }
        return try storeCookies(fromResponseHeaders: lines, for: url, mainDocumentURL: mainDocumentURL)
    }

    /// `storeCookies(from:mainDocumentURL:)` without holding a thread of the caller's while
    /// keyjard answers.
    @discardableResult
    public func storeCookies(
        from response: HTTPURLResponse,
        mainDocumentURL: URL? = nil
    ) async throws(KeyjarClientError) -> [CookieStoreOutcome] {
        let lines = Self.setCookieLines(of: response)
        guard let url = response.url, !lines.isEmpty else { return [] }
        return try await storeCookies(fromResponseHeaders: lines, for: url, mainDocumentURL: mainDocumentURL)
    }

    /// A response's Set-Cookie lines, one per cookie.
    private static func setCookieLines(of response: HTTPURLResponse) -> [String] {
        response.allHeaderFields.compactMap { key, value -> String? in
            guard (key as? String)?.lowercased() == "set-cookie" else { return nil }
            return value as? String
        }.flatMap(Self.splitSetCookieHeader)
    }

    /// Foundation joins repeated Set-Cookie headers with ", ": this splits them back
    /// (`Cookie.setCookieLines(inJoinedHeader:)`).
    public static func splitSetCookieHeader(_ value: String) -> [String] {
        Cookie.setCookieLines(inJoinedHeader: value)
    }
}
