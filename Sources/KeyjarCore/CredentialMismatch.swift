/// A credential's metadata without its password in the secret store, or a password in the
/// secret store with no credential: what a crash between the two writes of a credential leaves.
/// Never carries a password.
public struct CredentialMismatch: Sendable, Hashable {
    public enum Kind: String, Sendable, Hashable {
        /// keyjard has the credential; the secret store has no password for it.
        case passwordMissing
        /// The secret store has a Keyjar password that no credential owns.
        case credentialMissing
    }

    public var kind: Kind
    public var space: ProtectionSpace
    public var user: String
    /// For ``Kind/passwordMissing``: when keyjard first found the password gone (seconds since
    /// 1970), kept until the password is stored again; `nil` when not recorded (the report of
    /// a repair, or a store that could not record it).
    public var noticed: Double?

    public init(kind: Kind, space: ProtectionSpace, user: String, noticed: Double? = nil) {
        self.kind = kind
        self.space = space
        self.user = user
        self.noticed = noticed
    }
}
