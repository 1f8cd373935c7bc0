import Foundation
import Keyjar
import KeyjarCore
import KeyjarProtocol
import KeyjarTestSupport
import Testing

@Suite(.timeLimit(.minutes(1)))
struct EphemeralStorageTests {
    @Test func anEphemeralStoreIsPrivateToItsProcessAndFollowsTheSameRules() throws {
        let daemon = try DaemonProcess()
        defer { #expect(daemon.stop() == 0) }
        let shared = try storage(for: daemon)
        let ephemeral = SharedCookieStorage.ephemeral()
        #expect(ephemeral.isEphemeral && !shared.isEphemeral)
        let notified = LockedCounter()
        let observer = NotificationCenter.default.addObserver(
            forName: KeyjarNotifications.cookiesChanged, object: ephemeral, queue: nil) { _ in notified.increment() }
        defer { NotificationCenter.default.removeObserver(observer) }

        let url = try #require(URL(string: "https://www.example.com/"))
        #expect(try ephemeral.storeCookies(fromResponseHeaders: ["e=1; Domain=example.com", "bad=1; Domain=com"],
                                           for: url, mainDocumentURL: nil) == [nil, "Domain=com is a public suffix"])
        #expect(ephemeral.cookieHeader(for: url) == "e=1")
        #expect(notified.value == 1)
        // Nothing reached keyjard.
        #expect(shared.cookies.isEmpty)
        #expect(try TestClient(socketPath: daemon.socketPath).snapshot().cookies.isEmpty)

        try ephemeral.setCookieAcceptPolicy(.never)
        #expect(try ephemeral.storeCookies(fromResponseHeaders: ["f=1"], for: url, mainDocumentURL: nil)
                == ["The accept policy 'never' refuses this cookie"])
        try ephemeral.deleteCookie(try #require(ephemeral.cookies.first))
        #expect(ephemeral.cookies.isEmpty)
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
