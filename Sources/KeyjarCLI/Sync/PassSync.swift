import Foundation
import Keyjar
import KeyjarCodec
import KeyjarCore
import KeyjarPlatform

/// One `keyjar sync`: the store's changes merged in (git), each credential reconciled by
/// ``SyncDecision``, the result committed and pushed. Each step can be cut short (killed,
/// offline, a push refused) and the next run finishes it: what was written but not committed is
/// committed first, and the state of the last sync is replaced only once a sync is complete.
struct PassSync {
    let store: PassStore
    let client: KeyjarClient
    var state: SyncState
    /// The entry this sync chose for each item several entries name (``chosenPath(among:synced:written:)``).
    var chosen: [String: String] = [:]
    /// The item each entry this sync read or wrote is, by path: what the state records without
    /// decrypting the entry again.
    var itemAt: [String: String] = [:]

    struct Report {
        var exported = 0
        var imported = 0
        var removedEntries = 0
        var removedCredentials = 0
        /// Entries both sides changed, and which version was kept (the other is in git's history).
        var conflicts: [String] = []
        /// What is not synced, and why (a client certificate, an entry that names no server).
        var skipped: [String] = []
        /// The sites whose cookies are synced.
        var cookieSites: [String] = []
    }

    /// Pushes refused because another machine pushed first are retried after merging, this often.
    static let pushAttempts = 3

    mutating func run() throws -> Report {
        var report = Report()
        try store.recoverFromAnInterruptedSync()
        try store.commitAll("keyjar sync: what an interrupted sync wrote")
        for attempt in 1...Self.pushAttempts {
            var unreachable: String?
            if let remote = store.remote {
                do {
                    report.conflicts += try merge(from: remote)
                } catch let failure as PassStore.Failure where failure.isFetch {
                    unreachable = failure.description
                }
            }
            try reconcile(&report)
            try store.commitAll(
                "keyjar sync: \(report.exported) exported, \(report.removedEntries) removed"
            )
            if let unreachable {
                // Offline: this machine's side is committed and goes out with the next sync.
                try recordState()
                throw PassStore.Failure(
                    description: "\(unreachable); Keyjar and the store here are in step, and the next sync pushes"
                )
            }
            guard let remote = store.remote else { break }
            let pushed = try store.git(["push", "-q", "-u", remote, "HEAD"], allowing: true)
            if pushed.status == 0 { break }
            if attempt == Self.pushAttempts {
                throw PassStore.Failure(description: "git push failed: \(pushed.errorText()) (run keyjar sync again)")
            }
        }
        try recordState()
        return report
    }

    // MARK: - Merging the store's changes

    /// Merges the remote's branch; an entry both sides changed keeps its later version (by the
    /// `modified` it records), an entry one side removed and the other changed keeps the change.
    private func merge(from remote: String) throws -> [String] {
        let fetched = try store.git(["fetch", "-q", remote], allowing: true)
        guard fetched.status == 0 else {
            throw PassStore.Failure(description: "cannot reach \(remote): \(fetched.errorText())", isFetch: true)
        }
        let branch = try store.gitText(["rev-parse", "--abbrev-ref", "HEAD"]).trimmingCharacters(
            in: .whitespacesAndNewlines
        )
        let upstream = "\(remote)/\(branch)"
        guard try store.git(["rev-parse", "--verify", "-q", upstream], allowing: true).status == 0 else { return [] }
        guard store.head != nil else {
            try store.git(["reset", "-q", "--hard", upstream])
            return []
        }
        let merged = try store.git(store.identity + ["merge", "-q", "--no-edit", upstream], allowing: true)
        if merged.status == 0 { return [] }
        let conflicted = try store.git(["diff", "--name-only", "--diff-filter=U", "-z"]).output.split(separator: 0)
            .map { String(decoding: $0, as: UTF8.self) }
        guard !conflicted.isEmpty, conflicted.allSatisfy({ $0.hasSuffix(".gpg") }) else {
            try store.git(["merge", "--abort"], allowing: true)
            throw PassStore.Failure(
                description: "git merge of \(upstream) failed: \(merged.errorText()) (resolve it in \(store.directory))"
            )
        }
        var reports: [String] = []
        for file in conflicted {
            let path = String(file.dropLast(4))
            let ours = try store.git(["cat-file", "-e", ":2:\(file)"], allowing: true).status == 0
            let theirs = try store.git(["cat-file", "-e", ":3:\(file)"], allowing: true).status == 0
            var keep = ours ? "--ours" : "--theirs"
            if ours && theirs {
                let mine = (try? PassEntry.read(try store.read(path, at: ":2")))?.modified ?? 0
                let other = (try? PassEntry.read(try store.read(path, at: ":3")))?.modified ?? 0
                keep = other > mine ? "--theirs" : "--ours"
                reports.append(
                    "\(path): changed here and on another machine; kept the \(keep == "--ours" ? "local" : "other machine's") "
                        + "version (the later change), the other is in git's history"
                )
            }
            try store.git(["checkout", keep, "--", file])
            try store.git(["add", "--", file])
        }
        try store.git(store.identity + ["commit", "-q", "--no-edit"])
        return reports
    }

