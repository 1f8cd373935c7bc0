import Foundation
import FoundationNetworking
import KeyjarHTTPCache
import KeyjarResponseCache

extension LoaderConnection {
    // MARK: Registered protocols

    /// What the cache holds for a protocol's request, as URLProtocol's `cachedResponse` (nil
    /// when the request's policy ignores the cache): the protocol decides what to do with it.
    func cachedResponse(forProtocol request: URLRequest) -> CachedURLResponse? {
        // Keyed by URL alone, so only a GET's entry answers (as for the loader's own loads).
        guard let cache = loader.configuration.responseCache, let url = request.url,
            HTTPCacheRules.isCacheableMethod(request.httpMethod ?? "GET"),
            LoadCaching.policy(request.cachePolicy) != .reloadIgnoringCache,
            let hit = cache.lookup(url, requestHeaders: cacheRequestHeaders(request))
        else { return nil }
        // Reused without validation (the protocol decides): without a qualified no-cache's fields.
        var reused = hit.entry
        reused.response.headers = HTTPCacheRules.fieldsToReuse(hit.entry.response.headers)
        guard let response = Self.head(of: reused).httpResponse(for: url) else {
            hit.body.close()
            return nil
        }
        guard let data = try? hit.body.load() else { return nil }
        return CachedURLResponse(
            response: response,
            data: data,
            userInfo: CachedUserInfo.read(hit.entry.userInfo),
            storagePolicy: hit.entry.storagePolicy == .allowed ? .allowed : .allowedInMemoryOnly
        )
    }

    /// A protocol's response that its storage policy lets into the cache: its body is kept as it
    /// is reported, and offered to the delegate when the protocol finishes.
    func startCachingProtocolResponse(_ response: URLResponse, policy: URLCache.StoragePolicy) {
        caching.dropWriting()
        // The cache is keyed by URL alone: another method's response would answer a later GET.
        guard policy != .notAllowed, let cache = loader.configuration.responseCache, let url = currentRequest.url,
            HTTPCacheRules.isCacheableMethod(currentRequest.httpMethod ?? "GET")
        else { return }
        let http = response as? HTTPURLResponse
        var fields = http.map { Self.fields(of: $0) } ?? HTTPHeaderFields()
        if http == nil, let type = response.mimeType {
            fields.append("Content-Type", type + (response.textEncodingName.map { "; charset=" + $0 } ?? ""))
        }
        let secure = url.scheme?.lowercased() == "https"
        let entry = CachedEntry(
            url: url,
            response: StoredResponse(
                statusCode: http?.statusCode ?? 200,
                headers: HTTPCacheRules.fieldsToStore(fields),
                requestTime: caching.requestTime,
                responseTime: Date(),
                requestHeaders: cacheRequestHeaders(currentRequest)
            ),
            storagePolicy: policy == .allowed && (!secure || cache.configuration.storesSecureResponsesOnDisk)
                ? .allowed : .allowedInMemoryOnly
        )
        caching.startWriting(.init(entry: entry, writer: cache.makeWriter(for: entry), response: response))
    }
}
