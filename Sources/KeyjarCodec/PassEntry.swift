import FoundationEssentials
public import KeyjarCore

/// A credential as an entry of a pass store (passwordstore.org): the text `pass show` prints
/// once GPG has decrypted the file, which gopass, QtPass, browserpass and Android Password
/// Store read too. The first line is the password (or token); the lines after it are
/// `key: value` fields, the ones those programs know (`login`, `url`) first, then Keyjar's:
///
/// ```text
/// s3cret
/// login: alice
/// url: https://example.com:8443/
/// realm: Admin area
/// method: digest
/// expires: 2026-12-01T00:00:00Z
/// refresh-token: …
/// token-endpoint: https://login.example/token
/// client-id: cli
/// modified: 2026-11-30T09:12:03.250Z
/// ```
///
/// Reading is as lenient as those programs are: keys in any case, `username` or `user` for
/// `login`, a `url` without a scheme (https); lines Keyjar does not know (a user's notes) are
/// kept, in order, and written back after Keyjar's fields.
public struct PassEntry: Sendable, Hashable, CustomStringConvertible, CustomDebugStringConvertible {
    public var password: String
    public var login: String?
    /// The server: `scheme://host:port/` (read: any URL, its path ignored).
    public var url: String?
    public var realm: String?
    public var method: ProtectionSpace.AuthenticationMethod
    public var proxy: ProtectionSpace.ProxyType
    /// When the password (a token) stops working, seconds since 1970.
    public var expires: Double?
    public var refreshToken: String?
    public var tokenRefresh: TokenRefresh?
    /// When the credential was last changed, seconds since 1970: what a sync compares when two
    /// machines changed one entry (the file's own time says when it was written, not changed).
    public var modified: Double?
    /// Lines Keyjar does not read, kept as they were.
    public var otherLines: [String]

    public init(
        password: String,
        login: String? = nil,
        url: String? = nil,
        realm: String? = nil,
        method: ProtectionSpace.AuthenticationMethod = .default,
        proxy: ProtectionSpace.ProxyType = .none,
        expires: Double? = nil,
        refreshToken: String? = nil,
        tokenRefresh: TokenRefresh? = nil,
        modified: Double? = nil,
        otherLines: [String] = []
    ) {
        self.password = password
        self.login = login
        self.url = url
        self.realm = realm
        self.method = method
        self.proxy = proxy
        self.expires = expires
        self.refreshToken = refreshToken
        self.tokenRefresh = tokenRefresh
        self.modified = modified
        self.otherLines = otherLines
    }

    /// Never the password or the refresh token.
    public var description: String {
        "pass entry \(login ?? "(no login)") at \(url ?? "(no url)")"
            + (modified.map { " modified \(PassEntry.time($0))" } ?? "")
    }
    public var debugDescription: String { description }

    /// Why an entry cannot be written or read; names a field, never a value that could be a
    /// secret.
    public struct FormatError: Error, Sendable, Hashable, CustomStringConvertible {
        public let description: String
    }

    // MARK: - Writing

    /// The entry's text. A value with a line break cannot be written (it would become a field
    /// of its own).
    public func encoded() throws(FormatError) -> String {
        var lines = [password]
        func field(_ key: String, _ value: String?) throws(FormatError) {
            guard let value else { return }
            guard !value.contains(where: \.isNewline) else {
                throw FormatError(description: "the \(key) holds a line break, which a pass entry cannot")
            }
            lines.append("\(key): \(value)")
        }
        guard !password.contains(where: \.isNewline) else {
            throw FormatError(description: "the password holds a line break, which a pass entry cannot")
        }
        try field("login", login)
        try field("url", url)
        try field("realm", realm)
        try field("method", method == .default ? nil : Self.methodNames[method])
        try field("proxy", proxy == .none ? nil : proxy.rawValue)
        try field("expires", expires.map(Self.time))
        try field("refresh-token", refreshToken)
        try field("token-endpoint", tokenRefresh?.endpoint)
        try field("client-id", tokenRefresh?.clientID)
        try field("modified", modified.map(Self.time))
        for line in otherLines {
            guard !line.contains(where: \.isNewline) else {
                throw FormatError(description: "a kept line holds a line break")
            }
            lines.append(line)
        }
        return lines.joined(separator: "\n") + "\n"
    }

    // MARK: - Reading

