import FoundationEssentials

// Limits: Chromium's eviction per site, per site in a partition, and in total.
extension CookieJar {
    /// The cookies one limit counts: a site's unpartitioned cookies (`partition` nil), or its
    /// partitioned cookies in one partition.
    struct LimitScope: Hashable {
        var site: String
        var partition: CookiePartitionKey?
    }

    /// Eviction rank: expired first, then non-secure, then least recently accessed.
    private static func evictsBefore(_ a: Cookie, _ b: Cookie, now: Date) -> Bool {
        let aExpired = a.isExpired(at: now)
        let bExpired = b.isExpired(at: now)
        if aExpired != bExpired { return aExpired }
        if a.secure != b.secure { return !a.secure }
        if a.lastAccess != b.lastAccess { return a.lastAccess < b.lastAccess }
        return a.creation < b.creation
    }

    /// The limit of `scope`, then the total limit: what storing one cookie in `scope` enforces.
    mutating func enforceLimits(_ scope: LimitScope, now: Date) -> [CookieChange] {
        enforceScopeLimit(scope, now: now) + enforceTotalLimit(now: now)
    }

    mutating func enforceScopeLimit(_ scope: LimitScope, now: Date) -> [CookieChange] {
        if let partition = scope.partition { return enforcePartitionLimit(partition, site: scope.site, now: now) }
        return enforceSiteLimit(scope.site, now: now)
    }

    /// The unpartitioned cookies of a site, down to `perSitePurgedTo` once past `perSite`.
    private mutating func enforceSiteLimit(_ key: String, now: Date) -> [CookieChange] {
        // The bucket's size bounds its unpartitioned count, so a site within the limit costs no
        // scan; only a full bucket is searched for the cookies the limit counts.
        guard let bucket = sites[key], bucket.count > limits.perSite else { return [] }
        let counted = bucket.indices.filter { bucket[$0].partitionKey == nil }
        guard counted.count > limits.perSite else { return [] }
        let victims = counted.sorted { Self.evictsBefore(bucket[$0], bucket[$1], now: now) }
            .prefix(counted.count - limits.perSitePurgedTo)
        return evict(Set(victims), from: key, now: now)
    }

    /// A site's cookies in one partition, Chromium's way: past either limit, the cookies that
    /// evict first go, one by one, until both the count and the bytes of names and values are
    /// within the limits again.
    private mutating func enforcePartitionLimit(
        _ partition: CookiePartitionKey,
        site key: String,
        now: Date
    ) -> [CookieChange] {
        guard let bucket = sites[key] else { return [] }
        let counted = bucket.indices.filter { bucket[$0].partitionKey == partition }
        let (countLimit, byteLimit) = (limits.perSiteInPartition, limits.bytesPerSiteInPartition)
        var remaining = counted.count
        var bytes = counted.reduce(0) { $0 + Self.nameValueBytes(bucket[$1]) }
        func overLimit() -> Bool { remaining > countLimit || bytes > byteLimit }
        guard overLimit() else { return [] }
        var victims = Set<Int>()
        for index in counted.sorted(by: { Self.evictsBefore(bucket[$0], bucket[$1], now: now) }) {
            guard overLimit() else { break }
            victims.insert(index)
            remaining -= 1
            bytes -= Self.nameValueBytes(bucket[index])
        }
        return evict(victims, from: key, now: now)
    }

    private static func nameValueBytes(_ cookie: Cookie) -> Int { cookie.name.utf8.count + cookie.value.utf8.count }

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
        sites[key] = kept.isEmpty ? nil : CookieBucket(kept)
        return changes
    }
}
