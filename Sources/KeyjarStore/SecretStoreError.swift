/// A failed ``SecretStore`` operation.
///
/// Match on ``code``; ``description`` is a sentence for people that says what went wrong and,
/// where there is something to do, what to do. No message ever contains a password.
///
/// ```swift
/// do {
///     try store.storePassword(password, for: space, user: "alice")
/// } catch let error as SecretStoreError where error.code == .serviceUnavailable {
///     print(error)  // "No Secret Service is running on the D-Bus session bus: start …"
/// }
/// ```
public struct SecretStoreError: Error, CustomStringConvertible {
    /// What kind of failure this is. New codes may be added without breaking callers, because
    /// the cases sit in a private enum rather than a public one.
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        private enum Value: String, Sendable, Hashable {
            case serviceUnavailable, noDefaultCollection, locked, operationFailed, invalidInput, insecureFile,
                unreadableFile, fileLocked, wrongPassphrase
        }

        private let value: Value

        private init(_ value: Value) {
            self.value = value
        }

        /// No Secret Service answers on the D-Bus session bus, or there is no session bus.
        public static let serviceUnavailable = Code(.serviceUnavailable)
        /// A Secret Service answers but has no default collection to store into (a keyring daemon
        /// started without a login keyring): storing would have it prompt to create one.
        public static let noDefaultCollection = Code(.noDefaultCollection)
        /// The collection or item is locked and could not be unlocked (e.g. the prompt was dismissed).
        public static let locked = Code(.locked)
        /// The backend reported another failure; the message says which.
        public static let operationFailed = Code(.operationFailed)
        /// An argument cannot be stored, e.g. it contains a NUL character.
        public static let invalidInput = Code(.invalidInput)
        /// A ``FileSecretStore`` file is readable by others, not a regular file, or not ours.
        public static let insecureFile = Code(.insecureFile)
        /// A secrets file cannot be read, written or parsed.
        public static let unreadableFile = Code(.unreadableFile)
        /// The ``EncryptedSecretStore`` is locked: a secret can be neither read nor stored until
        /// it is unlocked with its passphrase.
        public static let fileLocked = Code(.fileLocked)
        /// The passphrase does not open the ``EncryptedSecretStore``'s file.
        public static let wrongPassphrase = Code(.wrongPassphrase)

        public var description: String { value.rawValue }
    }

    /// What kind of failure this is.
    public let code: Code
    /// Details for people: libsecret's message, the file path, the errno text. Never a password.
    public let detail: String
    /// The error that caused this one, when there was a Swift error (not for libsecret's GError,
    /// whose message is in ``detail``).
    public let underlying: (any Error)?

    /// Creates an error. Callers must keep passwords out of `detail`.
    init(_ code: Code, _ detail: String, underlying: (any Error)? = nil) {
        self.code = code
        self.detail = detail
        self.underlying = underlying
    }

    public var description: String {
        let advice: String
        switch code {
        case .serviceUnavailable:
            advice =
                "No Secret Service is running on the D-Bus session bus: start gnome-keyring-daemon "
                + "(or another Secret Service such as KeePassXC), or run keyjard with --secrets file "
                + "(KEYJAR_SECRETS=file for a keyjard that clients start)"
        case .noDefaultCollection:
            advice =
                "The Secret Service has no default collection: create one (e.g. a \"Login\" keyring "
                + "in Seahorse) or set an existing one as default, or run keyjard with --secrets file "
                + "(KEYJAR_SECRETS=file for a keyjard that clients start)"
        case .locked:
            advice =
                "The Secret Service's default collection is locked: unlock it (log in to the desktop "
                + "session, or unlock the keyring in Seahorse or with gnome-keyring-daemon --unlock) and retry"
        case .insecureFile:
            advice = "Refusing to use the secrets file: it must be a regular file owned by you with mode 0600"
        case .unreadableFile:
            advice = "Cannot use the secrets file"
        case .invalidInput:
            advice = "Cannot store this credential"
        case .fileLocked:
            advice = "The encrypted secrets file is locked: run keyjar unlock and retry"
        case .wrongPassphrase:
            advice = "The passphrase does not open the encrypted secrets file; nothing was changed"
        default:
            advice = "The secret store failed"
        }
        return detail.isEmpty ? advice : "\(advice) (\(detail))"
    }
}
