import KeyjarProtocol

/// When an open encrypted secrets file locks by itself: once no secret has been read or stored
/// for `timeout`. A value without I/O (tested on its own); ``CredentialKeeper`` schedules the
/// checks it asks for and locks when it says so.
struct IdleLock: Sendable, Equatable {
    /// nil: the file stays open until `keyjar lock` or keyjard stops.
    let timeout: Duration?

    init(timeout: Duration? = nil) {
        self.timeout = timeout
    }

    enum Decision: Equatable {
        /// Idle for the whole timeout: lock now.
        case lock
        /// Used since: look again after this long, when the timeout from the last use ends.
        case checkAgain(after: Duration)
        /// No timeout: nothing to check.
        case never
    }

    func decide(lastUse: ContinuousClock.Instant, now: ContinuousClock.Instant) -> Decision {
        guard let timeout else { return .never }
        let idle = max(.zero, lastUse.duration(to: now))
        return idle >= timeout ? .lock : .checkAgain(after: timeout - idle)
    }

    /// The longest timeout an unlock may ask for: ten years, as `DurationText` reads. A longer
    /// one would overflow the event loop's timer (nanoseconds in 64 bits).
    static let longest = 3_660 * 86_400

    /// The timeout for an unlock that asked for `seconds` (0: never; nil: `standard`).
    /// - Throws: when `seconds` is negative or beyond ``longest``.
    static func timeout(asked seconds: Int?, standard: Duration?) throws(WireError) -> Duration? {
        guard let seconds else { return standard }
        guard (0...Self.longest).contains(seconds) else {
            throw WireError(
                code: WireError.invalidArgument,
                message: "lockAfterIdle is \(seconds); it takes 0 (never) to \(Self.longest) seconds"
            )
        }
        return seconds == 0 ? nil : .seconds(seconds)
    }

    /// The lock as `keyjar status` shows it, for a file last used at `lastUse` (nil: locked).
    func status(lastUse: ContinuousClock.Instant?, now: ContinuousClock.Instant) -> ServiceStatus.SecretsLock {
        guard let lastUse else { return ServiceStatus.SecretsLock(isLocked: true) }
        let seconds = timeout.map { Int($0.components.seconds) }
        switch decide(lastUse: lastUse, now: now) {
        case .never: return ServiceStatus.SecretsLock(isLocked: false)
        case .lock: return ServiceStatus.SecretsLock(isLocked: false, lockAfterIdle: seconds, locksIn: 0)
        case .checkAgain(let after):
            // Rounded up: "locks in 0 s" is for a file that is locking now.
            let (whole, attoseconds) = after.components
            return ServiceStatus.SecretsLock(
                isLocked: false,
                lockAfterIdle: seconds,
                locksIn: Int(whole) + (attoseconds > 0 ? 1 : 0)
            )
        }
    }
}
