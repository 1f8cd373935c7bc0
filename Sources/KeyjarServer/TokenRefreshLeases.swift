import KeyjarCore

/// Which connection is refreshing which credential's access token, and who waits for it:
/// keyjard's way of making processes that find one token expired at the same moment refresh it
/// once (RFC 6749 §6), not once each. A token endpoint that rotates refresh tokens would refuse
/// every refresh but the first, and revoke the lot.
///
/// The first to ask is granted the credential's lease; the others wait until it is released
/// (the holder reports, its connection closes, or the lease outlives ``maximumHold``) and then
/// ask again, by when the new token is stored. Plain state, tested without I/O; keyjard keeps
/// one on its event loop.
struct TokenRefreshLeases<Waiter> {
    struct Key: Hashable {
        var space: ProtectionSpace
        var user: String
    }

    enum Acquisition: Equatable {
        /// The caller holds the lease now; `generation` names this grant (for its expiry).
        case granted(generation: UInt64)
        /// Another connection holds it: wait (``enqueue(_:for:)``), then ask again.
        case busy
        /// The caller's connection already holds it: it cannot wait for itself (a connection's
        /// requests are answered in order), so this is refused.
        case alreadyHeld
    }

    private struct Lease {
        var holder: UInt64
        var generation: UInt64
        var waiters: [Waiter] = []
    }

    /// How long a lease is held at most (seconds): a holder that neither reports nor closes
    /// (hung on a token endpoint that never answers) must not stall everybody else for good.
    /// The loader gives the token endpoint less (`TokenRefresher.endpointTimeout`), and a
    /// report that comes later is still stored if nobody took the lease meanwhile.
    static var maximumHold: Int64 { 30 }

    private var leases: [Key: Lease] = [:]
    private var nextGeneration: UInt64 = 0

    mutating func acquire(_ key: Key, by client: UInt64) -> Acquisition {
        if let lease = leases[key] { return lease.holder == client ? .alreadyHeld : .busy }
        nextGeneration += 1
        leases[key] = Lease(holder: client, generation: nextGeneration)
        return .granted(generation: nextGeneration)
    }

    /// Queues a waiter behind the lease on `key`; false when nobody holds it (ask again now).
    mutating func enqueue(_ waiter: Waiter, for key: Key) -> Bool {
        guard var lease = leases[key] else { return false }
        lease.waiters.append(waiter)
        leases[key] = lease
        return true
    }

    func isHeld(_ key: Key, by client: UInt64) -> Bool { leases[key]?.holder == client }

    /// Ends `client`'s lease on `key`; returns the waiters to wake (none if it held none).
    mutating func release(_ key: Key, by client: UInt64) -> [Waiter] {
        guard let lease = leases[key], lease.holder == client else { return [] }
        leases[key] = nil
        return lease.waiters
    }

    /// Ends the grant `generation` if it is still held (its time ran out).
    mutating func expire(_ key: Key, generation: UInt64) -> [Waiter] {
        guard let lease = leases[key], lease.generation == generation else { return [] }
        leases[key] = nil
        return lease.waiters
    }

    /// Ends every lease `client` holds (its connection closed).
    mutating func releaseAll(heldBy client: UInt64) -> [Waiter] {
        var woken: [Waiter] = []
        for (key, lease) in leases where lease.holder == client {
            leases[key] = nil
            woken += lease.waiters
        }
        return woken
    }
}
