import Foundation
import Glibc
import Keyjar
import KeyjarProtocol
import KeyjarTestSupport
import Testing

/// One client's message never holds keyjard up for the others: a well-formed frame whose object
/// has hundreds of thousands of distinct keys is read (or refused) off the event loop in linear
/// time, while the real `keyjar` is answered as usual and keyjard still stops on SIGTERM. Once,
/// the duplicate-key check was quadratic and ran on the loop: a million keys held every client
/// for longer than the suite's hang limit, and the test failed there rather than by a clock.
@Suite(.timeLimit(hangLimit), .servicesStopCleanly)
struct HostileClientTests {
    /// `{"id":ID,"request":{"status":{}},"k0":0,…}`: a status request with `keys` more members.
    static func statusFrame(id: Int, keys: Int) -> [UInt8] {
        var text = #"{"id":\#(id),"request":{"status":{}}"#
        text.reserveCapacity(keys * 12 + 64)
        for index in 0..<keys { text += #","k\#(index)":0"# }
        text += "}"
        return Framing.frame(Array(text.utf8))
    }

    /// The next message, waited for on a thread of its own (the connection is used by one
    /// thread at a time: this wait, then the test again).
    static func reply(from client: TestClient) async throws -> ServerMessage? {
        nonisolated(unsafe) let client = client
        return try await onOwnThread { try client.receive(timeout: Double(hangDeadline.components.seconds)) }
    }

    @Test func aHugeObjectFromOneClientHoldsNobodyUp() async throws {
        let daemon = try await DaemonProcess()
        let keyjar = KeyjarCLI(daemon: daemon)
        try await keyjar.ok("cookie", "set", "--url", "https://shop.example/", "session=kept; Max-Age=86400")

        // 200,000 keys in about 2.6 MB: read whole, and the request in it answered.
        let hostile = try TestClient(socketPath: daemon.socketPath)
        try hostile.sendRaw(Self.statusFrame(id: 7, keys: 200_000))
        guard case .reply(id: 7, response: .status) = try await Self.reply(from: hostile) else {
            Issue.record("the 200,000-key status request was not answered")
            return
        }

        // A million: refused (an object of more than JSONReader.maximumMembers), and meanwhile
        // another client is served.
        try hostile.sendRaw(Self.statusFrame(id: 8, keys: 1_000_000))
        let served = try await keyjar.run(["cookie", "get", "https://shop.example/", "--timeout", "600"])
        #expect(served.status == 0 && served.output == "session=kept\n", "\(served.error)")
        guard case .failure(_, let error) = try await Self.reply(from: hostile) else {
            Issue.record("the million-key message was not refused")
            return
        }
        #expect(error.code == WireError.malformedMessage, "\(error)")

        // keyjard stops on SIGTERM with such a message just sent.
        let another = try TestClient(socketPath: daemon.socketPath)
        try another.sendRaw(Self.statusFrame(id: 9, keys: 1_000_000))
        #expect(await daemon.stop() == 0)
    }
}
