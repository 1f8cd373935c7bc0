import KeyjarCore
import Testing

@testable import KeyjarProtocol

/// A password that passed through Keyjar's own frame buffers does not stay in them.
struct WipingTests {
    @Test func aDecodedFrameLeavesNoTraceInTheParser() throws {
        let secret = "pw-\(UInt64.random(in: 1_000_000...9_999_999))"
        let space = ProtectionSpace(host: "example.com", protocol: "https")
        let frame = Framing.frame(
            MessageCoding.encode(
                ClientMessage(
                    id: 1,
                    request: .setCredential(
                        space: space,
                        user: "alice",
                        password: secret,
                        makeDefault: false
                    )
                )
            )
        )
        var parser = FrameParser()
        // Given a frame followed by the start of the next one,
        parser.append(frame[...] + Framing.frame([1, 2, 3])[0..<2])
        // when the first is taken out,
        let payload = try #require(try parser.next())
        #expect(String(decoding: payload, as: UTF8.self).contains(secret))
        // then its bytes are zeroes in the parser's buffer, and the next frame's are intact.
        let storage = parser.storage
        #expect(!String(decoding: storage, as: UTF8.self).contains(secret))
        #expect(storage.prefix(frame.count).allSatisfy { $0 == 0 })
        #expect(Array(storage.suffix(2)) == [0, 0])
        #expect(parser.bufferedByteCount == 2)
    }

    @Test func wipeZeroesWhatWasUsedAndNoMore() {
        var buffer: [UInt8] = Array("secret and the rest".utf8)
        Framing.wipe(&buffer, upTo: 6)
        #expect(buffer.prefix(6).allSatisfy { $0 == 0 })
        #expect(String(decoding: buffer.dropFirst(6), as: UTF8.self) == " and the rest")
        Framing.wipe(&buffer, upTo: 1_000)
        #expect(buffer.allSatisfy { $0 == 0 })
    }
}
