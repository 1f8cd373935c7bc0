public import Foundation
public import KeyjarCore

/// Why a browser's cookie was not imported; counted per reason, never shown with its value.
public enum BrowserCookieSkip: String, Error, Sendable, Hashable, CaseIterable, Comparable {
    case expired = "expired"
    case controlCharacters = "control characters in name or value"
    case otherContainer = "in another container"
    case privateBrowsing = "private browsing"
    case firstPartyIsolation = "first-party isolation"
    case unknownOriginAttribute = "unknown origin attribute"
    case badPartitionKey = "unusable partition key"
    case badDomain = "unusable domain"
    case badPath = "unusable path"
    case undecryptable = "could not be decrypted"

    public static func < (lhs: Self, rhs: Self) -> Bool {
        (allCases.firstIndex(of: lhs) ?? 0) < (allCases.firstIndex(of: rhs) ?? 0)
    }
}

/// One row of Firefox's `moz_cookies`, its columns as stored.
public struct FirefoxCookieRow: Sendable, Hashable {
    public var name: String
    public var value: String
    public var host: String
    public var path: String
    /// Seconds since 1970 before schema 16, milliseconds from it (``expiryInMilliseconds``).
    public var expiry: Int64
    public var expiryInMilliseconds: Bool
    /// µs since 1970.
    public var creationTime: Int64
    public var lastAccessed: Int64
    public var isSecure: Bool
    public var isHttpOnly: Bool
    /// 0 none, 1 lax, 2 strict (256: unset, in newer Firefox).
    public var sameSite: Int64
    /// What the server sent, when the column exists: 0 also when it sent nothing.
    public var rawSameSite: Int64?
    /// `^userContextId=2&partitionKey=%28https%2Cexample.com%29`, or empty.
    public var originAttributes: String

    public init(
        name: String,
        value: String,
        host: String,
        path: String,
        expiry: Int64,
        expiryInMilliseconds: Bool,
        creationTime: Int64,
        lastAccessed: Int64,
        isSecure: Bool,
        isHttpOnly: Bool,
        sameSite: Int64,
        rawSameSite: Int64?,
        originAttributes: String
    ) {
        self.name = name
        self.value = value
        self.host = host
        self.path = path
        self.expiry = expiry
        self.expiryInMilliseconds = expiryInMilliseconds
        self.creationTime = creationTime
        self.lastAccessed = lastAccessed
        self.isSecure = isSecure
        self.isHttpOnly = isHttpOnly
        self.sameSite = sameSite
        self.rawSameSite = rawSameSite
        self.originAttributes = originAttributes
    }
}

/// One row of a Chromium `cookies` table, its value already decrypted (the decryptor's job).
public struct ChromiumCookieRow: Sendable, Hashable {
    public var hostKey: String
    public var name: String
    public var value: [UInt8]
    public var path: String
    /// µs since 1601-01-01.
    public var expiresUTC: Int64
    public var creationUTC: Int64
    public var lastAccessUTC: Int64
    /// `has_expires` (or `is_persistent`): 0 is a session cookie.
    public var isPersistent: Bool
    public var isSecure: Bool
    public var isHttpOnly: Bool
    /// −1 unspecified, 0 none, 1 lax, 2 strict.
    public var sameSite: Int64
    /// `https://example.com`; empty for an unpartitioned cookie.
    public var topFrameSiteKey: String

    public init(
        hostKey: String,
        name: String,
        value: [UInt8],
        path: String,
        expiresUTC: Int64,
        creationUTC: Int64,
        lastAccessUTC: Int64,
        isPersistent: Bool,
        isSecure: Bool,
        isHttpOnly: Bool,
        sameSite: Int64,
        topFrameSiteKey: String
    ) {
        self.hostKey = hostKey
        self.name = name
        self.value = value
        self.path = path
        self.expiresUTC = expiresUTC
        self.creationUTC = creationUTC
        self.lastAccessUTC = lastAccessUTC
        self.isPersistent = isPersistent
        self.isSecure = isSecure
        self.isHttpOnly = isHttpOnly
        self.sameSite = sameSite
        self.topFrameSiteKey = topFrameSiteKey
    }
}

