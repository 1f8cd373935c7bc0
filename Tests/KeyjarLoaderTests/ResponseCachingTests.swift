import Foundation
import FoundationNetworking
import Keyjar
import KeyjarCore
import KeyjarLocks
import KeyjarResponseCache
import KeyjarTestSupport
import Testing

@testable import KeyjarLoader

/// The loader's response cache against a real loopback server that sends every kind of cache
/// header (`/cache` in Servers/loader_server.py; its body says which fetch it is: "#N").
@Suite(.timeLimit(hangLimit), .servicesStopCleanly)
struct ResponseCachingTests {
    let server: LoaderTestServer

    init() async throws { server = try await LoaderTestServer() }

    func cachingLoader(_ cache: ResponseCache? = nil) throws -> (URLLoader, ResponseCache) {
        let cache = try cache ?? ResponseCache(configuration: .init())
        return (URLLoader(configuration: .init(cookieStorage: .ephemeral(), responseCache: cache)), cache)
    }

    func request(
        _ query: String,
        policy: URLRequest.CachePolicy = .useProtocolCachePolicy,
        fields: [String: String] = [:],
        method: String = "GET"
    ) -> URLRequest {
        var request = URLRequest(url: server.url("/cache?" + query), cachePolicy: policy)
        request.httpMethod = method
        for (name, value) in fields { request.setValue(value, forHTTPHeaderField: name) }
        return request
    }

