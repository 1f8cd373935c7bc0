public import FoundationEssentials

/// Whether cookies are read or written by HTTP itself or by a script-like API
/// (RFC 6265bis "non-HTTP APIs"): HttpOnly cookies are invisible to the latter.
public enum CookieAPI: Sendable, Hashable, Codable {
    case http
    case nonHTTP
}

/// The request a cookie is stored from or sent with, and the browsing context around it.
///
/// `siteForCookies` is the main-document (top-level) URL. When it is nil the request is treated
/// as a top-level, same-site one: the case of a program fetching a URL directly.
public struct CookieContext: Sendable, Hashable {
    public var url: CookieURL
    public var siteForCookies: CookieURL?
    /// True when the request navigates a top-level browsing context.
    public var isTopLevelNavigation: Bool
    /// True for GET, HEAD, OPTIONS and TRACE: SameSite=Lax cookies go with cross-site
    /// top-level navigations only when the method is safe.
    public var isSafeMethod: Bool
    public var api: CookieAPI

    public init(
        url: CookieURL,
        siteForCookies: CookieURL? = nil,
        isTopLevelNavigation: Bool = true,
        isSafeMethod: Bool = true,
        api: CookieAPI = .http
    ) {
        self.url = url
        self.siteForCookies = siteForCookies
        self.isTopLevelNavigation = isTopLevelNavigation
        self.isSafeMethod = isSafeMethod
        self.api = api
    }

    /// RFC 9110 §9.2.1 safe methods.
    private static let safeMethods: Set<String> = ["GET", "HEAD", "OPTIONS", "TRACE"]

    /// Method names are case-sensitive on the wire, but Foundation callers write "get" too.
    private static func isSafe(_ method: String) -> Bool {
        method == "GET" || safeMethods.contains(method.uppercased())
    }

    /// A context from Foundation URLs; nil when `url` has no host.
    public init?(
        url: URL,
        mainDocumentURL: URL? = nil,
        isTopLevelNavigation: Bool = true,
        httpMethod: String = "GET",
        api: CookieAPI = .http
    ) {
        guard let cookieURL = CookieURL(url) else { return nil }
        self.init(
            url: cookieURL,
            siteForCookies: mainDocumentURL.flatMap { CookieURL($0) },
            isTopLevelNavigation: isTopLevelNavigation,
            httpMethod: httpMethod,
            api: api
        )
    }

    /// A context from parsed URLs and a request method as Foundation spells it.
    public init(
        url: CookieURL,
        siteForCookies: CookieURL?,
        isTopLevelNavigation: Bool,
        httpMethod: String,
        api: CookieAPI = .http
    ) {
        self.init(
            url: url,
            siteForCookies: siteForCookies,
            isTopLevelNavigation: isTopLevelNavigation,
            isSafeMethod: Self.isSafe(httpMethod),
            api: api
        )
    }
}
