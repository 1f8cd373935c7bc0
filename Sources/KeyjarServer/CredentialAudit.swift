import KeyjarCore
import KeyjarProtocol
import KeyjarStore

/// Which credentials and passwords are not in pairs.
///
/// A credential with a secret is two writes in two stores (the password to the secret store,
/// then its record to SQLite; removal in the same order), so a crash between them leaves half a
/// credential. keyjard runs those writes one at a time (``CredentialKeeper/inLane(_:)``),
/// so that this comparison never mistakes a write in progress for a half one.
enum CredentialAudit {
    /// The records of credentials that keep a secret whose password is missing, then the
    /// passwords no record owns; each list sorted so that reports are stable.
    static func mismatches(records: [CredentialRecord], secrets: [SecretStoreKey]) -> [CredentialMismatch] {
        let recorded = Set(
            records.filter(\.space.authenticationMethod.keepsSecret).map {
                SecretStoreKey(space: $0.space, user: $0.user)
            }
        )
        let stored = Set(secrets)
        let missingPasswords = recorded.subtracting(stored).map {
            CredentialMismatch(kind: .passwordMissing, space: $0.space, user: $0.user)
        }
        let missingRecords = stored.subtracting(recorded).map {
            CredentialMismatch(kind: .credentialMissing, space: $0.space, user: $0.user)
        }
        return missingPasswords.sorted(by: order) + missingRecords.sorted(by: order)
    }

    private static func order(_ a: CredentialMismatch, _ b: CredentialMismatch) -> Bool {
        (
            a.space.host, a.space.port, a.space.protocol + a.space.proxyType.rawValue, a.space.realm ?? "",
            a.space.authenticationMethod.rawValue, a.user
        )
            < (
                b.space.host, b.space.port, b.space.protocol + b.space.proxyType.rawValue, b.space.realm ?? "",
                b.space.authenticationMethod.rawValue, b.user
            )
    }
}
