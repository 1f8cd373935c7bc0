import Foundation
import KeyjarHTTPCache

/// Response and request header blocks ("Name: value" lines, a blank line between the two):
/// every cache rule runs without a crash, lifetimes and ages are finite and never negative,
/// and a response that is not storable is never served under the protocol's policy.
func fuzzCacheHeaders(_ bytes: [UInt8]) {
    let text = String(decoding: bytes, as: UTF8.self)
    let blocks = text.split(separator: "\n\n", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
    func fields(_ block: String) -> HTTPHeaderFields {
        HTTPHeaderFields(
            block.split(separator: "\n").compactMap { line in
                guard let colon = line.firstIndex(of: ":") else { return nil }
                return (String(line[..<colon]), String(line[line.index(after: colon)...]))
            }
        )
    }
    let response = fields(blocks[0])
    let request = fields(blocks.count > 1 ? blocks[1] : "")
    let start = Date(timeIntervalSince1970: 1_700_000_000)
    let stored = StoredResponse(
        statusCode: 200,
        headers: HTTPCacheRules.fieldsToStore(response),
        requestTime: start,
        responseTime: start.addingTimeInterval(1),
        requestHeaders: request
    )
    for offset in [0, 30, 86_400 * 400] as [TimeInterval] {
        let freshness = CacheFreshness(of: stored, at: start.addingTimeInterval(offset))
        fuzzCheck(freshness.lifetime.isFinite && freshness.lifetime >= 0, "lifetime \(freshness.lifetime)")
        fuzzCheck(freshness.age.isFinite && freshness.age >= 0, "age \(freshness.age)")
        for policy in [RequestCachePolicy.useProtocol, .returnCacheDataElseLoad, .returnCacheDataDontLoad] {
            let decision = HTTPCacheRules.decision(
                policy: policy,
                method: "GET",
                requestHeaders: request,
                stored: stored,
                now: start.addingTimeInterval(offset)
            )
            if case .validate(let conditional) = decision {
                fuzzCheck(!conditional.fields.isEmpty, "validation without a validator")
            }
        }
    }
    _ = HTTPCacheRules.storability(method: "GET", requestHeaders: request, statusCode: 200, responseHeaders: response)
    _ = HTTPCacheRules.updated(stored, notModified: request, requestTime: start, responseTime: start)
    if let url = URL(string: "https://example.com/a/b") {
        for target in HTTPCacheRules.invalidatedURLs(
            method: "POST",
            statusCode: 201,
            requestURL: url,
            responseHeaders: response
        ) {
            fuzzCheck(target.host == "example.com", "invalidated another origin: \(target)")
        }
    }
}

/// HTTP-date (RFC 9110 §5.6.7): any text parses to a finite instant or to nothing, and what
/// parses formats as an IMF-fixdate that parses back to the same instant (a leap second aside,
/// which formats as the next minute's first second: the same instant).
func fuzzHTTPDate(_ bytes: [UInt8]) {
    let text = String(decoding: bytes, as: UTF8.self)
    let now = Date(timeIntervalSince1970: 1_700_000_000)
    guard let date = HTTPDate.parse(text, now: now) else { return }
    fuzzCheck(date.timeIntervalSince1970.isFinite, "a non-finite date from \(text.debugDescription)")
    let formatted = HTTPDate.format(date)
    fuzzCheck(HTTPDate.parse(formatted, now: now) == date, "\(formatted) does not parse back to \(date)")
}
