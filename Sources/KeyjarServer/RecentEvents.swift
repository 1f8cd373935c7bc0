import NIOCore

/// The framed events of the latest commits, so that a replica catching up (a `follow` before a
/// lookup, a follower's write after others' changes, a reconnect) is answered from memory
/// instead of reading and decoding the change log and encoding each event again.
///
/// It holds every event committed since ``coversAfter``, in order, up to a byte budget; the
/// oldest go first. Confined to the service's event loop.
struct RecentEvents {
    private var frames: [(sequence: UInt64, frame: ByteBuffer)] = []
    private var start = 0
    private var bytes = 0
    let byteLimit: Int
    /// Every event with a larger sequence number is held (the ring knows nothing before it).
    private(set) var coversAfter: UInt64

    init(latest: UInt64, byteLimit: Int) {
        coversAfter = latest
        self.byteLimit = byteLimit
    }

    /// A committed event's frame, in commit order.
    mutating func append(sequence: UInt64, frame: ByteBuffer) {
        frames.append((sequence, frame))
        bytes += frame.readableBytes
        while bytes > byteLimit, start < frames.count {
            bytes -= frames[start].frame.readableBytes
            coversAfter = frames[start].sequence
            start += 1
        }
        // Dropped entries are compacted away once they are half of the array.
        if start > 64, start * 2 > frames.count {
            frames.removeFirst(start)
            start = 0
        }
    }

    /// The frames of every event after `sequence`; nil when some of them are no longer held.
    func frames(after sequence: UInt64) -> ArraySlice<(sequence: UInt64, frame: ByteBuffer)>? {
        guard sequence >= coversAfter else { return nil }
        var low = start
        var high = frames.count
        while low < high {
            let middle = (low + high) / 2
            if frames[middle].sequence <= sequence { low = middle + 1 } else { high = middle }
        }
        return frames[low...]
    }

    /// Forgets everything: after a failed commit the log, not memory, says what happened.
    mutating func reset(latest: UInt64) {
        frames.removeAll()
        start = 0
        bytes = 0
        coversAfter = latest
    }
}