    // MARK: - Reconciling

    /// The store's entries against Keyjar, kind by kind: credentials, then the cookies of the
    /// sites named in the store's `.keyjar-cookies`.
    private mutating func reconcile(_ report: inout Report) throws {
        let sites = CookieSites(store: store)
        let named = sites.read()
        report.cookieSites = named
        var entries = try store.entries()
        let unnamed = try sites.removeUnnamedEntries(sites: named, among: entries)
        report.removedEntries += unnamed.count
        for path in unnamed { entries[path] = nil }
        try reconcile(SyncedCredentials(client: client), entries, &report)
        try reconcile(SyncedCookies(client: client, sites: named), entries, &report)
    }

    private struct Pair<Entry> {
        var path: String?
        var blob: String?
        var entry: Entry?
        var local: SyncedItem<Entry>?
    }

    private mutating func reconcile<Kind: SyncedKind>(
        _ kind: Kind,
        _ entries: [String: String],
        _ report: inout Report
    ) throws {
        // Each entry of the kind, by the item it is: one, or several a user filed (`work/gitlab`
        // beside `gitlab.example/alice`).
        var found: [String: [(path: String, blob: String, entry: Kind.Entry?)]] = [:]
        for (path, blob) in entries where kind.owns(path: path) {
            if let synced = state.entries[path], synced.blob == blob {
                guard kind.syncs(key: synced.key) else { continue }
                found[synced.key, default: []].append((path, blob, nil))
                continue
            }
            let read: (key: String, entry: Kind.Entry)?
            do {
                read = try kind.read(try store.read(path), at: path)
            } catch {
                report.skipped.append("\(path): \(error)")
                continue
            }
            guard let (key, entry) = read else { continue }
            itemAt[path] = key
            if kind.isDead(entry) {
                try store.git(["rm", "-q", "--", path + ".gpg"])
                report.removedEntries += 1
                continue
            }
            found[key, default: []].append((path, blob, entry))
        }
        let locals = try kind.localItems()
        // The path the last sync recorded for each item (one, or the first by name).
        let syncedPaths = Dictionary(state.entries.map { ($0.value.key, $0.key) }, uniquingKeysWith: min)
        var pairs: [String: Pair<Kind.Entry>] = [:]
        for (key, candidates) in found {
            let chosen = Self.chosenPath(
                among: candidates.map(\.path),
                synced: syncedPaths[key],
                written: locals[key]?.path
            )
            for candidate in candidates where candidate.path != chosen {
                report.skipped.append("\(candidate.path): names the same as \(chosen), which is the entry synced")
            }
            self.chosen[key] = chosen
            guard let pick = candidates.first(where: { $0.path == chosen }) else { continue }
            pairs[key] = Pair(path: pick.path, blob: pick.blob, entry: pick.entry)
        }
        for (key, item) in locals {
            pairs[key, default: Pair()].local = item
        }

        for (key, pair) in pairs.sorted(by: { $0.key < $1.key }) {
            guard let path = pair.path ?? syncedPaths[key] ?? pair.local?.path else { continue }
            do {
                try reconcile(kind, pair, key: key, path: path, &report)
                itemAt[path] = key
            } catch let skip as SyncSkip {
                report.skipped.append("\(path): \(skip)")
            }
        }
    }

