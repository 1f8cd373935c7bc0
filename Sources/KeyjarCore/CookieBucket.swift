import FoundationEssentials

/// One site's cookies, the jar's unit of lookup, with an index of what the Cookie header's scan
/// reads (RFC 6265bis §5.8.3 step 1), built on the first lookup after a change.
///
/// Why an index: the scan compared each cookie's domain and path as strings, and a site's
/// cookies share a handful of both (`example.com`, `www.example.com`; `/`, `/app`), so the index
/// keeps each distinct domain and path once and a lookup tests each of them once; the rest of a
/// cookie's test is integer work on a packed entry. The entries are kept in header order
/// (longer paths first, then earlier creation), so a lookup sorts nothing.
/// docs/performance.md, Engine, has the figures.
struct CookieBucket {
    private(set) var cookies: [Cookie]
    /// Nil while stale: every change through the collection interface drops it.
    private var index: LookupIndex?

    init(_ cookies: [Cookie] = []) {
        self.cookies = cookies
    }

    /// Whether any cookie here is partitioned: only then does a lookup work out the request's
    /// partition key.
    mutating func containsPartitioned() -> Bool {
        indexed().hasPartitioned
    }

    /// The cookies whose domain, path, flags and expiry let them go with `request`, in header
    /// order; a partitioned one only when its key is `partition`, an unpartitioned one only when
    /// not `partitionedOnly`. Their last-access times become `request.now` (not indexed, so the
    /// index stays).
    mutating func take(
        _ request: CookieRequestFacts,
        partitionedOnly: Bool,
        partition: CookiePartitionKey?
    ) -> CookieMatches {
        let index = indexed()
        let matches = index.matches(request, cookies: cookies, partitionedOnly: partitionedOnly, partition: partition)
        cookies.withUnsafeMutableBufferPointer { cookies in
            for position in matches.positions { cookies[position].lastAccess = request.now }
        }
        return matches
    }

    private mutating func indexed() -> LookupIndex {
        if let index { return index }
        let built = LookupIndex(cookies)
        index = built
        return built
    }
}

extension CookieBucket: RandomAccessCollection, MutableCollection, RangeReplaceableCollection, ExpressibleByArrayLiteral
{
    init() { self.init([]) }

    init(arrayLiteral elements: Cookie...) { self.init(elements) }

    var startIndex: Int { cookies.startIndex }
    var endIndex: Int { cookies.endIndex }

    subscript(position: Int) -> Cookie {
        get { cookies[position] }
        set {
            cookies[position] = newValue
            index = nil
        }
    }

    mutating func replaceSubrange<C: Collection<Cookie>>(_ subrange: Range<Int>, with newElements: C) {
        cookies.replaceSubrange(subrange, with: newElements)
        index = nil
    }

    mutating func reserveCapacity(_ capacity: Int) { cookies.reserveCapacity(capacity) }

    // Array's own, not the protocol's defaults through `replaceSubrange`: storing a new cookie
    // appends, and the default cost `set_cookie_insert` 5%.
    mutating func append(_ cookie: Cookie) {
        cookies.append(cookie)
        index = nil
    }

    @discardableResult
    mutating func remove(at position: Int) -> Cookie {
        index = nil
        return cookies.remove(at: position)
    }
}

/// A lookup's result: entries of one bucket's index, in header order.
struct CookieMatches {
    fileprivate let index: LookupIndex
    fileprivate let entries: [Int32]

    var isEmpty: Bool { entries.isEmpty }

    /// Positions in the bucket, in header order.
    var positions: some Collection<Int> {
        entries.lazy.map { [index] in Int(index.entries[Int($0)].position) }
    }

