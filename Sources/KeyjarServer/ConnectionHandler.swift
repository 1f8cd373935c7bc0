import Atomics
import Glibc
import KeyjarProtocol
import Logging
import NIOCore
import NIOPosix

/// Serves one client connection on the service's event loop: the handshake, then each
/// framed request in order (frames come from the ``FrameReader``; what may happen next is
/// ``ConnectionStateMachine``'s). A request waiting on the
/// Secret Service holds the ones after it, so a client's replies always come in the order of
/// its requests; meanwhile the connection's ``ReadGate`` is shut and later requests wait in the
/// socket.
///
/// A malformed frame or message ends this connection only, with an error reply; the other
/// clients never notice. A large message is decoded off the event loop (on the service's
/// decoding thread), with this connection's gate shut meanwhile, so that its order is kept and
/// one client's megabytes never hold up the others' requests, nor keyjard's stop on SIGTERM.
final class ConnectionHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private let service: StoreService
    private let client: ServedClient
    private var logger: Logger
    private var machine: ConnectionStateMachine

    init(service: StoreService, client: ServedClient, logger: Logger) {
        self.machine = ConnectionStateMachine(supportedVersions: service.configuration.protocolVersions)
        self.service = service
        self.client = client
        self.logger = logger
        self.logger[metadataKey: "connection"] = "\(client.id)"
        self.logger[metadataKey: "peer.pid"] = "\(client.pid)"
    }

    /// Closes the connection if it has not said hello by then.
    private var helloTimer: Scheduled<Void>?
    /// Set when the connection closes: a message of it still waiting for the decoding thread
    /// is then dropped undecoded.
    private let closed = ManagedAtomic(false)

    func handlerAdded(context: ChannelHandlerContext) {
        service.register(client)
        let deadline = service.configuration.helloDeadline
        let this = NIOLoopBound(self, eventLoop: context.eventLoop)
        let boundContext = NIOLoopBound(context, eventLoop: context.eventLoop)
        helloTimer = context.eventLoop.scheduleTask(in: TimeAmount(deadline)) {
            let handler = this.value
            handler.helloTimer = nil
            guard
                case .fail(let id, let error) = handler.machine.helloDeadlinePassed(after: deadline.components.seconds)
            else { return }
            handler.logger.info("no hello in time; closing the connection")
            handler.sendFailure(id: id, error, context: boundContext.value)
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        closed.store(true, ordering: .relaxed)
        helloTimer?.cancel()
        helloTimer = nil
        service.unregister(client)
        context.fireChannelInactive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard machine.state != .closing else { return }
        let frame = unwrapInboundIn(data)
        // Small messages are decoded here (a few microseconds); large ones (those read under a
        // reservation) on the decoding thread, and only after hello: a hello is small, and a
        // connection that has not said one gets no thread's time.
        if InboundBudget.isLarge(payload: frame.readableBytes) {
            guard machine.state != .awaitingHello else {
                let refused = machine.malformed(
                    WireError(code: WireError.handshakeRequired, message: "the first request must be a hello")
                )
                if case .fail(let id, let error) = refused { sendFailure(id: id, error, context: context) }
                return
            }
            return decodeOffLoop(frame, context: context)
        }
        let decoded = Result { () throws(WireError) in
            try MessageCoding.decode(ClientMessage.self, from: frame.readableBytesView)
        }
        take(decoded, context: context)
    }

    /// Hands a large frame to the decoding thread. The frame's storage is wiped once this read
    /// is over (``FrameReader``), so the decoder gets a copy of its own, wiped in turn (it may
    /// hold a password). The gate stays shut until the message is taken, so the frames after
    /// it wait (in order, in the reader's buffer and the socket).
    private func decodeOffLoop(_ frame: ByteBuffer, context: ChannelHandlerContext) {
        let copy = WipedCopy(frame.readableBytesView)
        client.gate.hold(.decoding)
        let this = NIOLoopBound(self, eventLoop: service.eventLoop)
        let boundContext = NIOLoopBound(context, eventLoop: service.eventLoop)
        let closed = self.closed
        let willStart = service.configuration.decodingWillStart
        service.decodingThread.runIfActive(eventLoop: service.eventLoop) { () -> Result<ClientMessage, WireError> in
            defer { copy.wipe() }
            willStart?()
            // Its connection closed while it waited: not decoded, and its copy let go at once
            // (the frame's budget went back when the connection closed).
            if closed.load(ordering: .relaxed) {
                return .failure(WireError(code: WireError.shuttingDown, message: "the connection closed"))
            }
            return copy.withBytes { bytes in
                Result { () throws(WireError) in try MessageCoding.decode(ClientMessage.self, from: bytes) }
            }
        }.whenComplete { result in
            let handler = this.value
            let context = boundContext.value
            // Released after the message is taken: a deferred answer holds the gate itself.
            defer { handler.client.gate.release(.decoding) }
            guard context.channel.isActive, handler.machine.state != .closing else { return }
            switch result {
            case .success(let decoded): handler.take(decoded, context: context)
            case .failure:
                // The decoding thread is gone: keyjard is stopping.
                handler.sendFailure(
                    id: nil,
                    WireError(code: WireError.shuttingDown, message: "keyjard is stopping"),
                    context: context
                )
            }
        }
    }

    /// A decoded message (or why it is none) to the state machine, and what it says to do.
    private func take(_ decoded: Result<ClientMessage, WireError>, context: ChannelHandlerContext) {
        let received: ConnectionStateMachine.Received
        switch decoded {
        case .success(let message): received = machine.received(message)
        case .failure(let error):
            logger.info("malformed message; closing the connection", metadata: ["error": "\(error.message)"])
            received = machine.malformed(error)
        }
        switch received {
        case .ignore: return
        case .fail(let id, let error): sendFailure(id: id, error, context: context)
        case .queued(let greeting):
            if let greeting {
                helloTimer?.cancel()
                helloTimer = nil
                logger.debug("client connected", metadata: ["client.name": "\(greeting)"])
            }
            drain()
        }
    }

    /// Answers waiting requests in order until one has to wait for the Secret Service.
    private func drain() {
        while let message = machine.nextRequest() {
            switch service.handle(message.request, from: client) {
            case .immediate(.success(let response)): client.reply(.reply(id: message.id, response: response))
            case .immediate(.failure(let error)): client.reply(.failure(id: message.id, error: error))
            case .deferred(let future):
                machine.answerDeferred()
                client.gate.hold(.busy)
                let this = NIOLoopBound(self, eventLoop: service.eventLoop)
                future.whenComplete { result in
                    let handler = this.value
                    switch result {
                    case .success(let response): handler.client.reply(.reply(id: message.id, response: response))
                    case .failure(let error as WireError): handler.client.reply(.failure(id: message.id, error: error))
                    case .failure(let error):
                        handler.client.reply(
                            .failure(
                                id: message.id,
                                error: WireError(
                                    code: WireError.storageFailure,
                                    message: "\(error)"
                                )
                            )
                        )
                    }
                    handler.machine.deferredAnswerSent()
                    handler.drain()
                    if !handler.machine.isAnswering { handler.client.gate.release(.busy) }
                }
            }
        }
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        // The peer finished sending: once we have nothing more to say, close.
        if event as? ChannelEvent == .inputClosed, machine.closesAtEndOfInput {
            context.close(promise: nil)
        }
        context.fireUserInboundEventTriggered(event)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        guard machine.state != .closing else { return }
        if let error = error as? FrameDecodingError {
            logger.info("malformed frame; closing the connection", metadata: ["error": "\(error)"])
            if case .fail(let id, let failure) = machine.malformed(
                WireError(code: WireError.malformedFrame, message: error.description)
            ) {
                sendFailure(id: id, failure, context: context)
            }
        } else {
            logger.debug("connection error", metadata: ["error": "\(error)"])
            context.close(promise: nil)
        }
    }

    /// Sends a failure, then ends the connection without losing that message.
    private func sendFailure(id: UInt64?, _ error: WireError, context: ChannelHandlerContext) {
        sendFinalMessage(.failure(id: id, error: error), context: context)
    }
}

