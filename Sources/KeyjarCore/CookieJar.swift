public import FoundationEssentials

/// An in-memory cookie jar implementing the RFC 6265bis storage model and retrieval algorithm,
/// with public-suffix protection, accept policies and Chromium's limits.
///
/// It is a value type with no I/O: keyjard persists the ``CookieChange`` values each mutation
/// returns, and clients keep a replica. Cookies are indexed by site (registrable domain), so a
/// lookup touches only the cookies of the request's site.
///
/// ```swift
/// var jar = CookieJar()
/// let context = CookieContext(url: URL(string: "https://www.example.com/")!)!
/// _ = jar.setCookie("sid=42; Domain=example.com; Secure", context: context)
/// jar.cookieHeader(for: context)   // "sid=42"
/// ```
public struct CookieJar: Sendable {
    /// Size limits and their eviction targets; the defaults are Chromium's.
    public struct Limits: Sendable, Hashable, Codable {
        /// Cookies per site (registrable domain) before eviction...
        public var perSite: Int
        /// ...which then removes cookies down to this many.
        public var perSitePurgedTo: Int
        /// Cookies in the whole jar before eviction...
        public var total: Int
        /// ...which then removes this many.
        public var totalPurge: Int
        /// Expiry is capped at this many seconds from now (RFC 6265bis: 400 days at most).
        public var maximumAge: TimeInterval
        /// Partitioned cookies of one site in one partition; past this, the ones that would be
        /// evicted first go until the partition's site is within both of its limits. They do not
        /// count against `perSite`, which is for unpartitioned cookies.
        public var perSiteInPartition: Int
        /// Bytes of name and value of one site's partitioned cookies in one partition.
        public var bytesPerSiteInPartition: Int

        public init(
            perSite: Int = 180,
            perSitePurgedTo: Int = 150,
            total: Int = 3300,
            totalPurge: Int = 300,
            maximumAge: TimeInterval = 400 * 86_400,
            perSiteInPartition: Int = 180,
            bytesPerSiteInPartition: Int = 10_240
        ) {
            self.perSite = perSite
            self.perSitePurgedTo = perSitePurgedTo
            self.total = total
            self.totalPurge = totalPurge
            self.maximumAge = maximumAge
            self.perSiteInPartition = perSiteInPartition
            self.bytesPerSiteInPartition = bytesPerSiteInPartition
        }

