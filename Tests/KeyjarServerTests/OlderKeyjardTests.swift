import Foundation
import Keyjar
import KeyjarCore
import KeyjarProtocol
import KeyjarServer
import KeyjarTestSupport
import Testing

/// After an upgrade the keyjard that is still running may be older than the programs that use
/// it: a client then speaks the newest version that keyjard knows.
@Suite(.timeLimit(hangLimit), .servicesStopCleanly)
struct OlderKeyjardTests {
    @Test func aClientFallsBackToVersion2WithAKeyjardThatKnowsNoLater() async throws {
        // Given a keyjard that answers as one of protocol version 2 would
        let daemon = try await InProcessServer { $0.protocolVersions = 1...2 }
        // (which refuses the current version outright)
        let refused = try TestClient(socketPath: daemon.socketPath, hello: false)
        #expect(throws: (any Error).self) {
            try refused.call(.hello(version: ProtocolVersion.current, client: "new"))
        }
        // When a current client connects, stores and reads cookies
        func storage() throws -> SharedCookieStorage {
            SharedCookieStorage(
                client: try KeyjarClient(configuration: .init(socketPath: daemon.socketPath, autoStart: false))
            )
        }
        let writer = try storage()
        let reader = try storage()
        let url = try #require(URL(string: "https://www.example.com/"))
        let outcomes = try await writer.storeCookies(
            fromResponseHeaders: ["sid=42; Secure"],
            for: url,
            mainDocumentURL: nil
        )
        // Then it works as with a current keyjard: stored, pushed to the other replica
        #expect(outcomes == [.stored])
        #expect(await eventually { reader.cookieHeader(for: url) == "sid=42" })
        #expect(try reader.client.cookieHeader(for: url, mainDocumentURL: nil) == "sid=42")
    }
}
