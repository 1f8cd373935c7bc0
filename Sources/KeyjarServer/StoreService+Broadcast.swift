import KeyjarCodec
import KeyjarCore
import KeyjarProtocol
import KeyjarStore
import Logging
import NIOCore

// Fan-out: committed events to their writer, the subscribers and the followers, and the
// catch-up of a client that subscribes or follows after missing some.
extension StoreService {
    /// Sends new events to their writer at once (so its replica has them before the reply,
    /// read-your-writes) and to every other subscriber just after the reply: an acknowledgement
    /// does not wait for a hundred other sockets. Order is kept: whatever keyjard does next
    /// (another request, a subscription, the next commit) first finishes these broadcasts, so
    /// every subscriber still sees every event in sequence order. A writer that follows
    /// (``Request/follow(after:)``) gets its events too, after whatever it missed.
    func broadcast(_ events: [StoreDatabase.LoggedEvent], origin: ServedClient?, previous: UInt64) {
        let writer = origin.flatMap { state.fanout.subscribers[$0.id] }
        let follower = writer == nil ? origin.flatMap { $0.followedTo == nil ? nil : $0 } : nil
        // A follower that has everything before these events gets them as they are.
        let direct = writer ?? (follower?.followedTo == previous ? follower : nil)
        let othersListen = state.fanout.othersListen(besides: writer)
        for event in events {
            // The logged JSON is wrapped as it is: no event is encoded twice. One too large to
            // push (a big import's) becomes a marker; subscribers fetch a snapshot.
            let payload =
                event.json.utf8.count > ProtocolLimits.largestPushedEvent
                ? MessageCoding.encode(ServerMessage.resynchronise(sequence: event.sequence))
                : Array(MessageCoding.eventPayload(sequence: event.sequence, eventJSON: event.json).utf8)
            let frame = ByteBuffer(framing: payload, allocator: ByteBufferAllocator())
            state.recentEvents.append(sequence: event.sequence, frame: frame)
            if let direct { deliver(frame, to: direct) }
            if othersListen { state.fanout.queue(frame, sentTo: writer?.id) }
        }
        if let follower, let last = events.last?.sequence {
            if direct == nil, let missedSince = follower.followedTo {
                do {
                    try sendEvents(after: missedSince, to: follower, replica: true)
                } catch {
                    // It reconnects and catches up from what it has.
                    follower.close()
                }
            }
            follower.followedTo = last
        }
        guard state.fanout.schedulesFlush() else { return }
        // Runs on this loop after the current read is handled, its replies written.
        let service = NIOLoopBound(self, eventLoop: eventLoop)
        eventLoop.execute { service.value.flushBroadcasts() }
    }

    /// Sends every pending event to the subscribers that do not have it yet, in order (each
    /// event to the oldest connection first: ``SubscriberList``).
    func flushBroadcasts() {
        for broadcast in state.fanout.takePending() {
            // The list as it is now: a client whose queue overflowed is gone from it.
            for client in state.fanout.subscribers.clients where client.id != broadcast.sentTo {
                deliver(broadcast.frame, to: client)
            }
        }
    }

    func deliver(_ frame: ByteBuffer, to client: ServedClient) {
        guard !client.send(framed: frame) else { return }
        logger.warning("client queue overflowed; disconnecting it", metadata: ["client.pid": "\(client.pid)"])
        state.fanout.unsubscribe(id: client.id)
        client.close()
    }

    func subscribe(_ client: ServedClient, after sequence: UInt64?) throws(WireError) -> Response {
        // Events committed before this request reach the client through the log below, never twice.
        flushBroadcasts()
        if let sequence { try sendEvents(after: sequence, to: client) }
        // On the event loop nothing can commit between the events sent above and this line.
        client.followedTo = nil
        state.fanout.subscribe(client)
        return .subscribed(sequence: state.latestSequence)
    }

    /// Ends a subscription, if any, and brings the client's replica up to date: from now on it
    /// is sent only its own writes (``broadcast(_:origin:previous:)``).
    func follow(_ client: ServedClient, after sequence: UInt64) throws(WireError) -> Response {
        // What was pending for it as a subscriber is in what follows (or it already has it).
        state.fanout.unsubscribe(id: client.id)
        try sendEvents(after: sequence, to: client, replica: true)
        client.followedTo = state.latestSequence
        return .subscribed(sequence: state.latestSequence)
    }

    /// Sends `client` every event after `sequence`: from memory when the ring holds them, else
    /// from the change log; the whole state when the log no longer has them either, or they
    /// could never fit the client's queue. Events that do not fit close the connection (a gap
    /// nobody sees would stay; reconnecting, a subscriber asks for the rest from the last event
    /// it got, so that a listener still sees every change).
    ///
    /// - Parameter replica: the client only keeps a replica (it follows): nothing shows it the
    ///   events one by one, and its write waits for its reply after them, so beyond half its
    ///   queue (in messages or bytes: what is already queued must still fit) it gets the whole
    ///   state instead.
    func sendEvents(after sequence: UInt64, to client: ServedClient, replica: Bool = false) throws(WireError) {
        guard sequence != state.latestSequence else { return }
        let messageBudget = replica ? configuration.clientQueueLimit / 2 : Int.max
        let byteBudget = replica ? configuration.clientQueueBytes / 2 : configuration.clientQueueBytes
        // A sequence number from the future (another database's) gets the whole state.
        if sequence < state.latestSequence, let held = state.recentEvents.frames(after: sequence),
            held.count <= messageBudget, held.reduce(0, { $0 + $1.frame.readableBytes }) <= byteBudget
        {
            for entry in held where !client.send(framed: entry.frame) {
                client.close()
                throw WireError(code: WireError.overloaded, message: "the missed events did not fit the client's queue")
            }
            return
        }
        let missed: [[UInt8]]?
        do {
            missed = try database.events(after: sequence).flatMap { events in
                events.count <= messageBudget
                    ? events.map { MessageCoding.encode(ServerMessage.event(event: $0)) } : nil
            }
        } catch {
            throw storageFailure(error)
        }
        if let missed, missed.reduce(0, { $0 + $1.count }) <= byteBudget {
            for payload in missed where !client.send(encoded: payload) {
                client.close()
                throw WireError(code: WireError.overloaded, message: "the missed events did not fit the client's queue")
            }
        } else if !client.send(encoded: try snapshotMessage()) {
            client.close()
            throw WireError(code: WireError.overloaded, message: "the snapshot did not fit the client's queue")
        }
    }
}
