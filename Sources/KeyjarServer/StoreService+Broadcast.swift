import KeyjarCodec
import KeyjarCore
import KeyjarProtocol
import KeyjarStore
import Logging
import NIOCore

// Fan-out: committed events to their writer, the subscribers and the followers, and the
// catch-up of a client that subscribes or follows after missing some.
extension StoreService {
    /// An event framed once for every subscriber, and the writer that already has it.
    struct PendingBroadcast {
        var frame: ByteBuffer
        var sentTo: UInt64?
        /// The first protocol version that reads the event as it is.
        var minimumVersion: Int
        /// What an older client gets instead (``frameForOlderClients(_:)``).
        var downgraded: ByteBuffer?
    }

    /// Sends new events to their writer at once (so its replica has them before the reply,
    /// read-your-writes) and to every other subscriber just after the reply: an acknowledgement
    /// does not wait for a hundred other sockets. Order is kept: whatever keyjard does next
    /// (another request, a subscription, the next commit) first finishes these broadcasts, so
    /// every subscriber still sees every event in sequence order. A writer that follows
    /// (``Request/follow(after:)``) gets its events too, after whatever it missed.
    func broadcast(_ events: [StoreDatabase.LoggedEvent], origin: ServedClient?, previous: UInt64) {
        let writer = origin.flatMap { state.subscribers[$0.id] }
        let follower = writer == nil ? origin.flatMap { $0.followedTo == nil ? nil : $0 } : nil
        // A follower that has everything before these events gets them as they are.
        let direct = writer ?? (follower?.followedTo == previous ? follower : nil)
        // Nobody else to tell (a later subscriber reads these from the change log).
        let othersListen = state.subscribers.count > (writer == nil ? 0 : 1)
        for event in events {
            // The logged JSON is wrapped as it is: no event is encoded twice. One too large to
            // push (a big import's) becomes a marker; subscribers fetch a snapshot.
            let payload =
                event.json.utf8.count > ProtocolLimits.largestPushedEvent
                ? MessageCoding.encode(ServerMessage.resynchronise(sequence: event.sequence))
                : Array(MessageCoding.eventPayload(sequence: event.sequence, eventJSON: event.json).utf8)
            let frame = ByteBuffer(framing: payload, allocator: ByteBufferAllocator())
            state.recentEvents.append(sequence: event.sequence, frame: frame)
            let minimumVersion = event.event.minimumProtocolVersion
            let downgraded = minimumVersion > 1 ? Self.frameForOlderClients(event) : nil
            if let direct {
                deliver(direct.protocolVersion >= minimumVersion ? frame : downgraded ?? frame, to: direct)
            }
            if othersListen {
                state.pendingBroadcasts.append(
                    PendingBroadcast(
                        frame: frame,
                        sentTo: writer?.id,
                        minimumVersion: minimumVersion,
                        downgraded: downgraded
                    )
                )
            }
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
        guard !state.isFlushScheduled, !state.pendingBroadcasts.isEmpty else { return }
        state.isFlushScheduled = true
        // Runs on this loop after the current read is handled, its replies written.
        let service = NIOLoopBound(self, eventLoop: eventLoop)
        eventLoop.execute { service.value.flushBroadcasts() }
    }

    /// Sends every pending event to the subscribers that do not have it yet, in order (each
    /// event to the oldest connection first: ``SubscriberList``).
    func flushBroadcasts() {
        state.isFlushScheduled = false
        guard !state.pendingBroadcasts.isEmpty else { return }
        let pending = state.pendingBroadcasts
        state.pendingBroadcasts.removeAll(keepingCapacity: true)
        for broadcast in pending {
            for client in state.subscribers.clients where client.id != broadcast.sentTo {
                deliver(
                    client.protocolVersion >= broadcast.minimumVersion
                        ? broadcast.frame : broadcast.downgraded ?? broadcast.frame,
                    to: client
                )
            }
        }
    }

    func deliver(_ frame: ByteBuffer, to client: ServedClient) {
        guard !client.send(framed: frame) else { return }
        logger.warning("client queue overflowed; disconnecting it", metadata: ["client.pid": "\(client.pid)"])
        state.subscribers.remove(id: client.id)
        client.close()
    }

    func subscribe(_ client: ServedClient, after sequence: UInt64?) throws(WireError) -> Response {
        // Events committed before this request reach the client through the log below, never twice.
        flushBroadcasts()
        if let sequence { try sendEvents(after: sequence, to: client) }
        // On the event loop nothing can commit between the events sent above and this line.
        client.followedTo = nil
        state.subscribers.insert(client)
        return .subscribed(sequence: state.latestSequence)
    }

    /// Ends a subscription, if any, and brings the client's replica up to date: from now on it
    /// is sent only its own writes (``broadcast(_:origin:previous:)``).
    func follow(_ client: ServedClient, after sequence: UInt64) throws(WireError) -> Response {
        // What was pending for it as a subscriber is in what follows (or it already has it).
        state.subscribers.remove(id: client.id)
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
            for entry in held
            where !client.send(framed: Self.frame(entry, for: client)) {
                client.close()
                throw WireError(code: WireError.overloaded, message: "the missed events did not fit the client's queue")
            }
            return
        }
        let missed: [[UInt8]]?
        do {
            missed = try database.events(after: sequence).flatMap { events in
                events.count <= messageBudget
                    ? events.map { event in
                        client.sees(event.event)
                            ? MessageCoding.encode(ServerMessage.event(event: event))
                            : MessageCoding.encode(ServerMessage.resynchronise(sequence: event.sequence))
                    } : nil
            }
        } catch {
            throw storageFailure(error)
        }
        if let missed, missed.reduce(0, { $0 + $1.count }) <= byteBudget {
            for payload in missed where !client.send(encoded: payload) {
                client.close()
                throw WireError(code: WireError.overloaded, message: "the missed events did not fit the client's queue")
            }
        } else if !client.send(encoded: try snapshotMessage(for: client)) {
            client.close()
            throw WireError(code: WireError.overloaded, message: "the snapshot did not fit the client's queue")
        }
    }

