import Keyjar
import KeyjarCodec
import KeyjarCore

/// Keyjar's permanent credentials as pass entries (``PassEntry``, filed by ``PassStoreLayout``):
/// every entry of the store outside the cookie folder that names a server.
struct SyncedCredentials: SyncedKind {
    let client: KeyjarClient

    /// An entry with the credential it is (by its fields, or its path where they are silent).
    struct Entry {
        var entry: PassEntry
        var space: ProtectionSpace
        var user: String
    }

    func owns(path: String) -> Bool { !path.hasPrefix(PassCookieEntry.folder + "/") }

    func syncs(key: String) -> Bool { !key.hasPrefix(SyncedCookies.keyPrefix) }

    func read(_ text: String, at path: String) throws -> (key: String, entry: Entry)? {
        let entry: PassEntry
        do {
            entry = try PassEntry.read(text)
        } catch {
            throw SyncSkip(description: error.description)
        }
        guard let (space, user) = PassStoreLayout.credential(of: entry, at: path) else {
            throw SyncSkip(description: "names no server (no url: field, and its folder is no host name)")
        }
        return (SyncState.key(of: space, user: user), Entry(entry: entry, space: space, user: user))
    }

    /// Each permanent credential with a secret: a client certificate's identity is several
    /// lines of PEM, and a trust decision has no secret, so neither is a pass entry.
    private func records() throws -> [CredentialRecord] {
        try client.credentialRecords().filter {
            $0.persistence == .permanent && $0.space.authenticationMethod.keepsSecret
                && $0.space.authenticationMethod != .clientCertificate
        }
    }

    func localItems() throws -> [String: SyncedItem<Entry>] {
        var items: [String: SyncedItem<Entry>] = [:]
        for record in try records() {
            items[SyncState.key(of: record.space, user: record.user)] = SyncedItem(
                modified: record.lastChanged,
                path: PassStoreLayout.path(of: record.space, user: record.user)
            ) { [client] in
                guard let password = try client.password(user: record.user, for: record.space) else {
                    throw SyncSkip(description: "its password is missing from Keyjar's secret store")
                }
                let refreshToken =
                    record.hasRefreshToken ? try client.refreshToken(user: record.user, for: record.space) : nil
                let entry = PassStoreLayout.entry(
                    for: record,
                    password: password,
                    refreshToken: refreshToken,
                    modified: record.lastChanged
                )
                return Entry(entry: entry, space: record.space, user: record.user)
            }
        }
        return items
    }

    func localChanges() throws -> [String: Double] {
        Dictionary(
            try records().map { (SyncState.key(of: $0.space, user: $0.user), $0.lastChanged) },
            uniquingKeysWith: max
        )
    }

    func modified(of entry: Entry) -> Double { entry.entry.modified ?? 0 }

    /// The secrets and what the space does not say (the expiry, the token endpoint); the space
    /// and user are the key's.
    func holdsTheSame(_ item: Entry, _ otherItem: Entry) -> Bool {
        let (entry, other) = (item.entry, otherItem.entry)
        return entry.password == other.password && entry.expires == other.expires
            && entry.refreshToken == other.refreshToken
            && (entry.refreshToken == nil || entry.tokenRefresh == other.tokenRefresh)
    }

    func encoded(_ local: Entry, keeping stored: Entry?) throws -> String {
        var written = local.entry
        written.otherLines = stored?.entry.otherLines ?? []
        do {
            return try written.encoded()
        } catch {
            throw SyncSkip(description: error.description)
        }
    }

    /// Stored with the time of the change it copies: a later change here or there still wins
    /// over it, whenever this sync ran.
    func save(_ item: Entry) throws {
        let entry = item.entry
        try client.saveCredentials([
            CredentialWrite(
                space: item.space,
                user: item.user,
                password: entry.password,
                expires: entry.expires,
                refreshToken: entry.refreshToken,
                tokenRefresh: entry.refreshToken == nil ? nil : entry.tokenRefresh,
                modified: entry.modified
            )
        ])
    }

    func remove(_ local: Entry) throws {
        try client.removeCredential(user: local.user, for: local.space)
    }

    func absenceIsRemoval(of stored: Entry) -> Bool { true }

    func isDead(_ stored: Entry) -> Bool { false }
}
