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
        if beginBackgroundRevalidation(request) { return false }
        caching.beginHop()
        let requestHeaders = cacheRequestHeaders(request)
        var found =
            HTTPCacheRules.isAnsweredFromStore(method) ? cache.lookup(url, requestHeaders: requestHeaders) : nil
        if let hit = found, Self.callerUndoesCodings(requestHeaders),
            hit.entry.response.headers.contains("Content-Encoding")
        {
            // Stored as the loader decoded it; this caller wants the bytes as coded.
            closeBody(hit.body)
            found = nil
        }
        let decision = HTTPCacheRules.decision(
            policy: policy,
            method: method,
            requestHeaders: requestHeaders,
            stored: found?.entry.response,
            now: Date()
        )
        if found == nil,
            servePiece(of: url, request: request, policy: policy, requestHeaders: requestHeaders, in: cache)
        {
            return true
        }
        switch decision {
        case .serve(let age):
            guard let found else { return false }
            return serveStored(found.entry, body: found.body, age: age, request: request, url: url)
        case .serveStale(let age, let revalidation):
            guard let found else { return false }
            // A range the stored body cannot answer goes to the server as any load does.
            guard serveStored(found.entry, body: found.body, age: age, request: request, url: url) else { return false }
            BackgroundRevalidation.start(
                of: found.entry,
                request: Self.revalidation(of: request),
                conditional: revalidation,
                loader: loader
            )
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
            caching.validate(found.entry, unconditional: request)
            setCurrentRequest(validating)
            return false
        case .load:
            closeBody(found?.body)
            // A stale entry may answer if the reload fails (stale-if-error); a HEAD's never does, its
            // body would go with it.
            if policy == .useProtocol, method != "HEAD", let found { caching.reload(found.entry) }
            if found == nil, HTTPCacheRules.isCacheableMethod(method), !Self.callerUndoesCodings(requestHeaders) {
                validateVariants(of: url, request: request, policy: policy, requestHeaders: requestHeaders, in: cache)
            }
            return false
        }
    }

    /// A request no stored variant of its URL answers: when the variants have entity tags, it
    /// goes with `If-None-Match` listing them, so that a 304 can select one (§4.3.1).
    private func validateVariants(
        of url: URL,
        request: URLRequest,
        policy: RequestCachePolicy,
        requestHeaders: HTTPHeaderFields,
        in cache: ResponseCache
    ) {
        let variants = cache.variants(of: url)
        guard !variants.isEmpty,
            let conditional = HTTPCacheRules.variantValidation(
                policy: policy,
                requestHeaders: requestHeaders,
                variants: variants.map(\.response)
            )
        else { return }
        var validating = request
        for field in conditional { validating.setValue(field.value, forHTTPHeaderField: field.name) }
        caching.validateVariants(variants, unconditional: request)
        setCurrentRequest(validating)
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

    /// Whether the request (or the loader's additional fields) sets Accept-Encoding: the loader
    /// then leaves content codings to the caller (CurlTransfer), and a stored body, which the
    /// loader decoded, is not what it asked for; nor is a coded body it gets one to store.
    static func callerUndoesCodings(_ requestHeaders: HTTPHeaderFields) -> Bool {
        requestHeaders.contains("Accept-Encoding")
    }

    func closeBody(_ body: CachedBody?) {
        if case .file(let handle, _)? = body { try? handle.close() }
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
        if Self.callerUndoesCodings(cacheRequestHeaders(request)), fields.contains("Content-Encoding") { return false }
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
