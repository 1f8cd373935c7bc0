internal import CSQLite
import Glibc
package import Synchronization

/// SQLITE_TRANSIENT: SQLite copies bound text before the call returns.
private let transient = unsafeBitCast(OpaquePointer(bitPattern: -1), to: sqlite3_destructor_type.self)

/// One SQLite connection with a cache of prepared statements.
///
/// Not thread-safe on its own: its owner (``StoreDatabase``) serialises every use behind a lock.
package final class SQLiteConnection {
    private let handle: OpaquePointer
    private var statements: [String: SQLiteStatement] = [:]

    package init(path: String, readOnly: Bool = false) throws {
        var handle: OpaquePointer?
        let flags =
            readOnly
            ? SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX
            : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX
        let status = sqlite3_open_v2(path, &handle, flags, nil)
        guard status == SQLITE_OK, let handle else {
            let message = handle.map { String(cString: sqlite3_errmsg($0)) } ?? "out of memory"
            sqlite3_close_v2(handle)
            throw SQLiteError(code: status, message: "cannot open \(path): \(message)")
        }
        self.handle = handle
        sqlite3_extended_result_codes(handle, 1)
    }

    /// Opens a database someone else wrote (a browser's profile, which anything of the user or
    /// a downloaded archive may have put there), with SQLite's defences for untrusted files
    /// (sqlite.org/security.html): defensive mode (no writes that corrupt), an untrusted schema
    /// (no function of the application called from it), no views and no triggers (a `cookies`
    /// view could run any query, a recursive one forever, when Keyjar reads the table by its
    /// name), and no memory-mapped reads of a file that may change under it.
    package static func untrusted(path: String, readOnly: Bool = false) throws -> SQLiteConnection {
        let connection = try SQLiteConnection(path: path, readOnly: readOnly)
        for option in [
            SQLITE_DBCONFIG_DEFENSIVE, SQLITE_DBCONFIG_TRUSTED_SCHEMA, SQLITE_DBCONFIG_ENABLE_VIEW,
            SQLITE_DBCONFIG_ENABLE_TRIGGER,
        ] {
            let on: Int32 = option == SQLITE_DBCONFIG_DEFENSIVE ? 1 : 0
            let status = keyjar_sqlite3_db_config_flag(connection.handle, option, on)
            guard status == SQLITE_OK else {
                throw SQLiteError(
                    code: status,
                    message: "cannot open \(path) safely: \(String(cString: sqlite3_errmsg(connection.handle)))"
                )
            }
        }
        try connection.execute("PRAGMA mmap_size = 0; PRAGMA cell_size_check = ON")
        return connection
    }

    /// When another connection holds a lock this one needs, retries every few tens of µs for
    /// the first few ms, then every ms, giving up after about five seconds. SQLite's own busy
    /// timeout sleeps 1 ms at first, far longer than keyjard's restarting checkpoint holds the
    /// writer back.
    package func retryWhenBusy() {
        sqlite3_busy_handler(
            handle,
            { _, attempts in
                if attempts < 100 {
                    usleep(20)
                    return 1
                }
                if attempts < 5_100 {
                    usleep(1_000)
                    return 1
                }
                return 0
            },
            nil
        )
    }

    /// Frames in the WAL as of this connection's last commit, kept current by `sqlite3_wal_hook`
    /// once ``countWALFrames(into:)`` is called. (Registering the hook turns SQLite's automatic
    /// checkpoints off, which is what keyjard wants anyway.)
    package func countWALFrames(into counter: WALFrameCounter) {
        sqlite3_wal_hook(
            handle,
            { context, _, _, frames in
                guard let context else { return SQLITE_OK }
                Unmanaged<WALFrameCounter>.fromOpaque(context).takeUnretainedValue().frames.store(
                    Int(frames),
                    ordering: .relaxed
                )
                return SQLITE_OK
            },
            Unmanaged.passUnretained(counter).toOpaque()
        )
    }

    deinit {
        for statement in statements.values { statement.finalize() }
        sqlite3_close_v2(handle)
    }

    private func error(_ status: Int32, sql: String?) -> SQLiteError {
        SQLiteError(code: status, message: String(cString: sqlite3_errmsg(handle)), sql: sql)
    }

    /// Runs one or more statements that return no rows.
    package func execute(_ sql: String) throws {
        var message: UnsafeMutablePointer<CChar>?
        let status = sqlite3_exec(handle, sql, nil, nil, &message)
        guard status == SQLITE_OK else {
            let text = message.map { String(cString: $0) } ?? "unknown error"
            sqlite3_free(message)
            throw SQLiteError(code: status, message: text, sql: sql)
        }
    }

    /// A cached prepared statement, reset and with its bindings cleared.
    package func statement(_ sql: String) throws -> SQLiteStatement {
        if let cached = statements[sql] {
            cached.reset()
            return cached
        }
        var raw: OpaquePointer?
        let status = sqlite3_prepare_v3(handle, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &raw, nil)
        guard status == SQLITE_OK, let raw else { throw error(status, sql: sql) }
        let statement = SQLiteStatement(raw, connection: self, sql: sql)
        statements[sql] = statement
        return statement
    }

    /// Runs `body` in a transaction: committed when it returns, rolled back when it throws.
    package func transaction<T>(_ body: () throws -> T) throws -> T {
        // Prepared once and cached: every acknowledged write runs these, and parsing them each
        // time through sqlite3_exec was a visible part of a one-cookie commit.
        try statement("BEGIN IMMEDIATE").run()
        do {
            let result = try body()
            try statement("COMMIT").run()
            return result
        } catch {
            try? statement("ROLLBACK").run()
            throw error
        }
    }

    /// Resets every cached statement, ending any read snapshot one of them still holds.
    package func resetStatements() {
        for statement in statements.values { statement.reset() }
    }

    package func integerPragma(_ name: String) throws -> Int64 {
        let statement = try self.statement("PRAGMA \(name)")
        defer { statement.reset() }
        guard try statement.step() else { return 0 }
        return statement.int64(0)
    }

    /// Makes this connection wait up to `milliseconds` for a lock another process holds
    /// (SQLite's own busy handler), instead of failing at once with SQLITE_BUSY. For reading a
    /// database some other program writes (a browser's cookies), where keyjard's fast retries
    /// (``retryWhenBusy()``) are not needed.
    package func waitWhenBusy(milliseconds: Int32) {
        sqlite3_busy_timeout(handle, milliseconds)
    }

    /// The names of `table`'s columns, empty when there is no such table: what a reader of a
    /// database it did not create checks before it selects.
    package func columns(of table: String) throws -> Set<String> {
        let statement = try self.statement("SELECT name FROM pragma_table_info(?)")
        defer { statement.reset() }
        try statement.bind(1, text: table)
        var names = Set<String>()
        while try statement.step() { names.insert(statement.text(0)) }
        return names
    }

    /// Copies this database (the pages still only in its WAL included: a reader's view of it)
    /// into `destination`, an empty database (an in-memory one, say), with SQLite's online
    /// backup: all pages in one step under one read snapshot, so a writer that commits meanwhile
    /// neither blocks the copy nor tears it.
    ///
    /// One attempt at the read snapshot, waiting through this connection's busy handler
    /// (``waitWhenBusy(milliseconds:)``).
    /// - Throws: ``SQLiteError``; its code is SQLITE_BUSY or SQLITE_LOCKED (extended or not) when
    ///   the source stayed locked, SQLITE_READONLY_ROLLBACK or _RECOVERY when only a writer could
    ///   read it (a hot journal, a WAL without its index).
    package func backup(to destination: SQLiteConnection) throws {
        try execute("BEGIN")
        do {
            // A read transaction starts at its first read: this one takes the snapshot.
            _ = try integerPragma("schema_version")
        } catch {
            try? execute("ROLLBACK")
            throw error
        }
        defer { try? execute("COMMIT") }
        guard let backup = sqlite3_backup_init(destination.handle, "main", handle, "main") else {
            throw destination.error(sqlite3_errcode(destination.handle), sql: nil)
        }
        let status = sqlite3_backup_step(backup, -1)
        let finished = sqlite3_backup_finish(backup)
        guard status == SQLITE_DONE else {
            throw SQLiteError(code: status, message: String(cString: sqlite3_errstr(status)), sql: nil)
        }
        guard finished == SQLITE_OK else { throw destination.error(finished, sql: nil) }
    }

    package var changes: Int { Int(sqlite3_changes(handle)) }
    package var lastInsertRowID: Int64 { sqlite3_last_insert_rowid(handle) }

    fileprivate func throwing(_ status: Int32, sql: String) throws {
        guard status == SQLITE_OK else { throw error(status, sql: sql) }
    }

    fileprivate func stepError(_ status: Int32, sql: String) -> SQLiteError { error(status, sql: sql) }
}

