import KeyjarProtocol
import KeyjarStore
import Logging
import NIOCore

// Unlocking and locking the encrypted secrets file (EncryptedSecretStore). An unlock runs
// scrypt (about half a second) on the thread pool, one unlock at a time, after the wait that
// failures before it earned (UnlockAttempts). Once open, what a locked file put off is done:
// the credential writes a crash cut short are settled and the passwords checked. An open file
// locks again once unused for the unlock's idle timeout (IdleLock). Its key is kept in the
// kernel's session keyring (EncryptedSecretStore+SessionKeyring), so that a keyjard restarted
// within the login session starts unlocked; a lock, the idle timeout and the end of the session
// forget it there too.
extension CredentialKeeper {
    private var sealedStore: EncryptedSecretStore? { secrets as? EncryptedSecretStore }

    private func nothingToUnlock() -> WireError {
        WireError(
            code: WireError.invalidArgument,
            message:
                "keyjard keeps its secrets in \(backend.name), which has no passphrase to unlock"
        )
    }

    func unlock(passphrase: String, create: Bool, lockAfterIdle: Int?) -> EventLoopFuture<Response> {
        guard let sealed = sealedStore else { return eventLoop.makeFailedFuture(nothingToUnlock()) }
        let timeout: Duration?
        do {
            timeout = try IdleLock.timeout(asked: lockAfterIdle, standard: store.configuration.lockAfterIdle)
        } catch {
            return eventLoop.makeFailedFuture(error)
        }
        let previous = state.unlockLane ?? eventLoop.makeSucceededVoidFuture()
        let result = previous.flatMap { () -> EventLoopFuture<Void> in
            let wait = self.state.unlockAttempts.wait(at: .now())
            return self.eventLoop.scheduleTask(in: wait) {}.futureResult
        }.flatMap {
            self.offLoop { _ in
                if try sealed.exists() {
                    try sealed.unlock(passphrase: passphrase)
                } else if create {
                    try sealed.create(passphrase: passphrase)
                } else {
                    throw WireError(
                        code: WireError.notFound,
                        message: "there is no encrypted secrets file yet (\(sealed.path)): set its passphrase first"
                    )
                }
            }
        }.map { () -> Response in
            self.state.unlockAttempts.succeeded()
            self.sealedOpened(sealed, lockAfterIdle: timeout)
            return .ok
        }.flatMapErrorThrowing { error -> Response in
            if let error = error as? WireError, error.code == WireError.wrongPassphrase {
                self.state.unlockAttempts.failed(at: .now())
                self.logger.notice(
                    "a wrong passphrase for the encrypted secrets file",
                    metadata: ["failures": "\(self.state.unlockAttempts.failures)"]
                )
            }
            throw error
        }
        state.unlockLane = result.map { _ in }.recover { _ in }
        return result
    }

    func lock() -> EventLoopFuture<Response> {
        guard let sealed = sealedStore else { return eventLoop.makeFailedFuture(nothingToUnlock()) }
        state.idleCheck?.cancel()
        state.idleCheck = nil
        state.idleRound &+= 1
        // Off the loop: the store's lock may be held by a write on the thread pool.
        return offLoop { _ in
            sealed.lock()
            sealed.forgetInSessionKeyring()
        }.map { .ok }
    }

    /// At start: opens the file with the key an earlier keyjard of this login session kept.
    func resumeUnlockFromSessionKeyring() -> EventLoopFuture<Void> {
        guard let sealed = sealedStore else { return eventLoop.makeSucceededVoidFuture() }
        let previous = state.unlockLane ?? eventLoop.makeSucceededVoidFuture()
        let resumed = previous.flatMap {
            self.offLoop { _ in try sealed.unlockFromSessionKeyring() }
        }.map { kept in
            guard let kept else { return }
            self.logger.notice("the encrypted secrets file is open with the key kept in the session keyring")
            self.opened(sealed, lockAfterIdle: kept.lockAfterIdle.map { .seconds($0) })
        }.recover { error in
            self.logger.notice(
                "no key kept in the session keyring could be used; the file stays locked",
                metadata: ["reason": "\(error)"]
            )
        }
        state.unlockLane = resumed
        return resumed
    }

