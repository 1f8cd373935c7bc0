import Foundation
import Glibc
import KeyjarFiles
package import KeyjarSQLite

/// A private copy of a browser's cookie database, taken while the browser runs.
///
/// The browser keeps writing: recent cookies may still be only in the database's WAL, and
/// copying the file alone would lose them (and `immutable=1` would read a torn file). So the
/// source is opened read-only and copied with SQLite's online backup, which reads what a reader
/// sees, WAL included, into a database in a directory of this user's alone (cookies are as good
/// as passwords). A database the browser holds exclusively is copied file by file instead
/// (``copyFiles(of:to:)``). The copy goes when the snapshot does.
package final class BrowserDatabaseSnapshot {
    /// The copy, open for reading.
    package let connection: SQLiteConnection
    private let directory: String

    /// How long one attempt waits for the browser's lock, and how many attempts there are:
    /// a browser holds its write lock for milliseconds; one that holds it for seconds on end
    /// has the database open exclusively, and waiting longer would not help.
    static let busyWaitMilliseconds: Int32 = 200
    static let busyRetries = 10

    package init(of path: String) throws(BrowserCookieImportError) {
        guard FileManager.default.fileExists(atPath: path) else {
            throw BrowserCookieImportError(.databaseMissing, "there is no cookie database at \(path).")
        }
        let base = ProcessInfo.processInfo.environment["TMPDIR"].flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp"
        var template = Array((base + "/keyjar-browser.XXXXXX").utf8CString)
        guard let made = mkdtemp(&template) else {
            throw BrowserCookieImportError(
                .snapshotFailed,
                "cannot make a private directory in \(base): \(String(cString: strerror(errno)))."
            )
        }
        directory = String(cString: made)
        do {
            try PrivateDirectory.make(directory)
            let copy = directory + "/cookies.sqlite"
            do {
                let source = try SQLiteConnection(path: path, readOnly: true)
                source.waitWhenBusy(milliseconds: Self.busyWaitMilliseconds)
                try source.backup(into: copy, busyRetries: Self.busyRetries)
            } catch let error as SQLiteError where [5, 6].contains(error.code & 0xFF) {
                guard try Self.copyFiles(of: path, to: copy) else { throw Self.describe(error, path: path) }
            } catch let error as SQLiteError {
                throw Self.describe(error, path: path)
            }
            connection = try SQLiteConnection(path: copy, readOnly: true)
        } catch {
            Self.remove(directory)
            if let error = error as? BrowserCookieImportError { throw error }
            throw BrowserCookieImportError(.snapshotFailed, "cannot copy \(path): \(error).")
        }
    }

    deinit { Self.remove(directory) }

    /// How many times a copy of the files is taken before a locked database is an error.
    static let fileCopyAttempts = 3

    /// A browser that keeps its database in exclusive locking mode never lets a reader in, not
    /// even SQLite's backup. Its files are copied instead, the database first and then its WAL
    /// or journal (SQLite writes a journal before the pages it saves and a WAL frame before its
    /// checkpoint, so what the later copy holds covers what the earlier one missed), and the
    /// copy opened read-write, so that SQLite rolls a hot journal back or rebuilds the WAL's
    /// index from its frames: the committed cookies, WAL included. A copy torn by a write in
    /// between fails the integrity check and is taken again. False when no copy was whole.
    private static func copyFiles(of path: String, to copy: String) throws -> Bool {
        let files = FileManager.default
        for _ in 0..<fileCopyAttempts {
            for suffix in ["", "-wal", "-journal", "-shm"] { try? files.removeItem(atPath: copy + suffix) }
            try files.copyItem(atPath: path, toPath: copy)
            for suffix in ["-wal", "-journal"] where files.fileExists(atPath: path + suffix) {
                try files.copyItem(atPath: path + suffix, toPath: copy + suffix)
            }
            // Closed before the copy is opened read-only: the last connection folds the WAL in.
            let whole = try {
                let recovered = try SQLiteConnection(path: copy)
                let check = try recovered.statement("PRAGMA quick_check")
                defer { check.reset() }
                return try check.step() && check.text(0) == "ok"
            }()
            if whole { return true }
        }
        return false
    }

    private static func remove(_ directory: String) {
        try? FileManager.default.removeItem(atPath: directory)
    }

    private static func describe(_ error: SQLiteError, path: String) -> BrowserCookieImportError {
        switch error.code & 0xFF {
        case 5, 6:  // SQLITE_BUSY, SQLITE_LOCKED
            return BrowserCookieImportError(
                .databaseLocked,
                "\(path) stays locked by another program (the browser holds it exclusively?); close the browser and try again."
            )
        case 11, 26:  // SQLITE_CORRUPT, SQLITE_NOTADB
            return BrowserCookieImportError(
                .databaseCorrupt,
                "\(path) is not a usable SQLite database: \(error.message)."
            )
        default:
            return BrowserCookieImportError(.snapshotFailed, "cannot copy \(path): \(error.message).")
        }
    }
}
