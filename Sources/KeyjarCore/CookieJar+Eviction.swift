import Foundation

// Limits: Chromium's eviction per site and in total.
extension CookieJar {
    /// Eviction rank: expired first, then non-secure, then least recently accessed.
    private static func evictsBefore(_ a: Cookie, _ b: Cookie, now: Date) -> Bool {
        let aExpired = a.isExpired(at: now)
        let bExpired = b.isExpired(at: now)
        if aExpired != bExpired { return aExpired }
        if a.secure != b.secure { return !a.secure }
        if a.lastAccess != b.lastAccess { return a.lastAccess < b.lastAccess }
        return a.creation < b.creation
    }

    mutating func enforceLimits(site key: String, now: Date) -> [CookieChange] {
        enforceSiteLimit(key, now: now) + enforceTotalLimit(now: now)
    }

    mutating func enforceSiteLimit(_ key: String, now: Date) -> [CookieChange] {
        guard let bucket = sites[key], bucket.count > limits.perSite else { return [] }
        let victims = bucket.indices.sorted { Self.evictsBefore(bucket[$0], bucket[$1], now: now) }
            .prefix(bucket.count - limits.perSitePurgedTo)
        return evict(Set(victims), from: key, now: now)
    }

    mutating func enforceTotalLimit(now: Date) -> [CookieChange] {
        var changes: [CookieChange] = []
        if count > limits.total {
            let target = max(0, min(limits.total - limits.totalPurge, limits.total))
            let all = sites.flatMap { key, bucket in bucket.enumerated().map { (key: key, index: $0, cookie: $1) } }
            let victims = all.sorted { Self.evictsBefore($0.cookie, $1.cookie, now: now) }.prefix(count - target)
            for (victimKey, group) in Dictionary(grouping: victims, by: \.key) {
                changes += evict(Set(group.map(\.index)), from: victimKey, now: now)
            }
        }
        return changes
    }

    private mutating func evict(_ indices: Set<Int>, from key: String, now: Date) -> [CookieChange] {
        guard let bucket = sites[key] else { return [] }
        var kept: [Cookie] = []
        var changes: [CookieChange] = []
        for (index, cookie) in bucket.enumerated() {
            if indices.contains(index) {
                changes.append(.removed(cookie, cause: cookie.isExpired(at: now) ? .expired : .evicted))
            } else {
                kept.append(cookie)
            }
        }
        count -= changes.count
        sites[key] = kept.isEmpty ? nil : kept
        return changes
    }
}
