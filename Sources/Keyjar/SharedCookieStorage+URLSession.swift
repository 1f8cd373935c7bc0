public import Foundation
public import FoundationNetworking

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

    /// Foundation joins repeated Set-Cookie headers with ", ". This splits them back: a comma
    /// starts a new cookie only when what follows looks like `name=` before any `;` (so the
    /// comma in `Expires=Wed, 09 Jun 2027 …` stays inside its cookie).
    public static func splitSetCookieHeader(_ value: String) -> [String] {
        var lines: [String] = []
        var current = ""
        let parts = value.split(separator: ",", omittingEmptySubsequences: false)
        for (index, part) in parts.enumerated() {
            if index > 0 && startsCookie(part) {
                lines.append(current)
                current = String(part.drop { $0 == " " })
            } else {
                current += (index > 0 ? "," : "") + part
            }
        }
        lines.append(current)
        return lines.map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
    }

    private static func startsCookie(_ part: Substring) -> Bool {
        let beforeSemicolon = part.prefix { $0 != ";" }
        guard let equals = beforeSemicolon.firstIndex(of: "=") else { return false }
        let name = beforeSemicolon[..<equals].trimmingCharacters(in: .whitespaces)
        return !name.isEmpty && !name.contains(" ") && name.first?.isNumber == false
    }
}
