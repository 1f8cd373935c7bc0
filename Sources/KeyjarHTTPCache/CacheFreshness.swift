public import Foundation
import KeyjarCore

/// A stored response's freshness lifetime and current age (RFC 9111 §4.2), for a private cache.
public struct CacheFreshness: Sendable, Hashable {
    /// How long the response is fresh from its generation, in seconds.
    public var lifetime: TimeInterval
    /// How old it is now, in seconds.
    public var age: TimeInterval
    /// Whether the lifetime came from the heuristic (§4.2.2), not from the origin.
    public var isHeuristic: Bool

    public var isFresh: Bool { lifetime > age }

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
            guard expiresLines.count == 1, let expires = CookieDate.parse(expiresLines[0]) else { return (0, false) }
            return (max(0, expires.timeIntervalSince(response.date)), false)
        }
        guard heuristicallyCacheable.contains(response.statusCode) || control.isPublic || control.isPrivate,
            let modified = response.headers["Last-Modified"].flatMap(CookieDate.parse)
        else { return (0, false) }
        let sinceModified = response.date.timeIntervalSince(modified)
        return (min(heuristicCeiling, max(0, sinceModified * heuristicFraction)), true)
    }

    /// §4.2.3's current_age.
    static func currentAge(_ response: StoredResponse, at now: Date) -> TimeInterval {
        let ageValue = response.headers["Age"].flatMap { CacheControl.deltaSeconds($0.trimmingWhitespace) } ?? 0
        let apparentAge = max(0, response.responseTime.timeIntervalSince(response.date))
        let responseDelay = max(0, response.responseTime.timeIntervalSince(response.requestTime))
        let correctedAgeValue = TimeInterval(ageValue) + responseDelay
        let correctedInitialAge = max(apparentAge, correctedAgeValue)
        let residentTime = max(0, now.timeIntervalSince(response.responseTime))
        return correctedInitialAge + residentTime
    }
}
