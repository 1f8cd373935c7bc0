import Foundation
import KeyjarCore
import KeyjarProtocol
import Testing

@testable import KeyjarConnection

/// What keyjard's events do to a client's copy of the store, without a socket: each kind of
/// change, and an event the copy already holds, which changes nothing and is not announced.
struct ReplicaTests {
    typealias Replica = KeyjarClient.Replica

    let site = ProtectionSpace(host: "git.example", protocol: "https", realm: "Sign in")

    func record(_ user: String, isDefault: Bool = false, expires: Double? = nil) -> CredentialRecord {
        CredentialRecord(
            space: site,
            user: user,
            persistence: .permanent,
            isDefault: isDefault,
            created: 1_700_000_000,
            expires: expires
        )
    }

    func snapshot() -> StoreSnapshot {
        StoreSnapshot(
            cookies: [Cookie(name: "session", value: "one", domain: "shop.example")],
            policy: CookiePolicy(acceptPolicy: .always),
            credentials: [record("alice", isDefault: true)],
            sequence: 10
        )
    }

    func change(_ kind: CredentialChange.Kind, _ user: String, _ record: CredentialRecord? = nil) -> StoreEvent {
        .credentials(changes: [CredentialChange(kind: kind, space: site, user: user, record: record)])
    }

    /// Whether `replica` applied `event` as the change numbered `sequence`.
    func apply(_ event: StoreEvent, _ sequence: UInt64, to replica: inout Replica) -> Bool {
        replica.apply(SequencedEvent(sequence: sequence, event: event))
    }

    func cookieValues(_ replica: Replica) -> [String: String] {
        Dictionary(uniqueKeysWithValues: replica.jar.allCookies.map { ($0.name, $0.value) })
    }

    @Test func aSnapshotIsTheWholeReplica() {
        let replica = Replica(snapshot())
        #expect(replica.sequence == 10)
        #expect(cookieValues(replica) == ["session": "one"])
        #expect(replica.credentials == [record("alice", isDefault: true)])
        #expect(replica.jar.policy.acceptPolicy == .always)
    }

    @Test func cookieChangesAddReplaceAndRemove() {
        var replica = Replica(snapshot())
        let old = Cookie(name: "session", value: "one", domain: "shop.example")
        let new = Cookie(name: "session", value: "two", domain: "shop.example")
        let cart = Cookie(name: "cart", value: "3", domain: "shop.example")
        let replacedAndAdded = apply(
            .cookies(changes: [.replaced(old: old, new: new), .added(cart)]),
            11,
            to: &replica
        )
        #expect(replacedAndAdded)
        #expect(cookieValues(replica) == ["session": "two", "cart": "3"])
        let removed = apply(.cookies(changes: [.removed(new, cause: .deleted)]), 12, to: &replica)
        #expect(removed)
        #expect(cookieValues(replica) == ["cart": "3"])
        #expect(replica.sequence == 12)
    }

    @Test func aPolicyEventReplacesThePolicy() {
        var replica = Replica(snapshot())
        let policy = CookiePolicy(acceptPolicy: .never, domainRules: ["ads.example": .block])
        let applied = apply(.policy(policy: policy), 11, to: &replica)
        #expect(applied)
        #expect(replica.jar.policy == policy)
    }

    @Test func credentialChangesKeepTheRecordsInStep() {
        var replica = Replica(snapshot())
        let bob = record("bob", expires: 1_800_000_000)
        let added = apply(change(.added, "bob", bob), 11, to: &replica)
        #expect(added)
        #expect(replica.credentials.map(\.user) == ["alice", "bob"])
        #expect(replica.credentials.last?.expires == 1_800_000_000)

        // The default moves: every record of the space says whether it is now the default.
        let moved = apply(change(.defaultChanged, "bob"), 12, to: &replica)
        #expect(moved)
        #expect(replica.credentials.map(\.isDefault) == [false, true])

        // An update carries the record as it now is.
        var refreshed = bob
        refreshed.expires = 1_900_000_000
        refreshed.isDefault = true
        let updated = apply(change(.updated, "bob", refreshed), 13, to: &replica)
        #expect(updated)
        #expect(replica.credentials.map(\.expires) == [nil, 1_900_000_000])

        let removed = apply(change(.removed, "alice"), 14, to: &replica)
        #expect(removed)
        #expect(replica.credentials.map(\.user) == ["bob"])
    }

    @Test func anAddedCredentialWithoutItsRecordIsKeptOnceWithDefaults() {
        var replica = Replica(snapshot())
        let added = apply(change(.added, "carol"), 11, to: &replica)
        let updated = apply(change(.updated, "carol"), 12, to: &replica)
        #expect(added && updated)
        let kept = replica.credentials.filter { $0.user == "carol" }
        #expect(kept.count == 1)
        #expect(kept.first?.persistence == .permanent)
        #expect(kept.first?.isDefault == false)
    }

    @Test(arguments: [UInt64(9), 10])
    func anEventTheReplicaHoldsChangesNothing(sequence: UInt64) {
        var replica = Replica(snapshot())
        let late = Cookie(name: "late", value: "x", domain: "shop.example")
        let applied = apply(.cookies(changes: [.added(late)]), sequence, to: &replica)
        #expect(!applied)
        #expect(replica.sequence == 10)
        #expect(cookieValues(replica) == ["session": "one"])
    }
}
