/// Why a cookie left a jar.
public enum CookieRemovalCause: String, Sendable, Hashable, Codable {
    /// Deleted on purpose: by a program, a user, or a server sending it already expired.
    case deleted
    /// Its expiry time passed.
    case expired
    /// Pushed out by the per-site or total limit.
    case evicted
    /// A session cookie, dropped when the session ended.
    case sessionEnded
}

/// One change a jar made, reported so that a store can persist it and notify others.
public enum CookieChange: Sendable, Hashable, Codable {
    case added(Cookie)
    case replaced(old: Cookie, new: Cookie)
    case removed(Cookie, cause: CookieRemovalCause)

    /// The cookie as it is after the change (the removed one for a removal).
    public var cookie: Cookie {
        switch self {
        case .added(let cookie), .replaced(_, let cookie), .removed(let cookie, _): return cookie
        }
    }
}
