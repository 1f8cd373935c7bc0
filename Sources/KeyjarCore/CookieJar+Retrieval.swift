public import FoundationEssentials

// Retrieval: the cookies and the Cookie header a request gets (RFC 6265bis §5.8.3).
extension CookieJar {
    /// The cookies to send with a request, in header order (longer paths first, then earlier
    /// creation), with their last-access time updated.
    public mutating func cookies(for context: CookieContext, now: Date = Date()) -> [Cookie] {
        guard let (bucketIndex, matches) = matchingCookies(for: context, now: now) else { return [] }
        return matches.positions.map { sites.values[bucketIndex][$0] }
    }

    /// The Cookie header value for a request, or nil when no cookie applies.
    public mutating func cookieHeader(for context: CookieContext, now: Date = Date()) -> String? {
        guard let (_, matches) = matchingCookies(for: context, now: now), !matches.isEmpty else { return nil }
        return matches.header
    }

    /// The cookies in the request site's bucket that go with the request, in header order;
    /// their last-access times are updated. Unpartitioned cookies go by the retrieval
    /// algorithm alone; a partitioned one also needs the request's partition key to be its own.
    private mutating func matchingCookies(
        for context: CookieContext,
        now: Date
    ) -> (bucket: Dictionary<String, CookieBucket>.Index, matches: CookieMatches)? {
        let host = context.url.host
        // `noThirdParty` sends a third-party request its partitioned cookies only: they were
        // set under this very top-level site (and stored past the policy for that reason).
        var partitionedOnly = false
        if let rule = policy.rule(for: host) {
            if rule.action == .block { return nil }
        } else if policy.acceptPolicy == .noThirdParty, isThirdParty(context) {
            partitionedOnly = true
        }
        let key = siteKey(for: host)
        guard let bucketIndex = sites.index(forKey: key) else { return nil }
        let request = CookieRequestFacts(
            host: host,
            hostIsName: !Host.isIPAddress(host),
            path: context.url.path,
            secureChannel: context.url.isSecure,
            httpAPI: context.api == .http,
            sameSite: isSameSite(context),
            laxAllowed: context.isTopLevelNavigation && context.isSafeMethod,
            now: now
        )
        // Only a lookup in a site that holds partitioned cookies works out the request's
        // partition key.
        let partition = sites.values[bucketIndex].containsPartitioned() ? partitionKey(for: context) : nil
        let matched = sites.values[bucketIndex].take(request, partitionedOnly: partitionedOnly, partition: partition)
        return (bucketIndex, matched)
    }
}
