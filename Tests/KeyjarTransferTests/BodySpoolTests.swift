import FoundationEssentials
import KeyjarTestSupport
import Testing

@testable import KeyjarTransfer

/// A streamed body's copy for a retry, on any ``BodyStream`` (no Foundation stream, no libcurl):
/// what the first attempt read and what it left are both in the copy, a stream that fails
/// leaves no copy to send, and the copy is a file without a name in the directory given.
@Suite("Body spool")
struct BodySpoolTests {
    /// A body of `bytes`, handed out `piece` at a time; fails with -1 after `failAfter` bytes.
    final class Bytes: BodyStream {
        let bytes: [UInt8]
        let piece: Int
        let failAfter: Int?
        /// Fails once at `failAfter`, then reads on as if nothing happened.
        let failsOnce: Bool
        private(set) var offset = 0
        private var hasFailed = false

        init(_ bytes: [UInt8], piece: Int = 1000, failAfter: Int? = nil, failsOnce: Bool = false) {
            self.bytes = bytes
            self.piece = piece
            self.failAfter = failAfter
            self.failsOnce = failsOnce
        }

        func read(into buffer: UnsafeMutablePointer<UInt8>, capacity: Int) -> Int {
            if let failAfter, offset >= failAfter, !(failsOnce && hasFailed) {
                hasFailed = true
                return -1
            }
            let count = min(capacity, piece, bytes.count - offset)
            for index in 0..<count { buffer[index] = bytes[offset + index] }
            offset += count
            return count
        }
    }

    static let body = (0..<50_000).map { UInt8(truncatingIfNeeded: $0 &* 13) }

    static func read(_ count: Int, through spool: BodySpool) -> [UInt8] {
        var read: [UInt8] = []
        let buffer = UnsafeMutablePointer<UInt8>.allocate(capacity: 4096)
        defer { buffer.deallocate() }
        while read.count < count {
            let got = spool.readThrough(into: buffer, capacity: min(4096, count - read.count))
            guard got > 0 else { break }
            read += UnsafeBufferPointer(start: buffer, count: got)
        }
        return read
    }

    static func readAll(_ body: SpooledBody) -> [UInt8] {
        var read: [UInt8] = []
        let buffer = UnsafeMutablePointer<UInt8>.allocate(capacity: 4096)
        defer { buffer.deallocate() }
        while true {
            let got = body.read(into: buffer, capacity: 4096)
            guard got > 0 else { break }
            read += UnsafeBufferPointer(start: buffer, count: got)
        }
        return read
    }

    @Test("the first attempt read a part: the copy holds the whole body, twice over")
    func partThenWhole() throws {
        let spool = try #require(BodySpool(source: Bytes(Self.body)))
        #expect(Self.read(12_345, through: spool) == Array(Self.body.prefix(12_345)))
        let again = try #require(spool.replay())
        #expect(again.length == Int64(Self.body.count))
        #expect(Self.readAll(again) == Self.body)
        let third = try #require(spool.replay())
        #expect(Self.readAll(third) == Self.body)
    }

    @Test("a stream that fails while the first attempt reads it leaves nothing to send again")
    func failedWhileSending() throws {
        let spool = try #require(BodySpool(source: Bytes(Self.body, failAfter: 3000)))
        _ = Self.read(10_000, through: spool)
        #expect(spool.replay() == nil)
    }

    @Test("a stream that fails once and then reads on leaves nothing to send again: its copy lacks bytes")
    func failedOnceWhileSending() throws {
        let spool = try #require(BodySpool(source: Bytes(Self.body, failAfter: 3000, failsOnce: true)))
        _ = Self.read(10_000, through: spool)
        #expect(spool.replay() == nil)
    }

    @Test("a stream that fails after the first attempt leaves nothing to send again")
    func failedAfterSending() throws {
        let spool = try #require(BodySpool(source: Bytes(Self.body, failAfter: 20_000)))
        _ = Self.read(5000, through: spool)
        #expect(spool.replay() == nil)
    }

    @Test("the copy is made in the directory given, and leaves no name there")
    func directory() throws {
        let directory = try TemporaryDirectory()
        let spool = try #require(BodySpool(source: Bytes(Self.body), directory: directory.path))
        _ = Self.read(Self.body.count, through: spool)
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).isEmpty)
        #expect(Self.readAll(try #require(spool.replay())) == Self.body)
        #expect(BodySpool(source: Bytes(Self.body), directory: directory.path + "/missing") == nil)
    }
}
