import Foundation
import FoundationNetworking
import Keyjar
import KeyjarResponseCache
import KeyjarTestSupport
import Testing

@testable import KeyjarLoader

/// 206 responses stored as pieces and combined (RFC 9111 §3.3, §3.4), through the loader
/// against `/pieces` in Servers/loader_server.py: a 104-byte representation, the alphabet
/// four times, of which a single `Range` gets a 206. The server counts requests per key.
@Suite(.timeLimit(hangLimit), .servicesStopCleanly)
struct CachePartialContentTests {
    let server: LoaderTestServer
    static let whole = String(repeating: "abcdefghijklmnopqrstuvwxyz", count: 4)

    init() async throws { server = try await LoaderTestServer() }

    func request(_ path: String, range: String? = nil) -> URLRequest {
        var request = URLRequest(url: server.url(path))
        if let range { request.setValue(range, forHTTPHeaderField: "Range") }
        return request
    }

    /// A cache in memory, or on disk (bodies in files, the combination read from them).
    static func cache(onDisk: Bool, in directory: TemporaryDirectory) throws -> ResponseCache {
        try ResponseCache(
            configuration: .init(directory: onDisk ? URL(fileURLWithPath: directory.path("c")) : nil)
        )
    }

    static func loader(_ cache: ResponseCache) -> URLLoader {
        URLLoader(configuration: .init(cookieStorage: .ephemeral(), responseCache: cache))
    }

    /// Two 206s for the two halves, same strong ETag: combined into the complete response, which
    /// answers a plain GET whole without the server; the piece is gone.
    @Test(arguments: [false, true]) func twoHalvesMakeTheCompleteResponse(onDisk: Bool) async throws {
        let directory = try TemporaryDirectory()
        let cache = try Self.cache(onDisk: onDisk, in: directory)
        let loader = Self.loader(cache)
        let key = "halves-\(onDisk)"
        let path = "/pieces?key=\(key)"
        let first = await load(request(path, range: "bytes=0-51"), with: loader)
        #expect(first.lastResponse?.statusCode == 206 && first.body == String(Self.whole.prefix(52)))
        let second = await load(request(path, range: "bytes=52-103"), with: loader)
        #expect(second.lastResponse?.statusCode == 206 && second.body == String(Self.whole.suffix(52)))
        #expect(try server.count(key) == 2)
        let plain = await load(request(path), with: loader)
        #expect(plain.lastResponse?.statusCode == 200)
        #expect(plain.body == Self.whole)
        #expect(plain.lastResponse?.value(forHTTPHeaderField: "Content-Length") == "104")
        #expect(plain.lastResponse?.value(forHTTPHeaderField: "Content-Range") == nil)
        // The newest piece's fields.
        #expect(plain.lastResponse?.value(forHTTPHeaderField: "X-Count") == "2")
        #expect(try server.count(key) == 2)
        #expect(Self.pieces(cache).isEmpty && Self.completeEntries(cache) == 1)
    }

    /// A range within a fresh stored piece is a 206 from the cache; one outside it goes to the
    /// server, and its 206, overlapping, is combined with the piece into a larger one.
    @Test(arguments: [false, true]) func aRangeWithinAStoredPieceIsAHit(onDisk: Bool) async throws {
        let directory = try TemporaryDirectory()
        let cache = try Self.cache(onDisk: onDisk, in: directory)
        let loader = Self.loader(cache)
        let key = "within-\(onDisk)"
        let path = "/pieces?key=\(key)"
        _ = await load(request(path, range: "bytes=10-59"), with: loader)
        let hit = await load(request(path, range: "bytes=20-29"), with: loader)
        #expect(hit.lastResponse?.statusCode == 206)
        #expect(hit.lastResponse?.value(forHTTPHeaderField: "Content-Range") == "bytes 20-29/104")
        #expect(hit.lastResponse?.value(forHTTPHeaderField: "Content-Length") == "10")
        #expect(hit.body == "uvwxyzabcd")
        #expect(hit.events.last == .finished)
        #expect(try server.count(key) == 1)
        // Past the piece's end: the server, whose 206 overlaps the piece.
        let outside = await load(request(path, range: "bytes=50-69"), with: loader)
        #expect(outside.lastResponse?.statusCode == 206 && outside.body == "yzabcdefghijklmnopqr")
        #expect(try server.count(key) == 2)
        #expect(Self.pieces(cache) == ["bytes 10-69/104"])
        let inCombined = await load(request(path, range: "bytes=55-64"), with: loader)
        #expect(inCombined.lastResponse?.statusCode == 206 && inCombined.body == String(Array(Self.whole)[55...64]))
        #expect(try server.count(key) == 2)
        let combined = await load(request(path, range: "bytes=5-"), with: loader)
        #expect(combined.lastResponse?.statusCode == 206)
        #expect(try server.count(key) == 3)
        let spanning = await load(request(path, range: "bytes=12-65"), with: loader)
        #expect(spanning.body == String(Array(Self.whole)[12...65]))
        #expect(try server.count(key) == 3)
    }

    /// A piece with another ETag is another representation: it replaces the stored piece (its
    /// ranges are answered, the old one's are not), the two are never mixed, and a complete
    /// 200 removes the piece.
    @Test(arguments: [false, true]) func aPieceOfAnotherRepresentationReplacesTheOld(onDisk: Bool) async throws {
        let directory = try TemporaryDirectory()
        let cache = try Self.cache(onDisk: onDisk, in: directory)
        let loader = Self.loader(cache)
        let key = "replaced-\(onDisk)"
        // From its second request on, the server's representation is "v2", in upper case.
        let path = "/pieces?key=\(key)&switch=2"
        let upper = Self.whole.uppercased()
        _ = await load(request(path, range: "bytes=0-51"), with: loader)
        let second = await load(request(path, range: "bytes=52-103"), with: loader)
        #expect(second.lastResponse?.value(forHTTPHeaderField: "ETag") == "\"v2\"")
        // Not combined: the v1 half is gone, the v2 half answers its ranges.
        #expect(Self.pieces(cache) == ["bytes 52-103/104"])
        #expect(Self.completeEntries(cache) == 0)
        let hit = await load(request(path, range: "bytes=60-69"), with: loader)
        #expect(hit.lastResponse?.statusCode == 206 && hit.body == String(Array(upper)[60...69]))
        #expect(try server.count(key) == 2)
        let plain = await load(request(path), with: loader)
        #expect(plain.lastResponse?.statusCode == 200 && plain.body == upper)
        #expect(try server.count(key) == 3)
        // The complete response replaced the piece.
        #expect(Self.pieces(cache).isEmpty)
        #expect(Self.completeEntries(cache) == 1)
    }

    /// The Content-Range of each stored piece.
    static func pieces(_ cache: ResponseCache) -> [String] {
        cache.entries.map { LoaderConnection.head(of: $0) }.filter { $0.statusCode == 206 }.compactMap {
            $0.value(of: "Content-Range")
        }
    }

    static func completeEntries(_ cache: ResponseCache) -> Int {
        cache.entries.map { LoaderConnection.head(of: $0) }.filter { $0.statusCode == 200 }.count
    }
}
