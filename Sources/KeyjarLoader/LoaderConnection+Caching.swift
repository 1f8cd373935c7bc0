import Foundation
import FoundationNetworking
import Keyjar
import KeyjarCore
import KeyjarHTTPCache
import KeyjarLocks
import KeyjarResponseCache
import KeyjarTransfer

// Caching, carried out: what the cache's part of the load (LoadCaching, CacheConsultation)
// decides before a request goes out, a validation's 304, a HEAD freshening the stored GET
// (RFC 9111 §4.3.5), storing what the delegate lets through `willCacheResponse`, and
// invalidation by unsafe requests.
extension LoaderConnection {
    /// The request's header fields as they will be sent (the loader's additional ones
    /// included), for Vary and the request's own Cache-Control.
    func cacheRequestHeaders(_ request: URLRequest) -> HTTPHeaderFields {
        var fields = HTTPHeaderFields(
            (request.allHTTPHeaderFields ?? [:]).compactMap {
                LoaderProtocol.isUnsent($0.key) ? nil : ($0.key, $0.value)
            }
        )
        for (name, value) in loader.configuration.additionalHeaders where !fields.contains(name) {
            fields.append(name, value)
        }
        return fields
    }

    /// Before a hop's first attempt: answers from the cache, fails, adds validators, or lets
    /// the load go on, as the cache's part decides. True when the load is over (served or failed).
    func consultCache(for request: URLRequest) -> Bool {
        if beginBackgroundRevalidation(request) { return false }
        switch caching.consult(
            request,
            requestHeaders: cacheRequestHeaders(request),
            in: loader.configuration.responseCache,
            now: Date()
        ) {
        case .load(let sending):
            if let sending { setCurrentRequest(sending) }
            return false
        case .answer(let answer, let url, let revalidation):
            serve(answer, url: url)
            if let revalidation {
                BackgroundRevalidation.start(
                    of: revalidation.entry,
                    request: Self.revalidation(of: request),
                    conditional: revalidation.conditional,
                    loader: loader
                )
            }
            return true
        case .fail(let message):
            fail(LoaderError.make(.resourceUnavailable, message, url: request.url))
            return true
        }
    }

