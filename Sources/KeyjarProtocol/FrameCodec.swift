public import NIOCore

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
