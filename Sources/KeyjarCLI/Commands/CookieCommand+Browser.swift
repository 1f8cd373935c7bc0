import ArgumentParser
import Foundation
import Glibc
import Keyjar
import KeyjarBrowserCookies
import KeyjarCodec
import KeyjarCommands
import KeyjarCore

/// `--from-browser BROWSER[:PROFILE]` and `--container`, checked as options are.
struct BrowserSelection {
    var browser: Browser
    var profile: String?
    var container: String?

    init(_ text: String, container: String?) throws(ValidationError) {
        // The first colon: a profile's name or path may hold more.
        let name = text.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
        guard let browser = Browser(name: String(name[0])) else {
            throw ValidationError(
                "--from-browser '\(UserInput.shown(String(name[0])))' is not a browser Keyjar reads; known: "
                    + Browser.allCases.map(\.rawValue).joined(separator: ", ") + "."
            )
        }
        if container != nil, browser != .firefox { throw ValidationError("--container is Firefox's only.") }
        self.browser = browser
        profile = name.count > 1 && !name[1].isEmpty ? String(name[1]) : nil
        self.container = container
    }
}

/// `keyjar cookie import --from-browser`: reads the browser's cookies and imports them through
/// keyjard's planned import, the same road as a file's (the jar's rules and limits, one net
/// change for subscribers); with `--follow`, again whenever the browser writes.
struct BrowserImport {
    var selection: BrowserSelection
    /// Domains whose cookies (subdomains included) are taken; empty: all.
    var domains: [String]
    var global: GlobalOptions

    func run(dryRun: Bool, follow: Bool) throws {
        let profile = try cliError {
            try BrowserProfileLocator(environment: .current())
                .profile(browser: selection.browser, named: selection.profile)
        }
        // The watch starts before the first read, so a write between the two is not missed.
        let watcher = try follow ? cliError { try BrowserDatabaseWatcher(database: profile.cookieDatabase) } : nil
        let found = try read(profile, passwords: nil)
        if dryRun {
            for (site, count) in Self.countsPerSite(found.cookies) { Output.line("\(site): \(count)") }
            Output.line(
                "would import \(found.cookies.count), skip \(found.skippedCount)\(Self.reasons(found.skipped.map { ($0.rawValue, $1) }))"
            )
            return
        }
        let client = try global.connect()
        let outcome = try Self.send(found.cookies, to: client)
        var reasons = found.skipped.map { ($0.rawValue, $1) } + outcome.skipped
        reasons.sort { $0.0 < $1.0 }
        Output.line(
            "imported \(outcome.kept), skipped \(found.skippedCount + outcome.skipped.map(\.1).reduce(0, +))\(Self.reasons(reasons))"
        )
        guard let watcher else { return }
        var state = BrowserFollowState()
        state.record(found.cookies)
        try followChanges(
            profile,
            watcher: watcher,
            state: state,
            client: client,
            passwords: found.safeStoragePasswords
        )
    }

    /// `passwords`: Chromium's Safe Storage candidates a read already found (nil: ask the
    /// Secret Service when a v11 value needs them).
    private func read(_ profile: BrowserProfile, passwords: [String]?) throws -> BrowserCookies {
        try cliError { () throws -> BrowserCookies in
            profile.browser == .firefox
                ? try FirefoxCookieReader(profile: profile, container: selection.container, domains: domains).read()
                : try ChromiumCookieReader(profile: profile, domains: domains).read(now: Date(), passwords: passwords)
        }
    }

    /// Re-imports on every change until SIGINT or SIGTERM, then prints what it did.
    private func followChanges(
        _ profile: BrowserProfile,
        watcher: BrowserDatabaseWatcher,
        state initial: BrowserFollowState,
        client: KeyjarClient,
        passwords initialPasswords: [String]?
    ) throws {
        var state = initial
        var passwords = initialPasswords
        FollowStop.arm(watcher.stopDescriptor)
        defer { FollowStop.disarm() }
        try Output.flushedLine("following \(profile.cookieDatabase) (Ctrl-C stops)")
        var updated = 0
        var removed = 0
        while try cliError({ try watcher.waitForChange() }) {
            let found: BrowserCookies
            do {
                found = try read(profile, passwords: passwords)
                passwords = found.safeStoragePasswords ?? passwords
            } catch let error as CLIError {
                // Caught mid-write (a lock held through every retry, a journal not yet gone):
                // the browser's next write brings another try, and the loop goes on.
                Output.error(error.message)
                continue
            }
            let changes = state.apply(found.cookies)
            guard !changes.isEmpty else { continue }
            if !changes.changed.isEmpty { updated += try Self.send(changes.changed, to: client).kept }
            var removedNow = 0
            if !changes.vanished.isEmpty {
                // Only what the jar still holds as imported: a cookie a program stored since under
                // the same identity is not the browser's to take away.
                let held = Dictionary(
                    try client.cookies().map { ($0.identity, $0.value) },
                    uniquingKeysWith: { first, _ in first }
                )
                let doomed = changes.vanished.filter { held[$0.identity] == $0.value }.map(\.identity)
                if !doomed.isEmpty { try client.deleteCookies(doomed) }
                removedNow = doomed.count
                removed += removedNow
            }
            try Output.flushedLine("updated \(changes.changed.count), removed \(removedNow)")
        }
        try Output.flushedLine("stopped following: \(updated) updated, \(removed) removed")
    }

