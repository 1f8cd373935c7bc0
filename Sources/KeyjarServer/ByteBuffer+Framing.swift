import KeyjarProtocol
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

    /// Zeroes every byte the buffer was ever written, read or not, in its storage itself, even
    /// when another ByteBuffer shares that storage: NIO keeps the chunk it read a socket into,
    /// to read into it again, so a copy-on-write wipe would zero a copy and leave the bytes
    /// (a password, in a frame) where they were. Only for a buffer whose bytes nobody reads any
    /// more; on the thread that owns it.
    public func wipe() {
        let end = writerIndex
        guard end > 0 else { return }
        withVeryUnsafeBytes { storage in
            guard let base = storage.baseAddress else { return }
            UnsafeMutableRawPointer(mutating: base).initializeMemory(
                as: UInt8.self,
                repeating: 0,
                count: Swift.min(end, storage.count)
            )
        }
    }
}
