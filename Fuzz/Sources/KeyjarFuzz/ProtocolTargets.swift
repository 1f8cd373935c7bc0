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

/// A client's message as keyjard decodes it: what decodes is written again, and that reads back
/// to the same message and writes the same bytes (decode, encode, decode is stable).
func fuzzClientMessage(_ bytes: [UInt8]) {
    guard let message = try? MessageCoding.decode(ClientMessage.self, from: bytes) else { return }
    let written = MessageCoding.encode(message)
    let again = try? MessageCoding.decode(ClientMessage.self, from: written)
    fuzzCheck(again == message, "a decoded client message does not survive encoding")
    fuzzCheck(again.map(MessageCoding.encode) == written, "a client message is written two ways")
}

/// What keyjard sends, as a client decodes it (pushed events through the known-layout reader).
func fuzzServerMessage(_ bytes: [UInt8]) {
    guard let message = try? MessageCoding.decode(ServerMessage.self, from: bytes) else { return }
    let written = MessageCoding.encode(message)
    let again = try? MessageCoding.decode(ServerMessage.self, from: written)
    fuzzCheck(again == message, "a decoded server message does not survive encoding")
    fuzzCheck(again.map(MessageCoding.encode) == written, "a server message is written two ways")
}
