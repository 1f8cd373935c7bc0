import Foundation
import FoundationNetworking
import KeyjarHTTPCache
import KeyjarResponseCache

// A stored GET response answering a HEAD (its fields, no content) or a Range request (a 206 of
// its slice, a 416), and a HEAD response freshening the stored GET (RFC 9111 §4.3.5). The
// rules are KeyjarHTTPCache's (HTTPCacheRules, ByteRanges); this carries them out.
extension LoaderConnection {
    /// A hit (the cache's decision is to serve `entry`): served as `request` asks. False when
    /// the stored body cannot answer the request's ranges, which then go to the server.
    func serveStored(_ stored: CachedEntry, body: CachedBody, age: TimeInterval, request: URLRequest, url: URL) -> Bool
    {
        let method = request.httpMethod ?? "GET"
        // Reused without validation: without the fields a qualified no-cache names
        // (serveFromCache leaves them out itself).
        var entry = stored
        entry.response.headers = HTTPCacheRules.fieldsToReuse(stored.response.headers)
        if method == "HEAD" {
            closeBody(body)
            if deliverCached(entry, age: age, url: url) != nil { finish() }
            return true
        }
        switch ByteRanges.answer(
            method: method,
            requestHeaders: cacheRequestHeaders(request),
            stored: entry.response,
            bodyLength: body.size
        ) {
        case .whole:
            serveFromCache(entry, body: body, age: age, url: url)
        case .forward
        where Self.policy(request.cachePolicy) == .returnCacheDataDontLoad
            || CacheControl(cacheRequestHeaders(request), isRequest: true).onlyIfCached:
            // The request may not reach the network: the whole response answers a range too
            // (RFC 9110 §14.2 lets a range request be answered whole).
            serveFromCache(entry, body: body, age: age, url: url)
        case .forward:
            closeBody(body)
            return false
        case .unsatisfiable(let headers):
            closeBody(body)
            if deliverCached(entry.answering(status: 416, headers: headers), age: age, url: url) != nil { finish() }
        case .partial(let range, let headers):
            guard deliverCached(entry.answering(status: 206, headers: headers), age: age, url: url) != nil else {
                closeBody(body)
                return true
            }
            serveSlice(range, of: body, url: url)
        }
        return true
    }

    /// The bytes `range` of a stored body, in pieces, then the end.
    func serveSlice(_ range: ClosedRange<Int>, of body: CachedBody, url: URL) {
        switch body {
        case .data(let data):
            let start = data.startIndex + range.lowerBound
            channel.deliver { $0.connection(self, didReceive: data[start..<(start + range.count)]) }
        case .file(let handle, _):
            defer { try? handle.close() }
            do {
                try handle.seek(toOffset: UInt64(range.lowerBound))
                var left = range.count
                while left > 0, let chunk = try handle.read(upToCount: min(left, Self.cacheReadChunk)),
                    !chunk.isEmpty
                {
                    left -= chunk.count
                    channel.deliver { $0.connection(self, didReceive: chunk) }
                }
                // The file is shorter than the index says: the 206 promised bytes it cannot give.
                guard left == 0 else { throw CocoaError(.fileReadCorruptFile) }
            } catch {
                return fail(
                    LoaderError.make(.cannotParseResponse, "The cached response's body cannot be read", url: url)
                )
            }
        }
        finish()
    }

    /// A HEAD's response: it freshens the stored GET response of its URL when their validators
    /// match, and makes it go when they do not (§4.3.5). Never stored itself: a HEAD response
    /// has no content, and a GET would be answered with it.
    func freshenStoredGET(with head: ResponseHead, in cache: ResponseCache, request: URLRequest, url: URL) {
        guard head.statusCode == 200,
            let stored = cache.lookup(url, requestHeaders: cacheRequestHeaders(request))
        else { return }
        closeBody(stored.body)
        switch HTTPCacheRules.freshening(
            stored.entry.response,
            byHeadStatus: head.statusCode,
            headers: HTTPHeaderFields(head.fields.map { ($0.name, $0.value) }),
            requestHeaders: cacheRequestHeaders(request),
            requestTime: caching.requestTime,
            responseTime: Date()
        ) {
        case .none: break
        // That variant only, and only while it is still the one that was read: another
        // process may have stored a new response (its own body) for it meanwhile.
        case .update(let response): cache.update(stored.entry, response: response)
        case .invalidate: cache.remove(variantOf: stored.entry)
        }
    }
}

extension CachedEntry {
    /// The entry as another status with other fields (a 206 or a 416 made from it).
    func answering(status: Int, headers: HTTPHeaderFields) -> CachedEntry {
        var answer = self
        answer.response.statusCode = status
        answer.response.headers = headers
        return answer
    }
}
