import KeyjarProtocol
import KeyjarStore
import Logging
import NIOCore

// Unlocking and locking the encrypted secrets file (EncryptedSecretStore). An unlock runs
// scrypt (about half a second) on the thread pool, one unlock at a time, after the wait that
// failures before it earned (UnlockAttempts). Once open, what a locked file put off is done:
// the credential writes a crash cut short are settled and the passwords checked. An open file
// locks again once unused for the unlock's idle timeout (IdleLock).
extension CredentialKeeper {
    private var sealedStore: EncryptedSecretStore? { secrets as? EncryptedSecretStore }

    private func nothingToUnlock() -> WireError {
        WireError(
            code: WireError.invalidArgument,
            message:
                "keyjard keeps its secrets in \(store.configuration.secretsName), which has no passphrase to unlock"
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
            self.state.idleLock = IdleLock(timeout: timeout)
            self.state.idleRound &+= 1
            self.checkIdleness(of: sealed, round: self.state.idleRound)
            self.tidyAfterUnlock()
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
        return offLoop { _ in sealed.lock() }.map { .ok }
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
            guard decision == .lock else { return decision }
            return sealed.lock(ifUnusedSince: lastUse) ? .lock : .checkAgain(after: .zero)
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

extension ServerConfiguration {
    /// The secret store as a person names it.
    var secretsName: String {
        switch secrets {
        case .secretService: "the Secret Service"
        case .file(let path): "the plain-text file \(path)"
        case .encrypted(let path): "the encrypted file \(path)"
        }
    }
}
