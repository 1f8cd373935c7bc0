import KeyjarCore
import Testing

/// `keyjar sync`'s rule for one credential, every case: nothing a side changed is lost.
struct SyncDecisionTests {
    private func side(_ modified: Double, changed: Bool) -> SyncDecision.Side {
        SyncDecision.Side(modified: modified, changedSinceSync: changed)
    }

    @Test func newOnOneSideGoesToTheOther() {
        #expect(SyncDecision(keyjar: side(5, changed: true), store: nil, wasSynced: false) == .export)
        #expect(SyncDecision(keyjar: nil, store: side(5, changed: true), wasSynced: false) == .import)
        #expect(SyncDecision(keyjar: nil, store: nil, wasSynced: false) == .nothing)
        #expect(SyncDecision(keyjar: nil, store: nil, wasSynced: true) == .nothing)
    }

    @Test func aDeletionReachesTheOtherSideOnlyWhenThatSideDidNotChange() {
        // Removed from the store elsewhere; unchanged here: removed here.
        #expect(SyncDecision(keyjar: side(5, changed: false), store: nil, wasSynced: true) == .removeCredential)
        // ...changed here meanwhile: the change wins, written back.
        #expect(SyncDecision(keyjar: side(9, changed: true), store: nil, wasSynced: true) == .export)
        // Removed here; the entry unchanged: removed from the store.
        #expect(SyncDecision(keyjar: nil, store: side(5, changed: false), wasSynced: true) == .removeEntry)
        // ...changed in the store meanwhile: the change wins, brought back.
        #expect(SyncDecision(keyjar: nil, store: side(9, changed: true), wasSynced: true) == .import)
    }

    @Test func aChangeOnOneSideGoesToTheOther() {
        #expect(
            SyncDecision(keyjar: side(5, changed: false), store: side(5, changed: false), wasSynced: true) == .nothing
        )
        #expect(
            SyncDecision(keyjar: side(9, changed: true), store: side(5, changed: false), wasSynced: true) == .export
        )
        #expect(
            SyncDecision(keyjar: side(5, changed: false), store: side(9, changed: true), wasSynced: true) == .import
        )
        // A side's change wins even when its clock says earlier than the other's last sync.
        #expect(
            SyncDecision(keyjar: side(1, changed: true), store: side(5, changed: false), wasSynced: true) == .export
        )
    }

    @Test func whenBothChangedTheLaterWinsAndItIsAConflict() {
        let keyjar = side(9, changed: true)
        let store = side(7, changed: true)
        #expect(SyncDecision(keyjar: keyjar, store: store, wasSynced: true) == .export)
        #expect(SyncDecision(keyjar: store, store: keyjar, wasSynced: true) == .import)
        #expect(SyncDecision.isConflict(keyjar: keyjar, store: store, wasSynced: true))
        #expect(!SyncDecision.isConflict(keyjar: keyjar, store: side(7, changed: false), wasSynced: true))
        #expect(!SyncDecision.isConflict(keyjar: keyjar, store: nil, wasSynced: true))
        // Met for the first time (two machines stored one credential before their first sync).
        #expect(
            SyncDecision(keyjar: side(3, changed: true), store: side(4, changed: true), wasSynced: false) == .import
        )
        #expect(
            SyncDecision(keyjar: side(4, changed: true), store: side(4, changed: true), wasSynced: false) == .nothing
        )
    }
}
