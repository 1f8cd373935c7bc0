public import Foundation
public import FoundationNetworking
public import KeyjarCore

/// An `HTTPCookie` that remembers the Keyjar cookie it came from, so that what Foundation on
/// Linux drops (SameSite, the exact expiry of a Max-Age cookie, the host-only flag, creation
/// time, the partition key) survives a trip through Foundation's type.
public final class KeyjarHTTPCookie: HTTPCookie, @unchecked Sendable {
    // @unchecked: immutable after init, like its superclass.
    public let cookie: Cookie

    init?(_ cookie: Cookie, properties: [HTTPCookiePropertyKey: Any]) {
        self.cookie = cookie
        super.init(properties: properties)
    }

    /// Foundation's properties, and a partitioned cookie's key under
    /// `HTTPCookie.partitionKeyProperty` (Foundation on Linux keeps no property it
    /// does not know, so the key is added here rather than given to `init(properties:)`).
    public override var properties: [HTTPCookiePropertyKey: Any]? {
        var properties = super.properties ?? [:]
        if let partitionKey = cookie.partitionKey {
            properties[HTTPCookie.partitionKeyProperty] = partitionKey.serialized
        }
        return properties
    }

    /// `Cookie.cookies(withResponseHeaderFields:for:now:publicSuffixes:)` in Foundation's form:
    /// what `HTTPCookie.cookies(withResponseHeaderFields:for:)` returns, with RFC 6265bis's
    /// checks and without losing SameSite or Max-Age.
    public override class func cookies(
        withResponseHeaderFields headerFields: [String: String],
        for url: URL
    )
        -> [HTTPCookie]
    {
        Cookie.cookies(withResponseHeaderFields: headerFields, for: url).compactMap(HTTPCookie.make(from:))
    }

    /// `Cookie.requestHeaderFields(with:)` for Foundation's cookies.
    public override class func requestHeaderFields(with cookies: [HTTPCookie]) -> [String: String] {
        Cookie.requestHeaderFields(with: cookies)
    }
}

extension Cookie {
    /// The header fields that send Foundation's cookies with a request, as
    /// `Cookie.requestHeaderFields(with:)` writes Keyjar's: `["Cookie": "a=1; b=2"]`,
    /// `[:]` for none.
    public static func requestHeaderFields(with cookies: [HTTPCookie]) -> [String: String] {
        requestHeaderFields(with: cookies.map { Cookie($0) })
    }
}

extension HTTPCookie {
    /// Foundation's form of a Keyjar cookie (a ``KeyjarHTTPCookie``): domain with a leading dot
    /// unless host-only, HttpOnly, SameSite and a partitioned cookie's key (``partitionKeyProperty``)
    /// as properties, expiry as a date.
    public static func make(from cookie: Cookie) -> HTTPCookie? {
        var properties: [HTTPCookiePropertyKey: Any] = [
            .name: cookie.name, .value: cookie.value, .path: cookie.path,
            .domain: cookie.hostOnly ? cookie.domain : "." + cookie.domain,
        ]
        if let expires = cookie.expires { properties[.expires] = expires } else { properties[.discard] = "TRUE" }
        if cookie.secure { properties[.secure] = "TRUE" }
        if cookie.httpOnly { properties[HTTPCookiePropertyKey("HttpOnly")] = "TRUE" }
        if cookie.sameSite != .unspecified { properties[HTTPCookiePropertyKey("SameSite")] = cookie.sameSite.rawValue }
        return KeyjarHTTPCookie(cookie, properties: properties)
    }

    /// The property in which a ``KeyjarHTTPCookie`` shows a partitioned cookie's partition key
    /// (`https://example.com`). Foundation has no such property: an `HTTPCookie` made from
    /// properties is an unpartitioned cookie.
    public static let partitionKeyProperty = HTTPCookiePropertyKey("PartitionKey")
}

extension Cookie {
    /// A Keyjar cookie from Foundation's. A ``KeyjarHTTPCookie`` gives back its cookie exactly;
    /// otherwise the fields are read as Apple defines them (a domain without a leading dot is
    /// host-only), with Max-Age honoured even though Foundation on Linux ignores it.
    public init(_ httpCookie: HTTPCookie, now: Date = Date()) {
        if let keyjar = httpCookie as? KeyjarHTTPCookie {
            self = keyjar.cookie
            return
        }
        let properties = httpCookie.properties ?? [:]
        let domain = httpCookie.domain
        let created =
            (properties[HTTPCookiePropertyKey("Created")] as? Double).map(Date.init(timeIntervalSinceReferenceDate:))
            ?? now
        var expires = httpCookie.expiresDate
        if let maxAge = (properties[.maximumAge] as? String).flatMap(Int.init) ?? properties[.maximumAge] as? Int {
            expires = created.addingTimeInterval(TimeInterval(maxAge))
        }
        let sameSite = (properties[HTTPCookiePropertyKey("SameSite")] as? String).map(SameSite.init(attributeValue:))
        self.init(
            name: httpCookie.name,
            value: httpCookie.value,
            domain: Host.canonicalDomain(domain),
            hostOnly: !domain.hasPrefix("."),
            path: httpCookie.path,
            expires: expires,
            secure: httpCookie.isSecure,
            httpOnly: httpCookie.isHTTPOnly,
            sameSite: sameSite ?? .unspecified,
            creation: created
        )
    }
}
