import NIOCore

/// When keyjard compares the secret store with its records after the store reported a change
/// (``CredentialKeeper/secretsChanged()``): one comparison for a burst of signals (`secret-tool
/// clear` of a hundred items sends a hundred), never two at once, and one more after a
/// comparison that signals overtook. A comparison that cost `T` is followed by the next after
/// at least 10 × `T`, so that the store's own writes, which signal too, spend at most a tenth
/// of the credential lane on comparisons however large the keyring.
struct SecretsAuditSchedule: Sendable, Hashable {
    enum State: Sendable, Hashable {
        case idle
        /// A comparison is scheduled and has not started.
        case scheduled
        /// A comparison is running; `overtaken` when a change was reported since it began.
        case running(overtaken: Bool)
    }

    /// What the caller does next.
    enum Action: Sendable, Hashable {
        case nothing
        /// Schedule a comparison after this delay.
        case schedule(after: TimeAmount)
    }

    private(set) var state = State.idle
    private var lastCost = TimeAmount.zero

    /// The shortest wait: signals of one burst arrive within it.
    static let gatheringDelay = TimeAmount.milliseconds(200)

    private var delay: TimeAmount { max(Self.gatheringDelay, lastCost * 10) }

    /// The store reported a change.
    mutating func changeReported() -> Action {
        switch state {
        case .idle:
            state = .scheduled
            return .schedule(after: delay)
        case .scheduled, .running(overtaken: true):
            return .nothing
        case .running(overtaken: false):
            state = .running(overtaken: true)
            return .nothing
        }
    }

    /// The scheduled comparison starts.
    mutating func auditStarts() {
        state = .running(overtaken: false)
    }

    /// The comparison ended after costing `cost`.
    mutating func auditEnded(cost: TimeAmount) -> Action {
        lastCost = cost
        if case .running(overtaken: true) = state {
            state = .scheduled
            return .schedule(after: delay)
        }
        state = .idle
        return .nothing
    }
}
