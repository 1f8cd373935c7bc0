public import Foundation

/// A cookie file that arrives in batches, planned as one import.
///
/// Each batch goes into a trial copy of the jar, with the jar's limits applied after it, as if
/// the batches were imported one after the other; what the store is to do is the net change
/// from the jar the plan began with to the trial. A cookie that one batch adds and a later one
/// pushes out again is in no change, so neither the store nor anyone told of the import sees
/// it: a 250,000-line file into a jar of 3,300 cookies comes to at most 3,300 additions and
/// 3,300 removals, not a quarter of a million of each. The plan holds the trial and the net
/// change only, about twice the jar's limits whatever the size of the file.
///
/// ```swift
/// var plan = CookieImportPlan(jar: jar)
/// for batch in batches { report(plan.add(batch.cookies, problems: batch.problems)) }
/// let outcome = plan.outcome  // apply outcome.changes, in order
/// ```
public struct CookieImportPlan: Sendable {
    /// The jar as it will be once the plan is applied (with nobody else writing meanwhile).
    public private(set) var trial: CookieJar
    /// The net change so far, at most one per cookie identity, in order of first appearance.
    public private(set) var changes: [CookieChange] = []

    public init(jar: CookieJar) {
        trial = jar
    }

    /// Tries the next batch of the file. The report says what the batch held (imported,
    /// expired, the problems by line); what the store keeps is only known from
    /// ``outcome``, so its `added`, `replaced` and `evicted` stay 0 and it carries no changes.
    public mutating func add(
        _ entries: [NumberedCookie],
        problems: [CookieFileProblem] = [],
        now: Date = Date()
    ) -> CookieImportReport {
        var report = trial.importCookies(entries, problems: problems, now: now)
        // Netting the batch into what came before keeps one change per identity: the plan
        // never grows past the cookies the jar and the trial hold between them.
        changes = CookieChange.net(changes + report.changes)
        report.changes = []
        report.added = 0
        report.replaced = 0
        report.evicted = 0
        return report
    }

    /// What the whole file comes to: the counts of the net change, and the change itself with
    /// its removals first. Changes of different cookies commute, and in that order a jar that
    /// is given them part by part never holds more cookies than before or after, so every
    /// part is within the jar's limits.
    public var outcome: CookieImportReport {
        var report = CookieImportReport()
        var removals: [CookieChange] = []
        var others: [CookieChange] = []
        for change in changes {
            switch change {
            case .added:
                report.added += 1
                others.append(change)
            case .replaced:
                report.replaced += 1
                others.append(change)
            case .removed(_, let cause):
                if cause == .evicted { report.evicted += 1 }
                removals.append(change)
            }
        }
        report.changes = removals + others
        return report
    }
}
