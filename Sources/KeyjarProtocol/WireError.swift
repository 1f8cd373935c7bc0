/// An error reply. Codes are fixed and listed in Schemas/protocol.md; messages are for people
/// and never contain a password.
public struct WireError: Error, Sendable, Hashable, CustomStringConvertible {
    public var code: UInt16
    public var message: String

    public init(code: UInt16, message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { "\(message) (keyjar error \(code))" }

    // The numbers, as ``code`` holds them (named once, in ``WireErrorCode``).
    public static let malformedFrame = WireErrorCode.malformedFrame.rawValue
    public static let unsupportedVersion = WireErrorCode.unsupportedVersion.rawValue
    public static let malformedMessage = WireErrorCode.malformedMessage.rawValue
    public static let handshakeRequired = WireErrorCode.handshakeRequired.rawValue
    public static let invalidArgument = WireErrorCode.invalidArgument.rawValue
    public static let notFound = WireErrorCode.notFound.rawValue
    public static let cookieRejected = WireErrorCode.cookieRejected.rawValue
    public static let loginRequired = WireErrorCode.loginRequired.rawValue
    public static let storageFailure = WireErrorCode.storageFailure.rawValue
    public static let secretsUnavailable = WireErrorCode.secretsUnavailable.rawValue
    public static let overloaded = WireErrorCode.overloaded.rawValue
    public static let shuttingDown = WireErrorCode.shuttingDown.rawValue
    public static let secretsLocked = WireErrorCode.secretsLocked.rawValue
    public static let wrongPassphrase = WireErrorCode.wrongPassphrase.rawValue
}
