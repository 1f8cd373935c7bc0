import Foundation
import Glibc
import KeyjarPlatform

extension DiskIndex {
    // MARK: Body files

    /// A body being written: `NAME.partial` until complete, then `NAME`. Its descriptor holds
    /// `flock(LOCK_EX)` from creation until ``release()``, after the row naming it is committed:
    /// a held lock tells collectors in every process that a live writer owns the file. A writer
    /// that is killed loses its lock with its descriptors (the kernel releases it), so a
    /// collector needs no grace period to tell an abandoned file from one being written.
    final class BodyFile: @unchecked Sendable {
        // @unchecked: owned by one writer at a time.
        enum State {
            /// Being written, at `NAME.partial`.
            case writing(CInt)
            /// Complete at its final name, the lock still held until its row is committed.
            case named(CInt)
            /// Its descriptor closed: indexed, or discarded.
            case closed
        }

        let name: String
        let partial: URL
        let finalURL: URL
        private var state: State

        private init(name: String, bodies: URL, descriptor: CInt) {
            self.name = name
            partial = bodies.appendingPathComponent(name + ".partial")
            finalURL = bodies.appendingPathComponent(name)
            state = .writing(descriptor)
        }

        /// A new, locked, empty body file; nil when none can be made.
        static func create(in bodies: URL) -> BodyFile? {
            var random = SystemRandomNumberGenerator()
            for _ in 0..<3 {
                let name = Hex.encode((0..<16).map { _ in UInt8.random(in: .min ... .max, using: &random) })
                let path = bodies.appendingPathComponent(name + ".partial").path
                let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
                guard descriptor >= 0 else { return nil }
                // Between the creation and the lock, a collector may have found the file
                // unlocked and unnamed: it holds the lock to unlink it, or has unlinked it.
                // Either way the file is not this writer's; it starts over under a new name.
                // (Never waiting here: a collector in this process takes the cache's lock while
                // it holds a file's.)
                if DiskIndex.tryLock(descriptor), DiskIndex.isSameFile(descriptor, path) {
                    return BodyFile(name: name, bodies: bodies, descriptor: descriptor)
                }
                close(descriptor)
            }
            return nil
        }

        // Dropped without being indexed (a load abandoned): nothing of it stays.
        deinit { discard() }

        func write(_ data: Data) -> Bool {
            guard case .writing(let descriptor) = state else { return false }
            return data.withUnsafeBytes { FileDescriptor.writeAll($0, to: descriptor) } == nil
        }

        /// Gives the complete body its final name, keeping the lock; false (and nothing left)
        /// on failure.
        func complete() -> Bool {
            guard case .writing(let descriptor) = state else { return false }
            guard rename(partial.path, finalURL.path) == 0 else {
                unlink(partial.path)
                close(descriptor)
                state = .closed
                return false
            }
            state = .named(descriptor)
            return true
        }

        /// Lets go of the file once its row is committed (or it is gone).
        func release() {
            switch state {
            case .writing(let descriptor), .named(let descriptor): close(descriptor)
            case .closed: break
            }
            state = .closed
        }

        /// Removes the file, whichever name it has, then lets go of it.
        func discard() {
            switch state {
            case .writing: unlink(partial.path)
            case .named: unlink(finalURL.path)
            case .closed: return
            }
            release()
        }
    }

    /// `flock(LOCK_EX | LOCK_NB)`: false when another open file (a writer, a collector) holds it.
    static func tryLock(_ descriptor: CInt) -> Bool {
        while flock(descriptor, LOCK_EX | LOCK_NB) != 0 {
            guard errno == EINTR else { return false }
        }
        return true
    }

    /// Whether `path` still names the file open at `descriptor`.
    static func isSameFile(_ descriptor: CInt, _ path: String) -> Bool {
        var open = stat()
        var named = stat()
        return fstat(descriptor, &open) == 0 && stat(path, &named) == 0 && open.st_dev == named.st_dev
            && open.st_ino == named.st_ino
    }
}
