public import FoundationEssentials

extension CookieJar {
    /// Inserts cookies read from a file, reporting each refusal with its line number.
    public mutating func importCookies(
        _ entries: [NumberedCookie],
        problems: [CookieFileProblem] = [],
        now: Date = Date()
    ) -> CookieImportReport {
        importCookies(entries, problems: problems, now: now, keepingChanges: true)
    }

    /// - Parameter keepingChanges: false when the caller works out the change itself
    ///   (``CookieImportPlan``): the report then has no changes and no counts of them, and
    ///   the import does not hold an insertion and an eviction for every cookie of the batch.
    mutating func importCookies(
        _ entries: [NumberedCookie],
        problems: [CookieFileProblem],
        now: Date,
        keepingChanges: Bool
    ) -> CookieImportReport {
        var report = CookieImportReport()
        report.problems = problems
        // The limits are enforced once, after the whole batch: per insertion, a 100,000-line
        // file past the total limit sorted the whole jar every 300 cookies.
        var touched = Set<LimitScope>()
        var changes: [CookieChange] = []
        for entry in entries {
            if entry.cookie.isExpired(at: now) {
                report.expired += 1
                continue
            }
            switch insert(entry.cookie, keepingCreation: entry.hasCreationTime, now: now, enforcingLimits: false) {
            case .success(let made):
                report.imported += 1
                if let stored = made.first?.cookie {
                    touched.insert(LimitScope(site: siteKey(for: stored.domain), partition: stored.partitionKey))
                }
                if keepingChanges { changes += made }
            case .failure(let rejection):
                report.problems.append(CookieFileProblem(line: entry.line, message: rejection.description))
            }
        }
        let evictions = enforceLimits(scopes: touched, now: now)
        guard keepingChanges else {
            report.problems.sort { $0.line < $1.line }
            return report
        }
        changes += evictions
        // What the import comes to: a cookie it added and the limits pushed out again is no
        // change for the store or anyone told of it.
        report.changes = CookieChange.net(changes)
        for change in report.changes {
            switch change {
            case .added: report.added += 1
            case .replaced: report.replaced += 1
            case .removed(_, .evicted): report.evicted += 1
            case .removed: break
            }
        }
        report.problems.sort { $0.line < $1.line }
        return report
    }
}