    /// The file was opened with its passphrase (an unlock, a migration to it): it is kept for a
    /// restart, its idle timeout starts, and what a locked file put off is done.
    func sealedOpened(_ sealed: EncryptedSecretStore, lockAfterIdle timeout: Duration?) {
        opened(sealed, lockAfterIdle: timeout)
        keepForRestart(sealed, lockAfterIdle: timeout)
    }

    /// The file is open: its idle timeout starts, and what a locked file put off is done.
    private func opened(_ sealed: EncryptedSecretStore, lockAfterIdle timeout: Duration?) {
        state.idleLock = IdleLock(timeout: timeout)
        state.idleRound &+= 1
        checkIdleness(of: sealed, round: state.idleRound)
        tidyAfterUnlock()
    }

    /// Keeps the key for a restart within the login session; where the kernel refuses (a
    /// container's seccomp policy), a restart starts locked, as it would without.
    private func keepForRestart(_ sealed: EncryptedSecretStore, lockAfterIdle timeout: Duration?) {
        let seconds = timeout.map { Int($0.components.seconds) }
        offLoop { _ in try sealed.keepInSessionKeyring(lockAfterIdle: seconds) }.whenFailure { error in
            self.logger.notice(
                "the key is not kept for a restart: a restarted keyjard starts locked",
                metadata: ["reason": "\(error)"]
            )
        }
    }

    /// Locks `sealed` if it has gone unused for the idle timeout, else looks again when the
    /// timeout from its last use ends. The store's clock is read off the loop (its lock may be
    /// held by a write), and the lock is taken only if no secret was used meanwhile.
    private func checkIdleness(of sealed: EncryptedSecretStore, round: UInt64) {
        state.idleCheck?.cancel()
        state.idleCheck = nil
        let idleLock = state.idleLock
        guard idleLock.timeout != nil, round == state.idleRound, !state.isStopped else { return }
        offLoop { _ -> IdleLock.Decision in
            guard let lastUse = sealed.lastUse else { return .never }
            let decision = idleLock.decide(lastUse: lastUse, now: .now)
            switch decision {
            case .never: return decision
            case .checkAgain(let after):
                // The kept key lasts no longer than the file stays open unused.
                let (seconds, attoseconds) = after.components
                try? sealed.renewInSessionKeyring(seconds: Int(seconds) + (attoseconds > 0 ? 1 : 0))
                return decision
            case .lock:
                guard sealed.lock(ifUnusedSince: lastUse) else { return .checkAgain(after: .zero) }
                sealed.forgetInSessionKeyring()
                return .lock
            }
        }.whenSuccess { decision in
            // A newer unlock or a lock has taken over the schedule meanwhile.
            guard round == self.state.idleRound, !self.state.isStopped else { return }
            switch decision {
            case .never: return
            case .lock:
                self.logger.notice("the encrypted secrets file was locked after being idle")
            case .checkAgain(let after):
                self.state.idleCheck = self.eventLoop.scheduleTask(in: TimeAmount(after)) {
                    self.checkIdleness(of: sealed, round: round)
                }
            }
        }
    }

    /// The lock as `keyjar status` shows it; nil when the secrets are not in an encrypted file.
    func secretsLock() -> EventLoopFuture<ServiceStatus.SecretsLock?> {
        guard let sealed = sealedStore else { return eventLoop.makeSucceededFuture(nil) }
        return offLoop { _ in sealed.lastUse }.map { lastUse in
            self.state.idleLock.status(lastUse: lastUse, now: .now)
        }
    }
}

extension ServerConfiguration.Secrets {
    /// The secret store as a person names it.
    var name: String {
        switch self {
        case .secretService: "the Secret Service"
        case .file(let path): "the plain-text file \(path)"
        case .encrypted(let path): "the encrypted file \(path)"
        }
    }
}
