import Foundation
import FoundationNetworking
import Keyjar
import KeyjarLocks
import KeyjarResponseCache
import KeyjarTestSupport
import Testing

@testable import KeyjarLoader

/// HEAD and Range requests against the loader's response cache and a real loopback server:
/// `/head` (a HEAD's fields can differ from a GET's) and `/cache` in Servers/loader_server.py.
/// Each body says which request of its key it is ("#N"); the server counts requests per key.
@Suite(.timeLimit(hangLimit), .servicesStopCleanly)
struct CacheHeadAndRangeTests {
    let server: LoaderTestServer

    init() async throws { server = try await LoaderTestServer() }

    func cachingLoader(_ cache: ResponseCache? = nil) throws -> (URLLoader, ResponseCache) {
        let cache = try cache ?? ResponseCache(configuration: .init())
        return (URLLoader(configuration: .init(cookieStorage: .ephemeral(), responseCache: cache)), cache)
    }

    func request(_ path: String, method: String = "GET", fields: [String: String] = [:]) -> URLRequest {
        var request = URLRequest(url: server.url(path))
        request.httpMethod = method
        for (name, value) in fields { request.setValue(value, forHTTPHeaderField: name) }
        return request
    }

    func received(_ delegate: RecordingDelegate) -> Data { delegate.state.withLock { $0.body } }

    // MARK: HEAD (RFC 9111 §4, §4.3.5)

    @Test func aHeadIsAnsweredFromAFreshStoredGet() async throws {
        let (loader, _) = try cachingLoader()
        let path = "/head?key=fresh&cc=max-age%3D600&etag=%22v1%22"
        #expect(await load(request(path), with: loader).body == "head body #1")
        let head = await load(request(path, method: "HEAD"), with: loader)
        #expect(head.events.dropFirst() == [.response(status: 200), .finished])
        #expect(head.lastResponse?.value(forHTTPHeaderField: "ETag") == "\"v1\"")
        #expect(head.lastResponse?.value(forHTTPHeaderField: "Content-Length") == "12")
        #expect(head.lastResponse?.value(forHTTPHeaderField: "Age") != nil)
        #expect(try server.count("fresh") == 1)
    }

    /// A stale stored GET: the HEAD goes to the server, and its 200 with the same ETag
    /// freshens the stored response, which then answers a GET without the server.
    @Test func aHeadResponseWithMatchingValidatorsFreshensTheStoredGet() async throws {
        let (loader, cache) = try cachingLoader()
        let path = "/head?key=freshen&cc=max-age%3D0&etag=%22v1%22&headcc=max-age%3D600"
        #expect(await load(request(path), with: loader).body == "head body #1")
        let head = await load(request(path, method: "HEAD"), with: loader)
        #expect(head.lastResponse?.value(forHTTPHeaderField: "Cache-Control") == "max-age=600")
        #expect(try server.count("freshen") == 2)
        let stored = try #require(cache.lookup(server.url(path)))
        #expect(LoaderConnection.head(of: stored.entry).value(of: "Cache-Control") == "max-age=600")
        #expect(String(decoding: try stored.body.load(), as: UTF8.self) == "head body #1")
        // The GET's body, the HEAD's freshness: no request.
        #expect(await load(request(path), with: loader).body == "head body #1")
        #expect(try server.count("freshen") == 2)
    }

    /// Another ETag in the HEAD's 200: the stored GET is no longer the representation; it goes.
    @Test func aHeadResponseWithOtherValidatorsRemovesTheStoredGet() async throws {
        let (loader, cache) = try cachingLoader()
        let path = "/head?key=mismatch&cc=max-age%3D0&etag=%22v1%22&headetag=%22v2%22&headcc=max-age%3D600"
        _ = await load(request(path), with: loader)
        #expect(cache.lookup(server.url(path)) != nil)
        _ = await load(request(path, method: "HEAD"), with: loader)
        #expect(cache.lookup(server.url(path)) == nil)
        #expect(await load(request(path), with: loader).body == "head body #3")
    }

    /// A HEAD's response is never stored as a GET's: the GET after it gets a body.
    @Test func aHeadResponseIsNotStored() async throws {
        let (loader, cache) = try cachingLoader()
        let path = "/head?key=headfirst&cc=max-age%3D600"
        _ = await load(request(path, method: "HEAD"), with: loader)
        #expect(cache.lookup(server.url(path)) == nil)
        #expect(await load(request(path), with: loader).body == "head body #2")
    }

    // MARK: Range (RFC 9110 §14, RFC 9111 §3.3)

    /// "cached #1" 100 times: 900 bytes, fresh for ten minutes, ETag "v1".
    func rangedPath(_ key: String) -> String { "/cache?key=\(key)&cc=max-age%3D600&etag=%22v1%22&repeat=100" }

    @Test(arguments: [
        ("bytes=9-17", "bytes 9-17/900"), ("bytes=891-", "bytes 891-899/900"), ("bytes=-9", "bytes 891-899/900"),
    ])
    func aRangeOfAFreshStoredResponseIsA206FromTheCache(range: String, contentRange: String) async throws {
        let (loader, _) = try cachingLoader()
        let path = rangedPath("range")
        _ = await load(request(path), with: loader)
        let partial = await load(request(path, fields: ["Range": range]), with: loader)
        #expect(partial.lastResponse?.statusCode == 206)
        #expect(partial.lastResponse?.value(forHTTPHeaderField: "Content-Range") == contentRange)
        #expect(partial.lastResponse?.value(forHTTPHeaderField: "Content-Length") == "9")
        #expect(partial.body == "cached #1")
        #expect(partial.events.last == .finished)
        #expect(try server.count("range") == 1)
    }