    /// What the jar made of the cookies: how many it kept, and the others by reason.
    struct Outcome {
        var kept = 0
        var skipped: [(String, Int)] = []
    }

    /// Sends the cookies as Keyjar's JSON cookie file (its writer's encoding, so every field the
    /// format carries goes along) in `Import.batchSize` batches of one planned import.
    static func send(_ cookies: [Cookie], to client: KeyjarClient) throws -> Outcome {
        var total = CookieImportReport()
        // The jar's reasons (no values in them: names and domains at most), counted.
        var refused: [String: Int] = [:]
        let planned = try client.beginCookieImport()
        var start = 0
        while start < cookies.count {
            let batch = Array(cookies[start..<min(start + CookieCommand.Import.batchSize, cookies.count)])
            let text = String(decoding: CookieJSONFile.serialize(batch), as: UTF8.self)
            let report = try client.importCookies(text, format: .json, firstLine: start + 1)
            total.imported += report.imported
            total.expired += report.expired
            total.added += report.added
            total.replaced += report.replaced
            for problem in report.problems { refused[problem.message, default: 0] += 1 }
            start += batch.count
        }
        if planned {
            let end = try client.finishCookieImport()
            total.added += end.added
            total.replaced += end.replaced
        }
        var outcome = Outcome(kept: total.kept)
        outcome.skipped += refused.map { ("refused by the jar: \($0.key)", $0.value) }
        if total.expired > 0 { outcome.skipped.append((BrowserCookieSkip.expired.rawValue, total.expired)) }
        if total.imported > total.kept {
            outcome.skipped.append(("over the jar's limits", total.imported - total.kept))
        }
        return outcome
    }

    /// ` (2 expired, 1 control characters in name or value)`, or nothing.
    static func reasons(_ counts: [(String, Int)]) -> String {
        var merged: [String: Int] = [:]
        for (reason, count) in counts where count > 0 { merged[reason, default: 0] += count }
        guard !merged.isEmpty else { return "" }
        return " (" + merged.sorted { $0.key < $1.key }.map { "\($0.value) \($0.key)" }.joined(separator: ", ") + ")"
    }

    /// Cookies per site (registrable domain), most first: what a dry run shows instead of values.
    static func countsPerSite(_ cookies: [Cookie]) -> [(String, Int)] {
        var counts: [String: Int] = [:]
        for cookie in cookies {
            counts[PublicSuffixList.system.registrableDomain(of: cookie.domain) ?? cookie.domain, default: 0] += 1
        }
        return counts.sorted { $0.value != $1.value ? $0.value > $1.value : $0.key < $1.key }.map { ($0.key, $0.value) }
    }

    /// A browser's error as the command's: status 1, its sentence.
    private func cliError<T>(_ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let error as BrowserCookieImportError {
            throw CLIError.failure(error.message)
        }
    }
}

/// Ends `--follow` on SIGINT or SIGTERM: the handler writes one byte to the watcher's pipe
/// (async-signal-safe), and the loop, woken from poll(2), prints its summary and exits 0.
private enum FollowStop {
    nonisolated(unsafe) static var descriptor: Int32 = -1
    static let signals = [SIGINT, SIGTERM]

    static func arm(_ descriptor: Int32) {
        Self.descriptor = descriptor
        // A parent's blocked signals are inherited through exec (a Swift program's worker
        // threads block SIGTERM, and so do their children): unblocked here, on the thread that
        // waits, or the stop request would stay pending forever.
        var unblocked = sigset_t()
        sigemptyset(&unblocked)
        for number in signals { sigaddset(&unblocked, number) }
        pthread_sigmask(SIG_UNBLOCK, &unblocked, nil)
        for number in signals {
            signal(number) { _ in
                var byte: UInt8 = 1
                _ = Glibc.write(FollowStop.descriptor, &byte, 1)
                // A second Ctrl-C ends the process at once (keyjard may be what hangs).
                signal(SIGINT, SIG_DFL)
                signal(SIGTERM, SIG_DFL)
            }
        }
    }

    static func disarm() {
        for number in signals { signal(number, SIG_DFL) }
    }
}
