import FoundationEssentials
public import KeyjarCore

/// A cookie as an entry of a pass store (`keyjar sync --cookies`): the value on the first line,
/// as a pass entry keeps its secret, then every field of the cookie's storage model as
/// `key: value` lines, the partition key and expiry included:
///
/// ```text
/// 3f9c0a…
/// cookie: session_id
/// domain: github.com
/// host-only: yes
/// path: /
/// expires: 2027-01-15T08:00:00.000Z
/// secure: yes
/// http-only: yes
/// same-site: lax
/// partition: https://news.example
/// created: 2026-11-30T09:12:03.250Z
/// modified: 2026-11-30T09:12:03.250Z
/// ```
///
/// A session cookie has no `expires`. Unlike ``PassEntry`` it is read exactly as Keyjar writes
/// it (one space after the colon, nothing else trimmed: a cookie's path or name may end in a
/// space), since only Keyjar writes these entries; lines it does not know are kept.
public struct PassCookieEntry: Sendable, Hashable, CustomStringConvertible, CustomDebugStringConvertible {
    public var cookie: Cookie
    /// The cookie's last access on the machine that wrote the entry (when a response last set
    /// it, or a request last sent it), seconds since 1970: what a sync compares when two
    /// machines changed one cookie, so that the login used last wins.
    public var modified: Double?
    /// Lines Keyjar does not read, kept as they were.
    public var otherLines: [String]

    public init(cookie: Cookie, modified: Double? = nil, otherLines: [String] = []) {
        self.cookie = cookie
        self.modified = modified
        self.otherLines = otherLines
    }

    /// The cookie's identity and times; never its value.
    public var description: String {
        "cookie entry \(cookie.name) for \(cookie.hostOnly ? "" : ".")\(cookie.domain)\(cookie.path)"
            + (cookie.partitionKey.map { " in \($0.serialized)" } ?? "")
    }
    public var debugDescription: String { description }

    /// The folder of a store that holds cookie entries, one folder per domain beneath it.
    public static let folder = "keyjar-cookies"

    /// The entry's path in the store, without `.gpg`: `keyjar-cookies/DOMAIN/NAME`, with what
    /// else sets the cookie apart in parentheses (`sid (path /app, host only)`). One path per
    /// identity: `(` is escaped in a name, so that neither a nameless cookie's `(no name)` nor
    /// the qualifiers can be taken for a name's text.
    public static func path(of identity: Cookie.Identity) -> String {
        var qualifiers: [String] = []
        if identity.path != "/" { qualifiers.append("path \(identity.path)") }
        if identity.hostOnly { qualifiers.append("host only") }
        if let key = identity.partitionKey { qualifiers.append("partition \(key.serialized)") }
        var file = identity.name.isEmpty ? "(no name)" : identity.name.replacing("(", with: "%28")
        if !qualifiers.isEmpty { file += " (" + qualifiers.joined(separator: ", ") + ")" }
        return folder + "/" + PassStoreLayout.escaped(identity.domain) + "/" + PassStoreLayout.escaped(file)
    }

    // MARK: - Writing

    /// The entry's text. A cookie's fields never hold a line break (the jar refuses control
    /// characters); one that does cannot be written.
    public func encoded() throws(PassEntry.FormatError) -> String {
        var lines = [cookie.value]
        func field(_ key: String, _ value: String?) throws(PassEntry.FormatError) {
            guard let value else { return }
            guard !value.contains(where: \.isNewline) else {
                throw PassEntry.FormatError(description: "the cookie's \(key) holds a line break")
            }
            lines.append("\(key): \(value)")
        }
        guard !cookie.value.contains(where: \.isNewline) else {
            throw PassEntry.FormatError(description: "the cookie's value holds a line break")
        }
        try field("cookie", cookie.name)
        try field("domain", cookie.domain)
        try field("host-only", cookie.hostOnly ? "yes" : nil)
        try field("path", cookie.path)
        try field("expires", cookie.expires.map { PassEntry.time($0.timeIntervalSince1970) })
        try field("secure", cookie.secure ? "yes" : nil)
        try field("http-only", cookie.httpOnly ? "yes" : nil)
        try field("same-site", cookie.sameSite == .unspecified ? nil : cookie.sameSite.rawValue.lowercased())
        try field("partition", cookie.partitionKey?.serialized)
        try field("created", PassEntry.time(cookie.creation.timeIntervalSince1970))
        try field("modified", modified.map(PassEntry.time))
        for line in otherLines {
            guard !line.contains(where: \.isNewline) else {
                throw PassEntry.FormatError(description: "a kept line holds a line break")
            }
            lines.append(line)
        }
        return lines.joined(separator: "\n") + "\n"
    }

