/// The messages sent to one client that its socket has not taken yet, counted without a
/// callback per write.
///
/// A fan-out writes each event to every subscriber, and a promise with its completion closure
/// per write cost keyjard 2–5% of its event loop's time in a fan-out to 100 clients
/// (docs/performance.md, Fan-out). Instead the size of every message sent is kept, oldest
/// first, and settled against what NIO reports as still buffered (`bufferedWritableBytes`):
/// messages whose bytes all left are dropped from the count. NIO writes a channel's messages
/// in order, so the unwritten bytes are always the newest messages' (the oldest of them perhaps
/// partly written).
///
/// Counts between settlements only grow, so they are never below the truth: a caller settles
/// before any decision they would change (``needsSettling(adding:limits:)``), and at least
/// every ``settlingInterval`` messages, so that a client that keeps up holds a few dozen
/// sizes, not half its message limit's worth (up to 512 connections each keep theirs).
struct OutboundBacklog {
    /// Messages counted before the channel is asked again whatever the limits: one option read
    /// per this many writes.
    static let settlingInterval = 64

    /// Sizes of the messages counted, oldest first, from `head` on.
    private var sizes: [Int] = []
    private var head = 0
    /// Their bytes.
    private(set) var bytes = 0

    var messages: Int { sizes.count - head }
    var isEmpty: Bool { head == sizes.count }

    mutating func append(_ size: Int) {
        sizes.append(size)
        bytes += size
    }

    /// Drops the messages written: all but the newest whose bytes make up `buffered` (the
    /// bytes the channel still holds).
    mutating func settle(buffered: Int) {
        while head < sizes.count, bytes - sizes[head] >= buffered {
            bytes -= sizes[head]
            head += 1
        }
        if head == sizes.count {
            sizes.removeAll(keepingCapacity: true)
            head = 0
        } else if head >= 64, head * 2 >= sizes.count {
            // Written messages at the front are let go of in batches, not one by one.
            sizes.removeFirst(head)
            head = 0
        }
    }

    /// Whether one more message of `size` could change a decision on these counts (refused,
    /// or behind): only then is it worth asking the channel what it still holds.
    func needsSettling(adding size: Int, limits: ServedClient.Limits) -> Bool {
        !isEmpty
            && (messages >= Self.settlingInterval || messages + 1 > limits.messages / 2
                || bytes + size > min(limits.backlogBytes, limits.bytes))
    }

    /// Whether a message of `size` may be queued: always when nothing waits (no reply is too
    /// big to send), else within both limits.
    func admits(_ size: Int, limits: ServedClient.Limits) -> Bool {
        isEmpty || (messages < limits.messages && bytes + size <= limits.bytes)
    }

    /// Half its message limit also counts: small replies would otherwise reach the limit (and
    /// the client be cut off) long before their bytes did.
    func isBehind(limits: ServedClient.Limits) -> Bool {
        bytes > limits.backlogBytes || messages > limits.messages / 2
    }
}
