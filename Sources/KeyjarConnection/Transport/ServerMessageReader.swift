package import FoundationEssentials
package import KeyjarProtocol

/// The receiving side of a client's connection to keyjard: the socket's bytes cut into frames
/// and decoded into ``ServerMessage``s, and the one loop that waits for a request's reply.
///
/// Every client of keyjard reads through this: the `Keyjar` library (its handshake, its
/// one-shot calls, a caller waiting for its reply, its reader thread) and ``WireConnection``.
/// Not thread-safe: a client shares one behind a lock.
package struct ServerMessageReader: Sendable {
    package let socket: UnixSocket
    private var parser = FrameParser()
    private var buffer = [UInt8](repeating: 0, count: 65_536)
    /// When not nil, every payload is appended here as received (for protocol checks).
    package var recordedPayloads: [[UInt8]]?

    package init(socket: UnixSocket) {
        self.socket = socket
    }

    /// Why no reply came.
    package enum Failure: Error, Sendable {
        /// keyjard refused the request.
        case refused(WireError)
        /// keyjard refused the whole connection (a failure without an id), and closes it.
        case connectionRefused(WireError)
        /// The connection ended (or failed) first.
        case closed
        /// keyjard sent bytes that are not a message.
        case malformed(any Error)
    }

    /// How to wait for bytes when none are buffered.
    package enum Wait: Sendable {
        /// Once, without blocking.
        case none
        /// Poll without sleeping until this ``monotonicNanoseconds()`` instant, then nothing.
        case awakeUntil(UInt64)
        /// Block in the kernel, in slices of at most a second, until this date.
        case until(Date)
        /// Block until bytes or end of stream, however long.
        case indefinitely
    }

    /// The next whole message among the bytes already received, without reading.
    package mutating func nextBuffered() throws(Failure) -> ServerMessage? {
        guard var payload = try nextPayload() else { return nil }
        defer { Framing.wipe(&payload, upTo: payload.count) }
        do {
            return try MessageCoding.decode(ServerMessage.self, from: payload)
        } catch {
            throw .malformed(error)
        }
    }

    /// The next whole frame's payload among the bytes already received, undecoded.
    package mutating func nextPayload() throws(Failure) -> [UInt8]? {
        do {
            guard let payload = try parser.next() else { return nil }
            recordedPayloads?.append(payload)
            return payload
        } catch {
            throw .malformed(error)
        }
    }

    /// Reads what the socket has, waiting as `wait` says; false when nothing came in time.
    /// - Throws: `.closed` at end of stream or on a failed read.
    package mutating func read(_ wait: Wait) throws(Failure) -> Bool {
        let count: Int?
        do {
            switch wait {
            case .none: count = try socket.receiveWithoutSleeping(into: &buffer, until: 0)
            case .awakeUntil(let instant): count = try socket.receiveWithoutSleeping(into: &buffer, until: instant)
            case .until(let deadline):
                let remaining = deadline.timeIntervalSinceNow
                guard remaining > 0 else { return false }
                count = try socket.receive(into: &buffer, timeout: min(remaining, 1))
            case .indefinitely: count = try socket.receiveBlocking(into: &buffer)
            }
        } catch {
            throw .closed
        }
        guard let count else { return false }
        guard count > 0 else { throw .closed }
        parser.append(buffer[0..<count])
        Framing.wipe(&buffer, upTo: count)
        return true
    }

    /// Waits for the reply to request `id`: first polling without sleeping until `awakeUntil`
    /// (a reply usually comes sooner than a wake-up across CPUs would take:
    /// ``UnixSocket/awakeForReply``; 0 polls once), then blocking until `deadline`. Every other
    /// message (pushed events, other requests' replies) goes to `other`, in order. Nil at the
    /// deadline.
    package mutating func reply(
        to id: UInt64,
        awakeUntil: UInt64,
        deadline: Date,
        other: (ServerMessage) throws(Failure) -> Void
    ) throws(Failure) -> Response? {
        var awake = true
        while true {
            while let message = try nextBuffered() {
                switch message {
                case .reply(id, let response): return response
                case .failure(.some(id), let error): throw .refused(error)
                case .failure(nil, let error): throw .connectionRefused(error)
                default: try other(message)
                }
            }
            if awake {
                awake = try read(.awakeUntil(awakeUntil))
                if awake { continue }
            }
            guard deadline.timeIntervalSinceNow > 0 else { return nil }
            _ = try read(.until(deadline))
        }
    }
}
