import Testing

@testable import KeyjarServer

/// The service's life without a socket: a clean stop lets the session's last commits in, then
/// refuses every write and stops housekeeping; it begins once.
struct ServiceLifecycleTests {
    @Test func aCleanStopEndsTheSessionThenRefusesWrites() {
        var lifecycle = ServiceLifecycle.serving
        #expect(lifecycle.acceptsWrites && lifecycle.runsMaintenance)
        let began = lifecycle.beginShutdown()
        #expect(began && lifecycle == .endingSession)
        #expect(lifecycle.acceptsWrites && !lifecycle.runsMaintenance)
        let beganAgain = lifecycle.beginShutdown()
        #expect(!beganAgain)
        lifecycle.finishShutdown()
        #expect(lifecycle == .stopped)
        #expect(!lifecycle.acceptsWrites && !lifecycle.runsMaintenance)
        let beganWhenStopped = lifecycle.beginShutdown()
        #expect(!beganWhenStopped && lifecycle == .stopped)
    }
}
