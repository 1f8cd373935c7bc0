import Foundation
import KeyjarProtocol

/// The frame decoder fed the input in pieces (sizes from the input itself): it returns whole
/// payloads within the limit or a typed error, and never loses its place.
func fuzzFrames(_ bytes: [UInt8]) {
    var parser = FrameParser(maximumPayload: 1 << 16)
    var index = 0
    var step = 1
    while index < bytes.count {
        step = step % 7 + Int(bytes[index] & 0x0F) + 1
        let end = min(bytes.count, index + step)
        parser.append(bytes[index..<end])
        index = end
        do {
            while let payload = try parser.next() {
                fuzzCheck(!payload.isEmpty && payload.count <= 1 << 16, "a payload of \(payload.count) bytes")
            }
        } catch {
            return
        }
    }
}

/// A client's message as keyjard decodes it: the fast path (when it answers) and Foundation's
/// Codable path agree, and what decodes re-encodes to something that decodes the same.
func fuzzClientMessage(_ bytes: [UInt8]) {
    let fast = try? MessageCoding.decode(ClientMessage.self, from: bytes)
    let reference = try? MessageCoding.decode(codable: ClientMessage.self, from: bytes)
    if let fast, let reference { fuzzCheck(fast == reference, "the fast path and Codable disagree") }
    if let message = fast ?? reference {
        let again = try? MessageCoding.decode(ClientMessage.self, from: MessageCoding.encode(message))
        fuzzCheck(again == message, "a decoded client message does not survive encoding")
    }
}

/// What keyjard sends, as a client decodes it (pushed events through the known-layout reader).
func fuzzServerMessage(_ bytes: [UInt8]) {
    let fast = try? MessageCoding.decode(ServerMessage.self, from: bytes)
    let reference = try? MessageCoding.decode(codable: ServerMessage.self, from: bytes)
    if let fast, let reference { fuzzCheck(fast == reference, "the fast path and Codable disagree") }
    if let message = fast ?? reference {
        let again = try? MessageCoding.decode(ServerMessage.self, from: MessageCoding.encode(message))
        fuzzCheck(again == message, "a decoded server message does not survive encoding")
    }
}
