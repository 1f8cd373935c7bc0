public import Foundation

/// A request's cache policy, as the URL Loading System names them.
public enum RequestCachePolicy: Sendable, Hashable {
    /// RFC 9111: a fresh stored response is used, a stale one validated.
    case useProtocol
    /// The network, whatever is stored (the response is still stored).
    case reloadIgnoringCache
    /// Any stored response, however old; else the network.
    case returnCacheDataElseLoad
    /// Any stored response, however old; else a failure, never the network.
    case returnCacheDataDontLoad
}

/// What to do with a request, given what is stored for it.
public enum CacheDecision: Sendable, Hashable {
    /// Answer with the stored response, this old (its Age).
    case serve(age: TimeInterval)
    /// RFC 5861 §3: answer with the stale stored response at once (this old), and revalidate
    /// it in the background with these conditional fields (none: a full request) so that a
    /// later request finds it refreshed.
    case serveStale(age: TimeInterval, revalidation: HTTPHeaderFields)
    /// Send the request with these conditional fields added; a 304 means the stored response
    /// (its fields updated) answers, anything else replaces it.
    case validate(HTTPHeaderFields)
    /// Send the request as it is.
    case load
    /// Fail without touching the network: nothing usable is stored and the request may not
    /// load (return-cache-data-don't-load, or `only-if-cached`).
    case fail
}

/// Why a response is not stored.
public enum CacheStorability: Sendable, Hashable {
    case storable
    case notStorable(reason: String)
}

/// RFC 9111 for a private cache (one user's), as pure functions: what may be stored, what a
/// request gets, how a 304 updates what is stored, what an unsafe request invalidates.
public enum HTTPCacheRules {
    /// Methods whose responses this cache stores and answers: GET only.
    public static func isCacheableMethod(_ method: String) -> Bool { method == "GET" }

    /// §3: whether a response to a request may be stored at all.
    public static func storability(
        method: String,
        requestHeaders: HTTPHeaderFields,
        statusCode: Int,
        responseHeaders: HTTPHeaderFields
    ) -> CacheStorability {
        guard isCacheableMethod(method) else { return .notStorable(reason: "\(method) responses are not cached") }
        guard statusCode >= 200, statusCode != 304 else {
            return .notStorable(reason: "status \(statusCode) is not stored")
        }
        // §3.3: a 206 is stored as a piece of its representation, to be combined (§3.4).
        if statusCode == 206, let refusal = ByteRanges.pieceRefusal(responseHeaders: responseHeaders) {
            return .notStorable(reason: refusal)
        }
        let request = CacheControl(requestHeaders, isRequest: true)
        let response = CacheControl(responseHeaders)
        if request.noStore || response.noStore { return .notStorable(reason: "no-store") }
        // A body in a transfer coding the client could not undo would be kept without the field
        // that names the coding: Transfer-Encoding is hop-by-hop and not stored (§3.1).
        if responseHeaders.listMembers("Transfer-Encoding").contains(where: { $0.lowercased() != "chunked" }) {
            return .notStorable(reason: "a transfer coding other than chunked")
        }
        let vary = responseHeaders.listMembers("Vary").map { $0.lowercased() }
        if vary.contains("*") { return .notStorable(reason: "Vary: *") }
        // The request's values of the fields Vary names are stored with the response: a
        // credential or a session cookie would land in the cache's index. (Cookies the loader
        // adds from the jar are not among the values either, so a Vary: Cookie variant could
        // answer another account's request.)
        if let credential = vary.first(where: {
            $0 == "authorization" || $0 == "proxy-authorization" || $0 == "cookie"
        }) {
            return .notStorable(reason: "Vary: \(credential) would store a credential")
        }
        let explicit =
            response.maxAge != nil || response.hasInvalidMaxAge || responseHeaders.contains("Expires")
            || response.isPublic || response.isPrivate
        guard explicit || CacheFreshness.heuristicallyCacheable.contains(statusCode) else {
            return .notStorable(reason: "status \(statusCode) without explicit freshness")
        }
        return .storable
    }

