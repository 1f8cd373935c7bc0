public import Foundation

/// One line (or JSON entry) of a cookie file that was not imported, and why.
public struct CookieFileProblem: Error, Sendable, Hashable, CustomStringConvertible {
    /// 1-based line number in a cookies.txt file, or 1-based entry number in a JSON array.
    public var line: Int
    public var message: String

    public init(line: Int, message: String) {
        self.line = line
        self.message = message
    }

    public var description: String { "line \(line): \(message)" }
}

/// What an import did: nothing is dropped silently, every skipped line is accounted for.
public struct CookieImportReport: Sendable, Hashable {
    /// Cookies added or replacing an existing one.
    public var imported = 0
    /// Well-formed cookies whose expiry had already passed.
    public var expired = 0
    /// Lines refused, with their numbers.
    public var problems: [CookieFileProblem] = []
    /// The jar changes, for a store to persist.
    public var changes: [CookieChange] = []

    public init() {}
}

/// A cookie read from a file, with the line it came from.
public struct NumberedCookie: Sendable, Hashable {
    public var line: Int
    public var cookie: Cookie
    /// False when the file does not record creation times (cookies.txt): an import then gives
    /// the cookies fresh ones in file order.
    public var hasCreationTime: Bool

    public init(line: Int, cookie: Cookie, hasCreationTime: Bool = true) {
        self.line = line
        self.cookie = cookie
        self.hasCreationTime = hasCreationTime
    }
}

extension CookieJar {
    /// Inserts cookies read from a file, reporting each refusal with its line number.
    public mutating func importCookies(
        _ entries: [NumberedCookie], problems: [CookieFileProblem] = [], now: Date = Date()
    ) -> CookieImportReport {
        var report = CookieImportReport()
        report.problems = problems
        // The limits are enforced once, after the whole batch: per insertion, a 100,000-line
        // file past the total limit sorted the whole jar every 300 cookies.
        var touched = Set<String>()
        var changes: [CookieChange] = []
        for entry in entries {
            if entry.cookie.isExpired(at: now) {
                report.expired += 1
                continue
            }
            switch insert(entry.cookie, keepingCreation: entry.hasCreationTime, now: now, enforcingLimits: false) {
            case .success(let made):
                report.imported += 1
                changes += made
                if let stored = made.first?.cookie { touched.insert(siteKey(for: stored.domain)) }
            case .failure(let rejection):
                report.problems.append(CookieFileProblem(line: entry.line, message: rejection.description))
            }
        }
        changes += enforceLimits(sites: touched, now: now)
        // What the import comes to: a cookie it added and the limits pushed out again is no
        // change for the store or anyone told of it.
        report.changes = CookieChange.net(changes)
        report.problems.sort { $0.line < $1.line }
        return report
    }
}

