public import Foundation

/// The parts of a request URL that cookie rules look at, canonicalised once so that the hot
/// path (a Cookie header per request) never re-parses or re-lowercases.
public struct CookieURL: Sendable, Hashable {
    /// Lower-cased scheme: `http`, `https`, `ws`, `wss`, ...
    public let scheme: String
    /// Canonical host: lower-cased, IPv6 without brackets, no trailing dot removed (a
    /// trailing-dot host is a different host, as in browsers).
    public let host: String
    public let port: Int?
    /// The path as sent on the wire (percent-encoded), `/` when the URL has none.
    public let path: String

    /// Builds from parts that are already canonical (tests and the wire format use this).
    public init(scheme: String, host: String, port: Int? = nil, path: String = "/") {
        self.scheme = CookieURL.lowercasedASCII(scheme)
        self.host = CookieURL.canonicalHost(host)
        self.port = port
        self.path = path.isEmpty ? "/" : path
    }

    /// Returns nil for a URL without a host (cookies need one).
    public init?(_ url: URL) {
        guard let scheme = url.scheme, var host = url.host(percentEncoded: true), !host.isEmpty else { return nil }
        // A host with non-ASCII letters is percent-encoded here, while DNS, libcurl and the
        // Domain attribute know it by its IDNA A-labels (`xn--…`), which `host` gives.
        // (A byte search: `contains("%")` resolves to Foundation's substring search, which cost
        // a third of a Cookie header's lookup from a URL.)
        if host.utf8.contains(UInt8(ascii: "%")), let idna = url.host, !idna.isEmpty { host = idna }
        self.init(scheme: scheme, host: host, port: url.port, path: url.path(percentEncoded: true))
    }

    public init?(string: String) {
        guard let url = URL(string: string) else { return nil }
        self.init(url)
    }

    static func canonicalHost(_ host: String) -> String {
        var host = host
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        return lowercasedASCII(host)
    }

    /// `lowercased()`, without its allocation for text that is already lower-case ASCII (almost
    /// every scheme and host; this runs for every Cookie header).
    static func lowercasedASCII(_ text: String) -> String {
        text.utf8.allSatisfy({ $0 < 0x80 && !(UInt8(ascii: "A")...UInt8(ascii: "Z")).contains($0) })
            ? text : text.lowercased()
    }

    /// Whether this URL is a "secure" channel for cookies (RFC 6265bis §5.8.3: potentially
    /// trustworthy): https and wss, and loopback hosts over any scheme.
    public var isSecure: Bool {
        scheme == "https" || scheme == "wss" || Host.isLoopback(host)
    }

    /// The site's scheme class for "schemeful same-site": https/wss count as one scheme, http/ws
    /// as another.
    var isSecureScheme: Bool { scheme == "https" || scheme == "wss" }
}