        // Written out so that limits encoded before the partition limits existed still decode,
        // with Chromium's values for those.
        private enum CodingKeys: String, CodingKey {
            case perSite, perSitePurgedTo, total, totalPurge, maximumAge
            case perSiteInPartition, bytesPerSiteInPartition
        }

        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            let defaults = Limits()
            self.init(
                perSite: try container.decode(Int.self, forKey: .perSite),
                perSitePurgedTo: try container.decode(Int.self, forKey: .perSitePurgedTo),
                total: try container.decode(Int.self, forKey: .total),
                totalPurge: try container.decode(Int.self, forKey: .totalPurge),
                maximumAge: try container.decode(TimeInterval.self, forKey: .maximumAge),
                perSiteInPartition: try container.decodeIfPresent(Int.self, forKey: .perSiteInPartition)
                    ?? defaults.perSiteInPartition,
                bytesPerSiteInPartition: try container.decodeIfPresent(Int.self, forKey: .bytesPerSiteInPartition)
                    ?? defaults.bytesPerSiteInPartition
            )
        }
    }

    public var policy: CookiePolicy
    public var limits: Limits
    public let publicSuffixes: PublicSuffixList

    /// Site key (registrable domain, or the host where there is none) → that site's cookies.
    var sites: [String: CookieBucket] = [:]
    public internal(set) var count = 0
    /// Creation times are kept unique and increasing so that "earlier creation first" is a
    /// total order even for cookies set by one response.
    var latestCreation = Date.distantPast
    /// Host → site key; a libpsl lookup costs many dictionary hits. Bounded, but
    /// never below twice the number of sites: a jar loading 100,000 cookies of 5,000 sites in
    /// key order would otherwise empty a fixed-size cache before every reuse.
    private var siteKeyCache: [String: String] = [:]
    private static let siteKeyCacheMinimumLimit = 4096

    public init(
        policy: CookiePolicy = CookiePolicy(),
        limits: Limits = Limits(),
        publicSuffixes: PublicSuffixList = .system
    ) {
        self.policy = policy
        self.limits = limits
        self.publicSuffixes = publicSuffixes
    }

    /// Puts back cookies this jar's rules already accepted once (e.g. loaded from keyjard's
    /// database): no validation and no eviction, only indexing.
    public mutating func restore(_ cookies: [Cookie]) {
        for cookie in cookies { restore(cookie) }
    }

    /// Puts back one already-accepted cookie (see ``restore(_:)-([Cookie])``).
    /// - Parameter isNew: the caller guarantees no stored cookie has this identity (rows of a
    ///   table keyed by identity), which skips the search for one.
    public mutating func restore(_ cookie: Cookie, isNew: Bool = false) {
        let key = siteKey(for: cookie.domain)
        if !isNew, let index = sites[key]?.firstIndex(where: { $0.hasIdentity(of: cookie) }) {
            sites[key]?[index] = cookie
        } else {
            sites[key, default: []].append(cookie)
            count += 1
        }
        latestCreation = max(latestCreation, cookie.creation)
    }

    /// Every cookie, unexpired or not, in no particular order.
    public var allCookies: [Cookie] { sites.values.flatMap { $0 } }

    /// Whether any cookie is stored for the site of `host`.
    public mutating func hasCookies(forSiteOf host: String) -> Bool {
        !(sites[siteKey(for: host)]?.isEmpty ?? true)
    }

    /// Whether the site of `host` has cookies that are not partitioned.
    mutating func hasUnpartitionedCookies(forSiteOf host: String) -> Bool {
        sites[siteKey(for: host)]?.contains { $0.partitionKey == nil } ?? false
    }

    /// How many cookies are stored for the site of `host`, its partitioned ones included (so at
    /// least what its unpartitioned limit counts).
    public mutating func cookieCount(forSiteOf host: String) -> Int {
        sites[siteKey(for: host)]?.count ?? 0
    }

    /// How much of its partition limits the cookies of `host`'s site under `partition` use:
    /// their count and the bytes of their names and values.
    public mutating func partitionUsage(
        forSiteOf host: String,
        in partition: CookiePartitionKey
    ) -> (
        count: Int, bytes: Int
    ) {
        var usage = (count: 0, bytes: 0)
        for cookie in sites[siteKey(for: host)] ?? [] where cookie.partitionKey == partition {
            usage.count += 1
            usage.bytes += cookie.name.utf8.count + cookie.value.utf8.count
        }
        return usage
    }

    // MARK: - Sites

    /// The registrable domain of `host`, or the host itself when it has none (IP addresses,
    /// public suffixes, or an unavailable suffix list): the site whose limit a cookie counts
    /// against.
    public mutating func siteKey(for host: String) -> String {
        if let cached = siteKeyCache[host] { return cached }
        let key = publicSuffixes.registrableDomain(of: host) ?? host
        if siteKeyCache.count >= max(Self.siteKeyCacheMinimumLimit, 2 * sites.count) {
            siteKeyCache.removeAll(keepingCapacity: true)
        }
        siteKeyCache[host] = key
        return key
    }

    /// The partition a request's partitioned cookies are stored in and read from (CHIPS): the
    /// site of its main document, or the request's own site when it has none (a top-level
    /// request, or a program fetching a URL).
    public mutating func partitionKey(for context: CookieContext) -> CookiePartitionKey {
        let topLevel = context.siteForCookies ?? context.url
        return CookiePartitionKey(canonicalScheme: topLevel.scheme, site: siteKey(for: topLevel.host))
    }

    /// Schemeful same-site (RFC 6265bis §5.2): same registrable domain and same scheme class.
    mutating func isSameSite(_ context: CookieContext) -> Bool {
        guard let site = context.siteForCookies else { return true }
        return site.isSecureScheme == context.url.isSecureScheme
            && siteKey(for: site.host) == siteKey(for: context.url.host)
    }

    /// Third party for the accept policies: a different registrable domain, whatever the scheme.
    mutating func isThirdParty(_ context: CookieContext) -> Bool {
        guard let site = context.siteForCookies else { return false }
        return siteKey(for: site.host) != siteKey(for: context.url.host)
    }

    mutating func uniqueCreationTime(_ now: Date) -> Date {
        let creation = now > latestCreation ? now : latestCreation.addingTimeInterval(1e-6)
        latestCreation = creation
        return creation
    }
}
