import KeyjarProtocol
import KeyjarStore
import Logging
import NIOCore

// Unlocking and locking the encrypted secrets file (EncryptedSecretStore). An unlock runs
// scrypt (about half a second) on the thread pool, one unlock at a time, after the wait that
// failures before it earned (UnlockAttempts). Once open, what a locked file put off is done:
// the credential writes a crash cut short are settled and the passwords checked.
extension CredentialKeeper {
    private var sealedStore: EncryptedSecretStore? { secrets as? EncryptedSecretStore }

    private func nothingToUnlock() -> WireError {
        WireError(
            code: WireError.invalidArgument,
            message:
                "keyjard keeps its secrets in \(store.configuration.secretsName), which has no passphrase to unlock"
        )
    }

    func unlock(passphrase: String, create: Bool) -> EventLoopFuture<Response> {
        guard let sealed = sealedStore else { return eventLoop.makeFailedFuture(nothingToUnlock()) }
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
        // Off the loop: the store's lock may be held by a write on the thread pool.
        return offLoop { _ in sealed.lock() }.map { .ok }
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
