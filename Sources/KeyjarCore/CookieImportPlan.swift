public import FoundationEssentials

/// A cookie file that arrives in batches, planned as one import.
///
/// Each batch goes into a trial copy of the jar, with the jar's limits applied after it, as if
/// the batches were imported one after the other; what the store is to do is the net change
/// from the jar the plan began with to the trial. A cookie that one batch adds and a later one
/// pushes out again is in no change, so neither the store nor anyone told of the import sees
/// it: a 250,000-line file into a jar of 3,300 cookies comes to at most 3,300 additions and
/// 3,300 removals, not a quarter of a million of each. The plan holds the jar it began with and
/// the trial, each within the jar's limits, whatever the size of the file; the change is
/// worked out from the two at the end.
///
/// ```swift
/// var plan = CookieImportPlan(jar: jar)
/// for batch in batches { report(plan.add(batch.cookies, problems: batch.problems)) }
/// let outcome = plan.outcome  // apply outcome.changes, in order
/// ```
public struct CookieImportPlan: Sendable {
    /// The jar the plan began with.
    public let original: CookieJar
    /// The jar as it will be once the plan is applied (with nobody else writing meanwhile).
    public private(set) var trial: CookieJar
    private var lastTried: Date

    public init(jar: CookieJar) {
        original = jar
        trial = jar
        lastTried = Date()
    }

    /// Tries the next batch of the file. The report says what the batch held (imported,
    /// expired, the problems by line); what the store keeps is only known from
    /// ``outcome``, so its `added`, `replaced` and `evicted` stay 0 and it carries no changes.
    public mutating func add(
        _ entries: [NumberedCookie],
        problems: [CookieFileProblem] = [],
        now: Date = Date()
    ) -> CookieImportReport {
        lastTried = now
        // The batch's own changes are not kept: the outcome compares the two jars, so a batch
        // costs no more memory than the jar's limits and the batch itself.
        return trial.importCookies(entries, problems: problems, now: now, keepingChanges: false)
    }

    /// What the whole file comes to: the counts of the net change, and the change itself with
    /// its removals first. Changes of different cookies commute, and in that order a jar that
    /// is given them part by part never holds more cookies than before or after, so every
    /// part is within the jar's limits.
    public var outcome: CookieImportReport {
        var report = CookieImportReport()
        var before: [Cookie.Identity: Cookie] = [:]
        for cookie in original.allCookies { before[cookie.identity] = cookie }
        var removals: [CookieChange] = []
        var others: [CookieChange] = []
        for cookie in trial.allCookies {
            switch before.removeValue(forKey: cookie.identity) {
            case nil:
                report.added += 1
                others.append(.added(cookie))
            case let old? where old != cookie:
                report.replaced += 1
                others.append(.replaced(old: old, new: cookie))
            case _?:
                break
            }
        }
        // What is left of the original jar was pushed out by the file (or had expired).
        for cookie in original.allCookies where before[cookie.identity] != nil {
            let expired = cookie.isExpired(at: lastTried)
            if !expired { report.evicted += 1 }
            removals.append(.removed(cookie, cause: expired ? .expired : .evicted))
        }
        report.changes = removals + others
        return report
    }
}
