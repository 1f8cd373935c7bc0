import Foundation
import Glibc
import Keyjar
import KeyjarProtocol
import KeyjarTestSupport
import Testing

@Suite(.timeLimit(hangLimit), .servicesStopCleanly)
struct ClientTimeoutTests {
    /// keyjard stopped (SIGSTOP) but its socket still open: a call gives up after the request
    /// timeout with `.timedOut`, and works again once keyjard runs.
    @Test func aCallTimesOutWhenKeyjardStopsAnswering() async throws {
        let daemon = try await DaemonProcess()
        // Running again before the end-of-test check that it stops cleanly.
        defer { kill(daemon.pid, SIGCONT) }
        let client = try KeyjarClient(
            configuration: .init(socketPath: daemon.socketPath, autoStart: false, requestTimeout: 1)
        )
        #expect(await stopProcess(daemon.pid))
        do {
            _ = try await onOwnThread { try client.call(.status) }
            Issue.record("a stopped keyjard answered")
        } catch let error as KeyjarClientError {
            #expect(error.code == .timedOut, "\(error)")
        }
        kill(daemon.pid, SIGCONT)
        // The same client is answered again. Its 1 s also counts time this busy machine spends
        // elsewhere, so one call may still run out: asked again until answered.
        try await waitUntil(
            "keyjard answering the client again",
            asking: {
                guard let reply = try? await onOwnThread({ try client.call(.status) }) else { return false }
                guard case .status = reply else {
                    Issue.record("expected a status reply, got \(reply)")
                    return true
                }
                return true
            }
        )
    }
}
