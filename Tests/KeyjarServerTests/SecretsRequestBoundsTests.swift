import Foundation
import Keyjar
import KeyjarProtocol
import KeyjarTestSupport
import Testing

/// Requests about the secrets that a client may send with any values: each out-of-range one is
/// refused with a typed error, and keyjard goes on serving.
@Suite(.timeLimit(hangLimit), .servicesStopCleanly)
struct SecretsRequestBoundsTests {
    private func refusal(_ request: Request, _ client: TestClient) -> WireError? {
        do {
            let reply = try client.call(request)
            Issue.record("\(request) was answered: \(reply)")
            return nil
        } catch let error as WireError {
            return error
        } catch {
            Issue.record("\(request) failed with \(error), not a WireError")
            return nil
        }
    }

    @Test func anIdleTimeoutBeyondTenYearsAndARelativeFileAreRefused() async throws {
        let daemon = try await DaemonProcess(arguments: ["--secrets", "encrypted"])
        let client = try TestClient(socketPath: daemon.socketPath)
        let tooLong = refusal(.unlockSecrets(passphrase: "p", create: true, lockAfterIdle: Int.max), client)
        #expect(tooLong?.code == WireError.invalidArgument, "\(String(describing: tooLong))")
        let relative = refusal(.migrateSecrets(backend: "file", path: "secrets.json", passphrase: nil), client)
        #expect(relative?.code == WireError.invalidArgument && relative?.message.contains("absolute") == true)
        // Still serving, and nothing was made or opened.
        guard case .status(let status) = try client.call(.status) else {
            throw TestSupportError("no status")
        }
        #expect(status.secretsLock == ServiceStatus.SecretsLock(isLocked: true))
        #expect(status.secretsBackend.hasPrefix("encrypted:"))
        #expect(!FileManager.default.fileExists(atPath: daemon.directory.path("data/secrets.sealed")))
        #expect(!FileManager.default.fileExists(atPath: "/secrets.json"))
    }
}
