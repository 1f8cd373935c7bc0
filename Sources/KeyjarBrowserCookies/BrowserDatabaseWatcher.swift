import Foundation
import Glibc
import KeyjarPlatform
import Synchronization

/// Wakes when a browser writes its cookie database, through inotify; costs nothing meanwhile
/// (blocked in poll(2)).
///
/// One watch on the database's directory, not on the files: the directory's watch sees writes
/// to the database and its `-wal` (IN_MODIFY), a database that appears, is replaced by a
/// rename or goes (IN_CREATE, IN_MOVED_TO, IN_MOVED_FROM, IN_DELETE) and a journal deleted at a
/// commit (IN_DELETE), whereas a watch on a file dies with the file a browser replaces. Of the
/// `-wal` only writes count: every reader opens it read-write, creating it when the database
/// is idle (a snapshot included: SQLite's read-only connections do too), and its creation,
/// deletion or closing is no commit, so counting them would wake the watcher at its own
/// snapshot's reading, again and again. The `-shm` index is left out: readers write to it too.
/// The directory itself removed or moved away ends the watch with an error.
public final class BrowserDatabaseWatcher: @unchecked Sendable {
    // @unchecked: the descriptors are set once; `stop()` only writes to the pipe; `ended` is atomic.
    private let inotify: Int32
    private let wakeRead: Int32
    private let wakeWrite: Int32
    private let directory: String
    private let database: String
    private let wal: String
    private let journal: String
    /// Set once the directory's watch is gone; every later wait fails at once.
    private let ended = Atomic<Bool>(false)

    /// The file descriptor whose write ends ``waitForChange()``: a signal handler may write
    /// one byte to it (write(2) is async-signal-safe).
    public var stopDescriptor: Int32 { wakeWrite }

    public init(database path: String) throws(BrowserCookieImportError) {
        let url = URL(fileURLWithPath: path)
        let directory = url.deletingLastPathComponent().path
        let name = url.lastPathComponent
        self.directory = directory
        database = name
        wal = name + "-wal"
        journal = name + "-journal"
        inotify = inotify_init1(Int32(IN_CLOEXEC | IN_NONBLOCK))
        guard inotify >= 0 else { throw Self.failure("cannot start inotify") }
        // IN_DELETE: in rollback-journal mode a transaction commits when its journal is deleted.
        // IN_DELETE_SELF, IN_MOVE_SELF: the directory is gone (IN_IGNORED and IN_UNMOUNT come
        // unasked).
        let mask = UInt32(
            IN_MODIFY | IN_CLOSE_WRITE | IN_CREATE | IN_MOVED_TO | IN_MOVED_FROM | IN_DELETE | IN_DELETE_SELF
                | IN_MOVE_SELF
        )
        guard inotify_add_watch(inotify, directory, mask) >= 0 else {
            let error = Self.failure("cannot watch \(directory)")
            close(inotify)
            throw error
        }
        // Never inherited by a child; a full pipe (stop called many times) does not block a signal handler.
        guard let pipe = FileDescriptor.pipe(nonBlocking: true) else {
            let error = Self.failure("cannot make a pipe")
            close(inotify)
            throw error
        }
        wakeRead = pipe.read
        wakeWrite = pipe.write
    }

    deinit {
        close(inotify)
        close(wakeRead)
        close(wakeWrite)
    }

    /// Ends a ``waitForChange()`` in progress or the next one.
    public func stop() {
        var byte: UInt8 = 1
        _ = write(wakeWrite, &byte, 1)
    }

    /// Blocks until the database changed (true) or ``stop()`` was called (false). Every event
    /// already queued is read before it returns, so a burst of writes is one wake-up.
    /// - Throws: ``BrowserCookieImportError/Code/watchFailed`` when the database's directory was
    ///   removed, moved away or unmounted: no change could be seen any more.
    public func waitForChange() throws(BrowserCookieImportError) -> Bool {
        while true {
            if ended.load(ordering: .relaxed) { throw directoryGone() }
            var descriptors = [
                pollfd(fd: inotify, events: Int16(POLLIN), revents: 0),
                pollfd(fd: wakeRead, events: Int16(POLLIN), revents: 0),
            ]
            let ready = poll(&descriptors, 2, -1)
            if ready < 0 {
                if errno == EINTR { continue }
                throw Self.failure("cannot wait for changes")
            }
            if descriptors[1].revents != 0 { return false }
            if try drainEvents() { return true }
        }
    }

    /// Reads every queued event without waiting; whether one was a change to the database (see
    /// the type's notes for which count). inotify queues an event as the call that caused it
    /// happens, so what a write (or a snapshot) that returned did is in the queue.
    /// - Throws: as ``waitForChange()``.
    package func drainEvents() throws(BrowserCookieImportError) -> Bool {
        var relevant = false
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(inotify, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EAGAIN { return relevant }
                if errno == EINTR { continue }
                throw Self.failure("cannot read inotify events")
            }
            var offset = 0
            let header = MemoryLayout<inotify_event>.size
            while offset + header <= count {
                let (length, mask) = buffer.withUnsafeBytes { bytes in
                    let event = bytes.loadUnaligned(fromByteOffset: offset, as: inotify_event.self)
                    return (Int(event.len), event.mask)
                }
                let nameBytes = buffer[(offset + header)..<min(offset + header + length, count)].prefix { $0 != 0 }
                if mask & UInt32(IN_IGNORED | IN_DELETE_SELF | IN_MOVE_SELF | IN_UNMOUNT) != 0 {
                    ended.store(true, ordering: .relaxed)
                    throw directoryGone()
                }
                if mask & UInt32(IN_Q_OVERFLOW) != 0 || counts(mask, String(decoding: nameBytes, as: UTF8.self)) {
                    relevant = true
                }
                offset += header + length
            }
        }
    }

    /// Whether an event with `mask` on the file `name` is a change to the database.
    private func counts(_ mask: UInt32, _ name: String) -> Bool {
        switch name {
        case database, journal: true
        // A WAL renamed into place is new content too.
        case wal: mask & UInt32(IN_MODIFY | IN_MOVED_TO) != 0
        default: false
        }
    }

    private func directoryGone() -> BrowserCookieImportError {
        BrowserCookieImportError(
            .watchFailed,
            "\(directory) was removed, moved away or unmounted: there is no cookie database left to follow."
        )
    }

    private static func failure(_ action: String) -> BrowserCookieImportError {
        BrowserCookieImportError(.watchFailed, "\(action): \(String(cString: strerror(errno))).")
    }
}