    /// The Cookie header value (`a=1; b=2`). The index holds every cookie's `name=value; ` in
    /// header order in one buffer, so each run of consecutive matches is one copy: for the
    /// common lookup that sends most of a site's cookies, the whole header is.
    var header: String {
        let entryList = index.entries
        var length = 0
        for entry in entries { length += Int(entryList[Int(entry)].pairLength) + 2 }
        length -= 2
        return index.pairs.withUnsafeBufferPointer { pairs in
            String(unsafeUninitializedCapacity: length) { output in
                guard let target = output.baseAddress, let source = pairs.baseAddress else { return 0 }
                var written = 0
                var runStart = -1
                var runEnd = -1
                func flush() {
                    guard runStart >= 0 else { return }
                    let count = min(runEnd - runStart, length - written)
                    (target + written).initialize(from: source + runStart, count: count)
                    written += count
                }
                for ordinal in entries {
                    let entry = entryList[Int(ordinal)]
                    let start = Int(entry.pairStart)
                    let end = start + Int(entry.pairLength) + 2
                    if start == runEnd {
                        runEnd = end
                    } else {
                        flush()
                        runStart = start
                        runEnd = end
                    }
                }
                flush()
                return written
            }
        }
    }
}

/// What the retrieval algorithm needs to know of a request, computed once per lookup.
struct CookieRequestFacts {
    var host: String
    var hostIsName: Bool
    var path: String
    var secureChannel: Bool
    var httpAPI: Bool
    var sameSite: Bool
    var laxAllowed: Bool
    var now: Date
}

/// The scan's view of a bucket: distinct domains and paths, and one packed entry per cookie in
/// header order.
private final class LookupIndex: Sendable {
    struct Entry: Sendable {
        var position: Int32
        /// Where the cookie's `name=value` (or bare value, for an empty name) starts in `pairs`;
        /// `"; "` follows it there.
        var pairStart: Int32
        var pairLength: Int32
        var domain: Int32
        var path: Int32
        var flags: Flags
        /// `Date.timeIntervalSinceReferenceDate`; +∞ for a session cookie.
        var expires: Double
    }

    struct Flags: OptionSet, Sendable {
        var rawValue: UInt8
        static let hostOnly = Flags(rawValue: 1 << 0)
        static let secure = Flags(rawValue: 1 << 1)
        static let httpOnly = Flags(rawValue: 1 << 2)
        static let partitioned = Flags(rawValue: 1 << 3)
        /// Sent on a cross-site request only when it may carry Lax cookies (Lax, or no SameSite).
        static let laxCrossSite = Flags(rawValue: 1 << 4)
        /// SameSite=None: sent on any cross-site request.
        static let anyCrossSite = Flags(rawValue: 1 << 5)
    }

    // Immutable once built, so buckets that share storage share it too.
    let domains: [String]
    let paths: [String]
    let entries: [Entry]
    /// Every cookie's header pair followed by `"; "`, in header order.
    let pairs: [UInt8]
    let hasPartitioned: Bool

