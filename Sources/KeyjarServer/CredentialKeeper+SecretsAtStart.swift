import Foundation
import KeyjarCore
import KeyjarStore
import Logging
import NIOCore

// What keyjard does with the secret store when it starts, in its credential lane (so that no
// client's credential write comes between), and without holding up any client: a slow or
// locked Secret Service delays nothing, and whatever cannot be done now waits for the next start.
// Then it watches the store (CredentialKeeper+SecretsWatch.swift).
extension CredentialKeeper {
    func tidySecretsInTheBackground() {
        _ = inLane {
            self.settlePendingSecretWrites().flatMap { self.removeSecretsLeftBehind() }.flatMap {
                self.upgradeSecrets()
            }.flatMap {
                // A password deleted while keyjard was away is found, recorded and logged now.
                self.checkOwnPasswords()
            }
        }
        watchSecrets()
    }

    /// What a locked secret store put off, done once it is open: the settling of writes a crash
    /// cut short, and the check of the passwords.
    func tidyAfterUnlock() {
        _ = inLane { self.settlePendingSecretWrites().flatMap { self.checkOwnPasswords() } }
    }

    /// Finishes or undoes the credential writes a crash cut short, from the journal keyjard
    /// keeps of them (`StoreDatabase.SecretWrite`): secrets stored for a record that was never
    /// committed are removed (the write was never acknowledged), and a removal whose record is
    /// still there is finished. Nothing is left for a repair to guess at.
    private func settlePendingSecretWrites() -> EventLoopFuture<Void> {
        let pending: [StoreDatabase.SecretWrite]
        let recorded: Set<SecretStoreKey>
        do {
            pending = try database.pendingSecretWrites()
            recorded = Set(try records().map { SecretStoreKey(space: $0.space, user: $0.user) })
        } catch {
            logger.warning("could not read the journal of credential writes", metadata: ["reason": "\(error)"])
            return eventLoop.makeSucceededVoidFuture()
        }
        guard !pending.isEmpty else { return eventLoop.makeSucceededVoidFuture() }
        let logger = self.logger
        return offLoop { secrets -> Bool in
            guard case .available = secrets.health() else { return false }
            for write in pending where write.operation == .remove || !recorded.contains(write.key) {
                try secrets.removeSecret(.refreshToken, for: write.key.space, user: write.key.user)
                try secrets.removePassword(for: write.key.space, user: write.key.user)
            }
            return true
        }.flatMapThrowing { settled in
            guard settled else { return }
            let removals = pending.filter { $0.operation == .remove && recorded.contains($0.key) }.map {
                StoreDatabase.Write.removeCredential($0.key.space, user: $0.key.user)
            }
            _ = try self.store.commit(removals + [.endSecretWrites(pending.map(\.key))])
            logger.notice(
                "settled credential writes a crash cut short",
                metadata: [
                    "undone": "\(pending.filter { $0.operation == .store && !recorded.contains($0.key) }.count)",
                    "finished": "\(removals.count)",
                ]
            )
        }.recover { error in
            logger.warning(
                "could not settle the credential writes a crash cut short; tried again at the next start",
                metadata: ["reason": "\(error)"]
            )
        }
    }

    /// Moves the secrets an older Keyjar stored to the layout this one stores
    /// (`SecretStore.upgradeItems()`); a secret not moved yet is still found where it is.
    private func upgradeSecrets() -> EventLoopFuture<Void> {
        let logger = self.logger
        return offLoop { secrets -> Int in
            guard case .available = secrets.health() else { return 0 }
            return try secrets.upgradeItems()
        }.map { moved in
            if moved > 0 {
                logger.info("moved keyring items to Keyjar's own attribute names", metadata: ["items": "\(moved)"])
            }
        }.recover { error in
            logger.warning(
                "could not move keyring items to Keyjar's own attribute names; they are still used where they are",
                metadata: ["reason": "\(error)"]
            )
        }
    }
}
