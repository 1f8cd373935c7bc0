import Testing

@testable import KeyjarServer

/// The memory keyjard lets clients' large frames hold at once, without a socket: reservations
/// up to the limit, first come first served, bytes handed on when a waiter has gone, and what
/// `keyjar status` reports of it.
struct InboundBudgetTests {
    @Test func reservationsFitUnderTheLimit() {
        let budget = InboundBudget(limit: 100)
        #expect(budget.reserve(60))
        #expect(!budget.reserve(50))
        #expect(budget.reserve(40))
        #expect(budget.reserved == 100)
        budget.release(60)
        #expect(budget.reserved == 40)
        #expect(budget.peakReserved == 100)
    }

    @Test func aWaiterComesBeforeALaterReservationThatWouldFit() {
        let budget = InboundBudget(limit: 100)
        #expect(budget.reserve(60))
        var granted: [String] = []
        budget.wait(for: 50) {
            granted.append("first")
            return true
        }
        // 10 bytes are free, but the waiter asked first.
        #expect(!budget.reserve(10))
        budget.wait(for: 10) {
            granted.append("second")
            return true
        }
        budget.release(60)
        #expect(granted == ["first", "second"])
        #expect(budget.reserved == 60)
    }

    @Test func aWaiterThatHasGoneHandsItsBytesOn() {
        let budget = InboundBudget(limit: 100)
        #expect(budget.reserve(100))
        var granted: [String] = []
        budget.wait(for: 80) {
            granted.append("gone")
            return false
        }
        budget.wait(for: 90) {
            granted.append("next")
            return true
        }
        budget.release(100)
        #expect(granted == ["gone", "next"])
        #expect(budget.reserved == 90)
        #expect(budget.reserve(10))
        #expect(!budget.reserve(1))
    }

    @Test func pausedConnectionsAndBufferedBytesAreCounted() {
        let budget = InboundBudget(limit: 100)
        budget.connection(paused: true)
        budget.connection(paused: true)
        budget.connection(paused: false)
        #expect(budget.pausedConnections == 1)
        budget.noteBuffered(70)
        budget.noteBuffered(-50)
        budget.noteBuffered(10)
        #expect(budget.buffered == 30)
        #expect(budget.peakBuffered == 70)
    }

    @Test(arguments: [1, 1_000, 64 * 1024, 1 << 20])
    func aFrameReservesAPowerOfTwoWithRoomForOneReadBeyondIt(size: Int) {
        let reservation = InboundBudget.reservation(forFrame: size)
        #expect(reservation >= size + InboundBudget.smallFrame)
        #expect(reservation & (reservation - 1) == 0)
        #expect(reservation / 2 < size + InboundBudget.smallFrame)
    }
}
