import Foundation
import KeyjarCore
import KeyjarProtocol
import KeyjarStore
import NIOCore

// Refreshing an access token once for every process (RFC 6749 §6): one process at a time holds
// a credential's refresh lease, and the others wait for the token it stores.
extension CredentialKeeper {
    // MARK: - Reading the refresh token

    func refreshToken(_ space: ProtectionSpace, user: String) -> EventLoopFuture<Response> {
        let record: CredentialRecord?
        do { record = try records().first { $0.space == space && $0.user == user } } catch {
            return eventLoop.makeFailedFuture(error)
        }
        guard let record, record.hasRefreshToken else {
            return eventLoop.makeSucceededFuture(.refreshToken(token: nil))
        }
        return offLoop { secrets in try secrets.secret(.refreshToken, for: space, user: user) }.map {
            .refreshToken(token: $0)
        }
    }

    // MARK: - Refreshing

    /// Gives the caller the credential's refresh lease and its refresh token, or (when another
    /// process refreshed meanwhile) the new access token; waits while another holds the lease.
    func beginTokenRefresh(
        _ key: LeaseKey,
        rejected: String?,
        origin: NIOLoopBound<ServedClient>
    ) -> EventLoopFuture<Response> {
        let clientID = origin.value.id
        // Its connection closed while it waited: nobody would read the reply, or end a lease.
        guard store.isConnected(clientID) else {
            return eventLoop.makeFailedFuture(WireError(code: WireError.invalidArgument, message: "the client is gone"))
        }
        switch state.tokenLeases.acquire(key, by: clientID) {
        case .alreadyHeld:
            // Waiting would stall this very connection (its requests are answered in order), so
            // its own report could never arrive: a client refreshes on a connection of its own.
            return eventLoop.makeFailedFuture(
                WireError(code: WireError.invalidArgument, message: "this connection is already refreshing that token")
            )
        case .busy:
            // Requests on this connection wait behind this one: clients ask on a connection
            // kept for the refresh, so that their other requests are not held up.
            let promise = eventLoop.makePromise(of: Void.self)
            guard state.tokenLeases.enqueue(promise, for: key) else {
                promise.succeed()
                return beginTokenRefresh(key, rejected: rejected, origin: origin)
            }
            return promise.futureResult.flatMap { self.beginTokenRefresh(key, rejected: rejected, origin: origin) }
        case .granted(let generation):
            eventLoop.scheduleTask(in: .seconds(TokenRefreshLeases<EventLoopPromise<Void>>.maximumHold)) {
                for waiter in self.state.tokenLeases.expire(key, generation: generation) { waiter.succeed() }
            }
            return refreshStep(key, rejected: rejected).always { result in
                // The lease stays with the caller only while it refreshes.
                if case .success(.tokenRefresh(.refresh)) = result { return }
                self.releaseLease(key, by: clientID)
            }
        }
    }

    private func refreshStep(_ key: LeaseKey, rejected: String?) -> EventLoopFuture<Response> {
        let record: CredentialRecord
        do {
            guard let found = try records().first(where: { $0.space == key.space && $0.user == key.user })
            else {
                throw WireError(
                    code: WireError.notFound,
                    message: "no stored credential for \(key.user) at \(key.space.host)"
                )
            }
            record = found
        } catch {
            return eventLoop.makeFailedFuture(error)
        }
        guard !record.isRevoked else {
            return eventLoop.makeFailedFuture(Self.loginRequired(key, "the token endpoint refused its refresh token"))
        }
        // A record kept from before the endpoint rule (or written into the database by hand)
        // never hands its refresh token out for a post that would cross the network in clear.
        if let endpoint = record.tokenRefresh?.endpoint, let problem = TokenRefresh.problem(withEndpoint: endpoint) {
            return eventLoop.makeFailedFuture(Self.loginRequired(key, problem.description))
        }
        return offLoop { secrets in
            (
                try secrets.password(for: key.space, user: key.user),
                record.hasRefreshToken ? try secrets.secret(.refreshToken, for: key.space, user: key.user) : nil
            )
        }.flatMapThrowing { current, refreshToken in
            // Another process stored a token the caller has not tried: that one.
            if let current, current != rejected, !record.isExpired(at: Date().timeIntervalSince1970) {
                return .tokenRefresh(step: .current(accessToken: current, expires: record.expires))
            }
            guard let refresh = record.tokenRefresh, let refreshToken else {
                throw Self.loginRequired(key, "no refresh token and token endpoint are stored for it")
            }
            return .tokenRefresh(step: .refresh(refreshToken: refreshToken, refresh: refresh))
        }
    }

