import Foundation
import Keyjar
import KeyjarCore
import KeyjarProtocol
import KeyjarTestSupport
import Testing

@Suite(.timeLimit(hangLimit), .servicesStopCleanly)
struct EphemeralStorageTests {
    @Test func anEphemeralStoreIsPrivateToItsProcessAndFollowsTheSameRules() async throws {
        let daemon = try await InProcessServer.withSecretService()
        let shared = try storage(for: daemon)
        let ephemeral = SharedCookieStorage.ephemeral()
        #expect(ephemeral.isEphemeral && !shared.isEphemeral)
        let notified = LockedCounter()
        let observer = NotificationCenter.default.addObserver(
            forName: KeyjarNotifications.cookiesChanged,
            object: ephemeral,
            queue: nil
        ) { _ in notified.increment() }
        defer { NotificationCenter.default.removeObserver(observer) }

        let url = try #require(URL(string: "https://www.example.com/"))
        await #expect(
            try ephemeral.storeCookies(
                fromResponseHeaders: ["e=1; Domain=example.com", "bad=1; Domain=com"],
                for: url,
                mainDocumentURL: nil
            ) == [.stored, .rejected(reason: "Domain=com is a public suffix")]
        )
        #expect(ephemeral.cookieHeader(for: url) == "e=1")
        #expect(notified.value == 1)
        // Nothing reached keyjard.
        #expect(shared.cookies.isEmpty)
        #expect(try TestClient(socketPath: daemon.socketPath).snapshot().cookies.isEmpty)

        try await ephemeral.setCookieAcceptPolicy(.never)
        await #expect(
            try ephemeral.storeCookies(fromResponseHeaders: ["f=1"], for: url, mainDocumentURL: nil)
                == [.rejected(reason: "The accept policy 'never' refuses this cookie")]
        )
        try await ephemeral.deleteCookie(try #require(ephemeral.cookies.first))
        #expect(ephemeral.cookies.isEmpty)
    }

    /// The store remembers the last URL it parsed; each lookup must still answer for its own
    /// URL, also when URLs alternate and when the same one comes back.
    @Test func lookupsOfAlternatingURLsAnswerForTheirOwnURL() throws {
        let storage = SharedCookieStorage.ephemeral()
        let a = try #require(URL(string: "https://a.example.com/app/page"))
        let b = try #require(URL(string: "https://b.example.com/other"))
        let aRoot = try #require(URL(string: "https://a.example.com/"))
        #expect(
            try storage.storeCookies(fromResponseHeaders: ["a=1; Path=/app"], for: a, mainDocumentURL: nil) == [.stored]
        )
        #expect(try storage.storeCookies(fromResponseHeaders: ["b=2"], for: b, mainDocumentURL: nil) == [.stored])
        for _ in 0..<2 {
            #expect(storage.cookieHeader(for: a) == "a=1")
            #expect(storage.cookieHeader(for: a) == "a=1")
            #expect(storage.cookieHeader(for: b) == "b=2")
            // Same host, another path: a parse of its own, not a's.
            #expect(storage.cookieHeader(for: aRoot) == nil)
        }
        // A cross-site main document is parsed on its own too: Strict stays home.
        #expect(
            try storage.storeCookies(fromResponseHeaders: ["s=3; SameSite=Strict"], for: b, mainDocumentURL: nil) == [
                .stored
            ]
        )
        let elsewhere = try #require(URL(string: "https://elsewhere.org/"))
        #expect(storage.cookieHeader(for: b, mainDocumentURL: a) == "b=2; s=3")
        #expect(storage.cookieHeader(for: b, mainDocumentURL: elsewhere) == "b=2")
        #expect(storage.cookieHeader(for: b, mainDocumentURL: b) == "b=2; s=3")
    }

    @Test func anUnreachableKeyjardFallsBackToMemoryOnlyWhenAsked() throws {
        let directory = try TemporaryDirectory()
        let configuration = KeyjarClient.Configuration(socketPath: directory.path("none.sock"), autoStart: false)
        #expect(throws: KeyjarClientError.self) { try SharedCookieStorage(configuration: configuration) }
        let fallback = try SharedCookieStorage(configuration: configuration, fallbackToMemory: true)
        #expect(fallback.isEphemeral && fallback.sharedClient == nil)
        let url = try #require(URL(string: "https://example.org/"))
        try fallback.storeCookies(fromResponseHeaders: ["m=1"], for: url, mainDocumentURL: nil)
        #expect(fallback.cookieHeader(for: url) == "m=1")
    }
}
