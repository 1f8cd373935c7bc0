import Foundation

// Several stored responses for one URL, each selected by its request's values of the fields its
// Vary names (RFC 9111 §4.1): which one answers a request, how a request none of them answers is
// validated (§4.3.1), and which one a 304 to that validation picks (§4.3.4).
extension HTTPCacheRules {
    /// §4.1: the stored variant that may answer a request with `requestHeaders`, as an index
    /// into `variants`; nil when none matches. When several match (responses stored under
    /// different Vary lists), the most recent by Date answers, then the last received.
    public static func selectVariant(_ variants: [StoredResponse], for requestHeaders: HTTPHeaderFields) -> Int? {
        variants.indices.filter { variants[$0].varyMatches(requestHeaders) }.max { a, b in
            (variants[a].date, variants[a].responseTime) < (variants[b].date, variants[b].responseTime)
        }
    }

    /// §4.3.1: for a request no stored variant answers, the conditional field that lets the
    /// server pick one of them: `If-None-Match` listing every stored variant's entity tag. Nil
    /// (load as usual) when no variant has an entity tag, when the policy ignores the cache or
    /// the request does not want it (no-store), and when the request sets `If-None-Match`
    /// itself: its own condition goes as it is and its 304 is its own.
    public static func variantValidation(
        policy: RequestCachePolicy,
        requestHeaders: HTTPHeaderFields,
        variants: [StoredResponse]
    ) -> HTTPHeaderFields? {
        guard policy == .useProtocol || policy == .returnCacheDataElseLoad,
            !requestHeaders.contains("If-None-Match")
        else { return nil }
        let request = CacheControl(requestHeaders, isRequest: true)
        guard !request.noStore, !request.onlyIfCached else { return nil }
        var tags: [String] = []
        for variant in variants {
            for tag in variant.headers.listMembers("ETag") where !tags.contains(tag) { tags.append(tag) }
        }
        guard !tags.isEmpty else { return nil }
        return HTTPHeaderFields([("If-None-Match", tags.joined(separator: ", "))])
    }

    /// §4.3.4: the stored variant a 304 (its header fields `notModified`) selects among those
    /// its validation listed, as an index into `variants`; nil when it names none of them (the
    /// 304 then updates nothing). A strong entity tag selects the variant with the same tag; a
    /// weak one the most recent variant whose tag matches weakly; a 304 without an entity tag
    /// but with Last-Modified the most recent variant with that Last-Modified; a 304 without
    /// validators only a single variant that has none either.
    public static func variantSelected(
        byNotModified notModified: HTTPHeaderFields,
        among variants: [StoredResponse]
    )
        -> Int?
    {
        func mostRecent(_ indices: [Int]) -> Int? {
            indices.max {
                (variants[$0].date, variants[$0].responseTime) < (variants[$1].date, variants[$1].responseTime)
            }
        }
        if let tag = notModified["ETag"]?.trimmingWhitespace {
            let weak = tag.hasPrefix("W/")
            let opaque = weak ? String(tag.dropFirst(2)) : tag
            return mostRecent(
                variants.indices.filter { index in
                    guard let stored = variants[index].headers["ETag"]?.trimmingWhitespace else { return false }
                    // Strong comparison (RFC 9110 §8.8.3.2): both strong and equal.
                    if !weak { return stored == tag }
                    return (stored.hasPrefix("W/") ? String(stored.dropFirst(2)) : stored) == opaque
                }
            )
        }
        if let modified = notModified["Last-Modified"] {
            return mostRecent(variants.indices.filter { variants[$0].headers["Last-Modified"] == modified })
        }
        if variants.count == 1, !variants[0].hasValidators { return 0 }
        return nil
    }
}

extension StoredResponse {
    /// The same response as the answer to a request with `requestHeaders`: its Vary values
    /// become that request's (a variant a 304 selected for a request it did not match, kept so
    /// that such a request finds it next time).
    public func selected(for requestHeaders: HTTPHeaderFields) -> StoredResponse {
        var result = self
        result.varyValues = Self.varyValues(of: headers, for: requestHeaders)
        return result
    }
}
