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
        // keyjard answers again: seen by a client that waits as long as it takes, so that how
        // busy the machine is decides nothing here.
        let patient = try KeyjarClient(
            configuration: .init(socketPath: daemon.socketPath, autoStart: false, requestTimeout: 3_600)
        )
        guard case .policy = try await onOwnThread({ try patient.call(.policy) }) else {
            Issue.record("keyjard did not answer a policy request after SIGCONT")
            return
        }
        // The same client is answered again, by a request keyjard answers on its loop (no
        // D-Bus, unlike status). Its 1 s still counts time this machine spends elsewhere, so
        // one call may run out: asked again until answered.
        try await waitUntil(
            "keyjard answering the client again",
            asking: {
                guard let reply = try? await onOwnThread({ try client.call(.policy) }) else { return false }
                guard case .policy = reply else {
                    Issue.record("expected a policy reply, got \(reply)")
                    return true
                }
                return true
            }
        )
    }
}
