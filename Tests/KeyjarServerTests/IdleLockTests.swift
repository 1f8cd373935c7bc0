import KeyjarProtocol
import Testing

@testable import KeyjarServer

/// When an open encrypted secrets file locks by itself, and what `keyjar status` is told: with
/// no clock, every instant given.
@Suite struct IdleLockTests {
    private let lastUse = ContinuousClock.now

    @Test func withATimeoutItLocksOnceUnusedForAllOfIt() {
        let idle = IdleLock(timeout: .seconds(900))
        #expect(idle.decide(lastUse: lastUse, now: lastUse) == .checkAgain(after: .seconds(900)))
        #expect(idle.decide(lastUse: lastUse, now: lastUse + .seconds(600)) == .checkAgain(after: .seconds(300)))
        #expect(idle.decide(lastUse: lastUse, now: lastUse + .seconds(900)) == .lock)
        #expect(idle.decide(lastUse: lastUse, now: lastUse + .seconds(5_000)) == .lock)
        // A use after the look began (the clock read before it) counts as idle for none of it.
        #expect(idle.decide(lastUse: lastUse + .seconds(1), now: lastUse) == .checkAgain(after: .seconds(900)))
    }

    @Test func withoutATimeoutItNeverLocks() {
        #expect(IdleLock().decide(lastUse: lastUse, now: lastUse + .seconds(86_400 * 365)) == .never)
    }

    @Test func anUnlockSaysItsTimeoutOrTakesKeyjardsAndZeroIsNever() throws {
        #expect(try IdleLock.timeout(asked: nil, standard: .seconds(60)) == .seconds(60))
        #expect(try IdleLock.timeout(asked: nil, standard: nil) == nil)
        #expect(try IdleLock.timeout(asked: 0, standard: .seconds(60)) == nil)
        #expect(try IdleLock.timeout(asked: 30, standard: .seconds(60)) == .seconds(30))
        let refused = #expect(throws: WireError.self) { try IdleLock.timeout(asked: -1, standard: nil) }
        #expect(refused?.code == WireError.invalidArgument)
        #expect(try IdleLock.timeout(asked: IdleLock.longest, standard: nil) == .seconds(IdleLock.longest))
        // Beyond it the loop's timer would overflow: refused, not a crash of keyjard.
        let tooLong = #expect(throws: WireError.self) { try IdleLock.timeout(asked: Int.max, standard: nil) }
        #expect(tooLong?.code == WireError.invalidArgument)
    }

    @Test func statusSaysLockedOrUntilWhen() {
        let idle = IdleLock(timeout: .seconds(900))
        #expect(idle.status(lastUse: nil, now: lastUse) == .init(isLocked: true))
        #expect(IdleLock().status(lastUse: lastUse, now: lastUse) == .init(isLocked: false))
        #expect(
            idle.status(lastUse: lastUse, now: lastUse + .milliseconds(100_500))
                == .init(isLocked: false, lockAfterIdle: 900, locksIn: 800)
        )
        #expect(
            idle.status(lastUse: lastUse, now: lastUse + .seconds(900))
                == .init(isLocked: false, lockAfterIdle: 900, locksIn: 0)
        )
    }
}
