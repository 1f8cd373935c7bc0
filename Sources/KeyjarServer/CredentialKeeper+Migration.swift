import KeyjarCore
import KeyjarProtocol
import KeyjarStore
import Logging
import NIOCore

// Moving every secret to another store (`keyjar secrets migrate`), in the credential lane so
// that no credential write comes between, and in an order that loses nothing whenever keyjard
// stops:
//
// 1. Copy: each secret of each credential is read from the store in use, stored in the new one
//    and read back. The database still records the old store: stopped here, keyjard starts on
//    it with every secret; the partial copies are overwritten by the next attempt.
// 2. Switch: one transaction records the new store and the old one as holding copies to remove.
//    From here every start uses the new store, which holds every secret.
// 3. Clean: each copy in the old store is removed, then the record of it. Stopped before, the
//    next start (or migration) finishes it.
extension CredentialKeeper {
    func migrateSecrets(backend kind: String, path: String?, passphrase: String?) -> EventLoopFuture<Response> {
        let target: ServerConfiguration.Secrets
        do {
            target = try migrationTarget(kind, path: path, passphrase: passphrase)
        } catch {
            return eventLoop.makeFailedFuture(error)
        }
        return inLane {
            let source = self.secrets
            let previous = self.backend
            let records: [CredentialRecord]
            do { records = try self.records() } catch { return self.eventLoop.makeFailedFuture(error) }
            let keys = records.filter { $0.space.authenticationMethod.keepsSecret }.map {
                SecretStoreKey(space: $0.space, user: $0.user)
            }
            return self.offLoop { _ -> (any SecretStore, Int) in
                let destination = try Self.open(target, passphrase: passphrase)
                let copied = try Self.copy(keys, from: source, to: destination)
                return (destination, copied)
            }.flatMapThrowing { destination, copied -> (any SecretStore, Int) in
                do {
                    try self.database.switchSecretsBackend(
                        to: StoreDatabase.SecretsBackend(target),
                        leaving: StoreDatabase.SecretsBackend(previous)
                    )
                } catch {
                    throw self.store.storageFailure(error)
                }
                self.switchTo(destination, backend: target)
                self.logger.notice(
                    "secrets moved",
                    metadata: ["from": "\(previous.name)", "to": "\(target.name)", "secrets": "\(copied)"]
                )
                return (source, copied)
            }.flatMap { source, _ in
                self.removeLeftBehind(keys, from: source).map { .ok }
            }
        }
    }

    /// At start: copies a migration left in the store it moved from are removed now.
    func removeSecretsLeftBehind() -> EventLoopFuture<Void> {
        let left: StoreDatabase.SecretsBackend?
        do { left = try database.secretsLeftBehind() } catch { return eventLoop.makeSucceededVoidFuture() }
        guard let left else { return eventLoop.makeSucceededVoidFuture() }
        let keys: [SecretStoreKey]
        do {
            keys = try records().map { SecretStoreKey(space: $0.space, user: $0.user) }
        } catch {
            return eventLoop.makeSucceededVoidFuture()
        }
        return offLoop { _ in try Self.open(ServerConfiguration.Secrets(left), passphrase: nil) }.flatMap { old in
            self.removeLeftBehind(keys, from: old)
        }.recover { error in
            self.logger.notice(
                "copies of secrets left in the store they were moved from are removed at a later start",
                metadata: ["store": "\(left)", "reason": "\(error)"]
            )
        }
    }

    /// Removes the copies in `old` (a removal needs no key, even of a locked encrypted file),
    /// then the record that they were there.
    private func removeLeftBehind(_ keys: [SecretStoreKey], from old: any SecretStore) -> EventLoopFuture<Void> {
        offLoop { _ in
            for key in keys {
                for kind in SecretKind.allCases { _ = try old.removeSecret(kind, for: key.space, user: key.user) }
            }
        }.flatMapThrowing {
            do { try self.database.forgetSecretsLeftBehind() } catch { throw self.store.storageFailure(error) }
        }
    }

