import Foundation
import Glibc
import KeyjarTestSupport
import Testing

@testable import KeyjarConnection

/// Receiving without sleeping: what arrives in time is read, nothing is made up when nothing
/// arrives, and the end of the stream is told apart from silence.
@Suite struct UnixSocketTests {
    /// Both ends of a connected socket pair, closed by the caller.
    static func pair() throws -> (UnixSocket, UnixSocket) {
        var descriptors: [CInt] = [0, 0]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &descriptors) == 0 else {
            throw ConnectionError("socketpair failed")
        }
        return (UnixSocket(descriptor: descriptors[0]), UnixSocket(descriptor: descriptors[1]))
    }

    @Test func bytesSentWhileTheReceiverStaysAwakeAreRead() throws {
        let (near, far) = try Self.pair()
        defer {
            near.close()
            far.close()
        }
        let sender = Thread {
            usleep(20_000)
            try? far.sendAll(Array("reply".utf8))
        }
        sender.start()
        var buffer = [UInt8](repeating: 0, count: 64)
        let count = try near.receiveWithoutSleeping(into: &buffer, until: monotonicNanoseconds() + 5_000_000_000)
        #expect(count == 5)
        #expect(Array(buffer.prefix(5)) == Array("reply".utf8))
    }

    @Test func aDeadlineAlreadyPastIsOneReadThatFindsNothing() throws {
        let (near, far) = try Self.pair()
        defer {
            near.close()
            far.close()
        }
        var buffer = [UInt8](repeating: 0, count: 64)
        #expect(try near.receiveWithoutSleeping(into: &buffer, until: 0) == nil)
        // And it does read: bytes already there are returned.
        try far.sendAll(Array("here".utf8))
        #expect(try far.waitForBytes(timeout: 0) == false)
        #expect(try near.waitForBytes(timeout: hangSeconds))
        #expect(try near.receiveWithoutSleeping(into: &buffer, until: 0) == 4)
    }

    @Test func aClosedPeerIsTheEndOfTheStream() throws {
        let (near, far) = try Self.pair()
        defer { near.close() }
        far.close()
        var buffer = [UInt8](repeating: 0, count: 64)
        #expect(try near.receiveWithoutSleeping(into: &buffer, until: monotonicNanoseconds() + 1_000_000_000) == 0)
    }
}
