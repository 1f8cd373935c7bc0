import Foundation
import FoundationNetworking
import KeyjarHTTPCache
import KeyjarResponseCache

// A Range request answered from a stored piece (a 206, RFC 9111 §3.3) when no complete
// response is stored for it. The rules are KeyjarHTTPCache's (HTTPCacheRules for freshness,
// ByteRanges for the range); this carries them out.
extension LoaderConnection {
    /// Answers a GET's single range from the stored piece of its variant, when the cache's
    /// decision about the piece is to serve it (fresh, or the policy takes any) and the range
    /// lies within it. True when the load was answered; false lets it go to the server as it
    /// is (a piece is never validated, and no request for the missing part is made).
    func servePiece(
        of url: URL,
        request: URLRequest,
        policy: RequestCachePolicy,
        requestHeaders: HTTPHeaderFields,
        in cache: ResponseCache
    ) -> Bool {
        let method = request.httpMethod ?? "GET"
        guard method == "GET", requestHeaders.contains("Range"),
            let piece = cache.lookupPiece(url, requestHeaders: requestHeaders)
        else { return false }
        guard
            case .serve(let age) = HTTPCacheRules.decision(
                policy: policy,
                method: method,
                requestHeaders: requestHeaders,
                stored: piece.entry.response,
                now: Date()
            ),
            let answer = ByteRanges.answer(
                fromPiece: piece.entry.response,
                method: method,
                requestHeaders: requestHeaders,
                bodyLength: piece.body.size
            )
        else {
            closeBody(piece.body)
            return false
        }
        // Reused without validation: without the fields a qualified no-cache names.
        let entry = piece.entry.answering(status: 206, headers: HTTPCacheRules.fieldsToReuse(answer.headers))
        guard deliverCached(entry, age: age, url: url) != nil else {
            closeBody(piece.body)
            return true
        }
        serveSlice(answer.body, of: piece.body, url: url)
        return true
    }
}