    @Test func aFreshResponseIsServedWithoutTheNetworkAndAnAge() async throws {
        let (loader, _) = try cachingLoader()
        let first = await load(request("key=fresh&cc=max-age%3D600"), with: loader)
        #expect(first.body == "cached #1")
        let second = await load(request("key=fresh&cc=max-age%3D600"), with: loader)
        #expect(second.body == "cached #1")
        #expect(
            second.events == [
                .willSend(url: server.url("/cache?key=fresh&cc=max-age%3D600").absoluteString, redirectStatus: nil),
                .response(status: 200), .data(count: 9), .finished,
            ]
        )
        #expect(second.lastResponse?.value(forHTTPHeaderField: "Age") != nil)
        #expect(try server.count("fresh") == 1)
    }

    @Test func noStoreAndNoCacheAndAStaleResponse() async throws {
        let (loader, _) = try cachingLoader()
        _ = await load(request("key=nostore&cc=no-store"), with: loader)
        #expect(await load(request("key=nostore&cc=no-store"), with: loader).body == "cached #2")
        // no-cache: stored, but validated every time; the 304 serves the stored body as a 200.
        _ = await load(request("key=nocache&cc=no-cache&etag=%22v1%22"), with: loader)
        let validated = await load(request("key=nocache&cc=no-cache&etag=%22v1%22"), with: loader)
        #expect(validated.body == "cached #1" && validated.lastResponse?.statusCode == 200)
        #expect(try server.count("304:nocache") == 1)
        // Stale (max-age=0) with Last-Modified: If-Modified-Since, then a 304.
        let modified = "lm=Sat%2C%2004%20Nov%202023%2022%3A13%3A20%20GMT"
        _ = await load(request("key=stale&cc=max-age%3D0&" + modified), with: loader)
        #expect(await load(request("key=stale&cc=max-age%3D0&" + modified), with: loader).body == "cached #1")
        #expect(try server.count("304:stale") == 1)
        // Stale without a validator: loaded again.
        _ = await load(request("key=plain&cc=max-age%3D0"), with: loader)
        #expect(await load(request("key=plain&cc=max-age%3D0"), with: loader).body == "cached #2")
    }

    /// A private cache: `private` responses are kept, `s-maxage` is not its business, and a
    /// stale `must-revalidate` response is never served, even to a request that accepts
    /// staleness (`max-stale`), which a plain stale response is.
    @Test func privateSharedMaxAgeAndMustRevalidate() async throws {
        let (loader, _) = try cachingLoader()
        _ = await load(request("key=private&cc=private%2C%20max-age%3D600"), with: loader)
        #expect(await load(request("key=private&cc=private%2C%20max-age%3D600"), with: loader).body == "cached #1")
        _ = await load(request("key=shared&cc=s-maxage%3D600%2C%20max-age%3D0"), with: loader)
        #expect(await load(request("key=shared&cc=s-maxage%3D600%2C%20max-age%3D0"), with: loader).body == "cached #2")
        let staleOK = ["Cache-Control": "max-stale=600"]
        _ = await load(request("key=lenient&cc=max-age%3D0"), with: loader)
        #expect(await load(request("key=lenient&cc=max-age%3D0", fields: staleOK), with: loader).body == "cached #1")
        _ = await load(request("key=strict&cc=max-age%3D0%2C%20must-revalidate"), with: loader)
        #expect(
            await load(request("key=strict&cc=max-age%3D0%2C%20must-revalidate", fields: staleOK), with: loader).body
                == "cached #2"
        )
        // The request's own no-cache goes to the server even for a fresh response.
        _ = await load(request("key=reqnocache&cc=max-age%3D600"), with: loader)
        #expect(
            await load(request("key=reqnocache&cc=max-age%3D600", fields: ["Cache-Control": "no-cache"]), with: loader)
                .body
                == "cached #2"
        )
    }

    @Test func expiresAndTheHeuristicGiveFreshness() async throws {
        let (loader, _) = try cachingLoader()
        let future =
            "expires="
            + (CookieDate.httpDate(Date(timeIntervalSinceNow: 600)).addingPercentEncoding(
                withAllowedCharacters: .alphanumerics
            ) ?? "")
        _ = await load(request("key=expires&" + future), with: loader)
        #expect(await load(request("key=expires&" + future), with: loader).body == "cached #1")
        // Modified ten days ago: fresh for a day by the heuristic.
        let tenDays =
            "lm="
            + (CookieDate.httpDate(Date(timeIntervalSinceNow: -864_000)).addingPercentEncoding(
                withAllowedCharacters: .alphanumerics
            ) ?? "")
        _ = await load(request("key=heuristic&" + tenDays), with: loader)
        #expect(await load(request("key=heuristic&" + tenDays), with: loader).body == "cached #1")
        #expect(try server.count("heuristic") == 1)
    }

    @Test func varyKeepsVariantsApart() async throws {
        let (loader, _) = try cachingLoader()
        let query = "key=vary&cc=max-age%3D600&vary=Accept-Language"
        #expect(await load(request(query, fields: ["Accept-Language": "fr"]), with: loader).body == "cached #1 for fr")
        #expect(await load(request(query, fields: ["Accept-Language": "fr"]), with: loader).body == "cached #1 for fr")
        #expect(await load(request(query, fields: ["Accept-Language": "de"]), with: loader).body == "cached #2 for de")
    }

    @Test func theFourPolicies() async throws {
        let (loader, _) = try cachingLoader()
        // Nothing stored: don't-load fails at once, with nothing sent.
        let missing = await load(request("key=policy&cc=max-age%3D0", policy: .returnCacheDataDontLoad), with: loader)
        #expect(missing.error?.code == .resourceUnavailable)
        #expect(try server.count("policy") == 0)
        _ = await load(request("key=policy&cc=max-age%3D0"), with: loader)
        // Stale, yet served by both return-cache-data policies.
        #expect(
            await load(request("key=policy&cc=max-age%3D0", policy: .returnCacheDataElseLoad), with: loader).body
                == "cached #1"
        )
        #expect(
            await load(request("key=policy&cc=max-age%3D0", policy: .returnCacheDataDontLoad), with: loader).body
                == "cached #1"
        )
        // Reload goes to the network even for a fresh response.
        _ = await load(request("key=reload&cc=max-age%3D600"), with: loader)
        #expect(
            await load(request("key=reload&cc=max-age%3D600", policy: .reloadIgnoringLocalCacheData), with: loader).body
                == "cached #2"
        )
        #expect(await load(request("key=reload&cc=max-age%3D600"), with: loader).body == "cached #2")
        // Without a cache, don't-load fails too.
        let uncached = await load(request("key=none", policy: .returnCacheDataDontLoad), with: ephemeralLoader())
        #expect(uncached.error?.code == .resourceUnavailable)
    }

    /// A redirect's target is answered from the cache like any request.
    @Test func aRedirectsTargetIsServedFromTheCache() async throws {
        let (loader, _) = try cachingLoader()
        let target = "/cache?key=redirected%26cc=max-age%253D600"
        #expect(await load(URLRequest(url: server.url("/redirect?to=" + target)), with: loader).body == "cached #1")
        #expect(await load(URLRequest(url: server.url("/redirect?to=" + target)), with: loader).body == "cached #1")
        #expect(try server.count("redirected") == 1)
        #expect(try server.count("/redirect") == 2)
    }

    @Test func aPostInvalidatesWhatItNames() async throws {
        let (loader, cache) = try cachingLoader()
        let query = "key=target&cc=max-age%3D600"
        _ = await load(request(query), with: loader)
        #expect(cache.lookup(server.url("/cache?" + query)) != nil)
        _ = await load(request(query, method: "POST"), with: loader)
        #expect(await load(request(query), with: loader).body == "cached #3")
    }

    @Test func aHitNeverStoresItsCookiesAgain() async throws {
        let jar = SharedCookieStorage.ephemeral()
        let cache = try ResponseCache(configuration: .init())
        let loader = URLLoader(configuration: .init(cookieStorage: jar, responseCache: cache))
        let query = "key=cookie&cc=max-age%3D600&cookie=c%3D1"
        _ = await load(request(query), with: loader)
        #expect(jar.cookies.map(\.name) == ["c"])
        try await jar.removeCookies(since: .distantPast)
        let hit = await load(request(query), with: loader)
        #expect(hit.body == "cached #1")
        #expect(hit.lastResponse?.value(forHTTPHeaderField: "Set-Cookie") == "c=1")
        #expect(jar.cookies.isEmpty)
    }

    /// The delegate is offered the response with the storage policy the cache would use
    /// (http: allowed, on disk), and its changes are what is stored.
    @Test func theDelegateSeesTheProposalAndTheDiskGetsTheBody() async throws {
        let directory = try TemporaryDirectory()
        let cache = try ResponseCache(configuration: .init(directory: URL(fileURLWithPath: directory.path("c"))))
        let (loader, _) = try cachingLoader(cache)
        let policies = Locked<[URLCache.StoragePolicy]>([])
        let watching = RecordingDelegate(willCache: { proposed in
            policies.withLock { $0.append(proposed.storagePolicy) }
            return proposed
        })
        _ = await load(
            URLRequest(url: server.url("/cache?key=plainhttp&cc=max-age%3D600")),
            with: loader,
            delegate: watching
        )
        #expect(policies.withLock { $0 } == [.allowed])
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path("c/bodies")).count == 1)
        // Another loader on the same directory (another process) is answered from disk.
        let other = try ResponseCache(configuration: .init(directory: URL(fileURLWithPath: directory.path("c"))))
        let (otherLoader, _) = try cachingLoader(other)
        #expect(
            await load(URLRequest(url: server.url("/cache?key=plainhttp&cc=max-age%3D600")), with: otherLoader).body
                == "cached #1"
        )
        #expect(try server.count("plainhttp") == 1)
    }

    /// The guide's `willCacheResponse` listing: a new cached response with a date in its
    /// `userInfo`. What is stored is that response: its fields, data, policy and user info.
    @Test func aChangedResponseWithPropertyListUserInfoIsWhatIsStored() async throws {
        let (loader, cache) = try cachingLoader()
        let url = server.url("/cache?key=changed&cc=max-age%3D600")
        let cachedDate = Date(timeIntervalSince1970: 1_234_567_890)
        let changing = RecordingDelegate(willCache: { proposed in
            let response = HTTPURLResponse(
                url: proposed.response.url ?? url,
                statusCode: 200,
                httpVersion: "HTTP/1.1",
                headerFields: ["Cache-Control": "max-age=600", "X-Changed": "yes"]
            )
            return CachedURLResponse(
                response: response ?? proposed.response,
                data: Data("changed body".utf8),
                userInfo: ["Cached Date": cachedDate, "note": "kept", "count": 3],
                storagePolicy: .allowedInMemoryOnly
            )
        })
        _ = await load(URLRequest(url: url), with: loader, delegate: changing)
        #expect(changing.body == "cached #1")
        let stored = try #require(cache.lookup(url))
        #expect(LoaderConnection.head(of: stored.entry).values(of: "X-Changed") == ["yes"])
        #expect(stored.entry.storagePolicy == .allowedInMemoryOnly)
        #expect(String(decoding: try stored.body.load(), as: UTF8.self) == "changed body")
        let userInfo = try #require(CachedUserInfo.read(stored.entry.userInfo))
        #expect(userInfo["Cached Date"] as? Date == cachedDate)
        #expect(userInfo["note"] as? String == "kept")
        #expect(userInfo["count"] as? Int == 3)
        // Served as stored.
        let hit = await load(URLRequest(url: url), with: loader)
        #expect(hit.body == "changed body" && hit.lastResponse?.value(forHTTPHeaderField: "X-Changed") == "yes")
        #expect(try server.count("changed") == 1)
    }

    /// A validation's 304 stores the refreshed response again: the hook is asked about it too,
    /// and its answer counts.
    @Test func theHookIsAskedWhenAValidationRefreshesTheStoredResponse() async throws {
        let (loader, cache) = try cachingLoader()
        let query = "key=refreshed&cc=no-cache&etag=%22v1%22"
        let offered = Locked<[Int]>([])
        func watching(refuse: Bool) -> RecordingDelegate {
            RecordingDelegate(willCache: { proposed in
                offered.withLock { $0.append((proposed.response as? HTTPURLResponse)?.statusCode ?? 0) }
                return refuse ? nil : proposed
            })
        }
        _ = await load(request(query), with: loader, delegate: watching(refuse: false))
        let stored = try #require(cache.lookup(server.url("/cache?" + query))).entry
        let validated = await load(request(query), with: loader, delegate: watching(refuse: false))
        #expect(validated.body == "cached #1")
        #expect(try server.count("304:refreshed") == 1)
        #expect(offered.withLock { $0 } == [200, 200])
        // Stored again: its times are the validation's.
        let refreshed = try #require(cache.lookup(server.url("/cache?" + query))).entry
        #expect(refreshed != stored && refreshed.url == stored.url)
        // Refused: the refreshed response is not stored, the one there was stays.
        let refused = await load(request(query), with: loader, delegate: watching(refuse: true))
        #expect(refused.body == "cached #1" && refused.events.last == .finished)
        #expect(offered.withLock { $0.count } == 3)
        #expect(try #require(cache.lookup(server.url("/cache?" + query))).entry == refreshed)
    }

    /// `returnCacheDataDontLoad` on a miss fails before the network or the credential storage.
    @Test func returnCacheDataDontLoadFailsOnAMissBeforeAnyWork() async throws {
        let (loader, _) = try cachingLoader()
        let delegate = LegacyDelegate(canAuthenticate: true)
        let miss = request("key=dontload", policy: .returnCacheDataDontLoad)
        _ = loader.connection(with: miss, delegate: delegate)
        #expect(await delegate.recorder.wait())
        #expect(
            delegate.recorder.events == [
                .willSend(url: try #require(miss.url).absoluteString, redirectStatus: nil),
                .failed(code: URLError.resourceUnavailable.rawValue),
            ]
        )
        #expect(try server.count("dontload") == 0)
    }

    @Test func concurrentLoadsOfOneURLAllGetWholeBodies() async throws {
        let (loader, _) = try cachingLoader()
        let query = "key=race&cc=max-age%3D600&repeat=2000"
        let all = await withTaskGroup(of: String.self) { group in
            for _ in 0..<8 { group.addTask { await load(request(query), with: loader).body } }
            return await group.reduce(into: [String]()) { $0.append($1) }
        }
        #expect(all.count == 8)
        #expect(
            all.allSatisfy { $0.count == "cached #1".count * 2_000 || $0.count == "cached #2".count * 2_000 },
            "\(all.map(\.count))"
        )
        #expect(
            all.allSatisfy { !$0.isEmpty && Set($0.split(separator: "#").dropFirst().map { $0.prefix(1) }).count == 1 }
        )
    }
}
