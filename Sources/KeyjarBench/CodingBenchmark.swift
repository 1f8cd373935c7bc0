import Foundation
import Glibc
import KeyjarConnection
import KeyjarCore
import KeyjarProtocol

/// The wire coding on the hot path of an acknowledged Set-Cookie: the client encodes the
/// request, keyjard decodes it and encodes the reply, the client decodes the reply. Each is
/// paid once per write, so together they are a good share of the round trip's budget.
func runCodingBenchmark() {
    let request = ClientMessage(
        id: 12_345,
        request: .setCookies(
            headers: ["session=0123456789abcdef; Max-Age=86400; Path=/; Secure; HttpOnly; SameSite=Lax"],
            context: WireCookieContext(
                url: "https://www.example.test/account",
                mainDocumentURL: "https://www.example.test/"
            )
        )
    )
    let reply = ServerMessage.reply(id: 12_345, response: .cookieOutcomes(outcomes: [nil], sequence: 987_654))
    // A one-cookie change as every subscribed client receives it.
    let cookie = Cookie(
        name: "session",
        value: "0123456789abcdef",
        domain: "www.example.test",
        path: "/",
        expires: Date(timeIntervalSince1970: 1_900_000_000),
        secure: true,
        httpOnly: true,
        sameSite: .lax,
        creation: Date(timeIntervalSince1970: 1_800_000_000),
        lastAccess: Date(timeIntervalSince1970: 1_800_000_000)
    )
    let event = ServerMessage.event(
        event: SequencedEvent(sequence: 987_654, event: .cookies(changes: [.replaced(old: cookie, new: cookie)]))
    )
    let eventPayload = MessageCoding.encode(event)
    let requestPayload = MessageCoding.encode(request)
    let replyPayload = MessageCoding.encode(reply)
    let rounds = 20_000

    func measure(_ name: String, _ body: () -> Void) {
        var samples: [UInt64] = []
        samples.reserveCapacity(rounds)
        for _ in 0..<rounds {
            let start = nanoseconds()
            body()
            samples.append(nanoseconds() - start)
        }
        report(name, samples: samples)
    }
    var sink = 0
    measure("coding_encode_set_cookies_request") { sink &+= MessageCoding.encode(request).count }
    measure("coding_decode_set_cookies_request") {
        if (try? MessageCoding.decode(ClientMessage.self, from: requestPayload)) != nil { sink &+= 1 }
    }
    measure("coding_encode_outcomes_reply") { sink &+= MessageCoding.encode(reply).count }
    measure("coding_decode_outcomes_reply") {
        if (try? MessageCoding.decode(ServerMessage.self, from: replyPayload)) != nil { sink &+= 1 }
    }
    measure("coding_decode_cookie_event") {
        if (try? MessageCoding.decode(ServerMessage.self, from: eventPayload)) != nil { sink &+= 1 }
    }
    sink &+= measureReader(frame: Framing.frame(eventPayload))
    if sink == 42 { print("") }  // keeps the work observable
}

/// `coding_reader_cookie_event`: a listening process's reading of one pushed change, in one
/// process and without a wake-up: batches of framed cookie events written to one end of a
/// socketpair, received, cut and decoded by the client's `ServerMessageReader` at the other.
/// Each sample is a batch's time over its events. The end-to-end fan-out (99 processes,
/// `keyjar-bench client`) adds the wake-ups, the replica and the listeners; this line holds
/// still enough to see a change of the reader's own path.
private func measureReader(frame: [UInt8]) -> Int {
    var descriptors: [Int32] = [0, 0]
    guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &descriptors) == 0 else {
        print("coding_reader_cookie_event: socketpair failed")
        return 0
    }
    defer {
        close(descriptors[0])
        close(descriptors[1])
    }
    // 64 events fit a socket's buffer: written at once, then read back.
    let perBatch = 64
    let batch = Array([[UInt8]](repeating: frame, count: perBatch).joined())
    var reader = ServerMessageReader(socket: UnixSocket(descriptor: descriptors[1]))
    var decoded = 0
    var samples: [UInt64] = []
    for _ in 0..<2_000 {
        let written = batch.withUnsafeBytes { send(descriptors[0], $0.baseAddress, $0.count, 0) }
        guard written == batch.count else {
            print("coding_reader_cookie_event: a batch was not written whole")
            return decoded
        }
        let start = nanoseconds()
        var left = perBatch
        do {
            while left > 0 {
                while left > 0, try reader.nextBuffered() != nil { left -= 1 }
                if left > 0 { _ = try reader.read(.indefinitely) }
            }
        } catch {
            print("coding_reader_cookie_event: \(error)")
            return decoded
        }
        samples.append((nanoseconds() - start) / UInt64(perBatch))
        decoded += perBatch
    }
    report("coding_reader_cookie_event", samples: samples)

    // The same change alone, after the caches were filled with other data, as each of 99
    // listening processes on two CPUs meets it: what a change costs a listener the fan-out
    // wakes is this cold path, not the warm one above.
    var other = [UInt8](repeating: 1, count: 16 * 1024 * 1024)
    samples.removeAll(keepingCapacity: true)
    for round in 0..<500 {
        let written = frame.withUnsafeBytes { send(descriptors[0], $0.baseAddress, $0.count, 0) }
        guard written == frame.count else {
            print("coding_reader_cookie_event_cold: a frame was not written whole")
            return decoded
        }
        other.withUnsafeMutableBufferPointer { bytes in
            for line in stride(from: 0, to: bytes.count, by: 64) { bytes[line] &+= UInt8(truncatingIfNeeded: round) }
        }
        let start = nanoseconds()
        do {
            while try reader.nextBuffered() == nil { _ = try reader.read(.indefinitely) }
        } catch {
            print("coding_reader_cookie_event_cold: \(error)")
            return decoded
        }
        samples.append(nanoseconds() - start)
        decoded += 1
    }
    report("coding_reader_cookie_event_cold", samples: samples)
    return decoded &+ Int(other[64])
}
