import Testing

@testable import KeyjarLoader

/// Which codings of a response the loader undoes, in which order (pure; the loads are in
/// ContentCodingTests).
struct ContentCodingPlanTests {
    /// Which codings are undone, in which order (pure).
    @Test func theDecodingPlanUndoesTheLastCodingFirstAndStopsAtAnUnknownOne() {
        func plan(_ fields: [(String, String)], status: Int = 200) -> [ContentCoding]? {
            ContentCoding.decodingPlan(
                for: ResponseHead(statusCode: status, httpVersion: "HTTP/1.1", fields: fields.map { ($0.0, $0.1) })
            )
        }
        #expect(plan([]) == nil)
        #expect(plan([("Content-Encoding", "identity")]) == nil)
        #expect(plan([("Content-Encoding", "gzip, br"), ("content-encoding", "ZSTD")]) == [.zstd, .brotli, .gzip])
        #expect(plan([("Content-Encoding", "x-gzip"), ("Content-Encoding", "deflate")]) == [.deflate, .gzip])
        #expect(plan([("Content-Encoding", "gzip, foo")]) == nil)
        #expect(plan([("Transfer-Encoding", "gzip, chunked"), ("Content-Encoding", "deflate")]) == [.gzip, .deflate])
        #expect(plan([("Transfer-Encoding", "foo, chunked"), ("Content-Encoding", "gzip")]) == nil)
        #expect(plan([("Transfer-Encoding", "gzip, chunked"), ("Content-Encoding", "foo")]) == [.gzip])
        #expect(plan([("Content-Encoding", "gzip")], status: 206) == nil)
    }
}