    // MARK: - Reading

    /// Reads an entry's text: the value line, and at least the `cookie` and `domain` fields.
    public static func read(_ text: String) throws(PassEntry.FormatError) -> PassCookieEntry {
        // "\r\n" is one Character: both ends of a line are separators.
        var lines = text.split(omittingEmptySubsequences: false) { $0 == "\n" || $0 == "\r\n" }.map(String.init)
        if lines.last == "" { lines.removeLast() }
        guard let value = lines.first else { throw PassEntry.FormatError(description: "the entry is empty") }
        var name: String?
        var domain: String?
        var cookie = Cookie(name: "", value: value, domain: "", creation: Date(timeIntervalSince1970: 0))
        var entry = PassCookieEntry(cookie: cookie)
        func time(_ text: String, _ field: String) throws(PassEntry.FormatError) -> Double {
            guard let seconds = PassEntry.seconds(text) else {
                throw PassEntry.FormatError(description: "the cookie's \(field) is not a time (2026-12-01T00:00:00Z)")
            }
            return seconds
        }
        func flag(_ text: String, _ field: String) throws(PassEntry.FormatError) -> Bool {
            switch text {
            case "yes": return true
            case "no": return false
            default: throw PassEntry.FormatError(description: "the cookie's \(field) is not yes or no")
            }
        }
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else {
                entry.otherLines.append(line)
                continue
            }
            let key = line[..<colon].lowercased()
            var field = line[line.index(after: colon)...]
            if field.first == " " { field = field.dropFirst() }
            let text = String(field)
            switch key {
            case "cookie": name = text
            case "domain": domain = text
            case "host-only": cookie.hostOnly = try flag(text, "host-only")
            case "path": cookie.path = text
            case "expires": cookie.expires = Date(timeIntervalSince1970: try time(text, "expiry"))
            case "secure": cookie.secure = try flag(text, "secure")
            case "http-only": cookie.httpOnly = try flag(text, "http-only")
            case "same-site":
                guard let sameSite = SameSite.allCases.first(where: { $0.rawValue.lowercased() == text }) else {
                    throw PassEntry.FormatError(description: "the cookie's same-site is not strict, lax or none")
                }
                cookie.sameSite = sameSite
            case "partition":
                guard let key = CookiePartitionKey(serialized: text) else {
                    throw PassEntry.FormatError(description: "the cookie's partition is not scheme://site")
                }
                cookie.partitionKey = key
            case "created": cookie.creation = Date(timeIntervalSince1970: try time(text, "creation time"))
            case "modified": entry.modified = try time(text, "modification time")
            default: entry.otherLines.append(line)
            }
        }
        guard let name else { throw PassEntry.FormatError(description: "the entry names no cookie (no cookie: line)") }
        guard let domain, !domain.isEmpty else {
            throw PassEntry.FormatError(description: "the cookie has no domain")
        }
        cookie.name = name
        cookie.domain = domain
        cookie.lastAccess = entry.modified.map { Date(timeIntervalSince1970: $0) } ?? cookie.creation
        entry.cookie = cookie
        return entry
    }

    /// Whether two entries hold the same cookie as a sync compares them: its value and every
    /// attribute, times to the millisecond an entry keeps; not when it was created or used.
    public func holdsTheSame(as other: PassCookieEntry) -> Bool {
        func milliseconds(_ date: Date?) -> Double? {
            date.map { PassEntry.toTheMillisecond($0.timeIntervalSince1970) }
        }
        return cookie.identity == other.cookie.identity && cookie.value == other.cookie.value
            && milliseconds(cookie.expires) == milliseconds(other.cookie.expires)
            && cookie.secure == other.cookie.secure
            && cookie.httpOnly == other.cookie.httpOnly && cookie.sameSite == other.cookie.sameSite
    }
}
