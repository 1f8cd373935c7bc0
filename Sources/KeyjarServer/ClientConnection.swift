import KeyjarProtocol

/// A connected, authenticated client as the service sees it: a bounded queue of encoded
/// messages on their way to the socket.
///
/// The queue holds at most `ServerConfiguration.clientQueueLimit` messages; a client that
/// lets it fill (a stuck or very slow reader) is disconnected rather than allowed to hold up
/// the others. It reconnects and resynchronises by sequence number.
final class ClientConnection: Sendable {
    let id: UInt64
    let pid: Int32
    private let outbox: AsyncStream<[UInt8]>.Continuation
    private let closeChannel: @Sendable () -> Void

    init(id: UInt64, pid: Int32, outbox: AsyncStream<[UInt8]>.Continuation, close: @escaping @Sendable () -> Void) {
        self.id = id
        self.pid = pid
        self.outbox = outbox
        self.closeChannel = close
    }

    /// Queues an encoded message; false when the queue is full or closed.
    @discardableResult
    func send(encoded payload: [UInt8]) -> Bool {
        switch outbox.yield(payload) {
        case .enqueued: return true
        case .dropped, .terminated: return false
        @unknown default: return false
        }
    }

    @discardableResult
    func send(_ message: ServerMessage) -> Bool { send(encoded: MessageCoding.encode(message)) }

    /// Stops sending and closes the socket.
    func close() {
        outbox.finish()
        closeChannel()
    }
}
