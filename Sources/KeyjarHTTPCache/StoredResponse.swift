public import Foundation

/// What a cache keeps of a response to decide about it later: status, header fields, when the
/// request went and the response came, and the request's values of the fields its Vary names.
/// The body is the store's business, not this value's.
public struct StoredResponse: Sendable, Hashable {
    public var statusCode: Int
    public var headers: HTTPHeaderFields
    /// When the request that got this response was sent (RFC 9111 §4.2.3's request_time).
    public var requestTime: Date
    /// When the response was received (response_time).
    public var responseTime: Date
    /// For each field the response's Vary names (lowercased), the request's value (nil: absent).
    public var varyValues: [String: String?]

    public init(
        statusCode: Int,
        headers: HTTPHeaderFields,
        requestTime: Date,
        responseTime: Date,
        requestHeaders: HTTPHeaderFields
    ) {
        self.statusCode = statusCode
        self.headers = headers
        self.requestTime = requestTime
        self.responseTime = responseTime
        varyValues = Self.varyValues(of: headers, for: requestHeaders)
    }

    /// A response as a store kept it, its request's Vary values included.
    public init(
        statusCode: Int,
        headers: HTTPHeaderFields,
        requestTime: Date,
        responseTime: Date,
        varyValues: [String: String?]
    ) {
        self.statusCode = statusCode
        self.headers = headers
        self.requestTime = requestTime
        self.responseTime = responseTime
        self.varyValues = varyValues
    }

    /// The lowercased field names `Vary` lists (`*` included).
    public var varyNames: [String] { headers.listMembers("Vary").map { $0.lowercased() } }

    /// Whether a request with `requestHeaders` may be answered by this response (§4.1): each
    /// field Vary names has the same value (whitespace around commas aside), or is absent in
    /// both; `Vary: *` never matches.
    public func varyMatches(_ requestHeaders: HTTPHeaderFields) -> Bool {
        Self.varyValues(of: headers, for: requestHeaders) == varyValues && !varyNames.contains("*")
    }

    static func varyValues(of headers: HTTPHeaderFields, for request: HTTPHeaderFields) -> [String: String?] {
        var values: [String: String?] = [:]
        for name in headers.listMembers("Vary").map({ $0.lowercased() }) where name != "*" {
            values[name] = request.contains(name) ? request.listMembers(name).joined(separator: ",") : nil
        }
        return values
    }

    /// The response's Date, else the time it was received (§4.2.3: a recipient with a clock
    /// adds one). A Date that is not one HTTP-date counts as absent (RFC 9110 §6.6.1: a
    /// recipient with a clock replaces an invalid one).
    public var date: Date {
        let lines = headers.values("Date")
        guard lines.count == 1, let date = HTTPDate.parse(lines[0], now: responseTime) else { return responseTime }
        return date
    }

    /// Last-Modified when it is one HTTP-date; nil otherwise (no heuristic, no If-Modified-Since).
    public var lastModified: Date? {
        let lines = headers.values("Last-Modified")
        guard lines.count == 1 else { return nil }
        return HTTPDate.parse(lines[0], now: responseTime)
    }

    /// The validators a conditional request can use (§4.3.1): If-None-Match with the entity
    /// tag, If-Modified-Since with Last-Modified. Empty when there are none.
    public var validators: HTTPHeaderFields {
        var fields = HTTPHeaderFields()
        if let tag = headers["ETag"] { fields.append("If-None-Match", tag) }
        if let modified = headers["Last-Modified"], lastModified != nil {
            fields.append("If-Modified-Since", modified)
        }
        return fields
    }

    public var hasValidators: Bool { !validators.fields.isEmpty }
}
