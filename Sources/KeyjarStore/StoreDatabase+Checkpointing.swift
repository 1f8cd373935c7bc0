import Foundation
import Glibc
import KeyjarSQLite
import Synchronization

extension StoreDatabase {
    /// The WAL size the database keeps on disk when a checkpoint has let it start over.
    public static let walBytesKept = 64 << 20

    /// How a checkpoint treats the writer (SQLite's modes of the same names).
    public enum CheckpointMode: String, Sendable {
        /// Copies what it can without ever holding the writer back. Under a steady stream of
        /// writes it never catches up with the end of the WAL, so the WAL never starts over.
        case passive = "PASSIVE"
        /// Holds the writer back while it copies the rest, so that the next write starts the
        /// WAL over (cut back to ``walBytesKept``). Cheap right after a passive checkpoint.
        case restart = "RESTART"
        /// Like restart, and empties the WAL file.
        case truncate = "TRUNCATE"
    }

    /// Moves WAL content into the database file from a second connection, so that writers pay
    /// for it only in the modes that say so. Returns the WAL frames still not checkpointed.
    @discardableResult
    public func checkpoint(_ mode: CheckpointMode = .passive) throws -> Int {
        try checkpointerLock.withLock { try runCheckpoint(mode) }
    }

    /// Runs the checkpoint `policy` plans for now; nil (at once) when another is running.
    @discardableResult
    public func checkpoint(following policy: CheckpointPolicy) throws -> CheckpointPolicy.Plan? {
        guard checkpointerLock.try() else { return nil }
        defer { checkpointerLock.unlock() }
        checkpointRunning.store(true, ordering: .relaxed)
        defer { checkpointRunning.store(false, ordering: .relaxed) }
        let plan = policy.plan(
            walFrames: walFrames,
            walFileBytes: walFileBytes,
            sinceLastCommit: Self.monotonicNow() &- lastCommit.load(ordering: .relaxed)
        )
        switch plan {
        case .truncate:
            try runCheckpoint(.truncate)
        case .passive(let restartWhenClose):
            if try runCheckpoint(.passive) <= policy.walFramesLeftForRestart, restartWhenClose {
                try runCheckpoint(.restart)
            }
        }
        return plan
    }

    /// Whether a checkpoint is running now (one more would return at once).
    public var isCheckpointRunning: Bool { checkpointRunning.load(ordering: .relaxed) }

    /// Under `checkpointerLock`.
    @discardableResult
    private func runCheckpoint(_ mode: CheckpointMode) throws -> Int {
        try Self.wrap {
            let statement = try checkpointer.statement("PRAGMA wal_checkpoint(\(mode.rawValue))")
            defer { checkpointer.resetStatements() }
            guard try statement.step() else { return 0 }
            return Int(statement.int64(1) - statement.int64(2))
        }
    }

    /// Nanoseconds on the monotonic clock (when the last commit was, how long ago).
    static func monotonicNow() -> UInt64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return UInt64(now.tv_sec) * 1_000_000_000 + UInt64(now.tv_nsec)
    }

    /// Frames in the WAL as of the last commit: what a checkpoint would have to copy.
    public var walFrames: Int { walFrameCounter.frames.load(ordering: .relaxed) }

    /// The size of the WAL file (0 when there is none).
    public var walFileBytes: Int {
        var info = stat()
        return stat(path + "-wal", &info) == 0 ? Int(info.st_size) : 0
    }
}