/// Turns one browser row into the cookie the browser would send, or the reason it is not
/// imported. Pure (no I/O, the time given), so that the fuzz target and the tests hold every
/// rule without a database.
public enum BrowserCookieRowDecoder {
    /// Seconds between 1601-01-01 (Windows' epoch, Chromium's) and 1970-01-01.
    package static let windowsEpochOffset: Int64 = 11_644_473_600

    /// A Firefox row in the container `userContextID` (0: no container).
    public static func cookie(
        _ row: FirefoxCookieRow,
        container userContextID: Int,
        now: Date
    ) -> Result<Cookie, BrowserCookieSkip> {
        var partitionKey: CookiePartitionKey?
        var context = 0
        for (key, value) in originAttributes(row.originAttributes) {
            switch key {
            case "userContextId":
                guard let number = Int(value) else { return .failure(.unknownOriginAttribute) }
                context = number
            case "privateBrowsingId":
                if value != "0" { return .failure(.privateBrowsing) }
            case "firstPartyDomain":
                if !value.isEmpty { return .failure(.firstPartyIsolation) }
            case "partitionKey":
                guard !value.isEmpty else { continue }
                guard let key = firefoxPartitionKey(value) else { return .failure(.badPartitionKey) }
                partitionKey = key
            case "geckoViewSessionContextId", "addonId", "inIsolatedMozBrowser":
                // Another app's (GeckoView, an extension's) jar: not what a window sends.
                if !value.isEmpty && value != "0" { return .failure(.unknownOriginAttribute) }
            default:
                return .failure(.unknownOriginAttribute)
            }
        }
        guard context == userContextID else { return .failure(.otherContainer) }
        let expirySeconds = row.expiryInMilliseconds ? Double(row.expiry) / 1000 : Double(row.expiry)
        let expires = Date(timeIntervalSince1970: min(expirySeconds, 253_402_300_799))
        let sameSite: SameSite
        switch (row.sameSite, row.rawSameSite) {
        // Lax only because of "lax by default": the server said nothing.
        case (1, 0?), (256, _): sameSite = .unspecified
        case (1, _): sameSite = .lax
        case (2, _): sameSite = .strict
        // 0 is both "None" and, in older schemas, "the server said nothing" (Firefox, with
        // laxByDefault off, sends those cross-site as well). A Secure one is kept as None; one
        // that is not cannot be None in the jar (None requires Secure, RFC 6265bis), and is
        // what a server that said nothing gets: unspecified, Lax by default.
        default: sameSite = row.isSecure ? .none : .unspecified
        }
        return make(
            name: row.name,
            value: Array(row.value.utf8),
            host: row.host,
            path: row.path,
            expires: expires,
            secure: row.isSecure,
            httpOnly: row.isHttpOnly,
            sameSite: sameSite,
            creation: Date(timeIntervalSince1970: Double(row.creationTime) / 1_000_000),
            lastAccess: Date(timeIntervalSince1970: Double(row.lastAccessed) / 1_000_000),
            partitionKey: partitionKey,
            now: now
        )
    }

    public static func cookie(_ row: ChromiumCookieRow, now: Date) -> Result<Cookie, BrowserCookieSkip> {
        var partitionKey: CookiePartitionKey?
        if !row.topFrameSiteKey.isEmpty {
            guard let key = CookiePartitionKey(serialized: row.topFrameSiteKey) else {
                return .failure(.badPartitionKey)
            }
            partitionKey = key
        }
        let sameSite: SameSite =
            switch row.sameSite {
            case 0: .none
            case 1: .lax
            case 2: .strict
            default: .unspecified
            }
        return make(
            name: row.name,
            value: row.value,
            host: row.hostKey,
            path: row.path,
            expires: row.isPersistent ? chromiumTime(row.expiresUTC) : nil,
            secure: row.isSecure,
            httpOnly: row.isHttpOnly,
            sameSite: sameSite,
            creation: chromiumTime(row.creationUTC),
            lastAccess: chromiumTime(row.lastAccessUTC),
            partitionKey: partitionKey,
            now: now
        )
    }

