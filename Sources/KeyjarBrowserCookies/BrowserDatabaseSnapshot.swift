import Foundation
import Glibc
import KeyjarPlatform
package import KeyjarSQLite

/// A private copy of a browser's cookie database, taken while the browser runs, held in memory.
///
/// The browser keeps writing: recent cookies may still be only in the database's WAL, and
/// copying the file alone would lose them (and `immutable=1` would read a torn file). So the
/// source is opened read-only and copied with SQLite's online backup, which reads what a reader
/// sees, WAL included, into an in-memory database: cookies are as good as passwords, and a copy
/// on disk would outlive a keyjar killed in the middle of an import. A database the browser
/// holds exclusively (Chromium always does), or that a crashed browser left with a hot journal,
/// is copied file by file instead (``loadFromFiles(of:bases:)``), and those files exist only
/// for the moments of the copy.
package final class BrowserDatabaseSnapshot {
    /// The copy: an in-memory database of its own.
    package let connection: SQLiteConnection

    /// How long the one attempt at a read snapshot waits for the browser's lock: a browser holds
    /// its write lock for milliseconds; one that holds it longer has the database open in
    /// exclusive locking mode and never lets a reader in, so waiting would only delay the copy
    /// of its files.
    static let busyWaitMilliseconds: Int32 = 100

    /// Copies the database at `path`; a file copy, if one is needed, goes to a private directory
    /// in the first of ``privateBases(_:)`` where one can be made.
    package convenience init(of path: String) throws(BrowserCookieImportError) {
        try self.init(of: path, privateBases: Self.privateBases(ProcessInfo.processInfo.environment))
    }

    /// `privateBases`: where a file copy's private directory may go, in order of preference;
    /// stale ones in each are removed first (``removeStaleCopies(in:)``).
    package init(of path: String, privateBases: [String]) throws(BrowserCookieImportError) {
        guard FileManager.default.fileExists(atPath: path) else {
            throw BrowserCookieImportError(.databaseMissing, "there is no cookie database at \(path).")
        }
        for base in privateBases { Self.removeStaleCopies(in: base) }
        connection = try Self.load(path, bases: privateBases)
    }

    private static func load(_ path: String, bases: [String]) throws(BrowserCookieImportError) -> SQLiteConnection {
        do {
            let source = try SQLiteConnection.untrusted(path: path, readOnly: true)
            source.waitWhenBusy(milliseconds: busyWaitMilliseconds)
            let memory = try SQLiteConnection.untrusted(path: ":memory:")
            try source.backup(to: memory)
            return memory
        } catch let error as SQLiteError where [5, 6, 8].contains(error.code & 0xFF) {
            // SQLITE_BUSY, SQLITE_LOCKED: held exclusively. SQLITE_READONLY (_ROLLBACK,
            // _RECOVERY): a hot journal or a WAL without its index, which only a writer can
            // repair; the copy of the files is opened read-write, which does.
            return try loadFromFiles(of: path, bases: bases)
        } catch let error as SQLiteError {
            throw describe(error, path: path)
        } catch {
            throw BrowserCookieImportError(.snapshotFailed, "cannot copy \(path): \(error).")
        }
    }

    // MARK: - The copy of the files

    /// How many times the files are copied before a database that keeps changing is an error,
    /// and the pause before the second attempt (doubled before each further one): a browser
    /// writes its cookies in bursts, and a copy a few milliseconds later usually falls between two.
    static let fileCopyAttempts = 5
    static let firstRetryPauseMicroseconds: UInt32 = 10_000

    /// The files are copied, the database first and then its WAL or journal (SQLite writes a
    /// journal before the pages it saves and a WAL frame before its checkpoint, so what the later
    /// copy holds covers what the earlier one missed), and the copy opened read-write, so that
    /// SQLite rolls a hot journal back or rebuilds the WAL's index from its frames: the committed
    /// cookies, WAL included. That holds only if no commit or checkpoint came between the copies,
    /// which an integrity check cannot tell (a mix of two commits is a well-formed database): so
    /// the files' ``BrowserDatabaseFileState`` is recorded before and after, and a copy taken
    /// while anything changed is taken again. So is one that fails in any way (a file deleted
    /// between two copies, a copy SQLite calls corrupt). The copy is loaded into memory and its
    /// files removed at once.
    private static func loadFromFiles(
        of path: String,
        bases: [String]
    ) throws(BrowserCookieImportError)
        -> SQLiteConnection
    {
        let directory = try PrivateCopyDirectory(inFirstOf: bases)
        // Removed when this returns, after the copy's connection is closed, and not earlier
        // (ARC could end it at its last use).
        defer { withExtendedLifetime(directory) {} }
        let copy = directory.path + "/cookies.sqlite"
        // Why the last attempt failed when its copy was of unchanging files: then the database
        // itself is damaged, and that is what to say.
        var stableFailure: BrowserCookieImportError?
        for attempt in 0..<fileCopyAttempts {
            if attempt > 0 { usleep(firstRetryPauseMicroseconds << UInt32(attempt - 1)) }
            directory.removeContents()
            stableFailure = nil
            let before = BrowserDatabaseFileState(of: path)
            guard before.database != nil else {
                throw BrowserCookieImportError(.databaseMissing, "there is no cookie database at \(path).")
            }
            let copied =
                copyFile(path, to: copy)
                && (before.wal == nil || copyFile(path + "-wal", to: copy + "-wal"))
                && (before.journal == nil || copyFile(path + "-journal", to: copy + "-journal"))
            guard copied, BrowserDatabaseFileState(of: path) == before else { continue }
            do {
                return try loadRecovered(copy)
            } catch let error as SQLiteError {
                stableFailure = describe(error, path: path)
            } catch {
                stableFailure = BrowserCookieImportError(.databaseCorrupt, "\(path) fails SQLite's quick_check.")
            }
        }
        if let stableFailure, stableFailure.code != .databaseLocked { throw stableFailure }
        throw BrowserCookieImportError(
            .databaseLocked,
            "\(path) is held exclusively by another program (the browser), which kept writing to it while "
                + "it was copied; try again, or close the browser first."
        )
    }

    /// Opens the copy read-write (rolling a hot journal back, reading the WAL's frames), checks
    /// it, and loads it into an in-memory database; the copy's connection is closed on return,
    /// before its files are removed.
    private static func loadRecovered(_ copy: String) throws -> SQLiteConnection {
        let recovered = try SQLiteConnection.untrusted(path: copy)
        let check = try recovered.statement("PRAGMA quick_check")
        let whole = try check.step() && check.text(0) == "ok"
        check.reset()
        // What quick_check found is not repeated: its words may quote the damaged rows.
        guard whole else { throw QuickCheckFailed() }
        let memory = try SQLiteConnection.untrusted(path: ":memory:")
        try recovered.backup(to: memory)
        return memory
    }

    private struct QuickCheckFailed: Error {}

    /// Copies the file at `source` into a new file at `destination`, readable by this user
    /// only; false on any failure (the source gone in between, say).
    private static func copyFile(_ source: String, to destination: String) -> Bool {
        let input = open(source, O_RDONLY | O_CLOEXEC)
        guard input >= 0 else { return false }
        defer { close(input) }
        let output = open(destination, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard output >= 0 else { return false }
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        let copied = buffer.withUnsafeMutableBytes { buffer -> Bool in
            guard let start = buffer.baseAddress else { return false }
            while true {
                let count = read(input, start, buffer.count)
                if count == 0 { return true }
                if count < 0 {
                    if errno == EINTR { continue }
                    return false
                }
                guard FileDescriptor.writeAll(UnsafeRawBufferPointer(start: start, count: count), to: output) == nil
                else { return false }
            }
        }
        return close(output) == 0 && copied
    }

    // MARK: - Where the copy of the files goes

    /// Where a file copy's private directory may go: `$XDG_RUNTIME_DIR` (the user's own, in
    /// memory: the copy never reaches a disk), else `$TMPDIR`, else /tmp.
    package static func privateBases(_ environment: [String: String]) -> [String] {
        var bases: [String] = []
        let directories = XDGDirectories(environment: environment)
        for base in [directories.runtimeDirectory, directories.directory("TMPDIR"), "/tmp"] {
            if let base, !bases.contains(base) { bases.append(base) }
        }
        return bases
    }

    /// How long a private directory must have gone unchanged before one no keyjar holds is taken
    /// for a leftover (see ``removeStaleCopies(in:)``).
    static let staleAfterSeconds = 60

    /// Removes what a keyjar killed in the middle of a copy left behind in `base` (or what an
    /// older keyjar, which kept its copy on disk for the whole import, did): directories of
    /// this user named `keyjar-browser.*` that no running keyjar holds. A running keyjar holds
    /// its directory with flock(2) for as long as the directory exists, and the kernel lets go
    /// of the lock when the process dies, however it dies; the one moment a directory is not yet
    /// held is between mkdtemp(3) and flock(2), which is why only a directory unchanged for a
    /// minute is even tried.
    package static func removeStaleCopies(in base: String) {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: base) else { return }
        let now = time(nil)
        for name in names where name.hasPrefix(PrivateCopyDirectory.prefix) {
            let path = base + "/" + name
            var status = stat()
            guard lstat(path, &status) == 0, status.st_mode & S_IFMT == S_IFDIR, status.st_uid == getuid(),
                now - status.st_mtim.tv_sec > staleAfterSeconds
            else { continue }
            let held = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
            guard held >= 0 else { continue }
            defer { close(held) }
            guard flock(held, LOCK_EX | LOCK_NB) == 0 else { continue }
            try? FileManager.default.removeItem(atPath: path)
        }
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

/// A directory of this user's alone (0700, made by mkdtemp(3)) for the moments a copy of a
/// browser's files exists, held with flock(2) so that no other keyjar takes it for a leftover
/// (``BrowserDatabaseSnapshot/removeStaleCopies(in:)``); removed, with what is in it, when
/// released.
package final class PrivateCopyDirectory {
    static let prefix = "keyjar-browser."

    package let path: String
    private let lock: Int32

    /// In the first of `bases` where a directory can be made.
    package init(inFirstOf bases: [String]) throws(BrowserCookieImportError) {
        var reasons: [String] = []
        for base in bases {
            var template = Array((base + "/" + Self.prefix + "XXXXXX").utf8CString)
            guard let made = mkdtemp(&template) else {
                reasons.append("\(base): \(String(cString: strerror(errno)))")
                continue
            }
            let path = String(cString: made)
            let lock = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
            guard lock >= 0, flock(lock, LOCK_EX | LOCK_NB) == 0 else {
                reasons.append("\(path): \(String(cString: strerror(errno)))")
                if lock >= 0 { close(lock) }
                rmdir(path)
                continue
            }
            do {
                try PrivateDirectory.make(path)
            } catch {
                reasons.append("\(error)")
                close(lock)
                rmdir(path)
                continue
            }
            self.path = path
            self.lock = lock
            return
        }
        throw BrowserCookieImportError(
            .snapshotFailed,
            "cannot make a private directory for a copy of the cookie database: \(reasons.joined(separator: "; "))."
        )
    }

    /// Removes the files of a previous attempt.
    func removeContents() {
        for name in (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? [] {
            unlink(path + "/" + name)
        }
    }

    deinit {
        try? FileManager.default.removeItem(atPath: path)
        close(lock)
    }
}

/// One state of a database's files, to tell whether a copy of them is of one moment: for the
/// database and its `-wal` and `-journal`, whether each is there, and its inode, size, time of
/// last change, and the header bytes a commit or checkpoint rewrites (the database's file change
/// counter, bumped by every commit in rollback-journal mode; the WAL's salts, new each time the
/// WAL starts over; the journal's header with its per-transaction nonce). Two equal states
/// around a copy mean nothing was written in between: a write changes the time (Linux gives a
/// write after a stat(2) a fine-grained time of its own), and the headers catch what a coarse
/// clock would not.
package struct BrowserDatabaseFileState: Equatable, Sendable {
    package struct File: Equatable, Sendable {
        package var device: UInt64
        package var inode: UInt64
        package var size: Int64
        /// st_mtim in nanoseconds.
        package var modified: Int64
        package var header: [UInt8]

        /// Nil when there is no file at `path` (or it cannot be read: then neither can it be copied).
        init?(_ path: String, header range: Range<Int>) {
            let descriptor = open(path, O_RDONLY | O_CLOEXEC)
            guard descriptor >= 0 else { return nil }
            defer { close(descriptor) }
            var status = stat()
            guard fstat(descriptor, &status) == 0 else { return nil }
            device = UInt64(status.st_dev)
            inode = UInt64(status.st_ino)
            size = Int64(status.st_size)
            modified = Int64(status.st_mtim.tv_sec) * 1_000_000_000 + Int64(status.st_mtim.tv_nsec)
            var bytes = [UInt8](repeating: 0, count: range.count)
            let count = bytes.withUnsafeMutableBytes {
                pread(descriptor, $0.baseAddress, $0.count, off_t(range.lowerBound))
            }
            header = Array(bytes.prefix(max(count, 0)))
        }
    }

    package var database: File?
    package var wal: File?
    package var journal: File?

    package init(of path: String) {
        database = File(path, header: 24..<28)
        wal = File(path + "-wal", header: 16..<24)
        journal = File(path + "-journal", header: 0..<28)
    }
}
