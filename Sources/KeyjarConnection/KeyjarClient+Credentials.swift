public import KeyjarCore
import KeyjarProtocol

/// Credential requests, answered by keyjard: metadata from its database, passwords from the
/// Secret Service (only ever by ``password(user:for:)``).
extension KeyjarClient {
    /// Every stored permanent credential's metadata (never a password).
    public func credentialRecords() throws(KeyjarClientError) -> [CredentialRecord] {
        guard case .credentials(let records) = try call(.allCredentials) else { throw Self.unexpectedReply }
        return records
    }

    /// The stored credentials that may answer a challenge for `space`, by Keyjar's matching
    /// rule (`CredentialChoice`), which keyjard applies.
    public func credentialCandidates(for space: ProtectionSpace) throws(KeyjarClientError) -> CredentialCandidates {
        guard case .credentialChoice(let candidates, let preferred) = try call(.credentialChoice(space: space)) else {
            throw Self.unexpectedReply
        }
        return CredentialCandidates(records: candidates, preferred: preferred)
    }

    /// Stores a permanent credential: its password in the Secret Service, its metadata in
    /// keyjard's database. keyjard makes a space's first credential its default.
    public func setCredential(
        user: String,
        password: String,
        for space: ProtectionSpace,
        makeDefault: Bool = false
    ) throws(KeyjarClientError) {
        _ = try call(.setCredential(space: space, user: user, password: password, makeDefault: makeDefault))
    }

    public func removeCredential(user: String, for space: ProtectionSpace) throws(KeyjarClientError) {
        _ = try call(.removeCredential(space: space, user: user))
    }

    /// Makes the user's credential the space's only default.
    public func setDefaultCredential(user: String, for space: ProtectionSpace) throws(KeyjarClientError) {
        _ = try call(.setDefaultCredential(space: space, user: user))
    }

    /// The stored password of a permanent credential; nil when there is none.
    public func password(user: String, for space: ProtectionSpace) throws(KeyjarClientError) -> String? {
        guard case .password(let password) = try call(.password(space: space, user: user)) else {
            throw Self.unexpectedReply
        }
        return password
    }

    /// Makes pairs of credentials and passwords again: a Keyjar password without a record is
    /// adopted back as a permanent credential; a record without its password is kept (the user
    /// may still know it), or removed when `removeUnpaired`.
    /// - Returns: what was found: passwords adopted (`credentialMissing`) and credentials
    ///   without a password, kept or removed (`passwordMissing`).
    public func repairCredentials(removeUnpaired: Bool = false) throws(KeyjarClientError) -> [CredentialMismatch] {
        guard case .credentialsRepaired(let repaired, _) = try call(.repairCredentials(removeUnpaired: removeUnpaired))
        else {
            throw Self.unexpectedReply
        }
        return repaired
    }
}

/// Tokens: credentials with an expiry and an OAuth refresh token (protocol version 4).
extension KeyjarClient {
    /// Stores a permanent credential with its token's metadata: the password (an access token)
    /// and the refresh token in the Secret Service, the rest in keyjard's database.
    ///
    /// - Parameters:
    ///   - expires: When the password stops working (seconds since 1970); it is never offered after.
    ///   - refreshToken: An OAuth refresh token to keep beside it (a secret).
    ///   - tokenRefresh: Where Keyjar refreshes the token with `refreshToken` (RFC 6749 §6).
    public func setCredential(
        user: String,
        password: String,
        for space: ProtectionSpace,
        makeDefault: Bool = false,
        expires: Double?,
        refreshToken: String? = nil,
        tokenRefresh: TokenRefresh? = nil
    ) throws(KeyjarClientError) {
        _ = try saveCredentials([
            CredentialWrite(
                space: space,
                user: user,
                password: password,
                makeDefault: makeDefault,
                expires: expires,
                refreshToken: refreshToken,
                tokenRefresh: tokenRefresh
            )
        ])
    }

    /// Stores several permanent credentials, all or none (one transaction; the secrets written
    /// are put back if it fails).
    /// - Returns: the sequence number of the change, nil when nothing changed.
    @discardableResult
    public func saveCredentials(_ writes: [CredentialWrite]) throws(KeyjarClientError) -> UInt64? {
        guard case .committed(let sequence) = try call(.saveCredentials(writes: writes)) else {
            throw Self.unexpectedReply
        }
        return sequence
    }

    /// The OAuth refresh token stored beside a credential's password; nil when there is none.
    public func refreshToken(user: String, for space: ProtectionSpace) throws(KeyjarClientError) -> String? {
        guard case .refreshToken(let token) = try call(.refreshToken(space: space, user: user)) else {
            throw Self.unexpectedReply
        }
        return token
    }

    /// Asks to refresh a credential's access token, after `rejected` failed (nil when only its
    /// expiry was seen). keyjard gives one caller at a time the refresh token (a lease, held
    /// until ``finishTokenRefresh(user:for:outcome:)`` or until this connection closes); the
    /// others wait and are then given the token it stored. A caller given `.refresh` must report.
    ///
    /// - Throws: ``KeyjarClientError`` with wire code `loginRequired` (13) when the token cannot
    ///   be refreshed (no refresh token stored, or the endpoint refused it): the user logs in again.
    public func beginTokenRefresh(
        user: String,
        for space: ProtectionSpace,
        rejected: String?
    ) throws(KeyjarClientError) -> TokenRefreshStep {
        guard case .tokenRefresh(let step) = try call(.beginTokenRefresh(space: space, user: user, rejected: rejected))
        else { throw Self.unexpectedReply }
        return step
    }

    /// Reports how the refresh this client was leased ended (the new token is stored for every
    /// process), and ends the lease.
    public func finishTokenRefresh(
        user: String,
        for space: ProtectionSpace,
        outcome: TokenRefreshOutcome
    ) throws(KeyjarClientError) {
        _ = try call(.finishTokenRefresh(space: space, user: user, outcome: outcome))
    }
}
