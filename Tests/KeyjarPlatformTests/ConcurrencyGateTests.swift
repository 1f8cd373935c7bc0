import Foundation
import KeyjarTestSupport
import Testing

/// The suite's gate on scarce resources (private Secret Services): no more holders than its
/// limit, the others let in in the order they came as places are given back.
struct ConcurrencyGateTests {
    /// Who got in, in order, and their places, kept by the tasks that wait at the gate.
    final class Arrivals: @unchecked Sendable {
        // @unchecked: both fields only under `lock`.
        private let lock = NSLock()
        private var arrived: [String] = []
        private var slots: [ConcurrencyGate.Slot] = []

        var names: [String] { lock.withLock { arrived } }

        func add(_ name: String, _ slot: ConcurrencyGate.Slot) {
            lock.withLock {
                arrived.append(name)
                slots.append(slot)
            }
        }
    }

    @Test func aHolderPastTheLimitWaitsForAPlaceAndTheyComeInTurn() async throws {
        let gate = ConcurrencyGate(limit: 2)
        // Held in an array, so that each place is given back exactly where it is removed.
        var held = [await gate.enter(), await gate.enter()]
        #expect(gate.freePlaces == 0)
        let arrivals = Arrivals()
        let third = Task { arrivals.add("third", await gate.enter()) }
        // The fourth asks only once the third waits, so that the order is the test's.
        #expect(await eventually { gate.waitingCount == 1 })
        let fourth = Task { arrivals.add("fourth", await gate.enter()) }
        #expect(await eventually { gate.waitingCount == 2 })
        #expect(arrivals.names.isEmpty)

        held.removeFirst()
        #expect(await eventually { arrivals.names == ["third"] })
        #expect(gate.waitingCount == 1)

        held.removeFirst()
        #expect(await eventually { arrivals.names == ["third", "fourth"] })
        #expect(gate.freePlaces == 0)
        await third.value
        await fourth.value
        withExtendedLifetime(held) {}
    }

    @Test func aPlaceGivenBackWithNobodyWaitingIsFreeAgain() async {
        let gate = ConcurrencyGate(limit: 2)
        var held = [await gate.enter()]
        #expect(gate.freePlaces == 1)
        held.removeAll()
        #expect(gate.freePlaces == 2)
        #expect(gate.waitingCount == 0)
        withExtendedLifetime(held) {}
    }
}
