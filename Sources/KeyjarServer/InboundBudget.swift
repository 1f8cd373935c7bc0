import KeyjarProtocol
import NIOCore

/// The memory keyjard lets its clients' large frames occupy at once, shared by every
/// connection. A connection reserves a large frame's whole buffer as soon as its header
/// arrives and before reading the rest; when the budget is spent, it stops reading and queues until
/// enough is released. The queue is first come, first served, and the budget is never smaller
/// than the largest frame, so every frame is eventually let in.
///
/// Small frames (up to ``smallFrame`` bytes) need no reservation: each connection holds at most
/// one, and one read's worth of bytes beyond it (one read per wake-up, at most 64 KiB). So the
/// read buffers hold at most the budget, plus 128 KiB per connection, plus one read beyond the
/// frames being admitted (docs/operations.md, "Limits").
///
/// Confined to the service's event loop, like the rest of the service's state.
final class InboundBudget {
    /// Frames up to this size (header included) are read without a reservation. NIO reads at
    /// most 64 KiB at a time from a socket, so this is also the most a read can overshoot.
    static let smallFrame = 64 * 1024

    /// Whether a frame of this payload is a large one: read under a reservation, and decoded
    /// off the event loop (``ConnectionHandler``).
    static func isLarge(payload: Int) -> Bool { Framing.headerSize + payload > smallFrame }

    let limit: Int
    private(set) var reserved = 0
    private(set) var peakReserved = 0
    /// Bytes held in the connections' read buffers right now, and at most so far: what the
    /// budget bounds, measured rather than reserved (``ServiceStatus/Inbound``).
    private(set) var buffered = 0
    private(set) var peakBuffered = 0
    /// Connections not being read right now to keep memory bounded: waiting for the budget or
    /// for their client to read what it was sent (``ReadGate``).
    private(set) var pausedConnections = 0
    private var waiters = CircularBuffer<Waiter>()

    /// `grant` takes the reservation and returns true, or returns false (its connection went
    /// away meanwhile) to hand the bytes on to the next one waiting.
    private struct Waiter {
        var size: Int
        var grant: () -> Bool
    }

    init(limit: Int) { self.limit = limit }

    /// What a frame of `size` bytes (header included) reserves: the buffer it is read into,
    /// with room for one read beyond it, as NIO allocates it (a power of two).
    static func reservation(forFrame size: Int) -> Int {
        let needed = size + smallFrame
        return needed <= 1 ? 1 : 1 << (Int.bitWidth - (needed - 1).leadingZeroBitCount)
    }

    /// Reserves `size` bytes at once if they are free and nobody is waiting before us.
    func reserve(_ size: Int) -> Bool {
        precondition(size <= limit, "a frame larger than the inbound budget can never be admitted")
        guard waiters.isEmpty, reserved + size <= limit else { return false }
        take(size)
        return true
    }

    /// Queues for `size` bytes; `grant` is called on the event loop once they are reserved.
    func wait(for size: Int, grant: @escaping () -> Bool) {
        waiters.append(Waiter(size: size, grant: grant))
    }

    func release(_ size: Int) {
        reserved -= size
        precondition(reserved >= 0, "the inbound budget released more than it reserved")
        while let next = waiters.first, reserved + next.size <= limit {
            waiters.removeFirst()
            take(next.size)
            if !next.grant() { reserved -= next.size }
        }
    }

    func noteBuffered(_ change: Int) {
        buffered += change
        peakBuffered = max(peakBuffered, buffered)
    }

    /// A connection stopped being read to keep memory bounded (`paused`), or was read again.
    func connection(paused: Bool) {
        pausedConnections += paused ? 1 : -1
    }

    private func take(_ size: Int) {
        reserved += size
        peakReserved = max(peakReserved, reserved)
    }
}
