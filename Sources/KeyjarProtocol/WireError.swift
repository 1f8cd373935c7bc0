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

    // Protocol
    public static let malformedFrame: UInt16 = 1
    public static let unsupportedVersion: UInt16 = 2
    public static let malformedMessage: UInt16 = 3
    public static let handshakeRequired: UInt16 = 4
    // Requests
    public static let invalidArgument: UInt16 = 10
    public static let notFound: UInt16 = 11
    public static let cookieRejected: UInt16 = 12
    // Service
    public static let storageFailure: UInt16 = 20
    public static let secretsUnavailable: UInt16 = 21
    public static let overloaded: UInt16 = 22
    public static let shuttingDown: UInt16 = 23
}