    /// µs since 1601 as a date, clamped to years 1970…9999 (a row can hold anything).
    static func chromiumTime(_ microseconds: Int64) -> Date {
        let seconds = Double(microseconds) / 1_000_000 - Double(windowsEpochOffset)
        return Date(timeIntervalSince1970: min(max(seconds, 0), 253_402_300_799))
    }

    /// The common rules: a domain cookie's leading dot, a name and value a header can carry,
    /// not yet expired.
    private static func make(
        name: String,
        value: [UInt8],
        host: String,
        path: String,
        expires: Date?,
        secure: Bool,
        httpOnly: Bool,
        sameSite: SameSite,
        creation: Date,
        lastAccess: Date,
        partitionKey: CookiePartitionKey?,
        now: Date
    ) -> Result<Cookie, BrowserCookieSkip> {
        // The jar's form of the domain (lower case, an IPv6 address without Chromium's brackets),
        // so that the identity `--follow` keeps is the one the jar stores; an IP address is only
        // ever itself, as the jar would make it.
        let domain = Host.canonicalDomain(String(host.drop { $0 == "." }))
        let hostOnly = !host.hasPrefix(".") || Host.isIPAddress(domain)
        // Brackets only ever hold an IPv6 address (`[.]` would leave the domain `.`), and a
        // name's first label is never empty.
        let bracketed = host.utf8.contains(UInt8(ascii: "["))
        guard !domain.isEmpty, !domain.hasPrefix("."), !bracketed || domain.contains(":"),
            domain.utf8.allSatisfy({ byte in
                byte > 0x20 && byte < 0x7F && byte != UInt8(ascii: "/") && byte != UInt8(ascii: "[")
                    && byte != UInt8(ascii: "]")
            })
        else {
            return .failure(.badDomain)
        }
        // A browser only stores paths that start with "/"; anything else is not one to widen.
        guard path.isEmpty || path.hasPrefix("/") else { return .failure(.badPath) }
        // Controls (and DEL) cannot go into a header; a value that is not UTF-8 is no text.
        let isControl = { (byte: UInt8) in byte < 0x20 || byte == 0x7F }
        guard !name.utf8.contains(where: isControl), !value.contains(where: isControl),
            let text = String(validating: value, as: UTF8.self), !path.utf8.contains(where: isControl)
        else { return .failure(.controlCharacters) }
        if let expires, expires <= now { return .failure(.expired) }
        return .success(
            Cookie(
                name: name,
                value: text,
                domain: domain,
                hostOnly: hostOnly,
                path: path.hasPrefix("/") ? path : "/",
                expires: expires,
                secure: secure,
                httpOnly: httpOnly,
                sameSite: sameSite,
                creation: creation,
                lastAccess: lastAccess,
                partitionKey: partitionKey
            )
        )
    }

    /// Firefox's origin attributes, `^key=value&key=value` with percent-encoded values.
    static func originAttributes(_ text: String) -> [(String, String)] {
        guard text.hasPrefix("^") else { return [] }
        return text.dropFirst().split(separator: "&").map { pair in
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let value = parts.count > 1 ? String(parts[1]) : ""
            return (String(parts[0]), value.removingPercentEncoding ?? value)
        }
    }

    /// `(https,example.com)`, `(https,example.com,8443)` or with more fields after the port: a
    /// scheme and a site (Keyjar's key has no port: a site is the same site on every port).
    static func firefoxPartitionKey(_ text: String) -> CookiePartitionKey? {
        guard text.hasPrefix("("), text.hasSuffix(")") else { return nil }
        let fields = text.dropFirst().dropLast().split(separator: ",", omittingEmptySubsequences: false)
        guard fields.count >= 2 else { return nil }
        return CookiePartitionKey(scheme: String(fields[0]), site: String(fields[1]))
    }
}
