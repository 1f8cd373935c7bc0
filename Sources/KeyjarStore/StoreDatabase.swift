import Foundation
import KeyjarCore
import KeyjarSQLite
import Synchronization

/// keyjard's SQLite database: cookies, the accept policy and domain rules, credential metadata
/// (never passwords), and the log of sequenced changes that clients resynchronise from.
///
/// keyjard is its only writer. Every write commits in one transaction together with its change
/// log entries, so a change is acknowledged exactly when it is durable and numbered. The
/// database runs in WAL mode with `synchronous=NORMAL` (a committed transaction survives a crash
/// of keyjard; power loss may lose the last commits), automatic checkpoints off, and
/// ``checkpoint()`` run from a separate connection off the commit path.
///
/// ```swift
/// let database = try StoreDatabase(path: "/tmp/store.sqlite3")
/// let events = try database.commit([.cookies([.added(cookie)])])
/// let snapshot = try database.loadSnapshot()
/// ```
public final class StoreDatabase: @unchecked Sendable {
    // @unchecked: the two connections are only ever used under their own locks (`withWriter`,
    // `checkpoint`); everything else is immutable or atomic.
    public let path: String
    /// The schema version this build writes; a database with a higher one is refused.
    public static var schemaVersion: Int64 { migrations.latest }
    /// How many change-log entries are kept for clients that resynchronise by sequence number.
    public let changeLogLimit: Int

    private let writer: SQLiteConnection
    private let writerLock = NSLock()
    let checkpointer: SQLiteConnection
    let checkpointerLock = NSLock()
    let walFrameCounter = WALFrameCounter()
    let checkpointRunning = Atomic<Bool>(false)
    /// When the last commit ended (``monotonicNow()``): how long writing has paused.
    let lastCommit = Atomic<UInt64>(StoreDatabase.monotonicNow())
    let commitsSinceTrim = Atomic<Int>(0)

    /// The largest event JSON kept in the change log. A bigger change (an import) is logged as
    /// ``ChangeLogFormat/compacted`` instead: a client that missed it resynchronises from a
    /// snapshot, which costs it no more than replaying the event, and the log cannot grow by
    /// megabytes per write.
    public let largestLoggedEvent: Int

    /// Opens (creating if needed) and migrates the database at `path`.
    /// - Throws: ``StoreError`` with code `.futureSchema` when a newer keyjard wrote it.
    public init(path: String, changeLogLimit: Int = 10_000, largestLoggedEvent: Int = 1 << 20) throws {
        self.path = path
        self.changeLogLimit = changeLogLimit
        self.largestLoggedEvent = largestLoggedEvent
        let connection = try Self.wrap { try SQLiteConnection(path: path) }
        connection.retryWhenBusy()
        // The version is checked before anything else: even switching to WAL rewrites the file
        // header of a database this build must not touch.
        try Self.checkVersion(connection, path: path)
        try Self.wrap {
            try connection.execute("PRAGMA journal_mode = WAL")
            try connection.execute("PRAGMA synchronous = NORMAL")
            try connection.execute("PRAGMA wal_autocheckpoint = 0")
            // When a checkpoint lets the writer start the WAL over, the file is cut back to this.
            try connection.execute("PRAGMA journal_size_limit = \(Self.walBytesKept)")
        }
        connection.countWALFrames(into: walFrameCounter)
        try Self.migrate(connection, path: path)
        writer = connection
        checkpointer = try Self.wrap { try SQLiteConnection(path: path) }
        // A restarting checkpoint waits for the writer's current transaction, a short one.
        try Self.wrap { try checkpointer.execute("PRAGMA busy_timeout = 1000") }
        // What the last keyjard left in the WAL goes into the database before anything else, and
        // the WAL file is emptied. The running checkpointer does this only once writes pause for
        // a second: a keyjard killed more often than that (a crash loop, the stress run's kills)
        // would otherwise pass an ever longer WAL on to the next, until the WAL alone filled the
        // disk and no checkpoint could run (the database must grow to take it). A failure here
        // (the disk already full) is not fatal: the running checkpointer tries again.
        _ = try? checkpoint(.truncate)
    }

    static func wrap<T>(_ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let error as SQLiteError {
            throw StoreError(code: .database, message: error.description)
        }
    }

    static func checkVersion(_ connection: SQLiteConnection, path: String) throws {
        guard case .future(let current) = try wrap({ try migrations.start(of: connection) }) else { return }
        throw StoreError(
            code: .futureSchema,
            message: "\(path) has schema version \(current), newer than this keyjard supports (\(schemaVersion)); "
                + "it was left untouched: run a newer keyjard or pass another --database"
        )
    }

    static func migrate(_ connection: SQLiteConnection, path: String) throws {
        try wrap { try migrations.apply(to: connection) }
    }

    /// Runs `body` on the writer connection, mapping SQLite failures to ``StoreError``.
    func withWriter<T>(_ body: (SQLiteConnection) throws -> T) throws -> T {
        try writerLock.withLock {
            // A statement left on a row holds a read snapshot that stops checkpoints; reset all.
            defer { writer.resetStatements() }
            return try Self.wrap { try body(writer) }
        }
    }
}
