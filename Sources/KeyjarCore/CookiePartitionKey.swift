/// The partition a partitioned cookie (CHIPS, the `Partitioned` attribute) lives in: the site
/// of the top-level document it was set under, as a scheme and a registrable domain.
///
/// A partitioned cookie goes only with requests made under the same top-level site, so an
/// embedded service gets a separate cookie jar on every site that embeds it. The key is part of
/// the cookie's identity: `id=1` of `chat.example` under `https://news.example` and under
/// `https://shop.example` are two cookies.
///
/// Its form is `scheme://site`, the form browsers store it in (`https://example.com`): the
/// site is a registrable domain (eTLD+1), or the host itself where it has none (an IP address,
/// a public suffix); no port; `ws` and `wss` count as `http` and `https`.
///
/// ```swift
/// let key = CookiePartitionKey(scheme: "https", site: "example.com")
/// key?.description            // "https://example.com"
/// CookiePartitionKey(serialized: "https://example.com") == key   // true
/// ```
public struct CookiePartitionKey: Sendable, Hashable {
    /// `scheme://site`; one string, so that comparing keys on every lookup is one comparison and
    /// an unpartitioned cookie carries no more than an empty optional.
    public let serialized: String

    /// A key from a scheme and a site, a registrable domain (``CookieJar/partitionKey(for:)``
    /// reduces a request's host to one, and ``CookieJar/insert(_:keepingCreation:now:enforcingLimits:)``
    /// a stored key's). Nil when the scheme is not a URL scheme or the site is not a host name or
    /// IP address.
    public init?(scheme: String, site: String) {
        let scheme = CookieURL.lowercasedASCII(scheme)
        let site = CookieURL.canonicalHost(site)
        guard Self.isScheme(scheme), Self.isSite(site) else { return nil }
        self.init(canonicalScheme: scheme, site: site)
    }

    /// Reads the ``serialized`` form; nil when it is not `scheme://site` with a valid scheme
    /// and site (an IPv6 site in brackets).
    public init?(serialized: String) {
        guard let separator = serialized.firstRange(of: "://") else { return nil }
        let site = serialized[separator.upperBound...]
        // Brackets hold an IPv6 literal, the only site with a colon: `example.com:443` is a host
        // and a port, which a site does not have.
        guard (site.hasPrefix("[") && site.hasSuffix("]")) == site.utf8.contains(UInt8(ascii: ":")) else { return nil }
        self.init(scheme: String(serialized[..<separator.lowerBound]), site: String(site))
    }

    /// From parts a `CookieURL` and the jar's site rule have made canonical already.
    init(canonicalScheme scheme: String, site: String) {
        let schemeOfSite =
            switch scheme {
            case "wss": "https"
            case "ws": "http"
            default: scheme
            }
        serialized = schemeOfSite + "://" + (site.utf8.contains(UInt8(ascii: ":")) ? "[" + site + "]" : site)
    }

    /// The scheme: `https`, `http`, ...
    public var scheme: String {
        guard let separator = serialized.firstRange(of: "://") else { return "" }
        return String(serialized[..<separator.lowerBound])
    }

    /// The site: a registrable domain, or a host that has none (an IPv6 address without brackets).
    public var site: String {
        guard let separator = serialized.firstRange(of: "://") else { return "" }
        return CookieURL.canonicalHost(String(serialized[separator.upperBound...]))
    }

    /// RFC 3986 §3.1: a letter, then letters, digits, "+", "-" and ".".
    private static func isScheme(_ scheme: String) -> Bool {
        guard let first = scheme.utf8.first, isLetter(first) else { return false }
        return scheme.utf8.allSatisfy { isLetter($0) || isDigit($0) || "+-.".utf8.contains($0) }
    }

    /// A lower-case ASCII host name or IP address: no controls, spaces or URL delimiters, and a
    /// colon only in an IPv6 literal.
    private static func isSite(_ site: String) -> Bool {
        guard !site.isEmpty,
            site.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F && !"/?#@;,[]\\".utf8.contains($0) })
        else { return false }
        guard site.utf8.contains(UInt8(ascii: ":")) else { return true }
        return site.utf8.allSatisfy {
            isDigit($0) || (isLetter($0) && $0 <= UInt8(ascii: "f")) || ":.".utf8.contains($0)
        }
    }

    private static func isLetter(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z") }
    private static func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }
}

extension CookiePartitionKey: CustomStringConvertible {
    public var description: String { serialized }
}
