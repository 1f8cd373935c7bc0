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

    struct Report {
        var exported = 0
        var imported = 0
        var removedEntries = 0
        var removedCredentials = 0
        /// Entries both sides changed, and which version was kept (the other is in git's history).
        var conflicts: [String] = []
        /// What is not synced, and why (a client certificate, an entry that names no server).
        var skipped: [String] = []
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

    private struct Pair {
        var path: String?
        var blob: String?
        var entry: PassEntry?
        var record: CredentialRecord?
    }

    private mutating func reconcile(_ report: inout Report) throws {
        var pairs: [String: Pair] = [:]
        for (path, blob) in try store.entries() {
            if let synced = state.entries[path], synced.blob == blob {
                pairs[synced.key, default: Pair()].path = path
                pairs[synced.key]?.blob = blob
                continue
            }
            let entry: PassEntry
            do {
                entry = try PassEntry.read(try store.read(path))
            } catch {
                report.skipped.append("\(path): \(error)")
                continue
            }
            guard let (space, user) = PassStoreLayout.credential(of: entry, at: path) else {
                report.skipped.append("\(path): names no server (no url: field, and its folder is no host name)")
                continue
            }
            let key = SyncState.key(of: space, user: user)
            pairs[key, default: Pair()].path = path
            pairs[key]?.blob = blob
            pairs[key]?.entry = entry
        }
        for record in try client.credentialRecords() where record.persistence == .permanent {
            // A client certificate's identity is several lines of PEM, and a trust decision has
            // no secret: neither is a pass entry.
            guard record.space.authenticationMethod.keepsSecret, record.space.authenticationMethod != .clientCertificate
            else { continue }
            pairs[SyncState.key(of: record.space, user: record.user), default: Pair()].record = record
        }
        let syncedPaths = Dictionary(
            state.entries.map { ($0.value.key, $0.key) },
            uniquingKeysWith: { first, _ in first }
        )

        for (key, pair) in pairs.sorted(by: { $0.key < $1.key }) {
            guard
                let path = pair.path ?? syncedPaths[key]
                    ?? pair.record.map({ PassStoreLayout.path(of: $0.space, user: $0.user) })
            else { continue }
            let synced = state.entries[path].flatMap { $0.key == key ? $0 : nil }
            // Keyjar's side as it is now, in the entry's shape.
            var local: PassEntry?
            if let record = pair.record {
                guard let password = try client.password(user: record.user, for: record.space) else {
                    report.skipped.append("\(path): its password is missing from Keyjar's secret store")
                    continue
                }
                let refreshToken =
                    record.hasRefreshToken ? try client.refreshToken(user: record.user, for: record.space) : nil
                local = PassStoreLayout.entry(
                    for: record,
                    password: password,
                    refreshToken: refreshToken,
                    modified: record.lastChanged
                )
            }
            var entry = pair.entry
            if pair.blob != nil, entry == nil, synced?.blob != pair.blob || synced == nil {
                entry = try PassEntry.read(try store.read(path))
            }
            // Keyjar's side changed since the last sync when it no longer holds what the synced
            // version of the entry holds (its time of change is keyjard's `modified`).
            var localChanged = true
            if let synced, let local {
                let base = try PassEntry.read(try store.read(path, blob: synced.blob))
                localChanged = !Self.sameCredential(base, local)
            }
            let keyjarSide = pair.record.map {
                SyncDecision.Side(modified: $0.lastChanged, changedSinceSync: localChanged)
            }
            let storeSide = pair.blob.map {
                SyncDecision.Side(modified: entry?.modified ?? 0, changedSinceSync: synced?.blob != $0)
            }
            let wasSynced = synced != nil
            var decision = SyncDecision(keyjar: keyjarSide, store: storeSide, wasSynced: wasSynced)
            // Met for the first time, holding the same: nothing to do but remember it.
            if !wasSynced, let local, let entry, Self.sameCredential(entry, local) { decision = .nothing }
            switch decision {
            case .export:
                guard var written = local else { continue }
                written.otherLines = entry?.otherLines ?? []
                do {
                    try store.write(try written.encoded(), to: path)
                } catch let error as PassEntry.FormatError {
                    report.skipped.append("\(path): \(error)")
                    continue
                }
                report.exported += 1
            case .import:
                let current = try entry ?? PassEntry.read(try store.read(path))
                guard let (space, user) = PassStoreLayout.credential(of: current, at: path) else { continue }
                // Stored with the time of the change it copies: a later change here or there
                // still wins over it, whenever this sync ran.
                try client.saveCredentials([
                    CredentialWrite(
                        space: space,
                        user: user,
                        password: current.password,
                        expires: current.expires,
                        refreshToken: current.refreshToken,
                        tokenRefresh: current.refreshToken == nil ? nil : current.tokenRefresh,
                        modified: current.modified
                    )
                ])
                report.imported += 1
            case .removeEntry:
                try store.git(["rm", "-q", "--", path + ".gpg"])
                report.removedEntries += 1
            case .removeCredential:
                guard let record = pair.record else { continue }
                try client.removeCredential(user: record.user, for: record.space)
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
    }

    /// Whether an entry and Keyjar's credential hold the same: the secrets and what the space
    /// does not say (the expiry, the token endpoint). The space and user are the pair's own.
    private static func sameCredential(_ entry: PassEntry, _ local: PassEntry) -> Bool {
        entry.password == local.password && entry.expires == local.expires && entry.refreshToken == local.refreshToken
            && (entry.refreshToken == nil || entry.tokenRefresh == local.tokenRefresh)
    }

    /// After a complete sync: each entry both sides hold, with its blob and the credential's
    /// `created` as they are now.
    private mutating func recordState() throws {
        var entries: [String: SyncState.Synced] = [:]
        var byKey: [String: CredentialRecord] = [:]
        for record in try client.credentialRecords() {
            byKey[SyncState.key(of: record.space, user: record.user)] = record
        }
        let previous = state.entries
        for (path, blob) in try store.entries() {
            var key = previous[path]?.key
            if key == nil || previous[path]?.blob != blob {
                guard let entry = try? PassEntry.read(try store.read(path)),
                    let (space, user) = PassStoreLayout.credential(of: entry, at: path)
                else { continue }
                key = SyncState.key(of: space, user: user)
            }
            guard let key, byKey[key] != nil else { continue }
            entries[path] = SyncState.Synced(blob: blob, key: key)
        }
        state.entries = entries
        try state.save()
    }
}
