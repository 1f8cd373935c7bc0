import Foundation
import Glibc
import KeyjarBrowserCookies
import KeyjarSQLite
import KeyjarTestSupport
import Testing

/// A table spread over many pages whose rows all hold one number, which every transaction of a
/// test's writer changes in every row: a copy that mixes two commits shows two numbers.
func counterDatabase(_ path: String, rows: Int = 64) throws {
    try SQLiteConnection(path: path).execute(counterDatabaseSQL(rows: rows))
}

/// The statements that make a ``counterDatabase(_:rows:)``, for a `sqlite3` shell to run.
func counterDatabaseSQL(rows: Int = 64) -> String {
    """
    CREATE TABLE t(id INTEGER PRIMARY KEY, v INTEGER NOT NULL, pad BLOB NOT NULL);
    WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < \(rows))
    INSERT INTO t SELECT i, 0, randomblob(1500) FROM n;
    """
}

/// What a snapshot of a ``counterDatabase(_:rows:)`` holds: its rows, their distinct numbers,
/// and what `PRAGMA integrity_check` says.
struct CounterContents: Sendable, Equatable {
    var rows: Int64
    var values: [Int64]
    var integrity: String

    init(_ database: SQLiteConnection) throws {
        let count = try database.statement("SELECT count(*) FROM t")
        rows = try count.step() ? count.int64(0) : -1
        count.reset()
        let distinct = try database.statement("SELECT DISTINCT v FROM t ORDER BY v")
        values = []
        while try distinct.step() { values.append(distinct.int64(0)) }
        distinct.reset()
        let check = try database.statement("PRAGMA integrity_check")
        integrity = try check.step() ? check.text(0) : ""
        check.reset()
    }
}

@Suite(.timeLimit(hangLimit))
struct SnapshotFileCopyTests {
    /// A browser in exclusive locking mode that writes without pause: every snapshot is the
    /// files of one commit, loaded whole (the online backup cannot get in, so each is a copy
    /// of the files), or the locked error; never a torn or mixed copy, never another error.
    @Test(arguments: ["WAL", "DELETE"])
    func aCopyTakenWhileTheBrowserWritesIsOfOneCommitOrLocked(journalMode: String) async throws {
        let directory = try TemporaryDirectory()
        let base = try TemporaryDirectory()
        let path = directory.path("cookies.sqlite")
        try counterDatabase(path)
        let shell = try SQLiteShell(database: path)
        try await shell.run(
            "PRAGMA locking_mode = EXCLUSIVE; PRAGMA journal_mode = \(journalMode); PRAGMA synchronous = OFF; "
                + "UPDATE t SET v = v + 1;"
        )
        let stop = TestLatch()
        // Bursts of one-row-per-page transactions, one after another until the snapshots are done.
        let writer = Task {
            let burst = String(repeating: "UPDATE t SET v = v + 1;\n", count: 200)
            while !stop.isOpen { try await shell.run(burst) }
        }
        var outcomes: [CounterContents?] = []
        for _ in 0..<20 {
            let outcome = try await onOwnThread { () throws -> CounterContents? in
                let snapshot: BrowserDatabaseSnapshot
                do {
                    snapshot = try BrowserDatabaseSnapshot(of: path, privateBases: [base.path])
                } catch let error as BrowserCookieImportError where error.code == .databaseLocked {
                    return nil
                }
                return try CounterContents(snapshot.connection)
            }
            if let outcome {
                #expect(outcome.rows == 64 && outcome.values.count == 1 && outcome.integrity == "ok", "\(outcome)")
            }
            outcomes.append(outcome)
        }
        stop.open()
        try await writer.value
        try await shell.close()
        #expect(outcomes.count == 20)
        #expect(try FileManager.default.contentsOfDirectory(atPath: base.path).isEmpty)
    }

    /// Each thing recorded of the files, changed alone, makes two states differ: so a copy
    /// taken while any of them changed is taken again.
    @Test func theFilesStateSeesEachKindOfChange() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("cookies.sqlite")
        try counterDatabase(path)
        var before = BrowserDatabaseFileState(of: path)
        #expect(before.database != nil && before.wal == nil && before.journal == nil)
        #expect(BrowserDatabaseFileState(of: path) == before)

        // A real commit (rollback journal): the journal comes and goes, the database changes.
        try SQLiteConnection(path: path).execute("UPDATE t SET v = 1")
        var after = BrowserDatabaseFileState(of: path)
        #expect(after != before)
        #expect(after.database?.header != before.database?.header)

        // The file change counter alone (size, time and inode kept).
        before = after
        try rewrite(path, at: 24, [0xFF, 0xFF, 0xFF, 0xFF])
        after = BrowserDatabaseFileState(of: path)
        #expect(after != before)
        #expect(after.database?.size == before.database?.size && after.database?.modified == before.database?.modified)

        // The time alone.
        before = after
        try setModified(path, seconds: 1_700_000_000, nanoseconds: 123)
        after = BrowserDatabaseFileState(of: path)
        #expect(after != before)
        #expect(after.database?.header == before.database?.header && after.database?.size == before.database?.size)

