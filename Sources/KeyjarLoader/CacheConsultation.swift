import Foundation
import FoundationNetworking
import KeyjarHTTPCache
import KeyjarResponseCache

/// A stored response answering a request: the status and fields it is delivered with, its Age,
/// and which part of the stored body goes with it.
struct CachedAnswer {
    enum Content: Equatable {
        /// No content: a HEAD's answer, or a 416.
        case none
        case whole
        /// These bytes of the stored body (a 206).
        case slice(ClosedRange<Int>)
    }

    var entry: CachedEntry
    var age: TimeInterval
    var body: CachedBody
    var content: Content

    /// A stored response and body, as found.
    typealias Found = (entry: CachedEntry, body: CachedBody)

    /// `found` reused without validation, whole: without the fields a qualified no-cache names.
    static func whole(_ found: Found, age: TimeInterval) -> CachedAnswer {
        var entry = found.entry
        entry.response.headers = HTTPCacheRules.fieldsToReuse(found.entry.response.headers)
        return CachedAnswer(entry: entry, age: age, body: found.body, content: .whole)
    }
}

/// What the response cache makes of a request before it goes out (``LoadCaching/consult(_:requestHeaders:in:now:)``),
/// decided without delivering anything: the connection carries it out.
enum CacheConsultation {
    /// The request goes out: as it is, or as `sending` (with the validators the cache added).
    case load(sending: URLRequest?)
    /// A stored response answers the request for `url`; `revalidation` set when it is served
    /// stale while a background request revalidates it (stale-while-revalidate).
    case answer(CachedAnswer, url: URL, revalidation: Revalidation?)
    /// The request may not load and nothing stored answers it.
    case fail(String)

    /// The stored entry, as found, and the conditional fields that revalidate it.
    struct Revalidation {
        var entry: CachedEntry
        var conditional: HTTPHeaderFields
    }
}

extension LoadCaching {
    static func policy(_ policy: URLRequest.CachePolicy) -> RequestCachePolicy {
        switch policy {
        case .returnCacheDataElseLoad: return .returnCacheDataElseLoad
        case .returnCacheDataDontLoad: return .returnCacheDataDontLoad
        case .reloadIgnoringLocalCacheData, .reloadIgnoringLocalAndRemoteCacheData, .reloadRevalidatingCacheData:
            return .reloadIgnoringCache
        default: return .useProtocol
        }
    }

    /// Whether the request (or the loader's additional fields) sets Accept-Encoding: the loader
    /// then leaves content codings to the caller (CurlTransfer), and a stored body, which the
    /// loader decoded, is not what it asked for; nor is a coded body it gets one to store.
    static func callerUndoesCodings(_ requestHeaders: HTTPHeaderFields) -> Bool {
        requestHeaders.contains("Accept-Encoding")
    }

    /// Before a hop's first attempt: the request's cache policy against `cache` (nil: the loader
    /// has none), by KeyjarHTTPCache's rules. A conditional request or a reload that goes out is
    /// remembered here (what its response then does: ``takeValidated(_:)``, ``takeStaleEntry()``).
    /// `requestHeaders` are the request's fields as they will be sent.
    mutating func consult(
        _ request: URLRequest,
        requestHeaders: HTTPHeaderFields,
        in cache: ResponseCache?,
        now: Date
    ) -> CacheConsultation {
        let policy = Self.policy(request.cachePolicy)
        let method = request.httpMethod ?? "GET"
        guard let cache, let url = request.url else {
            guard policy == .returnCacheDataDontLoad else { return .load(sending: nil) }
            return .fail("No cache is configured and the request may not load")
        }
        beginHop()
        var found = HTTPCacheRules.isAnsweredFromStore(method) ? cache.lookup(url, requestHeaders: requestHeaders) : nil
        if let hit = found, Self.callerUndoesCodings(requestHeaders),
            hit.entry.response.headers.contains("Content-Encoding")
        {
            // Stored as the loader decoded it; this caller wants the bytes as coded.
            hit.body.close()
            found = nil
        }
        let decision = HTTPCacheRules.decision(
            policy: policy,
            method: method,
            requestHeaders: requestHeaders,
            stored: found?.entry.response,
            now: now
        )
        if found == nil,
            let piece = Self.answerFromPiece(
                of: url,
                method: method,
                policy: policy,
                requestHeaders,
                in: cache,
                now: now
            )
        {
            return .answer(piece, url: url, revalidation: nil)
        }
        switch decision {
        case .serve(let age):
            guard let found else { return .load(sending: nil) }
            guard let answer = Self.answer(found, age: age, method: method, policy: policy, requestHeaders) else {
                return .load(sending: nil)
            }
            return .answer(answer, url: url, revalidation: nil)
        case .serveStale(let age, let revalidation):
            // A range the stored body cannot answer goes to the server as any load does.
            guard let found, let answer = Self.answer(found, age: age, method: method, policy: policy, requestHeaders)
            else { return .load(sending: nil) }
            return .answer(answer, url: url, revalidation: .init(entry: found.entry, conditional: revalidation))
        case .fail:
            found?.body.close()
            return .fail("The response is not in the cache and the request may not load")
        case .validate(let conditional):
            found?.body.close()
            guard let found else { return .load(sending: nil) }
            var validating = request
            for field in conditional where request.value(forHTTPHeaderField: field.name) == nil {
                validating.setValue(field.value, forHTTPHeaderField: field.name)
            }
            validate(found.entry, unconditional: request)
            return .load(sending: validating)
        case .load:
            found?.body.close()
            // A stale entry may answer if the reload fails (stale-if-error); a HEAD's never
            // does, its body would go with it.
            if policy == .useProtocol, method != "HEAD", let found { reload(found.entry) }
            guard found == nil, HTTPCacheRules.isCacheableMethod(method), !Self.callerUndoesCodings(requestHeaders)
            else { return .load(sending: nil) }
            return .load(
                sending: validateVariants(of: url, request: request, policy: policy, requestHeaders, in: cache)
            )
        }
    }

