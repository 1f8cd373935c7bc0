import NIOCore

/// How long an unlock of the encrypted secrets file waits after failed ones: the first three
/// failures in a row cost nothing more than scrypt's own time (a mistyped passphrase), each
/// one after waits twice as long as the one before, from 1 s up to 16 s (within the 30 s a
/// client waits for an answer). A success starts again from nothing. keyjard tries unlocks one
/// at a time, so that waiting cannot be gone round by asking on many connections at once.
struct UnlockAttempts: Sendable {
    /// Failures in a row.
    private(set) var failures = 0
    private var notBefore = NIODeadline.uptimeNanoseconds(0)

    static let freeFailures = 3
    static let longestWait = TimeAmount.seconds(16)

    /// How long an unlock asked at `now` waits before it is tried.
    func wait(at now: NIODeadline) -> TimeAmount {
        notBefore > now ? notBefore - now : .zero
    }

    mutating func failed(at now: NIODeadline) {
        failures += 1
        guard failures >= Self.freeFailures else { return }
        let doublings = min(failures - Self.freeFailures, 4)
        notBefore = now + min(.seconds(1 << doublings), Self.longestWait)
    }

    mutating func succeeded() {
        failures = 0
        notBefore = .uptimeNanoseconds(0)
    }
}
