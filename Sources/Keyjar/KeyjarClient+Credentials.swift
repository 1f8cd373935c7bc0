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

    /// Removes each half credential (metadata without its password, or a Keyjar password
    /// without metadata) that a crash between the two writes left.
    /// - Returns: what was removed.
    public func repairCredentials() throws(KeyjarClientError) -> [CredentialMismatch] {
        guard case .credentialsRepaired(let repaired, _) = try call(.repairCredentials) else {
            throw Self.unexpectedReply
        }
        return repaired
    }
}