    /// The request that revalidates an entry served stale in the background: a GET of the
    /// whole response, whatever part of it (a HEAD, a range) the served request asked for.
    static func revalidation(of request: URLRequest) -> URLRequest {
        var whole = request
        whole.httpMethod = "GET"
        whole.httpBody = nil
        for field in ["Range", "If-Range"] { whole.setValue(nil, forHTTPHeaderField: field) }
        return whole
    }

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
        if method == "HEAD" {
            freshenStoredGET(with: head, in: cache, request: request, url: url)
            return false
        }
        if answerWithStaleResponse(statusCode: head.statusCode, url: url) { return true }
        let unconditional = caching.takeUnconditionalRequest()
        if let entry = caching.takeValidated(fields) {
            if HTTPCacheRules.confirmsStored(statusCode: head.statusCode),
                let hit = cache.lookup(url, variantOf: entry)
            {
                var refreshed = hit.entry
                // Another process may have stored a new response (its own body) for this
                // variant since it was validated: the 304 is not about that one.
                if hit.entry.response.headers == entry.response.headers {
                    refreshed.response = HTTPCacheRules.updated(
                        entry.response,
                        notModified: fields,
                        requestTime: caching.requestTime,
                        responseTime: Date()
                    )
                }
                // The transfer's own (empty) end is not the load's: it ends here.
                abandonTransfer()
                serveRefreshed(
                    refreshed,
                    stored: hit.entry,
                    body: hit.body,
                    in: cache,
                    url: url,
                    for: cacheRequestHeaders(request)
                )
                return true
            }
        }
        if HTTPCacheRules.confirmsStored(statusCode: head.statusCode), let unconditional {
            // A 304 to validators the cache added, and nothing stored it can apply to now (it
            // names none of the variants, or another process replaced or evicted the one it
            // names): the request is sent again as the caller made it.
            abandonTransfer()
            setCurrentRequest(unconditional)
            startAttempt()
            return true
        }
        if LoadCaching.callerUndoesCodings(cacheRequestHeaders(request)), fields.contains("Content-Encoding") {
            return false
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
                requestTime: caching.requestTime,
                responseTime: Date(),
                requestHeaders: cacheRequestHeaders(request)
            ),
            storagePolicy: secure && !cache.configuration.storesSecureResponsesOnDisk ? .allowedInMemoryOnly : .allowed
        )
        caching.startWriting(.init(entry: entry, writer: cache.makeWriter(for: entry), response: response))
        return false
    }

    /// A HEAD's response: it freshens the stored GET response of its URL when their validators
    /// match, and makes it go when they do not (§4.3.5). Never stored itself: a HEAD response
    /// has no content, and a GET would be answered with it.
    func freshenStoredGET(with head: ResponseHead, in cache: ResponseCache, request: URLRequest, url: URL) {
        guard head.statusCode == 200,
            let stored = cache.lookup(url, requestHeaders: cacheRequestHeaders(request))
        else { return }
        stored.body.close()
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

    /// A validation's 304: the stored response, its fields and times refreshed, is served as a
    /// hit and, as a response about to be stored again, offered to the delegate first. A
    /// variant the 304 selected for a request it did not match is also stored under that
    /// request's Vary values: the server said it is that request's response, and the next such
    /// request is then answered without asking again.
    private func serveRefreshed(
        _ refreshed: CachedEntry,
        stored: CachedEntry,
        body: CachedBody,
        in cache: ResponseCache,
        url: URL,
        for requestHeaders: HTTPHeaderFields
    ) {
        let data: Data
        do {
            data = try body.load()
        } catch {
            return fail(LoaderError.make(.cannotParseResponse, "The cached response's body cannot be read", url: url))
        }
        let age = CacheFreshness(of: refreshed.response, at: Date()).age
        guard let response = deliverCached(refreshed, age: age, url: url) else { return }
        if !data.isEmpty { channel.deliver { $0.connection(self, didReceive: data) } }
        switch offer(refreshed, response: response, data: data) {
        case .unchanged:
            cache.update(stored, response: refreshed.response)
            var selected = refreshed
            selected.response = refreshed.response.selected(for: requestHeaders)
            if selected.key != refreshed.key { cache.store(selected, body: data) }
        case .changed(let changed, let body): cache.store(changed, body: body)
        // Refused: this response is not stored; the one there was stays as it was.
        case .refused: break
        }
        finish()
    }

    /// At the end of a load: the delegate sees what would be stored (`willCacheResponse`) and
    /// may keep it, change it or refuse it.
    func offerToCache() {
        guard let cache = loader.configuration.responseCache, let writing = caching.takeWriting() else { return }
        let writer = writing.writer
        switch offer(writing.entry, response: writing.response, data: writer.bodyForInspection()) {
        case .unchanged:
            writer.finish()
        case .changed(let changed, let body):
            writer.cancel()
            cache.store(changed, body: body)
        case .refused:
            writer.cancel()
        }
    }

    /// What the delegate made of a response about to be stored.
    enum CacheOffer {
        case unchanged
        /// Its version is stored instead: the entry and body it amounts to.
        case changed(CachedEntry, Data)
        case refused
    }

    /// Asks the delegate about storing `entry` (shown as `response` and `data`).
    private func offer(_ entry: CachedEntry, response: URLResponse, data: Data) -> CacheOffer {
        let policy: URLCache.StoragePolicy = entry.storagePolicy == .allowed ? .allowed : .allowedInMemoryOnly
        let proposed = CachedURLResponse(response: response, data: data, userInfo: nil, storagePolicy: policy)
        guard let accepted = channel.ask({ $0.connection(self, willCacheResponse: proposed) }, ifNoDelegate: proposed)
        else {
            return .refused
        }
        if accepted === proposed { return .unchanged }
        var changed = entry
        changed.storagePolicy =
            switch accepted.storagePolicy {
            case .allowed: .allowed
            case .allowedInMemoryOnly: .allowedInMemoryOnly
            default: .notAllowed
            }
        changed.userInfo = CachedUserInfo.stored(accepted.userInfo)
        // A response of its own replaces the stored fields and status (the cache's rules read
        // them); the one proposed keeps the fields exactly as they arrived.
        if accepted.response !== response, let http = accepted.response as? HTTPURLResponse {
            changed.response.statusCode = http.statusCode
            changed.response.headers = HTTPCacheRules.fieldsToStore(Self.fields(of: http))
        }
        return .changed(changed, accepted.data)
    }

    /// A response's header fields from Foundation's dictionary (in name order: it keeps none).
    static func fields(of response: HTTPURLResponse) -> HTTPHeaderFields {
        HTTPHeaderFields(
            response.allHeaderFields.compactMap { key, value -> (String, String)? in
                guard let name = key as? String else { return nil }
                return (name, "\(value)")
            }.sorted { $0.0 < $1.0 }
        )
    }
}
