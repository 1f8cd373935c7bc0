/// When and how keyjard moves its WAL into the database file: a pure decision, applied by
/// ``StoreDatabase/checkpoint(following:)``.
///
/// A passive checkpoint never holds a writer back, but while writes keep coming it never
/// reaches the WAL's end, so on its own the WAL would only grow, and every later read and write
/// would search a longer WAL index. So once the WAL is long, a passive pass that got close to
/// the end is followed by a restarting one: the writer waits while it copies the last few
/// frames, then starts the WAL over. After writes have paused, a large WAL is truncated.
/// (The sizes are measured choices: docs/performance.md, Acknowledged writes.)
public struct CheckpointPolicy: Sendable, Hashable {
    /// A WAL file larger than this is truncated once writes have paused.
    public var walBytesKeptWhenIdle = 4 << 20
    /// A commit that leaves the WAL this long (about 64 MB) starts a checkpoint at once,
    /// without waiting for the next tick: during a burst of writes the WAL stays about this size.
    public var walFramesBeforeCheckpoint = 16_384
    /// A passive checkpoint that ends this close to the WAL's end is followed by a restarting
    /// one, which holds the writer back only while it copies these few frames.
    public var walFramesLeftForRestart = 512
    /// How long without a commit counts as a pause in writing.
    public var idleNanoseconds: UInt64 = 1_000_000_000

    public init() {}

    /// What to run.
    public enum Plan: Sendable, Hashable {
        /// Copy what can be copied without holding the writer back; then, when `restartWhenClose`
        /// and it got within ``CheckpointPolicy/walFramesLeftForRestart`` of the end, restart.
        case passive(restartWhenClose: Bool)
        /// Copy everything and empty the WAL file.
        case truncate
    }

    /// The checkpoint to run now, for a WAL of `walFrames` frames in a file of `walFileBytes`,
    /// `sinceLastCommit` nanoseconds after the last commit.
    public func plan(walFrames: Int, walFileBytes: Int, sinceLastCommit: UInt64) -> Plan {
        if sinceLastCommit > idleNanoseconds && walFileBytes > walBytesKeptWhenIdle { return .truncate }
        return .passive(restartWhenClose: walFrames >= walFramesBeforeCheckpoint)
    }

    /// Whether a commit that left the WAL at `walFrames` frames should start a checkpoint at
    /// once rather than at the next tick.
    public func startsAtOnce(walFrames: Int) -> Bool { walFrames >= walFramesBeforeCheckpoint }
}
