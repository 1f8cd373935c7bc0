import FoundationEssentials
import Keyjar
import KeyjarCodec
import KeyjarCore

/// The cookies of the sites the user named (`keyjar sync --cookies DOMAIN`) as pass entries
/// (``PassCookieEntry``), in the store's `keyjar-cookies` folder; every other cookie stays on
/// its machine. A site is a domain and the names under it: `github.com` syncs the cookies of
/// `github.com` and of `gist.github.com`.
struct SyncedCookies: SyncedKind {
    let client: KeyjarClient
    /// The domains named, canonical (lower-case, no leading dot).
    let sites: [String]

    /// Every cookie key starts with it; a credential key starts with a scheme, which cannot
    /// hold a colon.
    static let keyPrefix = "cookie:\t"

    /// One string per cookie identity.
    static func key(of identity: Cookie.Identity) -> String {
        keyPrefix
            + [
                identity.domain, identity.hostOnly ? "host" : "domain", identity.path, identity.name,
                identity.partitionKey?.serialized ?? "",
            ].joined(separator: "\t")
    }

    /// Whether cookies of `domain` are synced.
    func covers(_ domain: String) -> Bool { Self.covers(domain, sites: sites) }

    static func covers(_ domain: String, sites: [String]) -> Bool {
        sites.contains { Host.domainMatches(domain, $0) }
    }

    /// The domain an entry's folder names (`keyjar-cookies/DOMAIN/NAME`); nil for a path
    /// outside the cookie folder.
    static func folderDomain(of path: String) -> String? {
        let components = path.unicodeScalars.split(separator: "/").map { String(String.UnicodeScalarView($0)) }
        guard components.count == 3, components[0] == PassCookieEntry.folder else { return nil }
        return PassStoreLayout.unescaped(components[1])
    }

    func owns(path: String) -> Bool {
        Self.folderDomain(of: path).map(covers) ?? false
    }

    /// The store's cookie entries of sites not named (any more), which no machine syncs.
    static func unnamedEntries(among entries: [String: String], sites: [String]) -> [String] {
        entries.keys.filter { path in
            folderDomain(of: path).map { !covers($0, sites: sites) } ?? false
        }.sorted()
    }

    func syncs(key: String) -> Bool {
        guard key.hasPrefix(Self.keyPrefix) else { return false }
        let domain = key.dropFirst(Self.keyPrefix.count).prefix { $0 != "\t" }
        return covers(String(domain))
    }

    func read(_ text: String, at path: String) throws -> (key: String, entry: PassCookieEntry)? {
        let entry: PassCookieEntry
        do {
            entry = try PassCookieEntry.read(text)
        } catch {
            throw SyncSkip(description: error.description)
        }
        // An entry whose fields name a site not synced (moved by hand) is left alone.
        guard covers(entry.cookie.domain) else { return nil }
        return (Self.key(of: entry.cookie.identity), entry)
    }

    private func cookies() throws -> [Cookie] {
        var seen: Set<Cookie.Identity> = []
        var found: [Cookie] = []
        // Sites may overlap (`github.com` and `gist.github.com`): each cookie once.
        for site in sites {
            for cookie in try client.cookies(domain: site) where seen.insert(cookie.identity).inserted {
                found.append(cookie)
            }
        }
        return found
    }

    func localItems() throws -> [String: SyncedItem<PassCookieEntry>] {
        var items: [String: SyncedItem<PassCookieEntry>] = [:]
        for cookie in try cookies() {
            // Its last access: when a response last set it here, or a request last sent it.
            let modified = cookie.lastAccess.timeIntervalSince1970
            items[Self.key(of: cookie.identity)] = SyncedItem(
                modified: modified,
                path: PassCookieEntry.path(of: cookie.identity)
            ) { PassCookieEntry(cookie: cookie, modified: modified) }
        }
        return items
    }

    func localChanges() throws -> [String: Double] {
        Dictionary(
            try cookies().map { (Self.key(of: $0.identity), $0.lastAccess.timeIntervalSince1970) },
            uniquingKeysWith: max
        )
    }

    func modified(of entry: PassCookieEntry) -> Double { entry.modified ?? 0 }

    func holdsTheSame(_ entry: PassCookieEntry, _ other: PassCookieEntry) -> Bool {
        entry.holdsTheSame(as: other)
    }

    func encoded(_ local: PassCookieEntry, keeping stored: PassCookieEntry?) throws -> String {
        var written = local
        written.otherLines = stored?.otherLines ?? []
        do {
            return try written.encoded()
        } catch {
            throw SyncSkip(description: error.description)
        }
    }

    /// Stored as a program's cookie (no accept policy: the user asked for this site), with its
    /// creation time, and its time of change as its last access.
    func save(_ entry: PassCookieEntry) throws {
        let outcomes = try client.insertCookies([entry.cookie])
        if let reason = outcomes.first?.rejectionReason {
            throw SyncSkip(description: "Keyjar refused the cookie: \(reason)")
        }
    }

    func remove(_ local: PassCookieEntry) throws {
        try client.deleteCookies([local.cookie.identity])
    }

    /// A session cookie's end came with the end of a login session here: the store's copy
    /// brings it back (a login the user wants on every machine), rather than end it everywhere.
    func absenceIsRemoval(of stored: PassCookieEntry) -> Bool { !stored.cookie.isSession }

    func isDead(_ stored: PassCookieEntry) -> Bool { stored.cookie.isExpired(at: Date()) }
}