    @Test func anUnsatisfiableRangeIsA416FromTheCache() async throws {
        let (loader, _) = try cachingLoader()
        let path = rangedPath("unsatisfiable")
        _ = await load(request(path), with: loader)
        let refused = await load(request(path, fields: ["Range": "bytes=900-"]), with: loader)
        #expect(refused.lastResponse?.statusCode == 416)
        #expect(refused.lastResponse?.value(forHTTPHeaderField: "Content-Range") == "bytes */900")
        #expect(refused.events.dropFirst() == [.response(status: 416), .finished])
        #expect(try server.count("unsatisfiable") == 1)
    }

    /// Ranges that stay apart, and an If-Range naming another representation, get the whole
    /// stored 200; an If-Range naming the stored one gets the 206. None goes to the server.
    @Test func severalRangesAndIfRange() async throws {
        let (loader, _) = try cachingLoader()
        let path = rangedPath("ifrange")
        _ = await load(request(path), with: loader)
        let several = await load(request(path, fields: ["Range": "bytes=0-1, 100-101"]), with: loader)
        #expect(several.lastResponse?.statusCode == 200 && several.body.count == 900)
        let same = await load(request(path, fields: ["Range": "bytes=0-5", "If-Range": "\"v1\""]), with: loader)
        #expect(same.lastResponse?.statusCode == 206 && same.body == "cached")
        let other = await load(request(path, fields: ["Range": "bytes=0-5", "If-Range": "\"v2\""]), with: loader)
        #expect(other.lastResponse?.statusCode == 200 && other.body.count == 900)
        #expect(try server.count("ifrange") == 1)
    }

    /// A stored body the loader decoded is not the representation the ranges count (the coded
    /// bytes): the Range request goes to the server (which sends the whole here).
    @Test func aRangeOfADecodedStoredBodyGoesToTheServer() async throws {
        let (loader, _) = try cachingLoader()
        let path = "/coded?ce=gzip&cc=max-age%3D600&key=coded-range"
        _ = await load(request(path), with: loader)
        let ranged = await load(request(path, fields: ["Range": "bytes=0-9"]), with: loader)
        #expect(ranged.lastResponse?.statusCode == 200)
        #expect(ranged.body == String(repeating: "coded body ", count: 50))
        #expect(try server.count("coded-range") == 2)
        // Without a Range, the stored response answers.
        _ = await load(request(path), with: loader)
        #expect(try server.count("coded-range") == 2)
    }

    /// A request that may not reach the network never does for a range the stored body cannot
    /// slice: the whole stored response answers it (RFC 9110 §14.2), and a caller that undoes
    /// codings itself (its own Accept-Encoding) is not given the body the loader decoded.
    @Test func aRangeThatMayNotLoadIsAnsweredWholeAndRawCodingsAreNotServedDecoded() async throws {
        let (loader, _) = try cachingLoader()
        let path = "/coded?ce=gzip&cc=max-age%3D600&key=coded-dont-load"
        _ = await load(request(path), with: loader)
        var dontLoad = request(path, fields: ["Range": "bytes=0-9"])
        dontLoad.cachePolicy = .returnCacheDataDontLoad
        let whole = await load(dontLoad, with: loader)
        #expect(whole.lastResponse?.statusCode == 200)
        #expect(whole.body == String(repeating: "coded body ", count: 50))
        let onlyIfCached = await load(
            request(path, fields: ["Range": "bytes=0-9", "Cache-Control": "only-if-cached"]),
            with: loader
        )
        #expect(onlyIfCached.body == String(repeating: "coded body ", count: 50))
        #expect(try server.count("coded-dont-load") == 1)

        // Its own Accept-Encoding: the coded bytes, from the server, and not stored over the
        // decoded response.
        let raw = await load(request(path, fields: ["Accept-Encoding": "gzip"]), with: loader)
        #expect(raw.lastResponse?.value(forHTTPHeaderField: "Content-Encoding") == "gzip")
        #expect(raw.body != String(repeating: "coded body ", count: 50))
        #expect(try server.count("coded-dont-load") == 2)
        #expect(await load(request(path), with: loader).body == String(repeating: "coded body ", count: 50))
        #expect(try server.count("coded-dont-load") == 2)
    }

    /// A body the disk tier holds is read from its offset: another cache on the same directory
    /// (another process) serves the slice from the file.
    @Test func aRangeIsReadFromTheBodyFileOnDisk() async throws {
        let directory = try TemporaryDirectory()
        let location = URL(fileURLWithPath: directory.path("c"))
        let (writer, _) = try cachingLoader(ResponseCache(configuration: .init(directory: location)))
        let path = "/cache?key=disk&cc=max-age%3D600&repeat=100000"
        _ = await load(request(path), with: writer)
        let (reader, readerCache) = try cachingLoader(ResponseCache(configuration: .init(directory: location)))
        guard case .file(let handle, _) = try #require(readerCache.lookup(server.url(path))).body else {
            Issue.record("the body is not read from a file")
            return
        }
        try handle.close()
        let partial = await load(request(path, fields: ["Range": "bytes=450000-450017"]), with: reader)
        #expect(partial.lastResponse?.statusCode == 206)
        #expect(partial.lastResponse?.value(forHTTPHeaderField: "Content-Range") == "bytes 450000-450017/900000")
        #expect(partial.body == "cached #1cached #1")
        #expect(try server.count("disk") == 1)
    }
}
