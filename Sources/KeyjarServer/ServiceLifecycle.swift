/// Where keyjard's service is in its life. A clean stop goes serving → endingSession (the
/// session's last commits: session cookies dropped) → stopped (every write refused). Pure, so
/// its rules are tested without a socket (`ServiceLifecycleTests`).
enum ServiceLifecycle: Equatable, Sendable {
    case serving
    case endingSession
    case stopped

    /// Whether a write may still be committed.
    var acceptsWrites: Bool { self != .stopped }

    /// Whether housekeeping (checkpoints, expiry) may start.
    var runsMaintenance: Bool { self == .serving }

    /// Begins a clean stop; false when one has already begun.
    mutating func beginShutdown() -> Bool {
        guard self == .serving else { return false }
        self = .endingSession
        return true
    }

    /// The session's last commits are in: from now on writes are refused.
    mutating func finishShutdown() {
        self = .stopped
    }
}
