import Foundation
import FoundationNetworking
import Keyjar
import KeyjarCore
import KeyjarLoader
import KeyjarResponseCache
import KeyjarTestSupport
import Testing

/// The loader an application gets on the shared store, and URLSession beside it.
@Suite(.timeLimit(hangLimit), .servicesStopCleanly)
struct SharedStoreLoaderTests {
    /// A cache that cannot be opened is an error the application sees, not a loader that
    /// silently caches nothing.
    @Test func aCacheThatCannotBeOpenedIsReported() async throws {
        let daemon = try await InProcessServer.withSecretService()
        let directory = try TemporaryDirectory()
        // A regular file where the cache's directory should be.
        let blocked = directory.path("cache")
        try Data("not a directory".utf8).write(to: URL(fileURLWithPath: blocked))
        let client = KeyjarClient.Configuration(socketPath: daemon.socketPath, autoStart: false)
        #expect(throws: ResponseCacheError.self) {
            try URLLoader(sharedStore: client, cache: .init(directory: URL(fileURLWithPath: blocked)))
        }
        let cached = try URLLoader(
            sharedStore: client,
            cache: .init(directory: URL(fileURLWithPath: directory.path("ok")))
        )
        #expect(cached.configuration.responseCache != nil)
        #expect(try URLLoader(sharedStore: client, cache: nil).configuration.responseCache == nil)
    }

    /// `URLLoader.shared()` is one loader per process: one client, one cache, however often
    /// and from wherever it is asked for (run in a process of its own, whose default socket is
    /// the test's keyjard).
    @Test func sharedIsOneLoaderPerProcess() async throws {
        let daemon = try await InProcessServer.withSecretService()
        let directory = try TemporaryDirectory()
        var environment = ProcessInfo.processInfo.environment
        environment["KEYJAR_SOCKET"] = daemon.socketPath
        environment["KEYJAR_NO_AUTOSTART"] = "1"
        environment["XDG_CACHE_HOME"] = directory.path("cache")
        let result = try await runCommand(
            DaemonProcess.builtExecutable(named: "KeyjarTestPeer"),
            ["shared-loader"],
            environment: environment
        )
        #expect(result.status == 0, "\(result.error)")
        #expect(result.output == "same loader, same client, same cache\n")
    }

    /// With the session prepared, Foundation keeps no copy of the cookies (the process's
    /// `HTTPCookieStorage.shared` stays empty) and the shared store has them all.
    @Test func aPreparedURLSessionLeavesCookiesToTheSharedStore() async throws {
        let server = try await LoaderTestServer()
        let storage = SharedCookieStorage.ephemeral()
        let configuration = URLSessionConfiguration.default
        storage.prepare(configuration)
        let session = URLSession(configuration: configuration)
        defer { session.finishTasksAndInvalidate() }
        let url = server.url("/set-cookies")
        var request = URLRequest(url: url)
        storage.addCookies(to: &request)
        let (_, response) = try await session.data(for: request)
        let http = try #require(response as? HTTPURLResponse)
        #expect(try await storage.storeCookies(from: http).allSatisfy(\.isStored))
        #expect(Set(storage.cookies(for: url).map(\.name)) == ["a", "b", "c", "d"])
        #expect(HTTPCookieStorage.shared.cookies(for: url) ?? [] == [])

        // The next request carries the shared store's cookies, set by addCookies alone.
        var next = URLRequest(url: server.url("/echo"))
        storage.addCookies(to: &next)
        let header = try #require(next.value(forHTTPHeaderField: "Cookie"))
        #expect(Set(header.components(separatedBy: "; ")) == ["a=1", "b=2", "c=3", "d=4"])
    }
}
