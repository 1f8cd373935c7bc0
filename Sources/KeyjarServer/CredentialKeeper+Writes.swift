import Foundation
import KeyjarCore
import KeyjarProtocol
import KeyjarStore
import NIOCore

// Writing credentials: both halves (the record in the database, the secrets in the secret
// store) or neither, a crash between them journalled so that keyjard settles it at its next start.
extension CredentialKeeper {
    // MARK: - Saving

    /// Stores `writes`, all or none: each one's secrets go to the secret store (the refresh
    /// token before the password, so that a crash between them leaves a stale password with the
    /// new refresh token, which a refresh repairs, never the reverse), then every record is
    /// committed in one transaction. If a secret cannot be stored, or the commit fails, every
    /// secret already written is put back as it was.
    func saveCredentials(_ writes: [CredentialWrite], origin: NIOLoopBound<ServedClient>) -> EventLoopFuture<Response> {
        do {
            try Self.validate(writes)
        } catch {
            return eventLoop.makeFailedFuture(error)
        }
        guard !writes.isEmpty else { return eventLoop.makeSucceededFuture(.committed(sequence: nil)) }
        let journalled = writes.filter(\.space.authenticationMethod.keepsSecret).map {
            StoreDatabase.SecretWrite(.store, SecretStoreKey(space: $0.space, user: $0.user))
        }
        return inLane {
            // Journalled first: a crash before the records are committed leaves secrets that
            // keyjard itself takes out again at its next start (settlePendingSecretWrites).
            if !journalled.isEmpty {
                do { _ = try self.store.commit([.beginSecretWrites(journalled)]) } catch {
                    return self.eventLoop.makeFailedFuture(error)
                }
            }
            return self.offLoop { secrets -> [StoredSecrets] in
                var previous: [StoredSecrets] = []
                do {
                    for write in writes where write.space.authenticationMethod.keepsSecret {
                        previous.append(try StoredSecrets(of: write.space, user: write.user, in: secrets))
                        if let refreshToken = write.refreshToken {
                            try secrets.storeSecret(refreshToken, .refreshToken, for: write.space, user: write.user)
                        } else if previous.last?.refreshToken != nil {
                            // A new password without one: the old refresh token belongs to the old one.
                            try secrets.removeSecret(.refreshToken, for: write.space, user: write.user)
                        }
                        try secrets.storePassword(write.password, for: write.space, user: write.user)
                    }
                } catch {
                    for (write, stored) in zip(writes.filter(\.space.authenticationMethod.keepsSecret), previous) {
                        stored.restore(write.space, user: write.user, in: secrets)
                    }
                    throw error
                }
                return previous
            }.flatMap { previous in
                do {
                    let sequence = try self.commitRecords(for: writes, ending: journalled, origin: origin.value)
                    return self.eventLoop.makeSucceededFuture(.committed(sequence: sequence))
                } catch {
                    return self.offLoop { secrets in
                        for (write, stored) in zip(writes.filter(\.space.authenticationMethod.keepsSecret), previous) {
                            stored.restore(write.space, user: write.user, in: secrets)
                        }
                    }.flatMapThrowing { _ in throw error }
                }
            }.flatMapErrorThrowing { error in
                // Undone (or never begun): the journal's entries are done with. Left there when
                // even this cannot be committed, they are settled at the next start, harmlessly.
                _ = try? self.store.commit([.endSecretWrites(journalled.map(\.key))])
                throw error
            }
        }
    }

    /// One transaction for all the records; a space's first credential becomes its default,
    /// counting those earlier in the same batch.
    private func commitRecords(
        for writes: [CredentialWrite],
        ending journalled: [StoreDatabase.SecretWrite],
        origin: ServedClient
    ) throws(WireError) -> UInt64? {
        var stored = try records()
        let now = Date().timeIntervalSince1970
        var records: [StoreDatabase.Write] = []
        for write in writes {
            var record = CredentialRecord(
                space: write.space,
                user: write.user,
                persistence: .permanent,
                isDefault: false,
                created: now,
                expires: write.expires,
                hasRefreshToken: write.refreshToken != nil,
                tokenRefresh: write.tokenRefresh,
                // A copy of a change made elsewhere keeps its time, never later than now.
                modified: write.modified.map { min($0, now) } ?? now
            )
            record.isDefault = record.becomesDefault(asked: write.makeDefault, stored: stored)
            stored.append(record)
            records.append(.saveCredential(record))
        }
        if !journalled.isEmpty { records.append(.endSecretWrites(journalled.map(\.key))) }
        return try store.commit(records, origin: origin)
    }

    /// Passwords are kept under the canonical space: one of another form would be read back as
    /// another credential's (a half credential that repair would split), and a record of another
    /// form would never be found by Keyjar's own clients.
    static func checkCanonical(_ space: ProtectionSpace, user: String) throws(WireError) {
        guard space == space.canonical else {
            throw WireError(
                code: WireError.invalidArgument,
                message: "the space is not in canonical form (host lower-case without a trailing dot, the scheme's "
                    + "port rather than 0, no empty realm; Schemas/protocol.md) (\(user) at \(space.host))"
            )
        }
    }

