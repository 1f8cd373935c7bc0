import Foundation
import KeyjarCore
import KeyjarStore
import Logging
import NIOCore
import NIOPosix

// What keyjard does when the secret store changes behind it: another program (Seahorse,
// `secret-tool clear`, a keyring reset) deleting or changing an item of Keyjar's. keyjard cannot
// tell whose change a signal reports, and a deleted item can no longer be read, so each signal
// (gathered, SecretsAuditSchedule) makes it check its own credentials' passwords in the
// credential lane, where none of its own writes is half done: a credential whose password is
// then missing lost it to someone else. When it was first found so is kept with the record and
// shown by `keyjar status`; it is logged once. The check asks about keyjard's own credentials
// only, so that its cost does not grow with what other programs keep in the keyring.
extension CredentialKeeper {
    /// Starts the secret store's watch, off the loop (it asks D-Bus); a store that cannot be
    /// watched is still compared at start and for each status request.
    func watchSecrets() {
        let loop = eventLoop
        let logger = self.logger
        threadPool.runIfActive(eventLoop: eventLoop) { [secrets] in
            try secrets.watchItems { loop.execute { self.secretsChanged() } }
        }.whenComplete { result in
            switch result {
            case .success(let watch?):
                guard !self.state.isStopped else { return watch.cancel() }
                self.state.secretsWatch = watch
            case .success(nil):
                break
            case .failure(let error):
                logger.info(
                    "not watching the secret store: a password another program deletes is found at the next status or start",
                    metadata: ["reason": "\(error)"]
                )
            }
        }
    }

    /// A signal from the watch: compare, once the burst it belongs to has arrived.
    func secretsChanged() {
        guard case .schedule(let delay) = state.secretsAudit.changeReported() else { return }
        scheduleSecretsAudit(after: delay)
    }

    private func scheduleSecretsAudit(after delay: TimeAmount) {
        eventLoop.scheduleTask(in: delay) {
            guard !self.state.isStopped else { return }
            _ = self.inLane {
                self.state.secretsAudit.auditStarts()
                let started = NIODeadline.now()
                return self.checkOwnPasswords().always { _ in
                    let action = self.state.secretsAudit.auditEnded(cost: NIODeadline.now() - started)
                    if case .schedule(let delay) = action { self.scheduleSecretsAudit(after: delay) }
                }
            }
        }
    }

    /// Checks whether each of keyjard's credentials that keeps a secret still has its password
    /// (run it in the credential lane), and records and logs those that lost it.
    func checkOwnPasswords() -> EventLoopFuture<Void> {
        let keys: [SecretStoreKey]
        do {
            keys = try records().filter(\.space.authenticationMethod.keepsSecret).map {
                SecretStoreKey(space: $0.space, user: $0.user)
            }
        } catch {
            return eventLoop.makeSucceededVoidFuture()
        }
        return offLoop { secrets -> Set<SecretStoreKey>? in
            guard case .available = secrets.health() else { return nil }
            return try secrets.missingPasswords(among: keys)
        }.map { missing in
            if let missing { _ = self.recordMissingPasswords(missing) }
        }.recover { _ in }
    }

    /// Compares the secret store with the credential records (run it in the credential lane):
    /// the store's health and, when it could be read, what is not in pairs, each credential
    /// without its password with the time keyjard first found it so.
    func auditCredentials() -> EventLoopFuture<(health: SecretStoreHealth, mismatches: [CredentialMismatch]?)> {
        offLoop { secrets in
            let health = secrets.health()
            guard case .available = health else { return (health, nil as [SecretStoreKey]?) }
            do {
                return (health, try secrets.keys())
            } catch {
                return (.unavailable(reason: "\(error)"), nil)
            }
        }.flatMapThrowing { health, keys in
            guard let keys else { return (health, nil) }
            let mismatches = CredentialAudit.mismatches(records: try self.records(), secrets: keys)
            let since = self.recordMissingPasswords(Set(mismatches.filter { $0.kind == .passwordMissing }.map(\.key)))
            return (
                health,
                mismatches.map { mismatch in
                    var mismatch = mismatch
                    if mismatch.kind == .passwordMissing { mismatch.noticed = since[mismatch.key] }
                    return mismatch
                }
            )
        }
    }

    /// Records when each credential in `missing` was first found without its password (and
    /// logs it, once), clears the ones whose password is back; returns the times recorded.
    private func recordMissingPasswords(_ missing: Set<SecretStoreKey>) -> [SecretStoreKey: Double] {
        var since: [SecretStoreKey: Double]
        do {
            since = try database.passwordsMissingSince()
        } catch {
            logger.warning("could not read which credentials lost their password", metadata: ["reason": "\(error)"])
            return [:]
        }
        let newlyMissing = missing.subtracting(since.keys)
        let back = Set(since.keys).subtracting(missing)
        guard !newlyMissing.isEmpty || !back.isEmpty else { return since }
        let now = Date().timeIntervalSince1970
        do {
            _ = try store.commit([.passwordsMissing(Array(newlyMissing), noticed: now), .passwordsFound(Array(back))])
        } catch {
            // Not recorded, so not logged: the next check tries again.
            logger.warning("could not record which credentials lost their password", metadata: ["reason": "\(error)"])
            return since
        }
        for key in back { since[key] = nil }
        for key in newlyMissing.sorted(by: { ($0.space.host, $0.user) < ($1.space.host, $1.user) }) {
            since[key] = now
            logger.warning(
                "a credential's password is gone from the secret store: another program removed it; storing it again mends the credential",
                metadata: [
                    "host": "\(key.space.host)", "port": "\(key.space.port)", "protocol": "\(key.space.protocol)",
                    "realm": "\(key.space.realm ?? "")", "method": "\(key.space.authenticationMethod.rawValue)",
                    "user": "\(key.user)",
                ]
            )
        }
        return since
    }
}

extension CredentialMismatch {
    fileprivate var key: SecretStoreKey { SecretStoreKey(space: space, user: user) }
}
