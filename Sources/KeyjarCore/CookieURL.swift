public import FoundationEssentials

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

    /// Parts already in canonical form (the plain-URL reader checked them).
    private init(canonicalScheme scheme: String, host: String, port: Int?, path: String) {
        self.scheme = scheme
        self.host = host
        self.port = port
        self.path = path
    }

    /// Builds from parts that are already canonical (tests and the wire format use this).
    public init(scheme: String, host: String, port: Int? = nil, path: String = "/") {
        self.scheme = CookieURL.lowercasedASCII(scheme)
        self.host = CookieURL.canonicalHost(host)
        self.port = port
        self.path = path.isEmpty ? "/" : path
    }

    /// Returns nil for a URL without a host (cookies need one).
    public init?(_ url: URL) {
        // Foundation's accessors (scheme, host, port, path) each slice and copy the URL's text:
        // together a third of a Cookie header's lookup from a URL. A plain absolute URL is read
        // from its text in one pass instead; anything else goes to Foundation.
        if url.baseURL == nil, let plain = CookieURL(plainAbsoluteString: url.relativeString) {
            self = plain
            return
        }
        self.init(foundationAccessorsOf: url)
    }

    /// The URL as Foundation's accessors give it: the reference for `init(plainAbsoluteString:)`.
    package init?(foundationAccessorsOf url: URL) {
        guard let scheme = url.scheme, var host = url.host(percentEncoded: true), !host.isEmpty else { return nil }
        // A host with non-ASCII letters is percent-encoded here, while DNS, libcurl and the
        // Domain attribute know it by its IDNA A-labels (`xn--…`): ``Host/asciiName(_:)`` of the
        // decoded name, in every process (Foundation's `host` applies IDNA only where ICU is
        // linked). (A byte search: `contains("%")` resolves to Foundation's substring search,
        // which cost a third of a Cookie header's lookup from a URL.)
        if host.utf8.contains(UInt8(ascii: "%")) {
            guard let ascii = Host.asciiName(percentEncoded: host), !ascii.isEmpty else { return nil }
            host = ascii
        }
        self.init(scheme: scheme, host: host, port: url.port, path: url.path(percentEncoded: true))
    }

    /// Scheme, host, port and path of `text` when it is a plain absolute URL
    /// (`scheme://host[:port][/path][?query][#fragment]` in ASCII, without user information,
    /// brackets or percent signs in the host), read as Foundation's accessors read it; nil for
    /// anything else, which the caller leaves to Foundation.
    package init?(plainAbsoluteString text: String) {
        var text = text
        guard
            let url = text.withUTF8({ bytes -> CookieURL? in
                guard let parts = Self.plainParts(bytes) else { return nil }
                func slice(_ range: Range<Int>) -> String {
                    String(decoding: UnsafeBufferPointer(rebasing: bytes[range]), as: UTF8.self)
                }
                let scheme = slice(parts.scheme)
                let host = slice(parts.host)
                let path = parts.path.isEmpty ? "/" : slice(parts.path)
                // Already canonical unless it has capitals (no brackets: `plainParts` refuses them).
                guard !parts.hasCapitals else {
                    return CookieURL(scheme: scheme, host: host, port: parts.port, path: path)
                }
                return CookieURL(canonicalScheme: scheme, host: host, port: parts.port, path: path)
            })
        else { return nil }
        self = url
    }

    private static func plainParts(
        _ bytes: UnsafeBufferPointer<UInt8>
    ) -> (scheme: Range<Int>, host: Range<Int>, port: Int?, path: Range<Int>, hasCapitals: Bool)? {
        func isLetter(_ byte: UInt8) -> Bool {
            (byte | 0x20) >= UInt8(ascii: "a") && (byte | 0x20) <= UInt8(ascii: "z")
        }
        func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }
        func isCapital(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") }
        var hasCapitals = false
        var position = 0
        // Scheme (RFC 3986 §3.1), then "://".
        guard let first = bytes.first, isLetter(first) else { return nil }
        while position < bytes.count, bytes[position] != UInt8(ascii: ":") {
            let byte = bytes[position]
            guard
                isLetter(byte) || isDigit(byte) || byte == UInt8(ascii: "+") || byte == UInt8(ascii: "-")
                    || byte == UInt8(ascii: ".")
            else { return nil }
            hasCapitals = hasCapitals || isCapital(byte)
            position += 1
        }
        let scheme = 0..<position
        guard position + 2 < bytes.count, bytes[position + 1] == UInt8(ascii: "/"),
            bytes[position + 2] == UInt8(ascii: "/")
        else { return nil }
        position += 3
        // Host: letters, digits, '-', '.', '_' only (no user information, IPv6 brackets or
        // percent-encoding: Foundation reads those).
        let hostStart = position
        while position < bytes.count {
            let byte = bytes[position]
            guard
                isLetter(byte) || isDigit(byte) || byte == UInt8(ascii: "-") || byte == UInt8(ascii: ".")
                    || byte == UInt8(ascii: "_")
            else { break }
            hasCapitals = hasCapitals || isCapital(byte)
            position += 1
        }
        let host = hostStart..<position
        guard !host.isEmpty else { return nil }
        var port: Int?
        if position < bytes.count, bytes[position] == UInt8(ascii: ":") {
            position += 1
            var value = 0
            let digitsStart = position
            while position < bytes.count, isDigit(bytes[position]), position - digitsStart < 5 {
                value = value * 10 + Int(bytes[position] - UInt8(ascii: "0"))
                position += 1
            }
            guard position > digitsStart, value <= 65535 else { return nil }
            port = value
        }
        // The authority ends at '/', '?', '#' or the end; anything else (a '@', '[', '%', a
        // sixth port digit) is for Foundation.
        guard
            position == bytes.count || bytes[position] == UInt8(ascii: "/") || bytes[position] == UInt8(ascii: "?")
                || bytes[position] == UInt8(ascii: "#")
        else { return nil }
        let pathStart = position
        while position < bytes.count, bytes[position] != UInt8(ascii: "?"), bytes[position] != UInt8(ascii: "#") {
            guard bytes[position] < 0x80 else { return nil }
            position += 1
        }
        return (scheme, host, port, pathStart..<position, hasCapitals)
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
