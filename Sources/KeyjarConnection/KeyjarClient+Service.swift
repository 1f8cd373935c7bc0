public import KeyjarCore
import KeyjarProtocol

/// keyjard's state: its status report and the cookie policy.
extension KeyjarClient {
    /// What keyjard reports about itself: versions, paths, counts, the secrets backend's health,
    /// connected clients, memory bounds, and the half credentials it finds.
    public func status() throws(KeyjarClientError) -> ServiceStatus {
        guard case .status(let status) = try call(.status) else { throw Self.unexpectedReply }
        return status
    }

    /// The accept policy and domain rules, as keyjard holds them.
    public func policy() throws(KeyjarClientError) -> CookiePolicy {
        guard case .policy(let policy) = try call(.policy) else { throw Self.unexpectedReply }
        return policy
    }

    /// Opens keyjard's encrypted secrets file with `passphrase` until ``lockSecrets()``; with
    /// `create`, when there is no file yet, makes one sealed under it.
    /// - Parameter lockAfterIdle: keyjard locks the file again once no secret has been read or
    ///   stored for this many seconds (0: never; nil: keyjard's `--lock-after-idle`).
    /// - Throws: ``KeyjarClientError`` refused with wire code `wrongPassphrase`, `notFound` (no
    ///   file, and `create` is false) or `invalidArgument` (keyjard keeps no encrypted file).
    public func unlockSecrets(
        passphrase: String,
        create: Bool = false,
        lockAfterIdle: Int? = nil
    ) throws(KeyjarClientError) {
        _ = try call(.unlockSecrets(passphrase: passphrase, create: create, lockAfterIdle: lockAfterIdle))
    }

    /// Moves every secret to another store (`secret-service`, `encrypted` or `file`; `path` its
    /// file, else beside the database; `passphrase` the encrypted file's), losing none: see
    /// `Request.migrateSecrets`. Asked again after an interruption, it finishes.
    public func migrateSecrets(to backend: String, path: String?, passphrase: String?) throws(KeyjarClientError) {
        _ = try call(.migrateSecrets(backend: backend, path: path, passphrase: passphrase))
    }

    /// Makes keyjard forget its encrypted secrets file's key: until the next unlock, no password
    /// is read or stored.
    public func lockSecrets() throws(KeyjarClientError) {
        _ = try call(.lockSecrets)
    }

    /// Replaces the accept policy and domain rules (domains are canonicalised by keyjard).
    public func setPolicy(_ policy: CookiePolicy) throws(KeyjarClientError) {
        _ = try call(.setPolicy(policy: policy))
    }
}