    /// Reads an entry's text; every field optional but the password line.
    public static func read(_ text: String) throws(FormatError) -> PassEntry {
        // "\r\n" is one Character: both ends of a line are separators.
        var lines = text.split(omittingEmptySubsequences: false) { $0 == "\n" || $0 == "\r\n" }.map(String.init)
        if lines.last == "" { lines.removeLast() }
        guard let first = lines.first else { throw FormatError(description: "the entry is empty") }
        var entry = PassEntry(password: first)
        var endpoint: String?
        var clientID: String?
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else {
                entry.otherLines.append(line)
                continue
            }
            let key = line[..<colon].trimmingWhitespace().lowercased()
            let value = String(line[line.index(after: colon)...]).trimmingWhitespace()
            func number(_ field: String) throws(FormatError) -> Double {
                guard let seconds = Self.seconds(value) else {
                    throw FormatError(description: "the \(field) is not a time (2026-12-01T00:00:00Z)")
                }
                return seconds
            }
            switch key {
            // The first of the names for one thing; a second is the user's, and kept.
            case "login", "username", "user":
                if entry.login == nil { entry.login = value } else { entry.otherLines.append(line) }
            case "url", "website":
                if entry.url == nil { entry.url = value } else { entry.otherLines.append(line) }
            case "realm": entry.realm = value.isEmpty ? nil : value
            case "method":
                guard let method = methodNames.first(where: { $0.value == value.lowercased() })?.key else {
                    throw FormatError(description: "the method is not one Keyjar knows")
                }
                entry.method = method
            case "proxy":
                guard let proxy = ProtectionSpace.ProxyType(rawValue: value.lowercased()) else {
                    throw FormatError(description: "the proxy is not http, https, ftp or socks")
                }
                entry.proxy = proxy
            case "expires": entry.expires = try number("expiry")
            case "modified": entry.modified = try number("modification time")
            case "refresh-token": entry.refreshToken = value
            case "token-endpoint": endpoint = value
            case "client-id": clientID = value
            default: entry.otherLines.append(line)
            }
        }
        if let endpoint { entry.tokenRefresh = TokenRefresh(endpoint: endpoint, clientID: clientID) }
        return entry
    }

    /// The names `keyjar credential add --method` takes.
    static let methodNames: [ProtectionSpace.AuthenticationMethod: String] = [
        .default: "default", .httpBasic: "basic", .httpDigest: "digest", .ntlm: "ntlm", .negotiate: "negotiate",
        .httpBearer: "bearer", .htmlForm: "html-form", .clientCertificate: "client-certificate",
        .serverTrust: "server-trust",
    ]

    /// `2026-11-30T09:12:03.250Z`: UTC, to the millisecond (a sync compares them). The
    /// milliseconds are rounded here and written by hand: a formatter cuts them off, and a
    /// binary fraction just under `.255` would come back as `.254`.
    static func time(_ seconds: Double) -> String {
        let milliseconds = Int64((seconds * 1000).rounded())
        let whole = milliseconds.quotientAndRemainder(dividingBy: 1000)
        let (second, fraction) = whole.remainder < 0 ? (whole.quotient - 1, whole.remainder + 1000) : whole
        let text = Date.ISO8601FormatStyle(includingFractionalSeconds: false).format(
            Date(timeIntervalSince1970: Double(second))
        )
        let digits = String(fraction)
        return text.dropLast() + "." + String(repeating: "0", count: 3 - digits.count) + digits + "Z"
    }

    /// What an entry keeps of a time: milliseconds.
    static func toTheMillisecond(_ seconds: Double) -> Double { (seconds * 1000).rounded() / 1000 }

    /// The times an entry may name: from 1970 to the end of year 9999 (ISO 8601's four digits).
    static let times: ClosedRange<Double> = 0...253_402_300_799

    /// An ISO 8601 time in UTC, with or without fractions; or seconds since 1970.
    static func seconds(_ text: String) -> Double? {
        if let number = Double(text) { return times.contains(number) ? toTheMillisecond(number) : nil }
        for style in [
            Date.ISO8601FormatStyle(includingFractionalSeconds: true),
            Date.ISO8601FormatStyle(includingFractionalSeconds: false),
        ] {
            if let date = try? style.parse(text), times.contains(date.timeIntervalSince1970) {
                return toTheMillisecond(date.timeIntervalSince1970)
            }
        }
        return nil
    }
}