    /// What `policy` makes of a request for which `stored` is kept (nil: nothing, or nothing
    /// whose Vary matches: pass what the store found, this checks Vary).
    public static func decision(
        policy: RequestCachePolicy,
        method: String,
        requestHeaders: HTTPHeaderFields,
        stored: StoredResponse?,
        now: Date
    ) -> CacheDecision {
        let usable = stored.flatMap { isAnsweredFromStore(method) && $0.varyMatches(requestHeaders) ? $0 : nil }
        let decided = policyDecision(policy, requestHeaders: requestHeaders, usable: usable, now: now)
        // A HEAD is not sent conditionally: its 200 freshens the stored GET (§4.3.5) as well.
        if method == "HEAD", case .validate = decided { return .load }
        return decided
    }

    private static func policyDecision(
        _ policy: RequestCachePolicy,
        requestHeaders: HTTPHeaderFields,
        usable: StoredResponse?,
        now: Date
    ) -> CacheDecision {
        switch policy {
        case .reloadIgnoringCache:
            return .load
        case .returnCacheDataElseLoad:
            return usable.map { .serve(age: CacheFreshness(of: $0, at: now).age) } ?? .load
        case .returnCacheDataDontLoad:
            return usable.map { .serve(age: CacheFreshness(of: $0, at: now).age) } ?? .fail
        case .useProtocol:
            return protocolDecision(requestHeaders: requestHeaders, stored: usable, now: now)
        }
    }

    /// §4: use a fresh response (within the request's max-age and min-fresh), or a stale one
    /// the request accepts (max-stale) unless the response must be revalidated; else validate
    /// when there is a validator, else load.
    static func protocolDecision(requestHeaders: HTTPHeaderFields, stored: StoredResponse?, now: Date) -> CacheDecision
    {
        let request = CacheControl(requestHeaders, isRequest: true)
        guard !request.noStore, let stored else { return request.onlyIfCached ? .fail : .load }
        let response = CacheControl(stored.headers)
        let freshness = CacheFreshness(of: stored, at: now)
        func validateOrLoad() -> CacheDecision {
            if request.onlyIfCached { return .fail }
            return stored.hasValidators ? .validate(stored.validators) : .load
        }
        if request.noCache || response.noCache { return validateOrLoad() }
        if let maxAge = request.maxAge, freshness.age > TimeInterval(maxAge) { return validateOrLoad() }
        let remaining = freshness.lifetime - freshness.age
        if let minFresh = request.minFresh, remaining < TimeInterval(minFresh) { return validateOrLoad() }
        if freshness.isFresh { return .serve(age: freshness.age) }
        if !response.mustRevalidate, let maxStale = request.maxStale {
            switch maxStale {
            case .any: return .serve(age: freshness.age)
            case .seconds(let seconds) where -remaining <= TimeInterval(seconds): return .serve(age: freshness.age)
            case .seconds: break
            }
        }
        // RFC 5861 §3, within the window; never for must-revalidate (RFC 9111 §4.2.4: no stale
        // response where a directive forbids it), nor when the request may not reach the
        // network (the background request would).
        if !response.mustRevalidate, !request.onlyIfCached, let window = response.staleWhileRevalidate,
            freshness.staleness <= TimeInterval(window)
        {
            return .serveStale(age: freshness.age, revalidation: stored.validators)
        }
        return validateOrLoad()
    }

    /// RFC 5861 §4: whether `stored`, being validated or reloaded because it is stale, may
    /// answer instead of a failure (a network error, or ``isServerError(_:)``): within the
    /// response's or the request's stale-if-error window, and not where a directive forbids a
    /// stale response (must-revalidate, an unqualified no-cache: RFC 9111 §4.2.4).
    public static func mayServeStaleOnError(
        _ stored: StoredResponse,
        requestHeaders: HTTPHeaderFields,
        now: Date
    )
        -> Bool
    {
        let response = CacheControl(stored.headers)
        let request = CacheControl(requestHeaders, isRequest: true)
        guard !response.mustRevalidate, !response.noCache, !request.noCache, !request.noStore else { return false }
        let freshness = CacheFreshness(of: stored, at: now)
        guard !freshness.isFresh, let window = [response.staleIfError, request.staleIfError].compactMap({ $0 }).max()
        else { return false }
        return freshness.staleness <= TimeInterval(window)
    }

