public import KeyjarCore

/// What `keyjar restore` keeps when an item is both in the backup and in the running store:
/// the newer, by the times each item carries; nothing else in the store is touched.
public enum BackupMerge {
    /// Whether the backup's cookie replaces `current` (nil: the store has none of that
    /// identity): when it was used (set or sent) later.
    public static func restores(_ cookie: Cookie, over current: Cookie?) -> Bool {
        guard let current else { return true }
        return (cookie.lastAccess, cookie.creation) > (current.lastAccess, current.creation)
    }

    /// Whether the backup's credential replaces `current`: when it was saved or last used later
    /// (a record keeps its first save's time, so an update shows as use).
    public static func restores(_ credential: CredentialRecord, over current: CredentialRecord?) -> Bool {
        guard let current else { return true }
        return max(credential.created, credential.lastUsed ?? 0) > max(current.created, current.lastUsed ?? 0)
    }

    /// The running store's policy with the backup's domain rules it has no rule for; its
    /// accept policy and its own rules stay (they are what the user chose last).
    public static func policy(_ backedUp: CookiePolicy, into current: CookiePolicy) -> CookiePolicy {
        var merged = current
        for (domain, action) in backedUp.domainRules where merged.domainRules[domain] == nil {
            merged.domainRules[domain] = action
        }
        return merged
    }
}
