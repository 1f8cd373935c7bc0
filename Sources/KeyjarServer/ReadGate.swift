import NIOCore

/// Whether one connection may take in more of its client's bytes. Each reason to wait holds
/// the gate shut; while it is shut keyjard neither reads from the socket nor hands on frames it
/// has already read, so a client that sends faster than it is served waits in the kernel's
/// socket buffer (its own write blocks), not in keyjard's memory.
///
/// Confined to the service's event loop.
final class ReadGate {
    enum Reason: Hashable {
        /// A large frame waits for room in the ``InboundBudget``.
        case budget
        /// A request waits for the Secret Service; the ones after it wait in the socket.
        case busy
        /// A large message is being decoded off the event loop; the ones after it wait.
        case decoding
        /// The client has not read replies and events already sent to it
        /// (``ServedClient``): no more replies are made for it until it does.
        case backlog
    }

    private var holds: Set<Reason> = [] {
        didSet {
            // Waiting on the Secret Service or a decode is ordinary service; the others bound memory.
            let paused = !holds.subtracting([.busy, .decoding]).isEmpty
            let wasPaused = !oldValue.subtracting([.busy, .decoding]).isEmpty
            if paused != wasPaused { budget.connection(paused: paused) }
        }
    }
    private let budget: InboundBudget
    /// Called when the last hold is released.
    var onOpen: () -> Void = {}

    /// `budget` counts the connections paused to bound memory (``ServiceStatus/Inbound``).
    init(budget: InboundBudget) { self.budget = budget }

    var isOpen: Bool { holds.isEmpty }

    func hold(_ reason: Reason) { holds.insert(reason) }

    func release(_ reason: Reason) {
        guard holds.contains(reason) else { return }
        holds.remove(reason)
        if holds.isEmpty { onOpen() }
    }

    /// The connection ended: it is no longer counted as paused, and nothing reopens it.
    func close() {
        holds.removeAll()
        onOpen = {}
    }
}
