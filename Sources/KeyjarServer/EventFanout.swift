import NIOCore

/// Committed events on their way to keyjard's subscribers (``StoreService/broadcast(_:origin:previous:)``):
/// who subscribes, in the order a change reaches them (``SubscriberList``); each event framed
/// once and waiting to be sent to every subscriber but its writer, which has it already; and
/// whether a flush of those is scheduled. It sends nothing itself: the service delivers what
/// ``takePending()`` hands it, so the rules are tested without a socket. Confined to the
/// service's event loop, like the connections it holds.
struct EventFanout<Client: IdentifiedConnection> {
    /// An event framed once for every subscriber, and the writer that already has it.
    struct Pending {
        var frame: ByteBuffer
        var sentTo: UInt64?
    }

    private(set) var subscribers = SubscriberList<Client>()
    private var pending: [Pending] = []
    private var isFlushScheduled = false

    /// Subscribes `client`, or replaces its entry.
    mutating func subscribe(_ client: Client) { subscribers.insert(client) }

    mutating func unsubscribe(id: UInt64) { subscribers.remove(id: id) }

    /// Forgets every subscriber and every event still to be sent (keyjard stops).
    mutating func removeAll() {
        subscribers.removeAll()
        pending.removeAll()
    }

    /// Whether anybody but `writer` (a subscriber, or nil) subscribes: whether a new event
    /// is to be queued at all (a later subscriber reads it from the change log).
    func othersListen(besides writer: Client?) -> Bool {
        subscribers.count > (writer == nil ? 0 : 1)
    }

    /// Queues `frame` for every subscriber but `writer`'s id.
    mutating func queue(_ frame: ByteBuffer, sentTo writer: UInt64?) {
        pending.append(Pending(frame: frame, sentTo: writer))
    }

    /// Whether the caller is to schedule a flush now: something waits and no flush is scheduled
    /// yet. From here on one is.
    mutating func schedulesFlush() -> Bool {
        guard !isFlushScheduled, !pending.isEmpty else { return false }
        isFlushScheduled = true
        return true
    }

    /// The events to send now, oldest first, each to ``subscribers`` but its writer; none wait
    /// afterwards and no flush is scheduled.
    mutating func takePending() -> [Pending] {
        isFlushScheduled = false
        defer { pending.removeAll(keepingCapacity: true) }
        return pending
    }
}
