import Foundation
import Glibc
import KeyjarBrowserCookies
import KeyjarSQLite
import KeyjarTestSupport
import Testing

/// Cookies are as good as passwords: a snapshot keeps its copy in memory, and the copy of the
/// files a locked database needs exists only for the moments of the copy, in a directory of
/// this user's alone.
@Suite(.timeLimit(hangLimit))
struct SnapshotPrivacyTests {
    @Test func theOnlineCopyIsInMemoryAndWritesNoFile() async throws {
        let directory = try TemporaryDirectory()
        let base = try TemporaryDirectory()
        let path = directory.path("cookies.sqlite")
        try counterDatabase(path)
        let files = try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted()
        let (contents, file) = try await onOwnThread {
            let snapshot = try BrowserDatabaseSnapshot(of: path, privateBases: [base.path])
            return (try CounterContents(snapshot.connection), try mainFile(of: snapshot.connection))
        }
        #expect(contents.values == [0] && contents.rows == 64)
        #expect(file == "", "the snapshot is a database on disk: \(file)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: base.path).isEmpty)
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted() == files)
    }

    /// A browser that holds its database exclusively in the middle of a write: the files are
    /// copied into a private directory, which is made and removed within the snapshot's making.
    @Test func aCopyOfTheFilesIsGoneWhenTheSnapshotIsMade() async throws {
        let directory = try TemporaryDirectory()
        let base = try TemporaryDirectory()
        let path = directory.path("cookies.sqlite")
        try counterDatabase(path)
        let shell = try SQLiteShell(database: path)
        try await shell.run("PRAGMA cache_size = 1; BEGIN EXCLUSIVE; UPDATE t SET v = 1, pad = randomblob(1500);")
        let events = try DirectoryEvents(base.path)
        let (contents, file) = try await onOwnThread {
            let snapshot = try BrowserDatabaseSnapshot(of: path, privateBases: [base.path])
            return (try CounterContents(snapshot.connection), try mainFile(of: snapshot.connection))
        }
        #expect(contents == CounterContents(rows: 64, values: [0], integrity: "ok"))
        #expect(file == "")
        // The copy went through the base directory (inotify queued its events as they
        // happened), and nothing of it is left.
        let seen = events.read()
        let made = seen.filter { $0.mask & UInt32(IN_CREATE) != 0 }.map(\.name)
        #expect(made.count == 1 && made.allSatisfy { $0.hasPrefix("keyjar-browser.") }, "\(seen)")
        #expect(seen.contains { $0.mask & UInt32(IN_DELETE) != 0 && made.contains($0.name) }, "\(seen)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: base.path).isEmpty)
        try await shell.run("ROLLBACK;")
        try await shell.close()
    }

    @Test func aPrivateDirectoryIsThisUsersAloneAndHeldWhileItExists() throws {
        let base = try TemporaryDirectory()
        var directory: PrivateCopyDirectory? = try PrivateCopyDirectory(
            inFirstOf: [base.path("missing"), base.path]
        )
        let path = try #require(directory?.path)
        #expect(path.hasPrefix(base.path + "/keyjar-browser."))
        var status = stat()
        #expect(stat(path, &status) == 0)
        #expect(status.st_mode & 0o777 == 0o700 && status.st_uid == getuid())
        // Even one that looks long abandoned is left alone while its keyjar holds it.
        try setModified(path, secondsAgo: 3_600)
        BrowserDatabaseSnapshot.removeStaleCopies(in: base.path)
        #expect(FileManager.default.fileExists(atPath: path))
        directory = nil
        #expect(!FileManager.default.fileExists(atPath: path))
    }

    /// What a keyjar killed in the middle of a copy (or an older keyjar) left is removed when
    /// the next snapshot starts; what is fresh, or not a keyjar's, stays.
    @Test func aSnapshotRemovesCopiesLeftBehind() async throws {
        let base = try TemporaryDirectory()
        let directory = try TemporaryDirectory()
        let path = directory.path("cookies.sqlite")
        try counterDatabase(path)
        let files = FileManager.default
        for name in ["keyjar-browser.left", "keyjar-browser.fresh", "other.left"] {
            try files.createDirectory(atPath: base.path(name), withIntermediateDirectories: false)
            try Data("secret".utf8).write(to: URL(fileURLWithPath: base.path(name) + "/cookies.sqlite"))
        }
        try Data("a file".utf8).write(to: URL(fileURLWithPath: base.path("keyjar-browser.file")))
        for name in ["keyjar-browser.left", "other.left", "keyjar-browser.file"] {
            try setModified(base.path(name), secondsAgo: 120)
        }
        _ = try await onOwnThread { _ = try BrowserDatabaseSnapshot(of: path, privateBases: [base.path]) }
        #expect(
            try files.contentsOfDirectory(atPath: base.path).sorted() == [
                "keyjar-browser.file", "keyjar-browser.fresh", "other.left",
            ]
        )
    }

    @Test func theCopyOfTheFilesPrefersTheRuntimeDirectory() {
        #expect(
            BrowserDatabaseSnapshot.privateBases(["XDG_RUNTIME_DIR": "/run/user/7", "TMPDIR": "/var/t"]) == [
                "/run/user/7", "/var/t", "/tmp",
            ]
        )
        #expect(BrowserDatabaseSnapshot.privateBases(["XDG_RUNTIME_DIR": "", "TMPDIR": "/tmp"]) == ["/tmp"])
    }

    private func setModified(_ path: String, secondsAgo: Int) throws {
        let time = timespec(tv_sec: time(nil) - secondsAgo, tv_nsec: 0)
        guard utimensat(AT_FDCWD, path, [time, time], AT_SYMLINK_NOFOLLOW) == 0 else {
            throw TestSupportError("cannot touch \(path)")
        }
    }
}

/// The file behind a connection's main database; empty for an in-memory one.
private func mainFile(of database: SQLiteConnection) throws -> String {
    let statement = try database.statement("SELECT file FROM pragma_database_list WHERE name = 'main'")
    defer { statement.reset() }
    return try statement.step() ? statement.text(0) : "no main database"
}

/// The creations and deletions in a directory since this was made, through inotify: queued as
/// they happen, read without waiting.
final class DirectoryEvents {
    private let descriptor: Int32

    init(_ directory: String) throws {
        descriptor = inotify_init1(Int32(IN_CLOEXEC | IN_NONBLOCK))
        guard descriptor >= 0, inotify_add_watch(descriptor, directory, UInt32(IN_CREATE | IN_DELETE)) >= 0 else {
            throw TestSupportError("cannot watch \(directory)")
        }
    }

    deinit { close(descriptor) }

    func read() -> [(mask: UInt32, name: String)] {
        var events: [(mask: UInt32, name: String)] = []
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let count = buffer.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, $0.count) }
            guard count > 0 else { return events }
            var offset = 0
            let header = MemoryLayout<inotify_event>.size
            while offset + header <= count {
                let (length, mask) = buffer.withUnsafeBytes { bytes in
                    let event = bytes.loadUnaligned(fromByteOffset: offset, as: inotify_event.self)
                    return (Int(event.len), event.mask)
                }
                let name = buffer[(offset + header)..<min(offset + header + length, count)].prefix { $0 != 0 }
                events.append((mask, String(decoding: name, as: UTF8.self)))
                offset += header + length
            }
        }
    }
}
