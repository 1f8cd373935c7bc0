import KeyjarCore
import KeyjarLocks
import KeyjarProtocol

extension KeyjarClient {
    /// What one read from the socket came to.
    enum ReadOutcome {
        case received, nothingYet, ended
    }

    /// Handles every whole message the reader holds: replies finish their callers, events
    /// update the replica (announced later, by ``announcePending()``). `.ended` (and the socket
    /// shut down) when keyjard sent garbage.
    func dispatchBuffered(_ receiver: inout Receiver) -> ReadOutcome {
        guard let socket = receiver.reader?.socket else { return .ended }
        do {
            while let message = try receiver.reader?.nextBuffered() { handle(message) }
            return .received
        } catch {
            socket.shutdownBoth()
            return .ended
        }
    }

    func handle(_ message: ServerMessage) {
        switch message {
        case .reply(let id, let response):
            switch state.withLock({ $0.connection.replyArrived(id: id) }) {
            case .resume(let waiter): waiter.finish(.success(response))
            case .applySnapshot:
                if case .snapshot(let snapshot) = response { apply(snapshot) }
            case .drop: break
            }
        case .failure(let id?, let error):
            // A snapshot that failed: the replica catches up at the next lookup or reconnection.
            resume(id, .failure(KeyjarClientError(code: .refused, message: error.message, wireCode: error.code)))
        case .failure(nil, let error):
            // The connection itself failed: keyjard closes it; the client connects again.
            resumeAll(.failure(KeyjarClientError(code: .refused, message: error.message, wireCode: error.code)))
        case .event(let event): apply(event)
        case .snapshot(let snapshot): apply(snapshot)
        case .resynchronise: requestSnapshot()
        }
    }

    /// Asks for the whole state, without waiting: the reply is applied when it is read, by
    /// whichever thread reads it. Events that come meanwhile update the old replica, which the
    /// snapshot then replaces (it is at least as recent as they are).
    func requestSnapshot() {
        guard let (socket, id) = state.withLock({ $0.connection.snapshotRequested() }) else { return }
        let frame = Framing.frame(MessageCoding.encode(ClientMessage(id: id, request: .snapshot)))
        let sent: Bool = sendLock.withLock { count in
            count += 1
            return (try? socket.sendAll(frame)) != nil
        }
        // A connection that fails here is re-established, and a reconnection resynchronises.
        if !sent { socket.shutdownBoth() }
    }

    /// Hands request `id`'s outcome to its caller, if one waits for it.
    func resume(_ id: UInt64, _ result: Result<Response, KeyjarClientError>) {
        if case .resume(let waiter) = state.withLock({ $0.connection.replyArrived(id: id) }) { waiter.finish(result) }
    }

    func resumeAll(_ result: Result<Response, KeyjarClientError>) {
        for waiter in state.withLock({ $0.connection.connectionRefused() }) { waiter.finish(result) }
    }
}
