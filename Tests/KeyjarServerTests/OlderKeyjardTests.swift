import Foundation
import Keyjar
import KeyjarCore
import KeyjarProtocol
import KeyjarServer
import KeyjarTestSupport
import Testing

/// After an upgrade the keyjard that is still running may be of another build than the programs
/// that use it. keyjard speaks one protocol version (Schemas/protocol.md, "Versions"): such a
/// client is refused at once, with an error that says which keyjard and what to do.
@Suite(.timeLimit(hangLimit), .servicesStopCleanly)
struct OlderKeyjardTests {
    @Test func aClientOfAnotherBuildIsToldToRestartKeyjard() async throws {
        // Given a keyjard that speaks another protocol version
        let daemon = try await InProcessServer { $0.protocolVersions = 3...3 }
        // When a current client connects and reads cookies
        let url = try #require(URL(string: "https://www.example.com/"))
        // Then it fails at once, naming the socket and saying to restart keyjard
        #expect {
            let client = try KeyjarClient(configuration: .init(socketPath: daemon.socketPath, autoStart: false))
            _ = try client.cookieHeader(for: url, mainDocumentURL: nil)
        } throws: { error in
            guard let error = error as? KeyjarClientError else { return false }
            return error.wireCode == WireError.unsupportedVersion && error.message.contains(daemon.socketPath)
                && error.message.contains("restart")
        }
    }
}