    /// The lease holder's report: the new token stored for every process (the refresh token
    /// first, as in ``saveCredentials(_:origin:)``), or the credential revoked, or nothing.
    func finishTokenRefresh(
        _ key: LeaseKey,
        outcome: TokenRefreshOutcome,
        origin: NIOLoopBound<ServedClient>
    ) -> EventLoopFuture<Response> {
        let client = origin.value
        if !state.tokenLeases.isHeld(key, by: client.id) {
            // A report after its lease ran out (a slow token endpoint) is still the newest token,
            // and with rotation the only refresh token that works: stored if nobody else has
            // taken the lease meanwhile, under a lease of its own.
            guard case .granted = state.tokenLeases.acquire(key, by: client.id) else {
                return eventLoop.makeFailedFuture(
                    WireError(
                        code: WireError.invalidArgument,
                        message: "another process is refreshing that token now (this refresh's lease ended)"
                    )
                )
            }
        }
        let finished: EventLoopFuture<Response>
        switch outcome {
        case .failed(revoke: false):
            finished = eventLoop.makeSucceededFuture(.committed(sequence: nil))
        case .failed(revoke: true):
            do {
                let sequence = try store.commit([.revokeCredential(key.space, user: key.user)], origin: client)
                finished = eventLoop.makeSucceededFuture(.committed(sequence: sequence))
            } catch {
                finished = eventLoop.makeFailedFuture(error)
            }
        case .refreshed(let accessToken, let refreshToken, let expires):
            finished = inLane {
                // In the lane, so no removal runs between this check and the writes: a
                // credential removed while it was refreshed (a leaked token got rid of) is not
                // brought back by its refresh.
                let found: CredentialRecord?
                do {
                    found = try self.records().first { $0.space == key.space && $0.user == key.user }
                } catch {
                    return self.eventLoop.makeFailedFuture(error)
                }
                guard found != nil else {
                    return self.eventLoop.makeFailedFuture(
                        WireError(code: WireError.notFound, message: "the credential was removed meanwhile")
                    )
                }
                return self.offLoop { secrets -> StoredSecrets in
                    let previous = try StoredSecrets(of: key.space, user: key.user, in: secrets)
                    do {
                        if let refreshToken {
                            try secrets.storeSecret(refreshToken, .refreshToken, for: key.space, user: key.user)
                        }
                        try secrets.storePassword(accessToken, for: key.space, user: key.user)
                    } catch {
                        previous.restore(key.space, user: key.user, in: secrets)
                        throw error
                    }
                    return previous
                }.flatMap { previous in
                    do {
                        // Read again: its default flag may have changed on the loop meanwhile.
                        guard
                            var record = try self.records().first(where: {
                                $0.space == key.space && $0.user == key.user
                            })
                        else {
                            throw WireError(code: WireError.notFound, message: "the credential was removed meanwhile")
                        }
                        record.expires = expires
                        record.isRevoked = false
                        record.modified = Date().timeIntervalSince1970
                        let sequence = try self.store.commit([.saveCredential(record)], origin: origin.value)
                        return self.eventLoop.makeSucceededFuture(.committed(sequence: sequence))
                    } catch {
                        return self.offLoop { secrets in previous.restore(key.space, user: key.user, in: secrets) }
                            .flatMapThrowing { _ in throw error }
                    }
                }
            }
        }
        let clientID = client.id
        return finished.always { _ in self.releaseLease(key, by: clientID) }
    }

    private func releaseLease(_ key: LeaseKey, by client: UInt64) {
        for waiter in state.tokenLeases.release(key, by: client) { waiter.succeed() }
    }

    private static func loginRequired(_ key: LeaseKey, _ why: String) -> WireError {
        WireError(
            code: WireError.loginRequired,
            message: "the token of \(key.user.isEmpty ? "" : "\(key.user) at ")\(key.space.host) cannot be refreshed: "
                + "\(why); log in again and store the new token (keyjar credential add --token-stdin)"
        )
    }
}
