/// What one sync with a shared store (`keyjar sync`, a pass store in git) does with one
/// credential, decided from its two sides, Keyjar's and the store's, each as it is now and
/// whether it changed since the last sync left them alike. No I/O: `keyjar sync` gathers the
/// sides and applies the answer.
///
/// Nothing is lost: a change wins over a deletion on the other side, and when both sides
/// changed, the later change (by the time each records, not a file's time) wins; the other
/// version stays in git's history, and the sync reports it.
public enum SyncDecision: Sendable, Hashable {
    /// Write Keyjar's credential to the store.
    case export
    /// Store the entry's credential in Keyjar.
    case `import`
    /// Remove the entry: the credential was removed from Keyjar since the last sync, and the
    /// entry has not changed.
    case removeEntry
    /// Remove the credential: the entry was removed from the store since the last sync, and
    /// the credential has not changed.
    case removeCredential
    /// Both sides agree.
    case nothing

    /// One side of a credential.
    public struct Side: Sendable, Hashable {
        /// When it last changed, seconds since 1970.
        public var modified: Double
        /// Whether it changed since the last sync (true when there was none).
        public var changedSinceSync: Bool

        public init(modified: Double, changedSinceSync: Bool) {
            self.modified = modified
            self.changedSinceSync = changedSinceSync
        }
    }

    /// - Parameters:
    ///   - keyjar: the credential in Keyjar; nil when there is none.
    ///   - store: the entry in the store; nil when there is none.
    ///   - wasSynced: whether the last sync left both sides holding it.
    public init(keyjar: Side?, store: Side?, wasSynced: Bool) {
        switch (keyjar, store) {
        case (nil, nil):
            self = .nothing
        case (let keyjar?, nil):
            self = wasSynced && !keyjar.changedSinceSync ? .removeCredential : .export
        case (nil, let store?):
            self = wasSynced && !store.changedSinceSync ? .removeEntry : .import
        case (let keyjar?, let store?):
            switch (wasSynced ? keyjar.changedSinceSync : true, wasSynced ? store.changedSinceSync : true) {
            case (false, false): self = .nothing
            case (true, false): self = .export
            case (false, true): self = .import
            case (true, true):
                // Both changed (or met for the first time): the later change; on a tie (the
                // same credential, exported before the record of it was lost) nothing.
                if store.modified > keyjar.modified {
                    self = .import
                } else if keyjar.modified > store.modified {
                    self = .export
                } else {
                    self = .nothing
                }
            }
        }
    }

    /// Whether both sides had changed: one version won, and the sync says which was left.
    public static func isConflict(keyjar: Side?, store: Side?, wasSynced: Bool) -> Bool {
        guard wasSynced, let keyjar, let store else { return false }
        return keyjar.changedSinceSync && store.changedSinceSync && keyjar.modified != store.modified
    }
}
