import KeyjarCore
import Testing

@testable import KeyjarServer

/// The lease that makes processes refresh one token once, without I/O.
struct TokenRefreshLeasesTests {
    typealias Leases = TokenRefreshLeases<String>
    let key = Leases.Key(
        space: ProtectionSpace(host: "api.example", protocol: "https", authenticationMethod: .httpBearer),
        user: ""
    )
    let other = Leases.Key(space: ProtectionSpace(host: "other.example", protocol: "https"), user: "bob")

    @Test func theFirstAskerHoldsItTheOthersWaitAndAreWokenOnRelease() {
        var leases = Leases()
        guard case .granted = leases.acquire(key, by: 1) else {
            Issue.record("the first asker was not granted the lease")
            return
        }
        #expect(leases.acquire(key, by: 2) == .busy)
        #expect(leases.enqueue("two", for: key) == true)
        #expect(leases.acquire(key, by: 3) == .busy)
        #expect(leases.enqueue("three", for: key) == true)
        #expect(leases.acquire(key, by: 1) == .alreadyHeld)
        // Another credential is another lease.
        #expect(leases.acquire(other, by: 2) != .busy)
        // Only the holder releases it, and its waiters are woken in order.
        #expect(leases.release(key, by: 2).isEmpty)
        #expect(leases.isHeld(key, by: 1))
        #expect(leases.release(key, by: 1) == ["two", "three"])
        #expect(!leases.isHeld(key, by: 1))
        #expect(leases.enqueue("late", for: key) == false, "nobody holds it: ask again at once")
        #expect(leases.acquire(key, by: 3) != .busy)
    }

    @Test func aClosedConnectionOrAnExpiredGrantLetsTheNextOneIn() {
        var leases = Leases()
        guard case .granted(let first) = leases.acquire(key, by: 1) else {
            Issue.record("not granted")
            return
        }
        _ = leases.acquire(other, by: 1)
        #expect(leases.enqueue("waiting", for: key) == true)
        #expect(leases.enqueue("waiting on other", for: other) == true)
        // The holder's connection closes: everything it held is released.
        #expect(Set(leases.releaseAll(heldBy: 1)) == ["waiting", "waiting on other"])
        guard case .granted(let second) = leases.acquire(key, by: 2) else {
            Issue.record("not granted after release")
            return
        }
        // The first grant's timer firing late does not end the second grant.
        #expect(leases.expire(key, generation: first).isEmpty)
        #expect(leases.isHeld(key, by: 2))
        #expect(leases.enqueue("w", for: key) == true)
        #expect(leases.expire(key, generation: second) == ["w"])
        #expect(!leases.isHeld(key, by: 2))
    }
}
