import ArgumentParser
import Foundation
import Keyjar
import KeyjarCommands
import KeyjarCore
import KeyjarLocks
import KeyjarPlatform

/// `keyjar sync`: the credentials of every machine of the user, through a pass store in git.
struct SyncCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sync",
        abstract: "Keep credentials alike on every machine, through a pass store in git.",
        discussion: """
            The store is a pass store (passwordstore.org): one file per credential, encrypted with \
            gpg to the keys its .gpg-id names, in a git repository. `keyjar sync init` adopts one \
            (a directory, or a git URL to clone) or makes one; `keyjar sync` then merges what \
            other machines pushed, brings each credential they added or changed into Keyjar, \
            writes each one Keyjar added or changed as an entry, removes on each side what the \
            other removed, commits and pushes. An entry changed on two machines keeps the later \
            change (each entry records when its credential changed); the other version stays in \
            git's history, and sync says so. A removal on one side and a change on the other \
            keeps the change. pass, gopass, browserpass and Android Password Store read the \
            entries: the password first, then login: and url: lines.

            With --cookies DOMAIN… the cookies of those sites (and of the names under them) are \
            kept in the store too, on every machine from then on; --no-cookies stops it. Every \
            other cookie stays on its machine.

            With --watch it keeps running: a credential changed in Keyjar (or a cookie of a site \
            named) is synced within a few seconds, and other machines' changes are pulled every \
            --interval seconds; a sync that fails is tried again.

            Examples:
              keyjar sync init git@git.example.com:alice/pass.git
              keyjar sync init ~/.password-store --key alice@example.com
              keyjar sync
              keyjar sync --cookies github.com
              keyjar sync --watch --interval 60
            """,
        subcommands: [Now.self, Init.self],
        defaultSubcommand: Now.self
    )

    struct Now: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "now",
            abstract: "Sync once (or, with --watch, on every change): merge, reconcile, commit and push."
        )

        @OptionGroup var global: GlobalOptions

        @Flag(help: "Keep running: sync within a few seconds of every credential change, and pull on an interval.")
        var watch = false

        @Option(
            parsing: .upToNextOption,
            help: ArgumentHelp(
                "Sync the cookies of these sites too (a domain and the names under it), on every machine from now on.",
                valueName: "domain"
            )
        )
        var cookies: [String] = []

        @Option(
            name: .customLong("no-cookies"),
            parsing: .upToNextOption,
            help: ArgumentHelp(
                "Stop syncing these sites' cookies: their entries leave the store, each machine keeps its own cookies.",
                valueName: "domain"
            )
        )
        var noCookies: [String] = []

        @Option(
            help: ArgumentHelp(
                "With --watch, how often to pull other machines' changes (default: 300).",
                valueName: "seconds"
            )
        )
        var interval: Double = 300

        /// With --watch, changes that come together (an import, a burst of logins) are synced
        /// once: a sync starts when none has come for this long.
        static let settle: Duration = .seconds(2)

        func validate() throws {
            guard interval >= 1 else { throw ValidationError("--interval must be at least 1 second.") }
            for domain in cookies + noCookies {
                do {
                    _ = try CookieSites.site(domain)
                } catch {
                    throw ValidationError(error.description)
                }
            }
        }

        func run() async throws {
            let sites = (
                adding: try cookies.map { try CookieSites.site($0) },
                removing: try noCookies.map { try CookieSites.site($0) }
            )
            guard watch else {
                try Self.syncOnce(try global.connect(), changingSites: sites)
                return
            }
            let client = try global.connect(keepingReplica: true)
            // The sites whose cookies are synced, as the last sync found them in the store.
            let named = Locked<[String]>([])
            try await Self.watchedSync(client, changingSites: sites, named: named)
            // What wakes a sync: a credential change, or a change to a synced site's cookie (not
            // the sync's own: those are past the sequence it ended at), or the interval.
            let (triggers, trigger) = AsyncStream.makeStream(of: Bool.self, bufferingPolicy: .bufferingNewest(1))
            let events = Task {
                for await change in client.changes() {
                    switch change.event {
                    case .credentials:
                        trigger.yield(true)
                    case .cookies(let changes):
                        let sites = named.withLock { $0 }
                        if changes.contains(where: { SyncedCookies.covers($0.cookie.domain, sites: sites) }) {
                            trigger.yield(true)
                        }
                    case .policy:
                        break
                    }
                }
                trigger.finish()
            }
            let ticks = Task {
                while !Task.isCancelled {
                    try? await Task.sleep(for: .seconds(interval))
                    trigger.yield(false)
                }
            }
            defer {
                events.cancel()
                ticks.cancel()
            }
            var syncedThrough = client.sequence
            for await changed in triggers {
                if changed {
                    // Settled: no further change for a moment, and one past what was synced.
                    try await Task.sleep(for: Self.settle)
                    guard client.sequence > syncedThrough else { continue }
                }
                try await Self.watchedSync(client, changingSites: ([], []), named: named)
                syncedThrough = client.sequence
            }
        }

        /// One sync of the watch: a failure (offline, a push refused, a key gpg cannot use)
        /// is reported and the watch goes on, trying again on the next change or interval;
        /// only a store that is not set up ends it.
        private static func watchedSync(
            _ client: KeyjarClient,
            changingSites sites: (adding: [String], removing: [String]),
            named: Locked<[String]>
        ) async throws {
            do {
                try await syncedOffThePool(client, changingSites: sites, named: named)
            } catch let error as CLIError where error.status != .usage {
                Output.error("\(error.message) (tried again on the next change or interval)")
            } catch let error as KeyjarClientError {
                Output.error("\(CLIError(error).message) (tried again on the next change or interval)")
            }
        }

        /// A sync drives git, gpg and keyjard by blocking calls: on a thread of its own, not one
        /// of Swift's cooperative pool.
        private static func syncedOffThePool(
            _ client: KeyjarClient,
            changingSites sites: (adding: [String], removing: [String]),
            named: Locked<[String]>
        ) async throws {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                Thread.detachNewThread {
                    continuation.resume(
                        with: Result {
                            let synced = try syncOnce(client, changingSites: sites)
                            named.withLock { $0 = synced }
                        }
                    )
                }
            }
        }

        /// One sync, under the sync lock (taken for this sync alone: `keyjar sync` run by hand
        /// beside a watching one waits for its sync, not for it to end), after the sites whose
        /// cookies are synced are changed as asked.
        /// - Returns: the sites whose cookies are synced.
        @discardableResult
        private static func syncOnce(
            _ client: KeyjarClient,
            changingSites sites: (adding: [String], removing: [String])
        ) throws -> [String] {
            let state: SyncState?
            let lock: Int32
            do {
                lock = try SyncState.lock()
                state = try SyncState.load()
            } catch {
                throw CLIError.failure(error.description)
            }
            defer { close(lock) }
            guard let state else {
                throw CLIError.usage("no store to sync with: run `keyjar sync init DIRECTORY-OR-GIT-URL` first.")
            }
            let store = PassStore(directory: state.store)
            var sync = PassSync(store: store, client: client, state: state)
            let report: PassSync.Report
            do {
                if !sites.adding.isEmpty || !sites.removing.isEmpty {
                    try store.recoverFromAnInterruptedSync()
                    try CookieSites(store: store).change(adding: sites.adding, removing: sites.removing)
                }
                report = try sync.run()
            } catch let error as PassStore.Failure {
                throw CLIError.failure(error.description)
            } catch let error as SyncState.Failure {
                throw CLIError.failure(error.description)
            } catch let error as SyncSkip {
                throw CLIError.failure(error.description)
            }
            for line in report.conflicts { Output.line("conflict: \(line)") }
            for line in report.skipped { Output.line("skipped: \(line)") }
            let cookies =
                report.cookieSites.isEmpty ? "" : " (and the cookies of \(report.cookieSites.joined(separator: ", ")))"
            try Output.flushedLine(
                "synced with \(state.store)\(cookies): \(report.imported) imported, \(report.exported) exported, "
                    + "\(report.removedCredentials) removed from Keyjar, \(report.removedEntries) removed from the store"
            )
            return report.cookieSites
        }
    }

    struct Init: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "init",
            abstract: "Adopt or make the pass store to sync with."
        )

        @Argument(
            help: ArgumentHelp("The store's directory, or a git URL to clone it from.", valueName: "directory-or-url")
        )
        var source: String

        @Option(
            help: ArgumentHelp(
                "Where to clone a git URL (default: $PASSWORD_STORE_DIR, else ~/.password-store).",
                valueName: "directory"
            )
        )
        var store: String?

        @Option(
            help: ArgumentHelp(
                "The gpg key to encrypt to, for a store without a .gpg-id (repeat for several).",
                valueName: "key"
            )
        )
        var key: [String] = []

        func run() throws {
            let directory = try prepare()
            let pass = PassStore(directory: directory)
            do {
                _ = try pass.recipients(for: "entry")
                try pass.commitAll("keyjar sync init")
            } catch {
                throw CLIError.failure(error.description)
            }
            do {
                try SyncState(store: directory).save()
            } catch {
                throw CLIError.failure(error.description)
            }
            let remote = pass.remote.map { " (remote \($0))" } ?? " (no remote: commits stay on this machine)"
            Output.line("keyjar sync will use the pass store at \(directory)\(remote); run `keyjar sync` to sync.")
        }

        /// A git URL (`https://…`, `git@host:path`) or a bare repository's directory: cloned.
        private var isURL: Bool {
            if source.contains("://") { return true }
            guard FileManager.default.fileExists(atPath: source) else {
                return source.contains("@") && source.contains(":")
            }
            let bare = try? ProgramRun.run(["git", "-C", source, "rev-parse", "--is-bare-repository"])
            return bare.map { $0.status == 0 && String(decoding: $0.output, as: UTF8.self).hasPrefix("true") } ?? false
        }

        /// The store's directory, cloned, adopted or made.
        private func prepare() throws -> String {
            let environment = ProcessInfo.processInfo.environment
            let fallback =
                environment["PASSWORD_STORE_DIR"].flatMap { $0.isEmpty ? nil : $0 }
                ?? XDGDirectories().home + "/.password-store"
            let directory = KeyjarPaths.absolute(isURL ? (store ?? fallback) : source)
            if isURL {
                if FileManager.default.fileExists(atPath: directory + "/.git") {
                    // Cloned before: adopted as it is.
                } else {
                    let cloned = try ProgramRun.run(["git", "clone", "-q", source, directory])
                    guard cloned.status == 0 else { throw CLIError.failure("git clone failed: \(cloned.errorText())") }
                }
            } else if !FileManager.default.fileExists(atPath: directory) {
                try FileManager.default.createDirectory(
                    atPath: directory,
                    withIntermediateDirectories: true,
                    attributes: [.posixPermissions: 0o700]
                )
            }
            let gpgID = directory + "/.gpg-id"
            if !key.isEmpty {
                guard !FileManager.default.fileExists(atPath: gpgID) else {
                    throw CLIError.usage("\(gpgID) already names the keys; --key is for a store without one.")
                }
                try (key.joined(separator: "\n") + "\n").write(toFile: gpgID, atomically: true, encoding: .utf8)
            } else if !FileManager.default.fileExists(atPath: gpgID) {
                throw CLIError.usage("\(directory) has no .gpg-id: name the key to encrypt to with --key.")
            }
            let pass = PassStore(directory: directory)
            if !pass.isRepository {
                let made = try ProgramRun.run(["git", "-C", directory, "init", "-q"])
                guard made.status == 0 else { throw CLIError.failure("git init failed: \(made.errorText())") }
            }
            return directory
        }
    }
}
