import NIOCore
import Testing

@testable import KeyjarServer

/// When an unlock of the encrypted secrets file may be tried, after failures: with no clock,
/// every time given.
@Suite struct UnlockAttemptsTests {
    private let start = NIODeadline.uptimeNanoseconds(1_000_000_000_000)

    @Test func threeMistakesCostNothingThenEachWaitDoublesUpToSixteenSeconds() {
        var attempts = UnlockAttempts()
        #expect(attempts.wait(at: start) == .zero)
        var waits: [TimeAmount] = []
        for _ in 0..<8 {
            attempts.failed(at: start)
            waits.append(attempts.wait(at: start))
        }
        #expect(
            waits == [.zero, .zero, .seconds(1), .seconds(2), .seconds(4), .seconds(8), .seconds(16), .seconds(16)]
        )
        // The wait runs from the failure: later, less of it is left.
        #expect(attempts.wait(at: start + .seconds(10)) == .seconds(6))
        #expect(attempts.wait(at: start + .seconds(20)) == .zero)
    }

    @Test func aSuccessStartsAgainFromNothing() {
        var attempts = UnlockAttempts()
        for _ in 0..<5 { attempts.failed(at: start) }
        #expect(attempts.wait(at: start) == .seconds(4))
        attempts.succeeded()
        #expect(attempts.failures == 0 && attempts.wait(at: start) == .zero)
        attempts.failed(at: start)
        #expect(attempts.wait(at: start) == .zero)
    }
}
