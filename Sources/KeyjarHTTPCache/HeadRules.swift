public import Foundation

/// What a HEAD response does to the stored GET response of its URL (RFC 9111 §4.3.5).
public enum HeadFreshening: Sendable, Hashable {
    /// Not a 200, or nothing stored that the request could have been answered with: nothing.
    case none
    /// The validators match: the stored response with the HEAD response's fields (§3.2) and
    /// the HEAD's times.
    case update(StoredResponse)
    /// They do not: the stored response is to be taken as stale. It is removed: its body is
    /// no longer the representation, so it could not even serve a validation.
    case invalidate
}

extension HTTPCacheRules {
    /// Methods a stored GET response answers: GET, and HEAD with the GET's fields and no
    /// content (RFC 9111 §4: a HEAD request is answered from a stored GET response; RFC 9110
    /// §9.3.2: HEAD's fields are GET's). Only GET responses are stored.
    public static func isAnsweredFromStore(_ method: String) -> Bool { method == "GET" || method == "HEAD" }

    /// §4.3.5: a HEAD's 200 updates the stored GET response that could have answered it (its
    /// Vary matches) when the validator fields it carries (ETag, Last-Modified) have the stored
    /// values and its Content-Length, if any, is the stored one; otherwise the stored response
    /// is stale. A HEAD response without either validator proves nothing about the stored
    /// body, so it counts as a mismatch.
    public static func freshening(
        _ stored: StoredResponse?,
        byHeadStatus statusCode: Int,
        headers: HTTPHeaderFields,
        requestHeaders: HTTPHeaderFields,
        requestTime: Date,
        responseTime: Date
    ) -> HeadFreshening {
        guard statusCode == 200, let stored, stored.varyMatches(requestHeaders) else { return .none }
        var compared = 0
        for name in ["ETag", "Last-Modified"] {
            guard let received = headers[name]?.trimmingWhitespace else { continue }
            compared += 1
            guard stored.headers[name]?.trimmingWhitespace == received else { return .invalidate }
        }
        guard compared > 0 else { return .invalidate }
        if let length = headers["Content-Length"]?.trimmingWhitespace,
            stored.headers["Content-Length"]?.trimmingWhitespace != length
        {
            return .invalidate
        }
        return .update(updated(stored, notModified: headers, requestTime: requestTime, responseTime: responseTime))
    }
}
