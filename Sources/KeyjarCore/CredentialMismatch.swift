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

    public init(kind: Kind, space: ProtectionSpace, user: String) {
        self.kind = kind
        self.space = space
        self.user = user
    }
}
