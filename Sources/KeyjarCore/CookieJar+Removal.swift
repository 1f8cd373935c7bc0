public import FoundationEssentials

// Removal: by identity, by predicate, expired ones, session ones.
extension CookieJar {
    /// Deletes the cookie with this identity, if stored.
    @discardableResult
    public mutating func remove(_ identity: Cookie.Identity) -> CookieChange? {
        let key = siteKey(for: identity.domain)
        guard let index = sites[key]?.firstIndex(where: { $0.identity == identity }),
            let cookie = sites[key]?[index]
        else { return nil }
        removeCookie(at: index, site: key)
        return .removed(cookie, cause: .deleted)
    }

    /// Deletes every cookie for which `shouldRemove` is true, reporting `cause`.
    @discardableResult
    public mutating func removeAll(
        cause: CookieRemovalCause = .deleted,
        where shouldRemove: (Cookie) throws -> Bool
    ) rethrows -> [CookieChange] {
        var changes: [CookieChange] = []
        for key in Array(sites.keys) {
            // Only buckets with something to remove are rebuilt: the periodic expiry purge visits
            // every site, and copying each bucket would copy the whole jar every time.
            guard var bucket = sites[key], try bucket.contains(where: shouldRemove) else { continue }
            sites[key] = nil  // so that `bucket` is unique and is edited in place
            let before = bucket.count
            var removed: [Cookie] = []
            try bucket.removeAll { cookie in
                guard try shouldRemove(cookie) else { return false }
                removed.append(cookie)
                return true
            }
            changes += removed.map { .removed($0, cause: cause) }
            count -= before - bucket.count
            sites[key] = bucket.isEmpty ? nil : bucket
        }
        return changes
    }

    /// Drops cookies whose expiry has passed.
    @discardableResult
    public mutating func removeExpired(now: Date = Date()) -> [CookieChange] {
        removeAll(cause: .expired) { $0.isExpired(at: now) }
    }

    /// Drops every session cookie: the end of the session they belonged to.
    @discardableResult
    public mutating func endSession() -> [CookieChange] {
        removeAll(cause: .sessionEnded) { $0.isSession }
    }
}