        // The inode alone: the same bytes renamed into place, the time set back.
        before = after
        try FileManager.default.copyItem(atPath: path, toPath: path + ".new")
        #expect(rename(path + ".new", path) == 0)
        try setModified(path, seconds: 1_700_000_000, nanoseconds: 123)
        after = BrowserDatabaseFileState(of: path)
        #expect(after != before)
        #expect(
            after.database?.header == before.database?.header && after.database?.modified == before.database?.modified
        )

        // A WAL that appears; its salts alone; its size alone; gone again.
        before = after
        try Data(repeating: 7, count: 32).write(to: URL(fileURLWithPath: path + "-wal"))
        after = BrowserDatabaseFileState(of: path)
        #expect(after != before && after.wal?.header == [UInt8](repeating: 7, count: 8))
        before = after
        try rewrite(path + "-wal", at: 16, [1, 2, 3, 4, 5, 6, 7, 8])
        after = BrowserDatabaseFileState(of: path)
        #expect(after != before)
        #expect(after.wal?.size == before.wal?.size && after.wal?.modified == before.wal?.modified)
        before = after
        try rewrite(path + "-wal", at: 32, [0])
        after = BrowserDatabaseFileState(of: path)
        #expect(after != before)
        #expect(after.wal?.header == before.wal?.header && after.wal?.modified == before.wal?.modified)
        before = after
        #expect(unlink(path + "-wal") == 0)
        #expect(BrowserDatabaseFileState(of: path) != before)

        // A journal that appears.
        before = BrowserDatabaseFileState(of: path)
        try Data(repeating: 0, count: 512).write(to: URL(fileURLWithPath: path + "-journal"))
        #expect(BrowserDatabaseFileState(of: path) != before)
    }

    /// A browser killed in the middle of a transaction in rollback-journal mode leaves a hot
    /// journal and pages of the transaction in the database; a read-only connection may not roll
    /// it back (SQLITE_READONLY_ROLLBACK). The snapshot is of the committed state all the same.
    @Test func aHotJournalLeftByACrashedBrowserIsRolledBackInTheCopy() async throws {
        let directory = try TemporaryDirectory()
        let base = try TemporaryDirectory()
        let path = directory.path("cookies.sqlite")
        try counterDatabase(path, rows: 400)
        // cache_size = 1: the update spills its pages into the database before its commit,
        // which never comes: the shell kills itself (SIGKILL, as a crash or an OOM kill would).
        let crashed = try await runCommand(
            "/usr/bin/sqlite3",
            [path],
            input: """
                PRAGMA journal_mode = DELETE;
                PRAGMA cache_size = 1;
                BEGIN;
                UPDATE t SET v = 1, pad = randomblob(1500);
                .system kill -KILL $PPID
                .print not killed

                """
        )
        #expect(crashed.status != 0 && !crashed.output.contains("not killed"), "\(crashed)")
        #expect(FileManager.default.fileExists(atPath: path + "-journal"))
        // The database file alone holds pages of the transaction: it is not the committed state.
        let alone = try TemporaryDirectory()
        try FileManager.default.copyItem(atPath: path, toPath: alone.path("alone.sqlite"))
        let torn = try? CounterContents(SQLiteConnection(path: alone.path("alone.sqlite"), readOnly: true))
        #expect(torn?.values != [0])

        let contents = try await onOwnThread {
            try CounterContents(BrowserDatabaseSnapshot(of: path, privateBases: [base.path]).connection)
        }
        #expect(contents == CounterContents(rows: 400, values: [0], integrity: "ok"))
        // The browser's files are as it left them: its own next start rolls the journal back.
        #expect(FileManager.default.fileExists(atPath: path + "-journal"))
        #expect(try FileManager.default.contentsOfDirectory(atPath: base.path).isEmpty)
    }

    /// Writes `bytes` at `offset` into the file at `path`, keeping its times.
    private func rewrite(_ path: String, at offset: Int, _ bytes: [UInt8]) throws {
        var status = stat()
        guard stat(path, &status) == 0 else { throw TestSupportError("cannot stat \(path)") }
        let descriptor = open(path, O_WRONLY)
        guard descriptor >= 0 else { throw TestSupportError("cannot open \(path)") }
        let written = bytes.withUnsafeBytes { pwrite(descriptor, $0.baseAddress, $0.count, off_t(offset)) }
        close(descriptor)
        guard written == bytes.count else { throw TestSupportError("cannot write \(path)") }
        try setModified(path, seconds: status.st_mtim.tv_sec, nanoseconds: status.st_mtim.tv_nsec)
    }

    private func setModified(_ path: String, seconds: Int, nanoseconds: Int) throws {
        let time = timespec(tv_sec: seconds, tv_nsec: nanoseconds)
        guard utimensat(AT_FDCWD, path, [time, time], 0) == 0 else { throw TestSupportError("cannot touch \(path)") }
    }
}

extension CounterContents {
    init(rows: Int64, values: [Int64], integrity: String) {
        self.rows = rows
        self.values = values
        self.integrity = integrity
    }
}
