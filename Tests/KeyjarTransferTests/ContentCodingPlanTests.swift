import Testing

@testable import KeyjarTransfer

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

    /// A "deflate" body that is neither the zlib format nor raw deflate fails. The raw retry
    /// used to run again on every failure, so such a body spun for ever (24 bytes, found by
    /// the content-decoder fuzz target).
    @Test func aDeflateBodyThatIsNeitherFormatFails() throws {
        let body: [UInt8] = [
            0x78, 0x4B, 0x4D, 0x4F, 0x9C, 0x49, 0xCE, 0x51, 0x48, 0xCA, 0x4F, 0x5A, 0xAB, 0x48, 0x1E, 0x65, 0x0E,
            0x1D, 0x26, 0x00, 0x76, 0x4D, 0x9D, 0x09,
        ]
        for size in [body.count, 13, 1] {
            let decoder = try ContentDecoder([.deflate])
            #expect(throws: ContentDecodingError.self) {
                for start in stride(from: 0, to: body.count, by: size) {
                    try body[start..<min(body.count, start + size)].withUnsafeBytes { input in
                        try decoder.decode(input) { _ in }
                    }
                }
            }
        }
    }
}
