/// Why a Keyjar client call failed. Never carries a password.
public struct KeyjarClientError: Error, Sendable, Hashable, CustomStringConvertible {
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        fileprivate enum Value: Sendable, Hashable {
            case unreachable, refused, timedOut, protocolViolation
        }

        fileprivate let value: Value
        /// No keyjard answers (and auto-start was off or failed).
        public static let unreachable = Code(value: .unreachable)
        /// keyjard answered with an error (see ``KeyjarClientError/wireCode``).
        public static let refused = Code(value: .refused)
        /// keyjard did not answer in time.
        public static let timedOut = Code(value: .timedOut)
        /// keyjard sent something this client does not understand.
        public static let protocolViolation = Code(value: .protocolViolation)

        public var description: String { "\(value)" }
    }

    public var code: Code
    public var message: String
    /// The wire error code when keyjard refused the request (Schemas/protocol.md).
    public var wireCode: UInt16?

    public init(code: Code, message: String, wireCode: UInt16? = nil) {
        self.code = code
        self.message = message
        self.wireCode = wireCode
    }

    public var description: String { message }
}
