public import KeyjarCore
import KeyjarLocks
import Synchronization

extension KeyjarClient {
    /// What a listener (``KeyjarClient/addListener(_:)``) is told.
    public enum Change: Sendable, Hashable {
        /// One change, as the replica applied it.
        case event(SequencedEvent)
        /// The replica was replaced by a snapshot after a long disconnection: what changed
        /// since the last event is not known; read what you need again.
        case resynchronised
    }

    /// Calls `body` with every change this client's replica applies, from now until the
    /// returned listener is cancelled or released, and makes the process listen meanwhile
    /// (keyjard pushes every change to it).
    ///
    /// `body` runs on the thread that applied the change, in order, with no lock of the client
    /// held (it may call the client, even write): the client's reader thread for other
    /// processes' changes, the caller's thread for this process's own writes (before the write
    /// returns) and for the changes a catching-up lookup applies. Keep it short, or hand the
    /// work to a queue of your own: the next change waits for it.
    ///
    /// Keyjar's own way to hear changes, for code that does not need Foundation's
    /// `NotificationCenter`: nothing is posted or bridged for it, and no second thread is woken
    /// as for a ``changes()`` stream. A one-shot client (``Configuration/keepsReplica`` off)
    /// has no replica: its listeners are never called.
    public func addListener(_ body: @escaping @Sendable (Change) -> Void) -> KeyjarListener {
        let active = ListenerSwitch()
        guard configuration.keepsReplica else { return KeyjarListener(client: nil, active: active) }
        state.withLock { $0.recipients.addCallback(Callback(active: active, body: body)) }
        updateListening()
        return KeyjarListener(client: self, active: active)
    }

    /// A listener's body and its switch, which also tells it apart for removal.
    struct Callback: Sendable {
        let active: ListenerSwitch
        let body: @Sendable (Change) -> Void

        /// Calls the body unless its listener was cancelled: a change applied before the
        /// cancel may be announced after it (announcements are made once no lock is held).
        func callAsFunction(_ change: Change) {
            if active.isOn.load(ordering: .acquiring) { body(change) }
        }
    }

    /// Forgets a cancelled listener; the process stops listening when it was the last thing
    /// that listened.
    func removeListener(_ active: ListenerSwitch) {
        // The body is released after the lock: whatever it captured may need the client.
        let removed = state.withLock { $0.recipients.removeCallback(switchedBy: active) }
        guard removed != nil else { return }
        updateListening()
    }
}

/// A listener added by ``KeyjarClient/addListener(_:)``: in place until ``cancel()`` or until
/// it is released, whichever comes first. Keep it for as long as the body should run.
public final class KeyjarListener: Sendable {
    private weak let client: KeyjarClient?
    private let active: ListenerSwitch

    init(client: KeyjarClient?, active: ListenerSwitch) {
        self.client = client
        self.active = active
    }

    /// Removes the listener: once this returns its body is not called again (a call already
    /// running on another thread finishes). The process stops listening unless something else
    /// listens.
    public func cancel() {
        guard active.isOn.exchange(false, ordering: .acquiringAndReleasing) else { return }
        client?.removeListener(active)
    }

    deinit { cancel() }
}

/// Whether a listener is still in place, shared by its ``KeyjarListener`` and the client's
/// copy of its body: checked at each call, so that a cancel holds for changes already waiting
/// to be announced; its identity is the listener's, for removal.
final class ListenerSwitch: Sendable {
    let isOn = Atomic(true)
}
