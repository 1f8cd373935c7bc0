import KeyjarProtocol

/// What one client connection may do next, as a value: the handshake, then requests answered
/// one at a time in order, then closing. ``ConnectionHandler`` feeds it what arrives and does
/// what it says; it does no I/O itself, so every path is tested without a socket
/// (`ConnectionStateMachineTests`).
struct ConnectionStateMachine {
    enum State: Equatable {
        /// Connected; the first request must be a `hello` of this protocol version.
        case awaitingHello
        /// Greeted, and no request is waiting for an answer from elsewhere.
        case ready
        /// A request waits for its answer (the Secret Service); the ones after it queue behind
        /// it, so replies keep the order of their requests.
        case answering
        /// A fatal error was sent; nothing more is read or answered.
        case closing
    }

    /// What to do with a message that arrived.
    enum Received: Equatable {
        /// Queued; answer what ``nextRequest()`` gives. Carries the client's name when this
        /// message was its hello.
        case queued(greeting: String?)
        /// Send this failure and close.
        case fail(id: UInt64?, WireError)
        /// Closing: ignore it.
        case ignore
    }

    private(set) var state = State.awaitingHello
    private var waiting: [ClientMessage] = []
    /// The versions a hello may ask for (``ServerConfiguration/protocolVersions``).
    let supportedVersions: ClosedRange<Int>

    init(supportedVersions: ClosedRange<Int> = ProtocolVersion.supported) {
        self.supportedVersions = supportedVersions
    }

    /// A decoded message arrived.
    mutating func received(_ message: ClientMessage) -> Received {
        switch state {
        case .closing:
            return .ignore
        case .awaitingHello:
            guard case .hello(let version, let name) = message.request else {
                return close(
                    id: message.id,
                    WireError(code: WireError.handshakeRequired, message: "the first request must be hello")
                )
            }
            guard supportedVersions.contains(version) else {
                return close(
                    id: message.id,
                    WireError(
                        code: WireError.unsupportedVersion,
                        message:
                            "protocol version \(version) is not supported; this keyjard speaks "
                            + (supportedVersions.count == 1
                                ? "\(supportedVersions.lowerBound)"
                                : "\(supportedVersions.lowerBound) to \(supportedVersions.upperBound)")
                    )
                )
            }
            state = .ready
            waiting.append(message)
            return .queued(greeting: name)
        case .ready, .answering:
            waiting.append(message)
            return .queued(greeting: nil)
        }
    }

    /// The time a connection has to say hello passed: one still without it is closed (it
    /// holds a place, and keyjard owes it nothing); any other goes on.
    mutating func helloDeadlinePassed(after seconds: Int64) -> Received {
        guard state == .awaitingHello else { return .ignore }
        return close(
            id: nil,
            WireError(code: WireError.handshakeRequired, message: "no hello within \(seconds) s of connecting")
        )
    }

    /// Bytes that are not a message (a bad frame or payload) arrived.
    mutating func malformed(_ error: WireError) -> Received {
        guard state != .closing else { return .ignore }
        return close(id: nil, error)
    }

    /// The next request to answer, in order; nil while one is being answered elsewhere, when
    /// none waits, or when closing.
    mutating func nextRequest() -> ClientMessage? {
        guard state == .ready, !waiting.isEmpty else { return nil }
        return waiting.removeFirst()
    }

    /// The request just taken is answered elsewhere: hold the rest until it is.
    mutating func answerDeferred() {
        precondition(state == .ready, "only a taken request is deferred")
        state = .answering
    }

    /// The deferred answer was sent.
    mutating func deferredAnswerSent() {
        if state == .answering { state = .ready }
    }

    /// Whether to close once the peer has finished sending: nothing is left to answer.
    var closesAtEndOfInput: Bool {
        switch state {
        case .closing: true
        case .awaitingHello, .ready: waiting.isEmpty
        case .answering: false
        }
    }

    /// Whether requests are waiting in order behind a deferred answer (the read gate stays shut).
    var isAnswering: Bool { state == .answering }

    private mutating func close(id: UInt64?, _ error: WireError) -> Received {
        state = .closing
        waiting.removeAll()
        return .fail(id: id, error)
    }
}
