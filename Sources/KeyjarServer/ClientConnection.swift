import KeyjarProtocol
import NIOCore

/// A connected, authenticated client as the service sees it. Confined to the service's event
/// loop, like everything the service owns.
///
/// Messages on their way to the socket are counted; a client that lets more than
/// `ServerConfiguration.clientQueueLimit` pile up (a stuck or very slow reader) is disconnected
/// rather than allowed to grow keyjard's memory. It reconnects and resynchronises by sequence
/// number.
final class ClientConnection {
    let id: UInt64
    let pid: Int32
    let channel: any Channel
    private let limit: Int
    private var pending = 0

    init(id: UInt64, pid: Int32, channel: any Channel, limit: Int) {
        self.id = id
        self.pid = pid
        self.channel = channel
        self.limit = limit
    }

    /// Queues a framed message (``ByteBuffer/init(framing:allocator:)``); false when the client
    /// is over its limit or gone.
    @discardableResult
    func send(framed frame: ByteBuffer) -> Bool {
        guard channel.isActive, pending < limit else { return false }
        pending += 1
        let this = NIOLoopBound(self, eventLoop: channel.eventLoop)
        channel.writeAndFlush(frame).whenComplete { _ in this.value.pending -= 1 }
        return true
    }

    @discardableResult
    func send(encoded payload: some Collection<UInt8>) -> Bool {
        send(framed: ByteBuffer(framing: payload, allocator: channel.allocator))
    }

    @discardableResult
    func send(_ message: ServerMessage) -> Bool { send(encoded: MessageCoding.encode(message)) }

    func close() { channel.close(promise: nil) }
}
