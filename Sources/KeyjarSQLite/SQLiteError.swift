/// A failed SQLite call: the result code, SQLite's message, and the statement when there was one.
public struct SQLiteError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The (extended) SQLite result code, e.g. 19 for a constraint violation.
    public var code: Int32
    public var message: String
    public var sql: String?

    public var description: String {
        sql.map { "SQLite error \(code): \(message) (in \($0))" } ?? "SQLite error \(code): \(message)"
    }
}
