import Glibc

/// Keyjar's framing: a 4-byte big-endian payload length, then that many bytes of UTF-8 JSON.
/// (Schemas/protocol.md.)
public enum Framing {
    /// The default largest payload accepted: room for a snapshot of 100,000 cookies.
    public static let defaultMaximumPayload = 64 * 1024 * 1024
    public static let headerSize = 4

    /// The frame for a payload: its length, then the bytes.
    /// Zeroes the first `count` bytes of a buffer that held a frame (a password travels in
    /// two messages): what Keyjar reads or writes through its own buffers does not linger in
    /// them. Strings made from the bytes are beyond its reach (SECURITY.md).
    public static func wipe(_ buffer: inout [UInt8], upTo count: Int) {
        let end = min(count, buffer.count)
        guard end > 0 else { return }
        buffer.withUnsafeMutableBufferPointer { bytes in
            guard let base = bytes.baseAddress else { return }
            memset(base, 0, end)
        }
    }

    /// The payload length a frame's header announces, checked against `maximum`.
    public static func payloadLength(announced header: UInt32, maximum: Int) throws(FrameDecodingError) -> Int {
        let length = Int(header)
        if length == 0 { throw .empty }
        if length > maximum { throw .tooLarge(length: length, maximum: maximum) }
        return length
    }

    public static func frame(_ payload: [UInt8]) -> [UInt8] {
        let length = UInt32(payload.count)
        return [UInt8(length >> 24), UInt8(length >> 16 & 0xFF), UInt8(length >> 8 & 0xFF), UInt8(length & 0xFF)]
            + payload
    }
}

/// Why a byte stream is not a valid frame sequence. The connection that sent it is closed.
public enum FrameDecodingError: Error, Sendable, Hashable, CustomStringConvertible {
    case empty
    case tooLarge(length: Int, maximum: Int)
    /// The stream ended inside a frame.
    case truncated(buffered: Int)
    /// A large frame began and did not finish in time (the sender stalled, holding memory).
    case stalled(length: Int, seconds: Int)

    public var description: String {
        switch self {
        case .empty: return "a frame has length 0"
        case .tooLarge(let length, let maximum): return "a frame of \(length) bytes exceeds the limit of \(maximum)"
        case .truncated(let buffered): return "the stream ended inside a frame (\(buffered) bytes buffered)"
        case .stalled(let length, let seconds): return "a frame of \(length) bytes did not arrive within \(seconds) s"
        }
    }
}

/// Splits a byte stream into frame payloads incrementally, for code without NIO (and as the
/// reference the NIO decoder is tested against).
public struct FrameParser: Sendable {
    public let maximumPayload: Int
    private var buffer: [UInt8] = []
    private var start = 0

    public init(maximumPayload: Int = Framing.defaultMaximumPayload) {
        self.maximumPayload = maximumPayload
    }

    public var bufferedByteCount: Int { buffer.count - start }

    public mutating func append(_ bytes: some Sequence<UInt8>) {
        compact()
        buffer.append(contentsOf: bytes)
    }

    /// What a read brought. Not generic: called from another module, a generic form runs
    /// unspecialised, copying byte by byte (docs/performance.md, Engine and wire coding).
    public mutating func append(_ bytes: ArraySlice<UInt8>) {
        compact()
        buffer.append(contentsOf: bytes)
    }

    private mutating func compact() {
        if start > 65_536 && start * 2 > buffer.count {
            buffer.removeFirst(start)
            start = 0
        }
    }

    /// The next complete payload, nil when more bytes are needed.
    public mutating func next() throws(FrameDecodingError) -> [UInt8]? {
        guard buffer.count - start >= Framing.headerSize else { return nil }
        let header =
            UInt32(buffer[start]) << 24 | UInt32(buffer[start + 1]) << 16 | UInt32(buffer[start + 2]) << 8
            | UInt32(buffer[start + 3])
        let length = try Framing.payloadLength(announced: header, maximum: maximumPayload)
        guard buffer.count - start - Framing.headerSize >= length else { return nil }
        let frameStart = start
        let payloadStart = start + Framing.headerSize
        start = payloadStart + length
        let payload = Array(buffer[payloadStart..<start])
        // The frame's bytes do not stay behind in the buffer (see `Framing.wipe`).
        buffer.withUnsafeMutableBufferPointer { bytes in
            guard let base = bytes.baseAddress else { return }
            memset(base + frameStart, 0, start - frameStart)
        }
        return payload
    }

    /// The whole internal buffer, consumed bytes included (for the tests of wiping).
    var storage: [UInt8] { buffer }
}
