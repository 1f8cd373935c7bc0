import Foundation
import Glibc

/// Wakes when a browser writes its cookie database, through inotify; costs nothing meanwhile
/// (blocked in poll(2)).
///
/// One watch on the database's directory, not on the files: the directory's watch sees writes
/// to the database and its `-wal` (IN_MODIFY, IN_CLOSE_WRITE) and a WAL or database that
/// appears or is replaced (IN_CREATE, IN_MOVED_TO) and a journal deleted at a commit
/// (IN_DELETE), whereas a watch on a file dies with the
/// file a browser replaces. The `-shm` index is left out: readers (this one's snapshots
/// included) write to it too.
public final class BrowserDatabaseWatcher: @unchecked Sendable {
    // @unchecked: the descriptors are set once; `stop()` only writes to the pipe.
    private let inotify: Int32
    private let wakeRead: Int32
    private let wakeWrite: Int32
    private let names: Set<String>

    /// The file descriptor whose write ends ``waitForChange()``: a signal handler may write
    /// one byte to it (write(2) is async-signal-safe).
    public var stopDescriptor: Int32 { wakeWrite }

    public init(database path: String) throws(BrowserCookieImportError) {
        let url = URL(fileURLWithPath: path)
        let directory = url.deletingLastPathComponent().path
        let name = url.lastPathComponent
        names = [name, name + "-wal", name + "-journal"]
        inotify = inotify_init1(Int32(IN_CLOEXEC | IN_NONBLOCK))
        guard inotify >= 0 else { throw Self.failure("cannot start inotify") }
        // IN_DELETE: in rollback-journal mode a transaction commits when its journal is deleted.
        let mask = UInt32(IN_MODIFY | IN_CLOSE_WRITE | IN_CREATE | IN_MOVED_TO | IN_DELETE)
        guard inotify_add_watch(inotify, directory, mask) >= 0 else {
            let error = Self.failure("cannot watch \(directory)")
            close(inotify)
            throw error
        }
        var pipeEnds: [Int32] = [0, 0]
        guard pipe(&pipeEnds) == 0 else {
            let error = Self.failure("cannot make a pipe")
            close(inotify)
            throw error
        }
        wakeRead = pipeEnds[0]
        wakeWrite = pipeEnds[1]
        // Never inherited by a child; a full pipe (stop called many times) does not block a signal handler.
        for end in pipeEnds {
            _ = fcntl(end, F_SETFD, FD_CLOEXEC)
            _ = fcntl(end, F_SETFL, fcntl(end, F_GETFL) | O_NONBLOCK)
        }
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
    public func waitForChange() throws(BrowserCookieImportError) -> Bool {
        while true {
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

    /// Reads every queued event without waiting; whether one was about the database or its WAL
    /// (inotify queues an event as the write happens, so a write that returned is in the queue).
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
                if mask & UInt32(IN_Q_OVERFLOW) != 0 || names.contains(String(decoding: nameBytes, as: UTF8.self)) {
                    relevant = true
                }
                offset += header + length
            }
        }
    }

    private static func failure(_ action: String) -> BrowserCookieImportError {
        BrowserCookieImportError(.watchFailed, "\(action): \(String(cString: strerror(errno))).")
    }
}
