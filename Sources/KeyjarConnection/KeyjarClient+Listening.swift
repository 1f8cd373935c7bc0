import FoundationEssentials
import KeyjarLocks
import KeyjarProtocol

extension KeyjarClient {
    /// Reads the replica under its lock, after catching up when keyjard has committed a change
    /// the replica does not hold yet (its sequence page says so): every lookup that starts
    /// after a write was acknowledged, in any process, sees that write or something newer.
    /// When keyjard cannot be reached the replica answers as it is.
    package func withReplica<T>(_ body: (inout Replica) -> T) -> T {
        let current = state.withLock { state -> T? in
            guard state.isCurrent else { return nil }
            return body(&state.replica)
        }
        // `T` may itself be optional: a nil from `body` is told apart by the wrapping.
        if let current { return current }
        catchUp()
        return state.withLock { body(&$0.replica) }
    }

    /// Brings the replica up to at least the sequence number keyjard published when this was
    /// called: one request (keyjard sends the missed events before its reply), and a snapshot
    /// if they included a change too large to push. Concurrent lookups each send their own:
    /// the round trip is what they would wait for anyway.
    func catchUp() {
        let target = state.withLock { $0.page?.latest ?? 0 }
        guard (try? call(sending: .synchronisation)) != nil else { return }
        guard state.withLock({ $0.replica.sequence < target }) else { return }
        if case .snapshot(let snapshot)? = try? call(.snapshot) { apply(snapshot) }
        announcePending()
    }

    /// Tells keyjard whether to push every change, when that changed (a stream opened or ended,
    /// notifications switched), and starts the reader thread the first time the process
    /// listens. Sent without waiting: its reply is dropped when it comes.
    func updateListening() {
        guard configuration.keepsReplica else { return }
        _ = sendSynchronisation(for: nil, onlyWhenChanged: true)
        if state.withLock({ $0.listens }) { startReaderThread() }
    }

    /// Sends the request that keeps the replica current in the mode the client is in right
    /// now: `subscribe` while it listens, `follow` otherwise, both after the replica's sequence
    /// number. The mode is read and the request sent under the send lock, so requests leave in
    /// the order their modes were decided and keyjard ends in the latest. `waiter` gets the
    /// reply (nil: dropped).
    /// - Returns: the socket and request id, nil when nothing was sent (disconnected, or the
    ///   mode did not change); `sent` false when sending failed.
    func sendSynchronisation(
        for waiter: Waiter?,
        onlyWhenChanged: Bool
    ) -> (socket: UnixSocket, id: UInt64, sent: Bool)? {
        sendLock.withLock { count -> (socket: UnixSocket, id: UInt64, sent: Bool)? in
            let prepared = state.withLock { state in
                state.connection.synchronisationSent(
                    listens: state.listens,
                    after: state.replica.sequence,
                    for: waiter,
                    onlyWhenChanged: onlyWhenChanged
                )
            }
            guard let (socket, id, request) = prepared else { return nil }
            count += 1
            let frame = Framing.frame(MessageCoding.encode(ClientMessage(id: id, request: request)))
            let sent = (try? socket.sendAll(frame)) != nil
            if !sent, waiter == nil {
                // The connection is being lost: reconnecting tells keyjard the mode again.
                socket.shutdownBoth()
            }
            return (socket, id, sent)
        }
    }

    /// Maps keyjard's sequence page, or maps it again when keyjard replaced the file (a page
    /// nobody writes would keep the replica from ever catching up). Keeps what it has when
    /// the page cannot be read.
    func mapSequencePage() {
        let path = SequencePage.path(forSocket: servingSocketPath)
        if let mapped = state.withLock({ $0.page }), mapped.isCurrent(at: path) { return }
        guard let page = try? SequencePage.Reader(path: path) else { return }
        state.withLock { $0.page = page }
    }
}
