public import Foundation

/// A stored response's freshness lifetime and current age (RFC 9111 §4.2), for a private cache.
public struct CacheFreshness: Sendable, Hashable {
    /// How long the response is fresh from its generation, in seconds.
    public var lifetime: TimeInterval
    /// How old it is now, in seconds.
    public var age: TimeInterval
    /// Whether the lifetime came from the heuristic (§4.2.2), not from the origin.
    public var isHeuristic: Bool

    public var isFresh: Bool { lifetime > age }

    /// How long ago it became stale, in seconds (0 while fresh): what RFC 5861's windows and a
    /// request's max-stale are measured against.
    public var staleness: TimeInterval { max(0, age - lifetime) }

    /// Status codes a cache may give a heuristic lifetime to (RFC 9110 §15.1).
    public static let heuristicallyCacheable: Set<Int> = [200, 203, 204, 206, 300, 301, 308, 404, 405, 410, 414, 501]

    /// The heuristic: this fraction of the time since Last-Modified (the customary 10%, §4.2.2),
    /// at most a day.
    public static let heuristicFraction = 0.1
    public static let heuristicCeiling: TimeInterval = 86_400

    public init(of response: StoredResponse, at now: Date) {
        let control = CacheControl(response.headers)
        (lifetime, isHeuristic) = Self.lifetime(response, control)
        age = Self.currentAge(response, at: now)
    }

    /// §4.2.1: max-age, else Expires − Date, else the heuristic for a response that allows it;
    /// an invalid max-age or Expires makes the response stale.
    static func lifetime(_ response: StoredResponse, _ control: CacheControl) -> (TimeInterval, Bool) {
        if control.hasInvalidMaxAge { return (0, false) }
        if let maxAge = control.maxAge { return (TimeInterval(maxAge), false) }
        let expiresLines = response.headers.values("Expires")
        if !expiresLines.isEmpty {
            // Two Expires lines, or one that is not a date: already expired (§5.3).
            guard expiresLines.count == 1, let expires = HTTPDate.parse(expiresLines[0]) else { return (0, false) }
            return (max(0, expires.timeIntervalSince(response.date)), false)
        }
        guard heuristicallyCacheable.contains(response.statusCode) || control.isPublic || control.isPrivate,
            // A Last-Modified that is not an HTTP-date gives no heuristic.
            let modified = response.lastModified
        else { return (0, false) }
        let sinceModified = response.date.timeIntervalSince(modified)
        return (min(heuristicCeiling, max(0, sinceModified * heuristicFraction)), true)
    }

    /// §4.2.3's current_age: the Age received, corrected by the time the response took to
    /// arrive (response_time − request_time: a slow response may have aged on the way), or
    /// the age the Date gives, whichever is more, plus the time it has been stored since.
    static func currentAge(_ response: StoredResponse, at now: Date) -> TimeInterval {
        let ageValue = ageValue(response.headers)
        let apparentAge = max(0, response.responseTime.timeIntervalSince(response.date))
        let responseDelay = max(0, response.responseTime.timeIntervalSince(response.requestTime))
        let correctedAgeValue = TimeInterval(ageValue) + responseDelay
        let correctedInitialAge = max(apparentAge, correctedAgeValue)
        let residentTime = max(0, now.timeIntervalSince(response.responseTime))
        return correctedInitialAge + residentTime
    }

    /// §5.1: the Age field's value in seconds. Of a list (several lines, or commas) the first
    /// member counts; a value that is not delta-seconds is ignored, as if there were no Age
    /// ("a cache SHOULD ignore the field"), which makes it 0.
    public static func ageValue(_ headers: HTTPHeaderFields) -> Int {
        headers.listMembers("Age").first.flatMap(CacheControl.deltaSeconds) ?? 0
    }
}
