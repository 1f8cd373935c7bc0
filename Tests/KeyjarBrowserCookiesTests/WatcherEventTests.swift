import Foundation
import Glibc
import KeyjarBrowserCookies
import KeyjarSQLite
import KeyjarTestSupport
import Testing

/// What wakes a ``BrowserDatabaseWatcher`` and what does not. inotify queues an event while
/// the call that causes it runs, so once a write or a snapshot has returned, `drainEvents()`
/// tells at once whether it woke the watcher: no waiting for something not to happen.
@Suite(.timeLimit(hangLimit))
struct WatcherEventTests {
    /// `--follow` takes a snapshot at each wake-up. Reading a WAL database makes SQLite open its
    /// `-wal` read-write, creating it when the browser is not running: that must not wake the
    /// watcher, or it would wake at each of its own snapshots, for ever.
    @Test(arguments: [false, true])
    func aSnapshotOfAWALDatabaseDoesNotWakeTheWatcher(browserRunning: Bool) async throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("cookies.sqlite")
        // Made by another process, gone before the watch begins (see the rename test below).
        let setup = try SQLiteShell(database: path)
        try await setup.run(counterDatabaseSQL() + "\nPRAGMA journal_mode = WAL;")
        try await setup.close()
        #expect(!FileManager.default.fileExists(atPath: path + "-wal"))
        let watcher = try BrowserDatabaseWatcher(database: path)
        let shell = try SQLiteShell(database: path)
        try await shell.run("UPDATE t SET v = 1;")
        if !browserRunning { try await shell.close() }
        // The browser's write (and, when it exited, its checkpoint) woke it.
        #expect(try watcher.drainEvents() == true)
        for round in 1...3 {
            let contents = try await onOwnThread {
                try CounterContents(BrowserDatabaseSnapshot(of: path, privateBases: [directory.path]).connection)
            }
            #expect(contents.values == [1])
            #expect(try watcher.drainEvents() == false, "round \(round): the snapshot woke the watcher")
        }
        // The browser's next write still does.
        if browserRunning {
            try await shell.run("UPDATE t SET v = 2;")
        } else {
            try SQLiteConnection(path: path).execute("UPDATE t SET v = 2")
        }
        #expect(try watcher.drainEvents() == true)
        if browserRunning { try await shell.close() }
    }

    /// A profile reset puts a new database in place by rename: a change.
    @Test func aDatabaseReplacedByARenameIsAChange() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("cookies.sqlite")
        // Written by another process (sqlite3), gone before the watch begins: a database this
        // process wrote could still be open in a child another test is spawning (it holds the
        // descriptor until it executes), and that late close would wake the watcher. The same
        // holds for every database written before a watch whose silence a test expects.
        let browser = try SQLiteShell(database: path)
        try await browser.run("CREATE TABLE t(v INTEGER); INSERT INTO t VALUES (1);")
        try await browser.close()
        let watcher = try BrowserDatabaseWatcher(database: path)
        let other = try SQLiteShell(database: directory.path("cookies.sqlite.new"))
        try await other.run("CREATE TABLE t(v INTEGER); INSERT INTO t VALUES (2);")
        try await other.close()
        #expect(try watcher.drainEvents() == false)
        #expect(rename(directory.path("cookies.sqlite.new"), path) == 0)
        #expect(try watcher.drainEvents() == true)
        // And one moved away.
        #expect(rename(path, directory.path("cookies.sqlite.old")) == 0)
        #expect(try watcher.drainEvents() == true)
    }

    /// The directory removed: the wait ends with an error instead of waiting on a dead watch
    /// (and every later one too).
    @Test func theDirectoryRemovedEndsTheWatch() async throws {
        let home = try TemporaryDirectory()
        let directory = home.path("profile")
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: false)
        try counterDatabase(directory + "/cookies.sqlite")
        let watcher = try BrowserDatabaseWatcher(database: directory + "/cookies.sqlite")
        try FileManager.default.removeItem(atPath: directory)
        let error = await #expect(throws: BrowserCookieImportError.self) {
            // The database's deletion is a change; the directory's is the end.
            try await onOwnThread { while try watcher.waitForChange() {} }
        }
        #expect(error?.code == .watchFailed && error?.message.contains(directory) == true)
        #expect(throws: BrowserCookieImportError.self) { try watcher.waitForChange() }
    }

    /// The directory moved away: the path followed no longer leads to it.
    @Test func theDirectoryMovedAwayEndsTheWatch() async throws {
        let home = try TemporaryDirectory()
        let directory = home.path("profile")
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: false)
        try counterDatabase(directory + "/cookies.sqlite")
        let watcher = try BrowserDatabaseWatcher(database: directory + "/cookies.sqlite")
        #expect(rename(directory, home.path("profile.old")) == 0)
        let error = await #expect(throws: BrowserCookieImportError.self) {
            try await onOwnThread { while try watcher.waitForChange() {} }
        }
        #expect(error?.code == .watchFailed)
    }
}
