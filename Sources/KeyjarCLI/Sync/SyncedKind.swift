/// One kind of thing `keyjar sync` keeps as pass entries, credentials or the cookies of the
/// sites the user named: how its entries are read and written, and how Keyjar's side of it is
/// listed and changed. ``PassSync`` reconciles every kind by one rule (``SyncDecision``).
protocol SyncedKind {
    associatedtype Entry

    /// Whether the entry at `path` (without `.gpg`) is this kind's to sync.
    func owns(path: String) -> Bool

    /// Whether an item the last sync recorded (by its key) is still this kind's to sync.
    func syncs(key: String) -> Bool

    /// The item an entry's text is, with its key; nil when it is not this kind's to sync.
    /// - Throws: ``SyncSkip`` for an entry that cannot be synced, with why.
    func read(_ text: String, at path: String) throws -> (key: String, entry: Entry)?

    /// Keyjar's items as they are now, by key.
    func localItems() throws -> [String: SyncedItem<Entry>]

    /// Keyjar's items without their secrets, by key, each with when it last changed: after a
    /// sync, what it leaves synced.
    func localChanges() throws -> [String: Double]

    /// When an entry's item last changed, seconds since 1970 (0 when it does not say).
    func modified(of entry: Entry) -> Double

    /// Whether two entries hold the same item, as far as a sync tells changes apart.
    func holdsTheSame(_ entry: Entry, _ other: Entry) -> Bool

    /// The text to write for Keyjar's item, keeping the lines of the stored entry (a user's
    /// notes) that Keyjar does not read.
    func encoded(_ local: Entry, keeping stored: Entry?) throws -> String

    /// Stores an entry's item in Keyjar.
    /// - Throws: ``SyncSkip`` when Keyjar refuses it, with why.
    func save(_ entry: Entry) throws

    /// Removes Keyjar's item.
    func remove(_ local: Entry) throws

    /// Whether Keyjar no longer holding an item it held at the last sync means the user
    /// removed it (a credential), rather than that it went with the end of a login session (a
    /// session cookie, which the next sync brings back).
    func absenceIsRemoval(of stored: Entry) -> Bool

    /// Whether a stored entry is of no more use to any machine (an expired cookie): it is
    /// removed from the store, and Keyjar is left as it is.
    func isDead(_ stored: Entry) -> Bool
}

/// One of Keyjar's items as a sync sees it.
struct SyncedItem<Entry> {
    /// When it last changed here, seconds since 1970.
    var modified: Double
    /// Where a new entry for it goes.
    var path: String
    /// What its entry would hold, asked for only when the sync needs it: a credential's
    /// password is fetched from keyjard (and its secret store) then, not on every sync.
    /// - Throws: ``SyncSkip`` when it cannot be had (a password missing from the secret store).
    var entry: () throws -> Entry
}

/// Why an entry, or one of Keyjar's items, is left out of a sync; reported, and the rest goes on.
struct SyncSkip: Error, CustomStringConvertible {
    var description: String
}