/// A prepared statement. Bind with 1-based indices, step, read 0-based columns.
package final class SQLiteStatement {
    private let handle: OpaquePointer
    private unowned let connection: SQLiteConnection
    package let sql: String

    fileprivate init(_ handle: OpaquePointer, connection: SQLiteConnection, sql: String) {
        self.handle = handle
        self.connection = connection
        self.sql = sql
    }

    fileprivate func finalize() { sqlite3_finalize(handle) }

    /// Makes the statement ready to be bound and run again.
    package func reset() {
        sqlite3_reset(handle)
        sqlite3_clear_bindings(handle)
    }

    @discardableResult
    package func bind(_ values: SQLiteValue...) throws -> SQLiteStatement { try bind(values) }

    // Typed binds for the per-row statements of a bulk write (an import binds a million
    // values): no array of boxed values per row.

    package func bind(_ index: Int32, text: String) throws {
        var text = text
        // Bound by length from the string's own UTF-8: no C-string copy, no strlen (an
        // import's change-log entry is megabytes long).
        let status = text.withUTF8 { utf8 in
            guard let base = utf8.baseAddress, !utf8.isEmpty else {
                return sqlite3_bind_text(handle, index, "", 0, transient)
            }
            return sqlite3_bind_text64(handle, index, base, sqlite3_uint64(utf8.count), transient, UInt8(SQLITE_UTF8))
        }
        try connection.throwing(status, sql: sql)
    }

    package func bind(_ index: Int32, integer: Int64) throws {
        try connection.throwing(sqlite3_bind_int64(handle, index, integer), sql: sql)
    }

    package func bind(_ index: Int32, real: Double?) throws {
        let status = real.map { sqlite3_bind_double(handle, index, $0) } ?? sqlite3_bind_null(handle, index)
        try connection.throwing(status, sql: sql)
    }

    @discardableResult
    package func bind(_ values: [SQLiteValue]) throws -> SQLiteStatement {
        for (offset, value) in values.enumerated() {
            let index = Int32(offset + 1)
            switch value {
            case .null: try bind(index, real: nil)
            case .integer(let number): try bind(index, integer: number)
            case .real(let number): try bind(index, real: number)
            case .text(let text): try bind(index, text: text)
            }
        }
        return self
    }

    /// Advances to the next row; false when the statement is done.
    package func step() throws -> Bool {
        let status = sqlite3_step(handle)
        switch status {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        default: throw connection.stepError(status, sql: sql)
        }
    }

    /// Runs a statement that returns no rows.
    package func run() throws {
        while try step() {}
    }

    package func isNull(_ column: Int32) -> Bool { sqlite3_column_type(handle, column) == SQLITE_NULL }
    package func int64(_ column: Int32) -> Int64 { sqlite3_column_int64(handle, column) }
    package func double(_ column: Int32) -> Double { sqlite3_column_double(handle, column) }
    package func optionalDouble(_ column: Int32) -> Double? { isNull(column) ? nil : double(column) }
    package func bool(_ column: Int32) -> Bool { int64(column) != 0 }

    /// A BLOB (or text) column's bytes; empty for NULL.
    package func bytes(_ column: Int32) -> [UInt8] {
        guard let bytes = sqlite3_column_blob(handle, column) else { return [] }
        let count = Int(sqlite3_column_bytes(handle, column))
        return Array(UnsafeRawBufferPointer(start: bytes, count: count))
    }

    package func text(_ column: Int32) -> String {
        guard let bytes = sqlite3_column_text(handle, column) else { return "" }
        let count = Int(sqlite3_column_bytes(handle, column))
        return String(decoding: UnsafeBufferPointer(start: bytes, count: count), as: UTF8.self)
    }
}

package enum SQLiteValue {
    case null
    case integer(Int64)
    case real(Double)
    case text(String)

    package static func bool(_ value: Bool) -> SQLiteValue { .integer(value ? 1 : 0) }
    package static func optional(_ value: Double?) -> SQLiteValue { value.map(SQLiteValue.real) ?? .null }
    package static func optional(_ value: String?) -> SQLiteValue { value.map(SQLiteValue.text) ?? .null }
}

/// What ``SQLiteConnection/countWALFrames(into:)`` writes to. The connection holds it unretained:
/// its owner keeps it alive for as long as the connection.
package final class WALFrameCounter: Sendable {
    package let frames = Atomic<Int>(0)

    package init() {}
}
