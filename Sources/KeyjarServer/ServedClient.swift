import KeyjarCore
import KeyjarProtocol
import NIOCore

/// A connected, authenticated client as the service sees it. Confined to the service's event
/// loop, like everything the service owns.
///
/// Messages on their way to the socket are counted. Once more than
/// ``ServerConfiguration/clientBacklogBytes`` wait, keyjard stops reading the client's requests
/// (its ``ReadGate``) until it reads what it was sent: a client that sends requests without
/// reading replies cannot pile replies up. Events keep coming regardless, so a client that
/// lets more than ``ServerConfiguration/clientQueueLimit`` messages or
/// ``ServerConfiguration/clientQueueBytes`` bytes pile up (a stopped or very slow reader) is
/// disconnected rather than allowed to grow keyjard's memory; it reconnects and resynchronises
/// by sequence number.
final class ServedClient {
    struct Limits {
        var messages: Int
        var bytes: Int
        var backlogBytes: Int
    }

    let id: UInt64
    let pid: Int32
    let channel: any Channel
    let gate: ReadGate
    /// While the client follows (``Request/follow(after:)``): the sequence number of the last
    /// event it was sent, so that its next write's events come after what it missed.
    var followedTo: UInt64?
    private let limits: Limits
    private var backlog = OutboundBacklog()

    init(id: UInt64, pid: Int32, channel: any Channel, gate: ReadGate, limits: Limits) {
        self.id = id
        self.pid = pid
        self.channel = channel
        self.gate = gate
        self.limits = limits
    }

    /// Queues a framed message (``ByteBuffer/init(framing:allocator:)``); false when the client
    /// is over its limits (the caller disconnects it) or gone. One message is always let
    /// through, however large, so that no reply is too big to send.
    ///
    /// A write has no promise unless something waits for it (``OutboundBacklog``): a frame with
    /// a secret, to be wiped once written, and a write that put the client behind, whose
    /// completion reopens its gate.
    ///
    /// - Parameter secret: the frame holds a password: once written (NIO has let go of it), its
    ///   memory is zeroed.
    @discardableResult
    func send(framed frame: ByteBuffer, secret: Bool = false) -> Bool {
        let size = frame.readableBytes
        guard channel.isActive else { return false }
        if backlog.needsSettling(adding: size, limits: limits) { settle() }
        guard backlog.admits(size, limits: limits) else { return false }
        backlog.append(size)
        let behind = backlog.isBehind(limits: limits)
        if behind { gate.hold(.backlog) }
        guard secret || behind else {
            channel.writeAndFlush(frame, promise: nil)
            return true
        }
        let this = NIOLoopBound(self, eventLoop: channel.eventLoop)
        let kept = secret ? NIOLoopBoundBox(frame, eventLoop: channel.eventLoop) : nil
        let loop = channel.eventLoop
        channel.writeAndFlush(frame).whenComplete { _ in
            this.value.written()
            // On the next turn: NIO may still hold the written frame while it completes it.
            if let kept { loop.execute { kept.value.wipe() } }
        }
        return true
    }

    /// Counts off what the socket took (what NIO no longer buffers; nothing once closed).
    private func settle() {
        let buffered = channel.isActive ? try? channel.syncOptions?.getOption(.bufferedWritableBytes) : nil
        backlog.settle(buffered: buffered ?? 0)
    }

    private func written() {
        settle()
        if !backlog.isBehind(limits: limits) { gate.release(.backlog) }
    }

    /// Sends a reply; a client too far behind to take it is disconnected (it would otherwise
    /// wait for a reply that never comes).
    func reply(_ message: ServerMessage) {
        if !send(message) { close() }
    }

    @discardableResult
    func send(encoded payload: some Collection<UInt8>) -> Bool {
        send(framed: ByteBuffer(framing: payload, allocator: channel.allocator))
    }

    @discardableResult
    func send(_ message: ServerMessage) -> Bool {
        var payload = MessageCoding.encode(message)
        guard message.carriesPassword else { return send(encoded: payload) }
        defer { Framing.wipe(&payload, upTo: payload.count) }
        return send(framed: ByteBuffer(framing: payload, allocator: channel.allocator), secret: true)
    }

    func close() { channel.close(promise: nil) }
}