    init(_ cookies: [Cookie]) {
        var domains: [String] = []
        var paths: [String] = []
        var entries: [Entry] = []
        var hasPartitioned = false
        var domainNumbers: [String: Int32] = [:]
        var pathNumbers: [String: Int32] = [:]
        func number(_ text: String, _ numbers: inout [String: Int32], _ list: inout [String]) -> Int32 {
            if let existing = numbers[text] { return existing }
            let next = Int32(list.count)
            numbers[text] = next
            list.append(text)
            return next
        }
        entries.reserveCapacity(cookies.count)
        for (position, cookie) in cookies.enumerated() {
            var flags: Flags = []
            if cookie.hostOnly { flags.insert(.hostOnly) }
            if cookie.secure { flags.insert(.secure) }
            if cookie.httpOnly { flags.insert(.httpOnly) }
            if cookie.partitionKey != nil {
                flags.insert(.partitioned)
                hasPartitioned = true
            }
            switch cookie.sameSite.enforced {
            case .strict: break
            case .lax, .unspecified: flags.insert(.laxCrossSite)
            case .none: flags.insert(.anyCrossSite)
            }
            entries.append(
                Entry(
                    position: Int32(position),
                    pairStart: 0,
                    pairLength: 0,
                    domain: number(cookie.domain, &domainNumbers, &domains),
                    path: number(cookie.path, &pathNumbers, &paths),
                    flags: flags,
                    expires: cookie.expires?.timeIntervalSinceReferenceDate ?? .infinity
                )
            )
        }
        // Header order (RFC 6265bis §5.8.3 step 2): longer paths first, then earlier creation;
        // ties (imports may repeat a creation time) keep the bucket's order.
        entries.sort { a, b in
            let aCookie = cookies[Int(a.position)]
            let bCookie = cookies[Int(b.position)]
            let aLength = aCookie.path.utf8.count
            let bLength = bCookie.path.utf8.count
            if aLength != bLength { return aLength > bLength }
            if aCookie.creation != bCookie.creation { return aCookie.creation < bCookie.creation }
            return a.position < b.position
        }
        var pairs: [UInt8] = []
        for ordinal in entries.indices {
            let cookie = cookies[Int(entries[ordinal].position)]
            entries[ordinal].pairStart = Int32(pairs.count)
            if !cookie.name.isEmpty {
                pairs.append(contentsOf: cookie.name.utf8)
                pairs.append(UInt8(ascii: "="))
            }
            pairs.append(contentsOf: cookie.value.utf8)
            entries[ordinal].pairLength = Int32(pairs.count) - entries[ordinal].pairStart
            pairs.append(UInt8(ascii: ";"))
            pairs.append(UInt8(ascii: " "))
        }
        self.domains = domains
        self.paths = paths
        self.entries = entries
        self.pairs = pairs
        self.hasPartitioned = hasPartitioned
    }

    func matches(
        _ request: CookieRequestFacts,
        cookies: [Cookie],
        partitionedOnly: Bool,
        partition: CookiePartitionKey?
    ) -> CookieMatches {
        let now = request.now.timeIntervalSinceReferenceDate
        // Which flags rule a cookie out for this request, whatever its domain and path.
        var refused: Flags = []
        if !request.secureChannel { refused.insert(.secure) }
        if !request.httpAPI { refused.insert(.httpOnly) }
        let crossSiteAllowed: Flags =
            request.sameSite ? [] : (request.laxAllowed ? [.laxCrossSite, .anyCrossSite] : [.anyCrossSite])
        return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: domains.count + paths.count) { scratch in
            // Per distinct domain: bit 0 the host itself, bit 1 a name under it (only for a
            // host name: an IP address matches its own cookies only).
            for (number, domain) in domains.enumerated() {
                let same = Host.isSameOrSubdomain(request.host, of: domain, suffixAllowed: false)
                let under = !same && request.hostIsName && Host.isSuffixDomain(request.host, of: domain)
                scratch[number] = (same ? 1 : 0) | (under ? 2 : 0)
            }
            for (number, path) in paths.enumerated() {
                scratch[domains.count + number] = CookiePath.matches(request.path, path) ? 1 : 0
            }
            var matched: [Int32] = []
            matched.reserveCapacity(entries.count)
            for (ordinal, entry) in entries.enumerated() {
                let domainBits = scratch[Int(entry.domain)]
                guard domainBits & (entry.flags.contains(.hostOnly) ? 1 : 3) != 0,
                    scratch[domains.count + Int(entry.path)] != 0,
                    entry.flags.isDisjoint(with: refused),
                    entry.expires > now,
                    request.sameSite || !entry.flags.isDisjoint(with: crossSiteAllowed)
                else { continue }
                if entry.flags.contains(.partitioned) {
                    guard let partition, cookies[Int(entry.position)].partitionKey == partition else { continue }
                } else if partitionedOnly {
                    continue
                }
                matched.append(Int32(ordinal))
            }
            return CookieMatches(index: self, entries: matched)
        }
    }
}
