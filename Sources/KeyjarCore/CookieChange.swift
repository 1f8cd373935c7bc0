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
public enum CookieChange: Sendable, Hashable {
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

extension CookieChange {
    /// What a run of changes (one transaction's) comes to for each cookie: its state before the
    /// first and after the last. A cookie added and then removed in the same run (an import
    /// that the limits pushed out again) makes no change at all; added then replaced is added,
    /// replaced twice is one replacement, replaced then removed is the removal of the original.
    /// Cookies keep the order of their first change.
    ///
    /// - Complexity: O(n) for n changes.
    public static func net(_ changes: [CookieChange]) -> [CookieChange] {
        var order: [Cookie.Identity] = []
        // Per identity: the cookie before the run (nil: there was none), and the last change.
        var runs: [Cookie.Identity: (before: Cookie?, last: CookieChange)] = [:]
        for change in changes {
            let identity = change.cookie.identity
            if let run = runs[identity] {
                runs[identity] = (run.before, change)
                continue
            }
            order.append(identity)
            let before: Cookie? =
                switch change {
                case .added: nil
                case .replaced(let old, _): old
                case .removed(let cookie, _): cookie
                }
            runs[identity] = (before, change)
        }
        return order.compactMap { identity -> CookieChange? in
            guard let run = runs[identity] else { return nil }
            switch (run.before, run.last) {
            case (nil, .removed): return nil
            case (nil, .added(let cookie)), (nil, .replaced(_, let cookie)): return .added(cookie)
            case (let old?, .removed(_, let cause)): return .removed(old, cause: cause)
            case (let old?, .added(let cookie)), (let old?, .replaced(_, let cookie)):
                return old == cookie ? nil : .replaced(old: old, new: cookie)
            }
        }
    }
}