    private static func validate(_ writes: [CredentialWrite]) throws(WireError) {
        var seen = Set<LeaseKey>()
        for write in writes {
            func refuse(_ message: String) -> WireError {
                WireError(code: WireError.invalidArgument, message: "\(message) (\(write.user) at \(write.space.host))")
            }
            guard seen.insert(LeaseKey(space: write.space, user: write.user)).inserted else {
                throw refuse("the same credential is written twice")
            }
            try checkCanonical(write.space, user: write.user)
            if !write.space.authenticationMethod.keepsSecret,
                !write.password.isEmpty || write.refreshToken != nil || write.expires != nil
            {
                throw refuse("a server-trust decision has no password or token")
            }
            if write.tokenRefresh != nil, write.refreshToken == nil {
                throw refuse("a token endpoint without a refresh token")
            }
            if let endpoint = write.tokenRefresh?.endpoint, let problem = TokenRefresh.problem(withEndpoint: endpoint) {
                throw refuse(problem.description)
            }
            if let expires = write.expires, !expires.isFinite { throw refuse("the expiry is not a time") }
        }
    }

    /// Saves a server-trust decision (a record with no secret); the space's first credential
    /// becomes its default (the rule is the model's, applied here alone so that every client agrees).
    func saveCredential(
        _ space: ProtectionSpace,
        user: String,
        makeDefault: Bool,
        origin: ServedClient
    ) throws(WireError) -> UInt64? {
        try Self.checkCanonical(space, user: user)
        let stored = try records()
        var record = CredentialRecord(
            space: space,
            user: user,
            persistence: .permanent,
            isDefault: false,
            created: Date().timeIntervalSince1970
        )
        record.isDefault = record.becomesDefault(asked: makeDefault, stored: stored)
        return try store.commit([.saveCredential(record)], origin: origin)
    }

    /// Removes the secrets, then the record. If the record cannot be removed, the secrets (read
    /// first) are put back, so the credential stays whole. Journalled first: after a crash
    /// between the two, keyjard finishes the removal at its next start.
    func removeCredential(
        _ space: ProtectionSpace,
        user: String,
        origin: NIOLoopBound<ServedClient>
    ) -> EventLoopFuture<Response> {
        inLane { self.removeInLane(space, user: user, origin: origin) }
    }

    private func removeInLane(
        _ space: ProtectionSpace,
        user: String,
        origin: NIOLoopBound<ServedClient>
    ) -> EventLoopFuture<Response> {
        let key = SecretStoreKey(space: space, user: user)
        do { _ = try store.commit([.beginSecretWrites([.init(.remove, key)])]) } catch {
            return eventLoop.makeFailedFuture(error)
        }
        return offLoop { secrets -> StoredSecrets in
            let previous = try StoredSecrets(of: space, user: user, in: secrets)
            try secrets.removeSecret(.refreshToken, for: space, user: user)
            try secrets.removePassword(for: space, user: user)
            return previous
        }.flatMap { previous in
            do {
                let sequence = try self.store.commit(
                    [.removeCredential(space, user: user), .endSecretWrites([key])],
                    origin: origin.value
                )
                return self.eventLoop.makeSucceededFuture(.committed(sequence: sequence))
            } catch {
                return self.offLoop { secrets in previous.restore(space, user: user, in: secrets) }
                    .flatMapThrowing { _ in throw error }
            }
        }.flatMapErrorThrowing { error in
            _ = try? self.store.commit([.endSecretWrites([key])])
            throw error
        }
    }

    /// Compares the records with the secret store's keys and makes pairs again without losing
    /// a secret: a password without a record (a database restored from before it was stored, a
    /// crash between the two writes) is adopted back as a permanent credential, its item
    /// carrying the space and user; a record without its password is kept, since the user may
    /// still know the password, and removed only when `removeUnpaired` asks.
    func repairCredentials(removeUnpaired: Bool, origin: NIOLoopBound<ServedClient>) -> EventLoopFuture<Response> {
        inLane { self.repairInLane(removeUnpaired: removeUnpaired, origin: origin) }
    }

    private func repairInLane(removeUnpaired: Bool, origin: NIOLoopBound<ServedClient>) -> EventLoopFuture<Response> {
        offLoop { secrets in try secrets.keys() }.flatMapThrowing { keys in
            let stored = try self.records()
            let mismatches = CredentialAudit.mismatches(records: stored, secrets: keys)
            var writes: [StoreDatabase.Write] = []
            var records = stored
            for mismatch in mismatches {
                switch mismatch.kind {
                case .credentialMissing:
                    var record = CredentialRecord(
                        space: mismatch.space,
                        user: mismatch.user,
                        persistence: .permanent,
                        isDefault: false,
                        created: Date().timeIntervalSince1970
                    )
                    record.isDefault = record.becomesDefault(asked: false, stored: records)
                    records.append(record)
                    writes.append(.saveCredential(record))
                case .passwordMissing where removeUnpaired:
                    writes.append(.removeCredential(mismatch.space, user: mismatch.user))
                case .passwordMissing:
                    break
                }
            }
            let sequence = writes.isEmpty ? nil : try self.store.commit(writes, origin: origin.value)
            return .credentialsRepaired(mismatches: mismatches, sequence: sequence)
        }
    }
}

/// A credential's secrets as they were before a write, to put back if the write fails.
struct StoredSecrets: Sendable {
    var password: String?
    var refreshToken: String?

    init(of space: ProtectionSpace, user: String, in secrets: any SecretStore) throws {
        password = try secrets.password(for: space, user: user)
        refreshToken = try secrets.secret(.refreshToken, for: space, user: user)
    }

    /// Best effort: it runs after a failure, whose error is the one reported.
    func restore(_ space: ProtectionSpace, user: String, in secrets: any SecretStore) {
        if let password {
            _ = try? secrets.storePassword(password, for: space, user: user)
        } else {
            _ = try? secrets.removePassword(for: space, user: user)
        }
        if let refreshToken {
            _ = try? secrets.storeSecret(refreshToken, .refreshToken, for: space, user: user)
        } else {
            _ = try? secrets.removeSecret(.refreshToken, for: space, user: user)
        }
    }
}