    // MARK: Clients of older protocol versions

    /// A live event as a client of an older protocol version is sent it: without the changes
    /// it cannot read (partitioned cookies before version 3, bearer credentials before 4), under
    /// the same sequence number, so that it neither sees them nor has to fetch a snapshot (a
    /// widget refreshing a partitioned cookie on every page would otherwise cost every such
    /// client the whole store each time). One too large to push stays `resynchronise`.
    static func frameForOlderClients(_ event: StoreDatabase.LoggedEvent) -> ByteBuffer {
        let kept: StoreEvent
        switch event.event {
        case .cookies(let changes):
            kept = .cookies(
                changes: changes.filter { change in
                    switch change {
                    case .added(let cookie), .removed(let cookie, _): !cookie.isPartitioned
                    case .replaced(let old, let new): !old.isPartitioned && !new.isPartitioned
                    }
                }
            )
        case .credentials(let changes):
            kept = .credentials(changes: changes.filter { $0.space.authenticationMethod != .httpBearer })
        default:
            return resynchroniseFrame(event.sequence)
        }
        let json = StoreEventJSON.encode(kept)
        guard json.utf8.count <= ProtocolLimits.largestPushedEvent else { return resynchroniseFrame(event.sequence) }
        return ByteBuffer(
            framing: Array(MessageCoding.eventPayload(sequence: event.sequence, eventJSON: json).utf8),
            allocator: ByteBufferAllocator()
        )
    }

    /// `resynchronise` for event `sequence`: a client of an older protocol version catching up
    /// from kept events is sent this instead of one it cannot read, and asks for a snapshot,
    /// which leaves out what it cannot read (``snapshot(for:)``).
    static func resynchroniseFrame(_ sequence: UInt64) -> ByteBuffer {
        ByteBuffer(
            framing: MessageCoding.encode(ServerMessage.resynchronise(sequence: sequence)),
            allocator: ByteBufferAllocator()
        )
    }

    /// A kept event's frame for `client`. The frame holds the event's JSON as written, where a
    /// member name appears only as one (in a string every quote is escaped): finding
    /// `"partitionKey":` means the event carries a partitioned cookie, and
    /// `"authenticationMethod":"httpBearer"` a bearer credential.
    static func frame(_ entry: (sequence: UInt64, frame: ByteBuffer), for client: ServedClient) -> ByteBuffer {
        var markers: [[UInt8]] = []
        if !client.seesPartitionedCookies { markers.append(Array(#""partitionKey":"#.utf8)) }
        if !client.seesBearerCredentials { markers.append(Array(#""authenticationMethod":"httpBearer""#.utf8)) }
        let bytes = entry.frame.readableBytesView
        for marker in markers where bytes.count >= marker.count {
            var index = bytes.startIndex
            while let found = bytes[index...].firstIndex(of: marker[0]), bytes.endIndex - found >= marker.count {
                if bytes[found..<found + marker.count].elementsEqual(marker) {
                    return resynchroniseFrame(entry.sequence)
                }
                index = found + 1
            }
        }
        return entry.frame
    }
}
