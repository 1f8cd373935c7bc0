import Foundation
import FoundationNetworking
import Keyjar
import KeyjarResponseCache
import KeyjarTestSupport
import Testing

@testable import KeyjarLoader

/// Vary with several variants per URL (RFC 9111 §4.1, §4.3.1, §4.3.4) through the loader,
/// against the loopback server's `/vary-variants` (Servers/loader_server.py): a representation
/// for en and one for fr, any other language getting fr.
@Suite(.timeLimit(hangLimit), .servicesStopCleanly)
struct CacheVariantTests {
    let server: LoaderTestServer

    init() async throws { server = try await LoaderTestServer() }

    func request(_ key: String, _ language: String, fields: [String: String] = [:]) -> URLRequest {
        var request = URLRequest(url: server.url("/vary-variants?key=" + key))
        request.setValue(language, forHTTPHeaderField: "Accept-Language")
        for (name, value) in fields { request.setValue(value, forHTTPHeaderField: name) }
        return request
    }

    func loader(_ cache: ResponseCache) -> URLLoader {
        URLLoader(configuration: .init(cookieStorage: .ephemeral(), responseCache: cache))
    }

    /// Two languages stored one after the other: each keeps its own variant, both are hits.
    @Test(arguments: [false, true])
    func twoVariantsOfOneURLAreBothHits(onDisk: Bool) async throws {
        let directory = try TemporaryDirectory()
        let cache = try ResponseCache(
            configuration: .init(
                memoryCapacity: onDisk ? 0 : 1 << 20,
                directory: onDisk ? URL(fileURLWithPath: directory.path("c")) : nil
            )
        )
        let loader = loader(cache)
        #expect(await load(request("two", "en"), with: loader).body == "en body #1")
        #expect(await load(request("two", "fr"), with: loader).body == "fr body #2")
        #expect(await load(request("two", "en"), with: loader).body == "en body #1")
        #expect(await load(request("two", "fr"), with: loader).body == "fr body #2")
        #expect(try server.count("two") == 2)
    }

    /// A third language matches neither variant: it goes with If-None-Match listing both
    /// entity tags, and the server's 304 naming fr's selects the fr variant, served (as a 200)
    /// and kept for that language: the next such request is a hit.
    @Test func aRequestMatchingNoVariantIsValidatedWithTheirTagsAndThe304Selects() async throws {
        let directory = try TemporaryDirectory()
        let cache = try ResponseCache(configuration: .init(directory: URL(fileURLWithPath: directory.path("c"))))
        let loader = loader(cache)
        _ = await load(request("third", "en"), with: loader)
        _ = await load(request("third", "fr"), with: loader)
        let german = await load(request("third", "de"), with: loader)
        #expect(german.body == "fr body #2")
        #expect(german.lastResponse?.statusCode == 200)
        #expect(german.lastResponse?.value(forHTTPHeaderField: "Content-Language") == "fr")
        #expect(try server.count("inm:third:\"third-en\",\"third-fr\"") == 1)
        #expect(try server.count("304:third:fr") == 1)
        // Kept for de, in this process and in another (a loader on the same directory).
        #expect(await load(request("third", "de"), with: loader).body == "fr body #2")
        let other = self.loader(
            try ResponseCache(configuration: .init(directory: URL(fileURLWithPath: directory.path("c"))))
        )
        #expect(await load(request("third", "de"), with: other).body == "fr body #2")
        #expect(await load(request("third", "en"), with: other).body == "en body #1")
        #expect(try server.count("third") == 3)
    }

    /// A 304 to the validators the cache added that names none of the stored variants is not
    /// the caller's answer: the request is sent again without them, and gets the response.
    @Test func a304NamingNoVariantSendsTheRequestAgainWithoutTheCachesValidators() async throws {
        let loader = loader(try ResponseCache(configuration: .init()))
        _ = await load(request("blind&blind304=1", "en"), with: loader)
        let german = await load(request("blind&blind304=1", "de"), with: loader)
        #expect(german.lastResponse?.statusCode == 200)
        #expect(german.body == "fr body #3")
        #expect(try server.count("inm:blind:\"blind-en\"") == 1)
        #expect(try server.count("blind") == 3)
    }

    /// A request that sets If-None-Match itself goes with its own condition only, and its
    /// answer is its own.
    @Test func theRequestsOwnIfNoneMatchIsLeftAlone() async throws {
        let loader = loader(try ResponseCache(configuration: .init()))
        _ = await load(request("own", "en"), with: loader)
        let mine = await load(request("own", "de", fields: ["If-None-Match": "\"mine\""]), with: loader)
        #expect(mine.body == "fr body #2")
        #expect(try server.count("inm:own:\"mine\"") == 1)
        #expect(try server.count("inm:own:\"mine\",\"own-en\"") == 0)
    }
}