    /// The statuses RFC 5861 §4 counts as an error for stale-if-error.
    public static func isServerError(_ statusCode: Int) -> Bool { [500, 502, 503, 504].contains(statusCode) }

    /// The stored fields sent with a response reused without validation: those a qualified
    /// `no-cache="…"` names are held back (RFC 9111 §5.2.2.4: not sent without successful
    /// revalidation); after a validation the stored response is sent whole.
    public static func fieldsToReuse(_ headers: HTTPHeaderFields) -> HTTPHeaderFields {
        // Every hit asks: a response without a qualified no-cache (nearly all) is not parsed.
        // (`utf8.contains`: Foundation's String.contains searches with a locale, at a cost.)
        guard
            headers.values("Cache-Control").contains(where: {
                $0.utf8.contains(UInt8(ascii: "=")) && $0.lowercased().contains("no-cache")
            })
        else { return headers }
        let held = Set(CacheControl(headers).noCacheFields)
        guard !held.isEmpty else { return headers }
        return HTTPHeaderFields(headers.fields.filter { !held.contains($0.name.lowercased()) })
    }

    /// Header fields a cache does not keep (§3.1): hop-by-hop ones and those Connection names,
    /// and those a qualified `private="…"` names (§5.2.2.7: one user's, kept out of the store).
    public static func fieldsToStore(_ headers: HTTPHeaderFields) -> HTTPHeaderFields {
        var dropped: Set<String> = [
            "connection", "keep-alive", "proxy-connection", "te", "transfer-encoding", "upgrade",
        ]
        for name in headers.listMembers("Connection") { dropped.insert(name.lowercased()) }
        dropped.formUnion(CacheControl(headers).privateFields)
        return HTTPHeaderFields(headers.fields.filter { !dropped.contains($0.name.lowercased()) })
    }

    /// §4.3.4: the stored response after a 304 for it: each field the 304 carries replaces the
    /// stored lines of that name, except those that describe the stored body, which the 304
    /// does not; the times become the validation's.
    public static func updated(
        _ stored: StoredResponse,
        notModified: HTTPHeaderFields,
        requestTime: Date,
        responseTime: Date
    ) -> StoredResponse {
        let kept: Set<String> = ["content-length", "content-encoding", "content-range", "transfer-encoding"]
        var headers = stored.headers
        let fresh = fieldsToStore(notModified)
        var seen: Set<String> = []
        for field in fresh.fields where !kept.contains(field.name.lowercased()) {
            let name = field.name.lowercased()
            guard seen.insert(name).inserted else { continue }
            headers.replace(field.name, with: fresh.values(field.name))
        }
        var result = stored
        result.headers = headers
        result.requestTime = requestTime
        result.responseTime = responseTime
        return result
    }

    /// Whether a response with this status for a conditional request means "use what you
    /// have" (§4.3.3).
    public static func confirmsStored(statusCode: Int) -> Bool { statusCode == 304 }

    /// §4.4: the URLs whose stored responses an unsafe request invalidates once it succeeded
    /// (2xx or 3xx): its target, and the Location and Content-Location of the response when
    /// they are of the same origin.
    public static func invalidatedURLs(
        method: String,
        statusCode: Int,
        requestURL: URL,
        responseHeaders: HTTPHeaderFields
    ) -> [URL] {
        let safe: Set<String> = ["GET", "HEAD", "OPTIONS", "TRACE"]
        guard !safe.contains(method.uppercased()), (200..<400).contains(statusCode) else { return [] }
        var urls = [requestURL]
        for name in ["Location", "Content-Location"] {
            guard let value = responseHeaders[name],
                let target = URL(string: value, relativeTo: requestURL)?.absoluteURL,
                sameOrigin(target, requestURL)
            else { continue }
            if !urls.contains(target) { urls.append(target) }
        }
        return urls
    }

    static func sameOrigin(_ a: URL, _ b: URL) -> Bool {
        func port(_ url: URL) -> Int? {
            url.port ?? (url.scheme?.lowercased() == "https" ? 443 : url.scheme?.lowercased() == "http" ? 80 : nil)
        }
        return a.scheme?.lowercased() == b.scheme?.lowercased() && a.host?.lowercased() == b.host?.lowercased()
            && port(a) == port(b)
    }
}