extension ChannelInboundHandler where OutboundOut == ByteBuffer {
    /// Writes a last message, then half-closes: closing outright while the peer's unread bytes
    /// sit in our receive queue would make the kernel reset the connection, and the peer could
    /// lose the message. The channel closes fully at the peer's end of stream, or after 2 s.
    func sendFinalMessage(_ message: ServerMessage, context: ChannelHandlerContext) {
        let buffer = ByteBuffer(framing: MessageCoding.encode(message), allocator: context.channel.allocator)
        let channel = context.channel
        context.writeAndFlush(wrapOutboundOut(buffer)).whenComplete { _ in
            channel.close(mode: .output, promise: nil)
            channel.eventLoop.scheduleTask(in: .seconds(2)) { channel.close(promise: nil) }
        }
    }
}

/// Answers a peer keyjard does not serve (another user's, or one over the connection limit)
/// with one refusal and closes.
final class RefusalHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private let error: WireError

    init(_ error: WireError) { self.error = error }

    func channelActive(context: ChannelHandlerContext) {
        sendFinalMessage(.failure(id: nil, error: error), context: context)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {}

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if event as? ChannelEvent == .inputClosed { context.close(promise: nil) }
    }
}

/// A frame's bytes copied for the decoding thread, zeroed and freed by ``wipe()`` once decoded:
/// they may carry a password, and an array's copy-on-write could leave a copy unwiped.
private final class WipedCopy: @unchecked Sendable {
    // @unchecked: written once here, then only by the one thread that decodes and wipes it.
    private let bytes: UnsafeMutableBufferPointer<UInt8>

    init(_ source: ByteBufferView) {
        bytes = .allocate(capacity: source.count)
        _ = bytes.initialize(from: source)
    }

    func withBytes<T>(_ body: (UnsafeBufferPointer<UInt8>) -> T) -> T { body(UnsafeBufferPointer(bytes)) }

    func wipe() {
        guard let base = bytes.baseAddress else { return }
        memset(base, 0, bytes.count)
    }

    deinit {
        // Also when it was never decoded (keyjard stopping: the decoding thread was gone).
        wipe()
        bytes.deallocate()
    }
}