    /// A hit (the cache's decision is to serve `found`), as the request asks for it: its fields
    /// (a HEAD), the whole, a 206 of its slice, a 416. Nil when the stored body cannot answer
    /// the request's ranges, which then go to the server.
    private static func answer(
        _ found: CachedAnswer.Found,
        age: TimeInterval,
        method: String,
        policy: RequestCachePolicy,
        _ requestHeaders: HTTPHeaderFields
    ) -> CachedAnswer? {
        var whole = CachedAnswer.whole(found, age: age)
        let entry = whole.entry
        if method == "HEAD" {
            whole.content = .none
            return whole
        }
        switch ByteRanges.answer(
            method: method,
            requestHeaders: requestHeaders,
            stored: entry.response,
            bodyLength: found.body.size
        ) {
        case .whole:
            return whole
        case .forward
        where policy == .returnCacheDataDontLoad || CacheControl(requestHeaders, isRequest: true).onlyIfCached:
            // The request may not reach the network: the whole response answers a range too
            // (RFC 9110 §14.2 lets a range request be answered whole).
            return whole
        case .forward:
            found.body.close()
            return nil
        case .unsatisfiable(let headers):
            return CachedAnswer(
                entry: entry.answering(status: 416, headers: headers),
                age: age,
                body: found.body,
                content: .none
            )
        case .partial(let range, let headers):
            return CachedAnswer(
                entry: entry.answering(status: 206, headers: headers),
                age: age,
                body: found.body,
                content: .slice(range)
            )
        }
    }

    /// A GET's single range answered from the stored piece of its variant (a 206, RFC 9111
    /// §3.3) when no complete response is stored for it, the cache's decision about the piece
    /// is to serve it (fresh, or the policy takes any) and the range lies within it. Nil lets
    /// the request go to the server as it is: a piece is never validated, and no request for
    /// the missing part is made.
    private static func answerFromPiece(
        of url: URL,
        method: String,
        policy: RequestCachePolicy,
        _ requestHeaders: HTTPHeaderFields,
        in cache: ResponseCache,
        now: Date
    ) -> CachedAnswer? {
        guard method == "GET", requestHeaders.contains("Range"),
            let piece = cache.lookupPiece(url, requestHeaders: requestHeaders)
        else { return nil }
        guard
            case .serve(let age) = HTTPCacheRules.decision(
                policy: policy,
                method: method,
                requestHeaders: requestHeaders,
                stored: piece.entry.response,
                now: now
            ),
            let answer = ByteRanges.answer(
                fromPiece: piece.entry.response,
                method: method,
                requestHeaders: requestHeaders,
                bodyLength: piece.body.size
            )
        else {
            piece.body.close()
            return nil
        }
        // Reused without validation: without the fields a qualified no-cache names.
        let entry = piece.entry.answering(status: 206, headers: HTTPCacheRules.fieldsToReuse(answer.headers))
        return CachedAnswer(entry: entry, age: age, body: piece.body, content: .slice(answer.body))
    }

    /// A request no stored variant of its URL answers: when the variants have entity tags, it
    /// goes with `If-None-Match` listing them, so that a 304 can select one (§4.3.1). The
    /// request to send; nil when it goes as it is.
    private mutating func validateVariants(
        of url: URL,
        request: URLRequest,
        policy: RequestCachePolicy,
        _ requestHeaders: HTTPHeaderFields,
        in cache: ResponseCache
    ) -> URLRequest? {
        let variants = cache.variants(of: url)
        guard !variants.isEmpty,
            let conditional = HTTPCacheRules.variantValidation(
                policy: policy,
                requestHeaders: requestHeaders,
                variants: variants.map(\.response)
            )
        else { return nil }
        var validating = request
        for field in conditional { validating.setValue(field.value, forHTTPHeaderField: field.name) }
        validateVariants(variants, unconditional: request)
        return validating
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
