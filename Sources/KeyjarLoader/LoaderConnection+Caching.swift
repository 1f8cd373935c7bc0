import Foundation
import FoundationNetworking
import Keyjar
import KeyjarCore
import KeyjarLocks

// Caching: what is offered to the configured URLCache, through willCacheResponse.
extension LoaderConnection {
    func isCacheable(request: URLRequest, head: ResponseHead) -> Bool {
        guard loader.configuration.urlCache != nil, (request.httpMethod ?? "GET") == "GET",
            [200, 203, 204, 300, 301, 404, 410].contains(head.statusCode)
        else { return false }
        let cacheControl =
            (head.values(of: "Cache-Control") + [request.value(forHTTPHeaderField: "Cache-Control") ?? ""])
            .joined(separator: ",").lowercased()
        return !cacheControl.contains("no-store")
    }

    func offerToCache() {
        guard let candidate = cacheCandidate, let cache = loader.configuration.urlCache else { return }
        let request = originalRequest
        let proposed = CachedURLResponse(
            response: candidate.response,
            data: candidate.data,
            userInfo: nil,
            storagePolicy: .allowed
        )
        if let accepted = ask({ $0.connection(self, willCacheResponse: proposed) }, ifNoDelegate: proposed) {
            cache.storeCachedResponse(accepted, for: request)
        }
    }
}