    /// One item: its two sides compared, ``SyncDecision`` applied. What is read (an entry
    /// from gpg, a password from keyjard) is read only when the decision needs it.
    private func reconcile<Kind: SyncedKind>(
        _ kind: Kind,
        _ pair: Pair<Kind.Entry>,
        key: String,
        path: String,
        _ report: inout Report
    ) throws {
        let synced = state.entries[path].flatMap { $0.key == key ? $0 : nil }
        /// The entry as the last sync left it.
        func base() throws -> Kind.Entry? {
            guard let synced else { return nil }
            return try kind.read(try store.read(path, blob: synced.blob), at: path)?.entry
        }
        // The entry as it is now (one unchanged since the last sync was not decrypted yet).
        var entry = pair.entry
        func current() throws -> Kind.Entry? {
            if entry == nil, pair.blob != nil { entry = try kind.read(try store.read(path), at: path)?.entry }
            return entry
        }
        // Keyjar's side as an entry would hold it (a credential's password asked of keyjard).
        var loaded: Kind.Entry?
        func local() throws -> Kind.Entry? {
            if loaded == nil, let item = pair.local { loaded = try item.entry() }
            return loaded
        }
        // Keyjar's side changed since the last sync when it no longer holds what the synced
        // version of the entry holds.
        var localChanged = true
        var wasSynced = synced != nil
        if let item = pair.local, let synced, synced.modified == item.modified {
            // Keyjar's item has not changed since the last sync left both sides alike.
            localChanged = false
        } else if pair.local != nil, let base = try base(), let local = try local() {
            localChanged = !kind.holdsTheSame(base, local)
        } else if pair.local == nil, wasSynced, let stored = try current(), !kind.absenceIsRemoval(of: stored) {
            // Gone from Keyjar without being removed (a session cookie at the end of a login
            // session): as if never synced, so the store's copy comes back.
            wasSynced = false
        }
        let keyjarSide = pair.local.map { SyncDecision.Side(modified: $0.modified, changedSinceSync: localChanged) }
        let storeSide = pair.blob.map {
            SyncDecision.Side(modified: entry.map(kind.modified) ?? 0, changedSinceSync: synced?.blob != $0)
        }
        var decision = SyncDecision(keyjar: keyjarSide, store: storeSide, wasSynced: wasSynced)
        // Met for the first time, holding the same: nothing to do but remember it.
        if !wasSynced, pair.local != nil, pair.blob != nil, let entry = try current(), let local = try local(),
            kind.holdsTheSame(entry, local)
        {
            decision = .nothing
        }
        switch decision {
        case .export:
            guard let local = try local() else { return }
            try store.write(try kind.encoded(local, keeping: try current()), to: path)
            report.exported += 1
        case .import:
            guard let entry = try current() else { return }
            try kind.save(entry)
            report.imported += 1
        case .removeEntry:
            try store.git(["rm", "-q", "--", path + ".gpg"])
            report.removedEntries += 1
        case .removeCredential:
            guard let local = try local() else { return }
            try kind.remove(local)
            report.removedCredentials += 1
        case .nothing:
            break
        }
        if SyncDecision.isConflict(keyjar: keyjarSide, store: storeSide, wasSynced: wasSynced) {
            report.conflicts.append(
                "\(path): changed here and in the store; kept the \(decision == .export ? "local" : "store's") "
                    + "version (the later change), the other is in git's history"
            )
        }
    }

    /// Of several entries naming one item, the one a sync reads and writes, the same on every
    /// run and machine: the one synced before, else where Keyjar files the item, else the first
    /// by name. The others are left as they are, and reported.
    static func chosenPath(among paths: [String], synced: String?, written: String?) -> String {
        if let synced, paths.contains(synced) { return synced }
        if let written, paths.contains(written) { return written }
        return paths.min() ?? ""
    }

    /// After a complete sync: each entry both sides hold, with its blob as it is now.
    private mutating func recordState() throws {
        let entries = try store.entries()
        let named = CookieSites(store: store).read()
        var synced = try synced(SyncedCredentials(client: client), entries)
        synced.merge(try self.synced(SyncedCookies(client: client, sites: named), entries)) { first, _ in first }
        state.entries = synced
        try state.save()
    }

    /// The entries of one kind whose item Keyjar holds.
    private func synced<Kind: SyncedKind>(
        _ kind: Kind,
        _ entries: [String: String]
    ) throws -> [String: SyncState.Synced] {
        let held = try kind.localChanges()
        var byKey: [String: [(path: String, blob: String)]] = [:]
        for (path, blob) in entries where kind.owns(path: path) {
            var key = itemAt[path] ?? state.entries[path]?.key
            if key == nil || (itemAt[path] == nil && state.entries[path]?.blob != blob) {
                key = (try? store.read(path)).flatMap { try? kind.read($0, at: path)?.key }
            }
            guard let key, held[key] != nil else { continue }
            byKey[key, default: []].append((path, blob))
        }
        // One entry per item, the one this sync chose.
        let syncedPaths = Dictionary(state.entries.map { ($0.value.key, $0.key) }, uniquingKeysWith: min)
        var synced: [String: SyncState.Synced] = [:]
        for (key, candidates) in byKey {
            let path = Self.chosenPath(
                among: candidates.map(\.path),
                synced: chosen[key] ?? syncedPaths[key],
                written: nil
            )
            guard let blob = candidates.first(where: { $0.path == path })?.blob else { continue }
            synced[path] = SyncState.Synced(blob: blob, key: key, modified: held[key])
        }
        return synced
    }
}