    /// The store a request names, checked: another than the one in use, a file for a file.
    private func migrationTarget(
        _ kind: String,
        path: String?,
        passphrase: String?
    ) throws(WireError) -> ServerConfiguration.Secrets {
        let databasePath = store.configuration.databasePath
        // keyjard's working directory is no client's: a file is named in full.
        if let path, !path.hasPrefix("/") {
            throw WireError(
                code: WireError.invalidArgument,
                message: "the file must be named by an absolute path: \(path)"
            )
        }
        let target: ServerConfiguration.Secrets
        switch kind {
        case "secret-service":
            guard path == nil else {
                throw WireError(code: WireError.invalidArgument, message: "the Secret Service has no file to name")
            }
            target = .secretService
        case "encrypted":
            guard passphrase != nil else {
                throw WireError(
                    code: WireError.invalidArgument,
                    message: "moving to the encrypted file needs its passphrase"
                )
            }
            target = .encrypted(path: path ?? ServerConfiguration.encryptedSecretsFile(besideDatabase: databasePath))
        case "file":
            target = .file(path: path ?? ServerConfiguration.plainSecretsFile(besideDatabase: databasePath))
        default:
            throw WireError(
                code: WireError.invalidArgument,
                message: "there is no secrets backend '\(kind)': secret-service, encrypted or file"
            )
        }
        guard target != backend else {
            throw WireError(code: WireError.invalidArgument, message: "the secrets are in \(target.name) already")
        }
        return target
    }

    /// The new store, open: an encrypted file is unlocked with `passphrase`, or made with it.
    private static func open(_ target: ServerConfiguration.Secrets, passphrase: String?) throws -> any SecretStore {
        switch target {
        case .secretService:
            let store = LibSecretStore()
            if case .unavailable(let reason) = store.health() {
                throw WireError(code: WireError.secretsUnavailable, message: reason)
            }
            return store
        case .file(let path):
            return try FileSecretStore(path: path)
        case .encrypted(let path):
            let store = try EncryptedSecretStore(path: path)
            guard let passphrase else { return store }
            if try store.exists() {
                try store.unlock(passphrase: passphrase)
            } else {
                try store.create(passphrase: passphrase)
            }
            return store
        }
    }

    /// Copies every secret of `keys` and reads each back; the number copied.
    private static func copy(
        _ keys: [SecretStoreKey],
        from source: any SecretStore,
        to destination: any SecretStore
    ) throws -> Int {
        var copied = 0
        for key in keys {
            for kind in SecretKind.allCases {
                guard let secret = try source.secret(kind, for: key.space, user: key.user) else { continue }
                try destination.storeSecret(secret, kind, for: key.space, user: key.user)
                guard try destination.secret(kind, for: key.space, user: key.user) == secret else {
                    throw WireError(
                        code: WireError.secretsUnavailable,
                        message: "the new store did not give back what was stored for \(key.user) at \(key.space.host)"
                    )
                }
                copied += 1
            }
        }
        return copied
    }

    /// From now on, `destination` is the store: its watch replaces the old one's, and an
    /// encrypted file starts its idle timeout and is kept for a restart.
    private func switchTo(_ destination: any SecretStore, backend target: ServerConfiguration.Secrets) {
        state.secretsWatch?.cancel()
        state.secretsWatch = nil
        // An encrypted file moved from: its key is neither kept for a restart nor watched for idleness.
        if let old = state.secrets as? EncryptedSecretStore {
            old.forgetInSessionKeyring()
            state.idleCheck?.cancel()
            state.idleCheck = nil
            state.idleRound &+= 1
        }
        state.secrets = destination
        state.backend = target
        watchSecrets()
        if let sealed = destination as? EncryptedSecretStore {
            sealedOpened(sealed, lockAfterIdle: store.configuration.lockAfterIdle)
        }
    }
}
