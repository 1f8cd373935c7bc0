public import NIOCore

/// NIO decoder for Keyjar frames: emits each payload as a `ByteBuffer`; a frame that is empty
/// or over the limit is an error (the connection is then closed).
public struct FrameDecoder: ByteToMessageDecoder, Sendable {
    public typealias InboundOut = ByteBuffer
    public let maximumPayload: Int

    public init(maximumPayload: Int = Framing.defaultMaximumPayload) {
        self.maximumPayload = maximumPayload
    }

    public mutating func decode(context: ChannelHandlerContext, buffer: inout ByteBuffer) throws -> DecodingState {
        guard let length = buffer.getInteger(at: buffer.readerIndex, as: UInt32.self) else { return .needMoreData }
        if length == 0 { throw FrameDecodingError.empty }
        if Int(length) > maximumPayload { throw FrameDecodingError.tooLarge(length: Int(length), maximum: maximumPayload) }
        guard buffer.readableBytes >= Framing.headerSize + Int(length) else { return .needMoreData }
        buffer.moveReaderIndex(forwardBy: Framing.headerSize)
        guard let payload = buffer.readSlice(length: Int(length)) else { return .needMoreData }
        context.fireChannelRead(Self.wrapInboundOut(payload))
        return .continue
    }

    public mutating func decodeLast(
        context: ChannelHandlerContext, buffer: inout ByteBuffer, seenEOF: Bool
    ) throws -> DecodingState {
        while try decode(context: context, buffer: &buffer) == .continue {}
        if buffer.readableBytes > 0 { throw FrameDecodingError.truncated(buffered: buffer.readableBytes) }
        return .needMoreData
    }
}

extension ByteBuffer {
    /// A whole frame, length then payload, ready to be written as it is. keyjard frames an
    /// event once and writes the same buffer to every subscriber: ByteBuffers share storage, so
    /// a hundred clients cost no copies.
    public init(framing payload: some Collection<UInt8>, allocator: ByteBufferAllocator) {
        self = allocator.buffer(capacity: Framing.headerSize + payload.count)
        writeInteger(UInt32(payload.count))
        writeBytes(payload)
    }
}
