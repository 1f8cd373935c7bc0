import Foundation
import FoundationNetworking
import Testing

@testable import KeyjarLoader
@testable import KeyjarTransfer

/// A request's body stream across attempts, without a server or libcurl: the first sending
/// copied as it goes and the copy sent again whole; a delegate's new streams instead of a
/// copy; and why a body cannot be sent again.
@Suite("Streamed request body")
struct StreamedRequestBodyTests {
    static let text = Data((0..<100_000).map { UInt8(truncatingIfNeeded: $0 &* 7) })

    /// Reads `count` bytes (all when nil) of a spooling first sending, as libcurl would.
    static func readThrough(_ spool: BodySpool, count: Int? = nil) -> Data {
        var read = Data()
        let buffer = UnsafeMutablePointer<UInt8>.allocate(capacity: 4096)
        defer { buffer.deallocate() }
        while count.map({ read.count < $0 }) ?? true {
            let got = spool.readThrough(into: buffer, capacity: min(4096, (count ?? .max) - read.count))
            guard got > 0 else { break }
            read.append(buffer, count: got)
        }
        return read
    }

    static func readAll(_ body: SpooledBody) -> Data {
        var read = Data()
        let buffer = UnsafeMutablePointer<UInt8>.allocate(capacity: 4096)
        defer { buffer.deallocate() }
        while true {
            let got = body.read(into: buffer, capacity: 4096)
            guard got > 0 else { break }
            read.append(buffer, count: got)
        }
        return read
    }

    /// The first sending is read only in part (a redirect came before the whole body went):
    /// the next one is the whole body all the same, and so is every one after it.
    @Test func theFirstSendingIsCopiedAndEveryLaterOneIsTheWholeBody() throws {
        var body = StreamedRequestBody()
        #expect(!body.keepsCopy)
        let first = try body.sending(InputStream(data: Self.text), length: 100_000, newStream: nil)
        guard case .spooling(let spool, let length) = first else {
            Issue.record("the first sending is not copied: \(first)")
            return
        }
        #expect(length == 100_000 && body.keepsCopy)
        #expect(Self.readThrough(spool, count: 10_000) == Self.text.prefix(10_000))
        for _ in 0..<2 {
            let again = try body.sending(InputStream(data: Data("unused".utf8)), length: 100_000, newStream: nil)
            guard case .spooled(let spooled) = again else {
                Issue.record("a later sending is not the copy: \(again)")
                return
            }
            #expect(spooled.length == 100_000)
            #expect(Self.readAll(spooled) == Self.text)
        }
        body.drop()
        #expect(!body.keepsCopy)
        #expect(throws: StreamedRequestBody.Exhausted.noCopy) {
            try body.sending(InputStream(data: Self.text), length: nil, newStream: nil)
        }
    }

    /// A delegate that supplies streams: the first sending is the caller's stream, uncopied,
    /// and each later one the delegate's new stream, until it has none.
    @Test func aDelegatesNewStreamsReplaceTheCopy() throws {
        var body = StreamedRequestBody()
        let original = InputStream(data: Self.text)
        var supplied: [InputStream?] = [InputStream(data: Data("second".utf8)), nil]
        let newStream = { supplied.removeFirst() }
        guard case .stream(let first, nil) = try body.sending(original, length: nil, newStream: newStream) else {
            Issue.record("the first sending is not the stream itself")
            return
        }
        #expect((first as? InputStreamBody)?.stream === original && !body.keepsCopy && supplied.count == 2)
        guard case .stream(let second, 6) = try body.sending(original, length: 6, newStream: newStream) else {
            Issue.record("the second sending is not the delegate's stream")
            return
        }
        #expect((second as? InputStreamBody).map { $0.stream !== original } == true)
        #expect(throws: StreamedRequestBody.Exhausted.delegateGaveNoStream) {
            try body.sending(original, length: 6, newStream: newStream)
        }
        #expect(supplied.isEmpty)
    }
}
