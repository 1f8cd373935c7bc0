import Foundation
import FoundationNetworking
import Keyjar
import KeyjarCore
import KeyjarHTTPCache
import KeyjarLocks
import KeyjarResponseCache

// Caching: the request's cache policy against the loader's response cache (RFC 9111 by
// KeyjarHTTPCache), hits served through the delegate contract, validation, storing what the
// delegate lets through `willCacheResponse`, and invalidation by unsafe requests.
extension LoaderConnection {
    /// What the cache is doing for this load.
    enum CacheState {
        case none
        /// A conditional request is out for this stored entry.
        case validating(CachedEntry)
    }

    /// A response on its way into the cache.
    struct CacheWriting {
        var entry: CachedEntry
        var writer: ResponseCacheWriter
        var response: HTTPURLResponse
    }

    static func policy(_ policy: URLRequest.CachePolicy) -> RequestCachePolicy {
        switch policy {
        case .returnCacheDataElseLoad: return .returnCacheDataElseLoad
        case .returnCacheDataDontLoad: return .returnCacheDataDontLoad
        case .reloadIgnoringLocalCacheData, .reloadIgnoringLocalAndRemoteCacheData, .reloadRevalidatingCacheData:
            return .reloadIgnoringCache
        default: return .useProtocol
        }
    }

    /// The request's header fields as they will be sent (the loader's additional ones
    /// included), for Vary and the request's own Cache-Control.
    func cacheRequestHeaders(_ request: URLRequest) -> HTTPHeaderFields {
        var fields = HTTPHeaderFields((request.allHTTPHeaderFields ?? [:]).map { ($0.key, $0.value) })
        for (name, value) in loader.configuration.additionalHeaders where !fields.contains(name) {
            fields.append(name, value)
        }
        return fields
    }

    /// Before the first attempt: answers from the cache, fails, adds validators, or lets the
    /// load go on. True when the load is over (served or failed).
    func consultCache(for request: URLRequest) -> Bool {
        let policy = Self.policy(request.cachePolicy)
        let method = request.httpMethod ?? "GET"
        guard let cache = loader.configuration.responseCache, let url = request.url else {
            guard policy == .returnCacheDataDontLoad else { return false }
            fail(
                LoaderError.make(
                    .resourceUnavailable,
                    "No cache is configured and the request may not load",
                    url: request.url
                )
            )
            return true
        }
        let found = HTTPCacheRules.isCacheableMethod(method) ? cache.lookup(url) : nil
        let decision = HTTPCacheRules.decision(
            policy: policy,
            method: method,
            requestHeaders: cacheRequestHeaders(request),
            stored: found?.entry.response,
            now: Date()
        )
        switch decision {
        case .serve(let age):
            guard let found else { return false }
            serveFromCache(found.entry, body: found.body, age: age, url: url)
            return true
        case .fail:
            closeBody(found?.body)
            fail(
                LoaderError.make(
                    .resourceUnavailable,
                    "The response is not in the cache and the request may not load",
                    url: url
                )
            )
            return true
        case .validate(let conditional):
            closeBody(found?.body)
            guard let found else { return false }
            var validating = request
            for field in conditional where request.value(forHTTPHeaderField: field.name) == nil {
                validating.setValue(field.value, forHTTPHeaderField: field.name)
            }
            setCurrentRequest(validating)
            cacheState = .validating(found.entry)
            return false
        case .load:
            closeBody(found?.body)
            return false
        }
    }

    private func closeBody(_ body: CachedBody?) {
        if case .file(let handle, _)? = body { try? handle.close() }
    }

    /// A hit: the stored response (its Age current), its body in pieces, the end, as a load
    /// would deliver them. Its Set-Cookie lines are not stored again.
    func serveFromCache(_ entry: CachedEntry, body: CachedBody, age: TimeInterval, url: URL) {
        var fields = entry.response.headers
        fields.replace("Age", with: [String(Int(age.rounded(.down)))])
        let head = ResponseHead(
            statusCode: entry.response.statusCode,
            httpVersion: "HTTP/1.1",
            reasonPhrase: ResponseHead.standardReasonPhrase(for: entry.response.statusCode),
            fields: fields.fields.map { (name: $0.name, value: $0.value) }
        )
        published.withLock { $0.head = head }
        guard let response = head.httpResponse(for: url) else {
            fail(LoaderError.make(.cannotParseResponse, "The cached response cannot be read", url: url))
            return
        }
        deliver { $0.connection(self, didReceive: response) }
        switch body {
        case .data(let data):
            if !data.isEmpty { deliver { $0.connection(self, didReceive: data) } }
        case .file(let handle, _):
            defer { try? handle.close() }
            while let chunk = try? handle.read(upToCount: Self.cacheReadChunk), !chunk.isEmpty {
                deliver { $0.connection(self, didReceive: chunk) }
            }
        }
        finish()
    }

