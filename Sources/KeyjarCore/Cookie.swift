public import FoundationEssentials

/// One stored HTTP cookie with every field of the RFC 6265bis storage model (§5.7).
///
/// A cookie's identity is ``Identity``: (name, domain, host-only, path, partition key). Storing
/// a cookie with the identity of an existing one replaces it and keeps the old ``creation``
/// time.
///
/// ```swift
/// let cookie = Cookie(name: "sid", value: "42", domain: "example.com", path: "/")
/// cookie.headerPair   // "sid=42"
/// ```
public struct Cookie: Sendable, Hashable {
    /// The cookie name; empty for a nameless cookie, which RFC 6265bis stores and sends as its
    /// value alone.
    public var name: String
    public var value: String
    /// The canonical (lower-case, no leading dot) domain: the request host when `hostOnly`.
    public var domain: String
    /// True when the cookie came without a Domain attribute and so matches only `domain` itself.
    public var hostOnly: Bool
    public var path: String
    /// When the cookie dies; `nil` for a session cookie, which lives until the session ends.
    public var expires: Date?
    public var secure: Bool
    public var httpOnly: Bool
    public var sameSite: SameSite
    public var creation: Date
    public var lastAccess: Date
    /// The top-level site a partitioned cookie (CHIPS) belongs to; nil for an unpartitioned
    /// cookie. A partitioned cookie goes only with requests under that same top-level site.
    public var partitionKey: CookiePartitionKey?

    public init(
        name: String,
        value: String,
        domain: String,
        hostOnly: Bool = false,
        path: String = "/",
        expires: Date? = nil,
        secure: Bool = false,
        httpOnly: Bool = false,
        sameSite: SameSite = .unspecified,
        creation: Date = Date(),
        lastAccess: Date? = nil,
        partitionKey: CookiePartitionKey? = nil
    ) {
        self.name = name
        self.value = value
        self.domain = domain
        self.hostOnly = hostOnly
        self.path = path
        self.expires = expires
        self.secure = secure
        self.httpOnly = httpOnly
        self.sameSite = sameSite
        self.creation = creation
        self.lastAccess = lastAccess ?? creation
        self.partitionKey = partitionKey
    }

    /// The key under which a store keeps at most one cookie (RFC 6265bis §5.7 step 23), with
    /// the partition key beside it: one partition's cookie never replaces another's, nor an
    /// unpartitioned one.
    public struct Identity: Sendable, Hashable {
        public var name: String
        public var domain: String
        public var hostOnly: Bool
        public var path: String
        public var partitionKey: CookiePartitionKey?

        public init(
            name: String,
            domain: String,
            hostOnly: Bool,
            path: String,
            partitionKey: CookiePartitionKey? = nil
        ) {
            self.name = name
            self.domain = domain
            self.hostOnly = hostOnly
            self.path = path
            self.partitionKey = partitionKey
        }
    }

    public var identity: Identity {
        Identity(name: name, domain: domain, hostOnly: hostOnly, path: path, partitionKey: partitionKey)
    }

    /// Whether `other` has this cookie's identity; compares in place rather than building two
    /// `Identity` values (which would copy five strings each).
    @inline(__always)
    func hasIdentity(of other: Cookie) -> Bool {
        hostOnly == other.hostOnly && name == other.name && path == other.path && domain == other.domain
            && partitionKey == other.partitionKey
    }

    /// Whether this is a partitioned cookie (CHIPS), kept and sent under one top-level site.
    public var isPartitioned: Bool { partitionKey != nil }

    /// A session cookie has no expiry and is discarded when the session ends.
    public var isSession: Bool { expires == nil }

    public func isExpired(at now: Date) -> Bool {
        guard let expires else { return false }
        return expires <= now
    }

    /// How this cookie appears in a Cookie request header: `name=value`, or just the value for a
    /// nameless cookie (RFC 6265bis §5.8.3 step 4).
    public var headerPair: String { name.isEmpty ? value : name + "=" + value }
}

extension Cookie: CustomStringConvertible {
    /// A readable one-line summary; the value is shown because cookies are not credentials, but
    /// it is cut short so logs of long tokens stay readable.
    public var description: String {
        let shownValue = value.count > 16 ? value.prefix(13) + "..." : Substring(value)
        var parts = ["\(name)=\(shownValue)", "domain=\(hostOnly ? "" : ".")\(domain)", "path=\(path)"]
        if let expires {
            parts.append("expires=\(Int64(expires.timeIntervalSince1970))")
        } else {
            parts.append("session")
        }
        if secure { parts.append("secure") }
        if httpOnly { parts.append("httponly") }
        if sameSite != .unspecified { parts.append("samesite=\(sameSite.rawValue)") }
        if let partitionKey { parts.append("partitioned=\(partitionKey)") }
        return parts.joined(separator: "; ")
    }
}
