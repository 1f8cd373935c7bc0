package import FoundationEssentials
package import KeyjarProtocol

/// A blocking connection to keyjard speaking the wire protocol directly: one request at a
/// time, replies matched by id, pushed events kept aside. For tools, benchmarks and tests; the
/// `Keyjar` client library is what applications use.
///
/// ```swift
/// let connection = try WireConnection(socketPath: KeyjarPaths.defaultSocketPath())
/// let reply = try connection.call(.status)
/// ```
package final class WireConnection {
    /// Sending goes through this copy, so that one thread may send while another receives
    /// (the reader is mutated by every read).
    private let socket: UnixSocket
    private var reader: ServerMessageReader
    private var nextID: UInt64 = 0
    /// Events and snapshots that arrived while waiting for a reply.
    package private(set) var pushed: [ServerMessage] = []
    /// When not nil, every payload received is appended here as sent (for protocol checks).
    package var recordedPayloads: [[UInt8]]? {
        get { reader.recordedPayloads }
        set { reader.recordedPayloads = newValue }
    }
    /// True once keyjard closed the connection.
    package private(set) var isClosed = false

    /// Connects; with `hello`, also performs the handshake.
    package init(socketPath: String, hello: Bool = true, client: String = "keyjar-connection") throws {
        do {
            socket = try UnixSocket.connect(path: socketPath)
        } catch {
            throw ConnectionError(error.description)
        }
        reader = ServerMessageReader(socket: socket)
        if hello {
            let response = try call(.hello(version: ProtocolVersion.current, client: client))
            guard case .hello = response else { throw ConnectionError("unexpected hello reply \(response)") }
        }
    }

    deinit { socket.close() }

    /// Sends raw bytes (for malformed-input tests).
    package func sendRaw(_ bytes: [UInt8]) throws {
        try socket.sendAll(bytes)
    }

    @discardableResult
    package func send(_ request: Request) throws -> UInt64 {
        nextID += 1
        try sendRaw(Framing.frame(MessageCoding.encode(ClientMessage(id: nextID, request: request))))
        return nextID
    }

    /// The next message from keyjard, nil on end of stream or after `timeout`.
    package func receive(timeout: TimeInterval = 10) throws -> ServerMessage? {
        guard let payload = try receiveRaw(timeout: timeout) else { return nil }
        return try MessageCoding.decode(ServerMessage.self, from: payload)
    }

    /// The next frame's payload as sent, undecoded; nil on end of stream or after `timeout`.
    package func receiveRaw(timeout: TimeInterval = 10) throws -> [UInt8]? {
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            if let payload = try reader.nextPayload() { return payload }
            do {
                guard try reader.read(.until(deadline)) || deadline.timeIntervalSinceNow > 0 else { return nil }
            } catch {
                isClosed = true
                return nil
            }
        }
    }

    /// The next frame's payload as sent, undecoded, waiting as long as it takes (one `recv`
    /// per wake-up, as the client library's reader thread reads); nil at end of stream.
    package func receiveRawBlocking() throws -> [UInt8]? {
        while true {
            if let payload = try reader.nextPayload() { return payload }
            do {
                _ = try reader.read(.indefinitely)
            } catch {
                isClosed = true
                return nil
            }
        }
    }

    /// Sends a request and returns its reply; pushed messages meanwhile are kept in `pushed`.
    /// - Throws: the request's ``WireError`` when keyjard refused it, else ``ConnectionError``.
    package func call(_ request: Request, timeout: TimeInterval = 10) throws -> Response {
        let id = try send(request)
        // A pushed event may come first (keyjard sends a writer its event just before the
        // reply), so the time awake is counted from the send, not per message.
        let awakeUntil = monotonicNanoseconds() + UnixSocket.awakeForReply
        do {
            let reply = try reader.reply(to: id, awakeUntil: awakeUntil, deadline: Date().addingTimeInterval(timeout)) {
                pushed.append($0)
            }
            if let reply { return reply }
        } catch {
            // Matched in a switch: `catch .case` patterns on this error crash Swift 6.3.1's SILGen.
            switch error {
            case .refused(let wire), .connectionRefused(let wire): throw wire
            case .malformed(let underlying): throw underlying
            case .closed: isClosed = true
            }
        }
        throw ConnectionError("no reply to \(id) within \(timeout) s (connection closed or silent)")
    }

    /// The next pushed event or snapshot (already received ones first).
    package func nextPushed(timeout: TimeInterval = 10) throws -> ServerMessage? {
        if !pushed.isEmpty { return pushed.removeFirst() }
        return try receive(timeout: timeout)
    }
}

/// A connection-level failure: could not connect, the peer closed, or no reply in time.
package struct ConnectionError: Error, Sendable, CustomStringConvertible {
    package var description: String

    package init(_ description: String) { self.description = description }
}
