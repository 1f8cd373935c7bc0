import KeyjarProtocol
import NIOCore

/// Splits one client's byte stream into frames (Schemas/protocol.md) for the
/// ``ConnectionHandler``, within keyjard's memory bounds: a large frame is let in only once the
/// shared ``InboundBudget`` has room for all of it, and nothing is read or handed on while the
/// connection's ``ReadGate`` is shut. A large frame that starts and then stops arriving (its
/// sender stopped or stalled) is cut off after ``ServerConfiguration/frameDeadline``, so it
/// cannot hold the budget forever.
///
/// Malformed framing (an empty or oversized frame, the stream ending inside one) is reported as
/// a ``FrameDecodingError`` through `errorCaught`; the connection handler answers it and closes.
///
/// Frames carry passwords (`setCredential`), so no memory that held one is let go unwiped: the
/// buffer is grown, shrunk and dropped by hand (never by `realloc`, and never written while NIO
/// shares its storage, which would copy it), and what it leaves behind is zeroed in place
/// (``NIOCore/ByteBuffer/wipe()``) once the frames in it were handed on.
final class FrameReader: ChannelDuplexHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private let service: StoreService
    private let gate: ReadGate
    private let maximumPayload: Int
    private let frameDeadline: TimeAmount
    private var context: ChannelHandlerContext?

    private var buffer = ByteBuffer()
    /// The part of `buffer`'s capacity noted in the budget's `buffered` count.
    private var noted = 0
    /// The budget reserved for the large frame being received; 0 when there is none.
    private var reservation = 0
    private var stallTimer: Scheduled<Void>?
    /// NIO asked for a read while the gate was shut; it is issued when the gate opens.
    private var readRequested = false
    private var inputClosed = false
    private var inputClosedForwarded = false
    /// After a framing error: everything further is dropped.
    private var failed = false
    /// Buffers let go of since the last wipe, zeroed by ``wipeRetired()``.
    private var retired: [ByteBuffer] = []
    /// Whether `buffer`'s storage is this reader's own allocation, rather than the chunk NIO
    /// read into (which NIO's receive pool shares, so writing to it would copy it).
    private var ownsStorage = false
    /// The capacity the large frame being received was reserved (0: none).
    private var frameCapacity = 0
    /// The budget of a large frame handed on while the gate then shut (its message is being
    /// decoded off the loop, or waits for the Secret Service): kept until the gate opens, as
    /// what the handler holds of that frame meanwhile counts as buffered.
    private var heldForHandedOn = 0

    private var budget: InboundBudget { service.state.inbound }

    init(service: StoreService, gate: ReadGate, maximumPayload: Int, frameDeadline: TimeAmount) {
        self.service = service
        self.gate = gate
        self.maximumPayload = maximumPayload
        self.frameDeadline = frameDeadline
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        gate.onOpen = { [weak self] in self?.resume() }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        tearDown()
        self.context = nil
    }

    func channelInactive(context: ChannelHandlerContext) {
        tearDown()
        context.fireChannelInactive()
    }

    // MARK: - Reading

    func read(context: ChannelHandlerContext) {
        if failed || gate.isOpen {
            context.read()
        } else {
            readRequested = true
        }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !failed else { return }
        var bytes = unwrapInboundIn(data)
        if buffer.readableBytes == 0 {
            retire(replacingWith: bytes)
            ownsStorage = false
        } else {
            if !ownsStorage || buffer.writableBytes < bytes.readableBytes {
                var larger = context.channel.allocator.buffer(
                    capacity: max(buffer.readableBytes + bytes.readableBytes, frameCapacity)
                )
                larger.writeBuffer(&buffer)
                retire(replacingWith: larger)
                ownsStorage = true
            }
            buffer.writeBuffer(&bytes)
            retired.append(bytes)
        }
        noteCapacity()
        process(context)
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        wipeRetired()
        context.fireChannelReadComplete()
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        guard event as? ChannelEvent == .inputClosed else {
            context.fireUserInboundEventTriggered(event)
            return
        }
        inputClosed = true
        if failed || gate.isOpen { process(context) }
        wipeRetired()
    }

    /// The gate opened: hand on what is already here, then read again if NIO had asked to.
    private func resume() {
        releaseHandedOn()
        guard let context, !failed else { return }
        process(context)
        wipeRetired()
        if gate.isOpen, readRequested, context.channel.isActive {
            readRequested = false
            context.read()
        }
    }

    /// Hands on every complete frame in the buffer while the gate stays open.
    private func process(_ context: ChannelHandlerContext) {
        while gate.isOpen, !failed, let header = buffer.getInteger(at: buffer.readerIndex, as: UInt32.self) {
            let length: Int
            do {
                length = try Framing.payloadLength(announced: header, maximum: maximumPayload)
            } catch {
                fail(error, context: context)
                return
            }
            let size = Framing.headerSize + length
            if InboundBudget.isLarge(payload: length), reservation == 0, !admit(size, context: context) { return }
            guard buffer.readableBytes >= size else { break }
            stallTimer?.cancel()
            stallTimer = nil
            buffer.moveReaderIndex(forwardBy: Framing.headerSize)
            guard let payload = buffer.readSlice(length: length) else {
                preconditionFailure("a whole frame was checked to be buffered")
            }
            let admitted = reservation
            reservation = 0
            frameCapacity = 0
            context.fireChannelRead(wrapInboundOut(payload))
            if admitted > 0 {
                if gate.isOpen { budget.release(admitted) } else { heldForHandedOn += admitted }
            }
        }
        compact(context)
        if inputClosed, !inputClosedForwarded, failed || gate.isOpen {
            inputClosedForwarded = true
            if !failed, buffer.readableBytes > 0 { fail(.truncated(buffered: buffer.readableBytes), context: context) }
            context.fireUserInboundEventTriggered(ChannelEvent.inputClosed)
        }
    }

    // MARK: - The budget

    /// Reserves a large frame's buffer, or queues for it with the gate shut; true when reserved.
    private func admit(_ size: Int, context: ChannelHandlerContext) -> Bool {
        let reservation = InboundBudget.reservation(forFrame: size)
        if budget.reserve(reservation) {
            admitted(size, reservation: reservation, context: context)
            return true
        }
        gate.hold(.budget)
        let loop = context.eventLoop
        budget.wait(for: reservation) { [weak self] in
            guard let self, !self.failed, let context = self.context, context.channel.isActive else { return false }
            self.admitted(size, reservation: reservation, context: context)
            // Not from inside another connection's release: the gate opens on a fresh turn.
            let gate = NIOLoopBound(self.gate, eventLoop: loop)
            loop.execute { gate.value.release(.budget) }
            return true
        }
        return false
    }

    private func admitted(_ size: Int, reservation: Int, context: ChannelHandlerContext) {
        self.reservation = reservation
        // One allocation for the whole frame and a read beyond it (what was reserved), instead
        // of doublings on the way.
        frameCapacity = size + InboundBudget.smallFrame
        if !ownsStorage || buffer.capacity - buffer.readerIndex < frameCapacity {
            var whole = context.channel.allocator.buffer(capacity: frameCapacity)
            whole.writeBuffer(&buffer)
            retire(replacingWith: whole)
            ownsStorage = true
            noteCapacity()
        }
        armStallTimer(length: size - Framing.headerSize, context: context)
    }

    private func armStallTimer(length: Int, context: ChannelHandlerContext) {
        // Cancelled when the frame is complete or the connection ends.
        let this = NIOLoopBound(self, eventLoop: context.eventLoop)
        stallTimer = context.eventLoop.scheduleTask(in: frameDeadline) {
            let reader = this.value
            guard reader.reservation > 0, let context = reader.context else { return }
            // While keyjard itself holds the gate shut, the client is not the one stalling.
            guard reader.gate.isOpen else { return reader.armStallTimer(length: length, context: context) }
            reader.fail(
                .stalled(length: length, seconds: Int(reader.frameDeadline.nanoseconds / 1_000_000_000)),
                context: context
            )
        }
    }

    // MARK: - Memory

    /// Gives back what handed-on frames occupied: a drained buffer is dropped, and a large one
    /// holding only a little is copied down, so a big frame's allocation does not outlive it.
    private func compact(_ context: ChannelHandlerContext) {
        if buffer.readableBytes == 0 {
            retire(replacingWith: ByteBuffer())
        } else if buffer.readerIndex > 0, reservation == 0, buffer.capacity > 2 * InboundBudget.smallFrame {
            var rest = context.channel.allocator.buffer(capacity: buffer.readableBytes)
            rest.writeBuffer(&buffer)
            retire(replacingWith: rest)
            ownsStorage = true
        }
        noteCapacity()
    }

    /// Puts `replacement` in the buffer's place; the old one waits to be wiped.
    private func retire(replacingWith replacement: ByteBuffer) {
        if buffer.writerIndex > 0 { retired.append(buffer) }
        buffer = replacement
    }

    /// Zeroes and drops the retired buffers, once no frame sliced from them is in use (after
    /// a read, or after frames were handed on outside one).
    private func wipeRetired() {
        for buffer in retired { buffer.wipe() }
        retired.removeAll()
    }

    private func noteCapacity() {
        budget.noteBuffered(buffer.capacity - noted)
        noted = buffer.capacity
    }

    private func fail(_ error: FrameDecodingError, context: ChannelHandlerContext) {
        failed = true
        releaseEverything()
        context.fireErrorCaught(error)
        if readRequested {
            // Keep reading, to see the client's end of stream after the error reply.
            readRequested = false
            context.read()
        }
    }

    private func tearDown() {
        failed = true
        gate.close()
        releaseEverything()
    }

    private func releaseHandedOn() {
        guard heldForHandedOn > 0 else { return }
        budget.release(heldForHandedOn)
        heldForHandedOn = 0
    }

    private func releaseEverything() {
        releaseHandedOn()
        stallTimer?.cancel()
        stallTimer = nil
        if reservation > 0 {
            budget.release(reservation)
            reservation = 0
        }
        frameCapacity = 0
        retire(replacingWith: ByteBuffer())
        wipeRetired()
        noteCapacity()
    }
}