    static let cacheReadChunk = 256 << 10

    /// A final response's head: a 304 for a validation answers from the stored entry (as a
    /// 200, its fields updated); an unsafe request's success invalidates what it names;
    /// a storable response starts its cache writer. True when the head was answered here.
    func cacheResponseHead(_ head: ResponseHead, response: HTTPURLResponse, request: URLRequest, url: URL) -> Bool {
        guard let cache = loader.configuration.responseCache else { return false }
        let method = request.httpMethod ?? "GET"
        let fields = HTTPHeaderFields(head.fields.map { ($0.name, $0.value) })
        for target in HTTPCacheRules.invalidatedURLs(
            method: method,
            statusCode: head.statusCode,
            requestURL: url,
            responseHeaders: fields
        ) {
            cache.remove(target)
        }
        if case .validating(let entry) = cacheState {
            cacheState = .none
            if HTTPCacheRules.confirmsStored(statusCode: head.statusCode) {
                let updated = HTTPCacheRules.updated(
                    entry.response,
                    notModified: fields,
                    requestTime: attemptStarted,
                    responseTime: Date()
                )
                cache.update(url, response: updated)
                guard let hit = cache.lookup(url) else { return false }
                // The transfer's own (empty) end is not the load's: it ends here.
                if let transfer = machine.abandonTransfer() { CurlEngine.shared.cancel(transfer) }
                serveFromCache(
                    hit.entry,
                    body: hit.body,
                    age: CacheFreshness(of: hit.entry.response, at: Date()).age,
                    url: url
                )
                return true
            }
        }
        guard
            HTTPCacheRules.storability(
                method: method,
                requestHeaders: cacheRequestHeaders(request),
                statusCode: head.statusCode,
                responseHeaders: fields
            ) == .storable
        else { return false }
        let secure = url.scheme?.lowercased() == "https"
        let entry = CachedEntry(
            url: url,
            response: StoredResponse(
                statusCode: head.statusCode,
                headers: HTTPCacheRules.fieldsToStore(fields),
                requestTime: attemptStarted,
                responseTime: Date(),
                requestHeaders: cacheRequestHeaders(request)
            ),
            storagePolicy: secure && !cache.configuration.storesSecureResponsesOnDisk ? .allowedInMemoryOnly : .allowed
        )
        cacheWriter = CacheWriting(entry: entry, writer: cache.makeWriter(for: entry), response: response)
        return false
    }

    /// At the end of a load: the delegate sees what would be stored (`willCacheResponse`) and
    /// may keep it, change it or refuse it.
    func offerToCache() {
        guard let writing = cacheWriter, let cache = loader.configuration.responseCache else { return }
        cacheWriter = nil
        let (entry, writer, response) = (writing.entry, writing.writer, writing.response)
        let policy: URLCache.StoragePolicy = entry.storagePolicy == .allowed ? .allowed : .allowedInMemoryOnly
        let proposed = CachedURLResponse(
            response: response,
            data: writer.bodyForInspection(),
            userInfo: nil,
            storagePolicy: policy
        )
        guard let accepted = ask({ $0.connection(self, willCacheResponse: proposed) }, ifNoDelegate: proposed) else {
            writer.cancel()
            return
        }
        if accepted === proposed {
            writer.finish()
            return
        }
        // Changed by the delegate: its version is stored instead.
        writer.cancel()
        var changed = entry
        changed.storagePolicy =
            switch accepted.storagePolicy {
            case .allowed: .allowed
            case .allowedInMemoryOnly: .allowedInMemoryOnly
            default: .notAllowed
            }
        changed.userInfo = (accepted.userInfo ?? [:]).reduce(into: [:]) { result, item in
            if let key = item.key as? String, let value = item.value as? String { result[key] = value }
        }
        cache.store(changed, body: accepted.data)
    }
}
