public import Foundation
public import FoundationNetworking

/// Using the shared jar with URLSession: Foundation's `HTTPCookieStorage` cannot be subclassed
/// on Linux, so instead a request gets its Cookie header here, and a response's Set-Cookie
/// lines are stored here.
///
/// ```swift
/// var request = URLRequest(url: url)
/// storage.addCookies(to: &request)
/// let (data, response) = try await session.data(for: request)   // with httpShouldSetCookies off
/// try storage.storeCookies(from: response as! HTTPURLResponse)
/// ```
extension SharedCookieStorage {
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
    /// - Returns: per line, nil when stored or the reason it was not.
    @discardableResult
    public func storeCookies(
        from response: HTTPURLResponse,
        mainDocumentURL: URL? = nil
    ) throws(KeyjarClientError) -> [String?] {
        guard let url = response.url else { return [] }
        let lines = response.allHeaderFields.compactMap { key, value -> String? in
            guard (key as? String)?.lowercased() == "set-cookie" else { return nil }
            return value as? String
        }.flatMap(Self.splitSetCookieHeader)
        guard !lines.isEmpty else { return [] }
        return try storeCookies(fromResponseHeaders: lines, for: url, mainDocumentURL: mainDocumentURL)
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
