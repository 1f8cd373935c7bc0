public import Foundation

// Retrieval: the cookies and the Cookie header a request gets (RFC 6265bis §5.8.3).
extension CookieJar {
    /// The cookies to send with a request, in header order (longer paths first, then earlier
    /// creation), with their last-access time updated.
    public mutating func cookies(for context: CookieContext, now: Date = Date()) -> [Cookie] {
        guard let (bucketIndex, matched) = matchingCookies(for: context, now: now) else { return [] }
        return matched.map { sites.values[bucketIndex][$0.index] }
    }

    /// The Cookie header value for a request, or nil when no cookie applies.
    public mutating func cookieHeader(for context: CookieContext, now: Date = Date()) -> String? {
        guard let (bucketIndex, matched) = matchingCookies(for: context, now: now), !matched.isEmpty else { return nil }
        // Built straight from the bucket in one allocation: copying Cookie values would cost a
        // retain per string, and appending piece by piece a capacity check per piece.
        return sites.values[bucketIndex].withUnsafeBufferPointer { bucket in
            var length = 2 * (matched.count - 1)
            for (index, _, _) in matched {
                let nameLength = bucket[index].name.utf8.count
                length += bucket[index].value.utf8.count + (nameLength == 0 ? 0 : nameLength + 1)
            }
            return String(unsafeUninitializedCapacity: length) { output in
                var position = 0
                func append(_ text: String) {
                    Bytes.with(text) { bytes in
                        guard let source = bytes.baseAddress, let target = output.baseAddress else { return }
                        (target + position).initialize(from: source, count: bytes.count)
                        position += bytes.count
                    }
                }
                func append(_ byte: UInt8) {
                    output[position] = byte
                    position += 1
                }
                for (offset, (index, _, _)) in matched.enumerated() {
                    if offset > 0 {
                        append(UInt8(ascii: ";"))
                        append(UInt8(ascii: " "))
                    }
                    if !bucket[index].name.isEmpty {
                        append(bucket[index].name)
                        append(UInt8(ascii: "="))
                    }
                    append(bucket[index].value)
                }
                return position
            }
        }
    }

    /// Indices, in header order, of the cookies in the request site's bucket that go with the
    /// request; their last-access times are updated. Unpartitioned cookies go by the retrieval
    /// algorithm alone; a partitioned one also needs the request's partition key to be its own.
    private mutating func matchingCookies(
        for context: CookieContext,
        now: Date
    ) -> (bucket: Dictionary<String, [Cookie]>.Index, matched: [(index: Int, pathLength: Int, creation: Date)])? {
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
        let request = RequestFacts(
            host: host,
            hostIsName: !Host.isIPAddress(host),
            path: context.url.path,
            secureChannel: context.url.isSecure,
            httpAPI: context.api == .http,
            sameSite: isSameSite(context),
            laxAllowed: context.isTopLevelNavigation && context.isSafeMethod,
            now: now
        )

        // Sort keys are copied out so that sorting moves integers, not cookies.
        var matched: [(index: Int, pathLength: Int, creation: Date)] = []
        // Partitioned cookies that match but for their partition, checked after the scan: only
        // a lookup that meets one pays for working out the request's partition key.
        var partitioned: [Int] = []
        sites.values[bucketIndex].withUnsafeMutableBufferPointer { bucket in
            guard let base = bucket.baseAddress else { return }
            matched.reserveCapacity(bucket.count)
            for index in bucket.indices where Self.matches(base + index, request) {
                if base[index].partitionKey != nil {
                    partitioned.append(index)
                    continue
                }
                if partitionedOnly { continue }
                base[index].lastAccess = now
                matched.append((index, base[index].path.utf8.count, base[index].creation))
            }
        }
        if !partitioned.isEmpty {
            let requestPartition = partitionKey(for: context)
            for index in partitioned where sites.values[bucketIndex][index].partitionKey == requestPartition {
                sites.values[bucketIndex][index].lastAccess = now
                let cookie = sites.values[bucketIndex][index]
                matched.append((index, cookie.path.utf8.count, cookie.creation))
            }
        }
        if matched.count > 1 {
            matched.sort { $0.pathLength != $1.pathLength ? $0.pathLength > $1.pathLength : $0.creation < $1.creation }
        }
        return (bucketIndex, matched)
    }

    /// What the retrieval algorithm needs to know of a request, computed once per lookup.
    private struct RequestFacts {
        var host: String
        var hostIsName: Bool
        var path: String
        var secureChannel: Bool
        var httpAPI: Bool
        var sameSite: Bool
        var laxAllowed: Bool
        var now: Date
    }

    /// RFC 6265bis §5.8.3 step 1 for one cookie (read in place, never copied).
    @inline(__always)
    private static func matches(_ cookie: UnsafePointer<Cookie>, _ request: RequestFacts) -> Bool {
        if cookie.pointee.hostOnly || !request.hostIsName {
            guard cookie.pointee.domain == request.host else { return false }
        } else {
            guard cookie.pointee.domain == request.host || Host.isSuffixDomain(request.host, of: cookie.pointee.domain)
            else { return false }
        }
        guard CookiePath.matches(request.path, cookie.pointee.path),
            !cookie.pointee.secure || request.secureChannel,
            !cookie.pointee.httpOnly || request.httpAPI,
            !cookie.pointee.isExpired(at: request.now)
        else { return false }
        if !request.sameSite {
            switch cookie.pointee.sameSite.enforced {
            case .strict: return false
            case .lax, .unspecified: return request.laxAllowed
            case .none: return true
            }
        }
        return true
    }
}
