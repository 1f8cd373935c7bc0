/// Why the store refused or failed an operation. Never carries a password.
public struct StoreError: Error, Sendable, Hashable, CustomStringConvertible {
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        fileprivate enum Value: Sendable, Hashable {
            case futureSchema, database, encoding, invalidArgument
        }

        fileprivate let value: Value
        /// The database was written by a newer keyjard; it is left untouched.
        public static let futureSchema = Code(value: .futureSchema)
        /// SQLite failed.
        public static let database = Code(value: .database)
        /// A stored event could not be encoded or decoded.
        public static let encoding = Code(value: .encoding)
        /// The request itself is not acceptable (e.g. a synchronizable credential).
        public static let invalidArgument = Code(value: .invalidArgument)

        public var description: String { "\(value)" }
    }

    public var code: Code
    public var message: String

    public init(code: Code, message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { message }

    public static func == (lhs: StoreError, rhs: StoreError) -> Bool { lhs.code == rhs.code }
    public func hash(into hasher: inout Hasher) { hasher.combine(code) }
}
