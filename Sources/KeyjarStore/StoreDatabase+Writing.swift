public import Foundation
import KeyjarCodec
public import KeyjarCore
import KeyjarSQLite
import Synchronization

// Writing: every change is one transaction with its change-log entry.
extension StoreDatabase {
    /// One write to the store. Each becomes one logged ``StoreEvent`` (when it changes anything).
    public enum Write: Sendable, Hashable {
        case cookies([CookieChange])
        case policy(CookiePolicy)
        /// Saves a permanent credential's metadata; `isDefault` makes it the space's only default.
        case saveCredential(CredentialRecord)
        case removeCredential(ProtectionSpace, user: String)
        case setDefaultCredential(ProtectionSpace, user: String)
        case credentialUsed(ProtectionSpace, user: String, at: Double)
        /// The token endpoint refused the credential's refresh token: never offered again until
        /// it is saved anew.
        case revokeCredential(ProtectionSpace, user: String)
        /// Secret-store writes about to begin (journalled, so a crash midway is settled at the
        /// next start); no event.
        case beginSecretWrites([SecretWrite])
        /// Secret-store writes settled, committed with the records they go with; no event.
        case endSecretWrites([SecretStoreKey])
        /// The credentials' passwords are gone from the secret store, first found so at
        /// `noticed` (a time already recorded is kept); no event.
        case passwordsMissing([SecretStoreKey], noticed: Double)
        /// The credentials' passwords are in the secret store again; no event.
        case passwordsFound([SecretStoreKey])
    }

    /// A secret-store write of a credential's: its key and whether its secrets are being
    /// stored or removed. The secret itself is never here.
    public struct SecretWrite: Sendable, Hashable {
        public enum Operation: String, Sendable, Hashable {
            case store
            case remove
        }

        public var key: SecretStoreKey
        public var operation: Operation

        public init(_ operation: Operation, _ key: SecretStoreKey) {
            self.key = key
            self.operation = operation
        }
    }

    /// A committed event with its ``StoreEventJSON`` (version ``StoreEventJSON/version``), so
    /// that keyjard encodes it once for the log and for its subscribers.
    public struct LoggedEvent: Sendable, Hashable {
        public var sequence: UInt64
        public var event: StoreEvent
        public var json: String

        public var sequenced: SequencedEvent { SequencedEvent(sequence: sequence, event: event) }
    }

    /// Applies writes in one transaction and logs their events; returns them numbered. A write
    /// is durable (and may be acknowledged) when this returns.
    @discardableResult
    public func commit(_ writes: [Write], now: Date = Date()) throws -> [LoggedEvent] {
        for case .saveCredential(let record) in writes where record.persistence != .permanent {
            throw StoreError(code: .invalidArgument, message: "only permanent credentials are stored by keyjard")
        }
        let changeCount = writes.reduce(0) { count, write in
            if case .cookies(let changes) = write { return count + changes.count }
            return count + 1
        }
        defer { lastCommit.store(Self.monotonicNow(), ordering: .relaxed) }
        let events = try withWriter { connection in
            // A bulk write gets a large page cache for its transaction (so it does not spill
            // to the WAL midway), then gives the memory back.
            let bulk = changeCount > 10_000
            if bulk { try connection.execute("PRAGMA cache_size = -65536") }
            defer {
                if bulk { try? connection.execute("PRAGMA cache_size = -2000; PRAGMA shrink_memory") }
            }
            return try connection.transaction { () -> [LoggedEvent] in
                var events: [LoggedEvent] = []
                for write in writes {
                    guard let event = try Self.apply(write, connection) else { continue }
                    let json = StoreEventJSON.encode(event)
                    let compacted = json.utf8.count > largestLoggedEvent
                    let format: ChangeLogFormat = compacted ? .compacted : .storeEventJSONVersion2
                    let log = try connection.statement(
                        "INSERT INTO change_log (event, format, recorded) VALUES (?, ?, ?)"
                    )
                    try log.bind(
                        .text(compacted ? "" : json),
                        .integer(format.rawValue),
                        .real(now.timeIntervalSince1970)
                    )
                    .run()
                    events.append(LoggedEvent(sequence: UInt64(connection.lastInsertRowID), event: event, json: json))
                }
                return events
            }
        }
        // Trimming is housekeeping after the commit: its failure (a full disk) must not report
        // committed events as failed, which would keep them from their subscribers. It is
        // tried again after the next commit.
        if commitsSinceTrim.add(1, ordering: .relaxed).newValue >= 256, (try? trimChangeLog()) != nil {
            commitsSinceTrim.store(0, ordering: .relaxed)
        }
        return events
    }

    func trimChangeLog() throws {
        try withWriter { connection in
            let latest = try Self.latestSequence(connection)
            guard latest > UInt64(changeLogLimit) else { return }
            try connection.statement("DELETE FROM change_log WHERE sequence <= ?")
                .bind(.integer(Int64(latest) - Int64(changeLogLimit))).run()
        }
    }

    static func apply(_ write: Write, _ connection: SQLiteConnection) throws -> StoreEvent? {
        switch write {
        case .cookies(let changes):
            guard !changes.isEmpty else { return nil }
            // Fetched once per batch: an import runs these 100,000 times.
            let upsert = try connection.statement(upsertCookieSQL)
            let delete = try connection.statement(deleteCookieSQL)
            for change in changes {
                switch change {
                case .added(let cookie), .replaced(_, let cookie): try Self.upsert(cookie, with: upsert)
                case .removed(let cookie, _): try Self.delete(cookie.identity, with: delete)
                }
            }
            return .cookies(changes: changes)
        case .policy(let policy):
            try connection.statement("INSERT OR REPLACE INTO accept_policy (id, policy) VALUES (1, ?)")
                .bind(.text(policy.acceptPolicy.rawValue)).run()
            try connection.execute("DELETE FROM domain_rule")
            for (domain, action) in policy.domainRules {
                try connection.statement("INSERT INTO domain_rule (domain, action) VALUES (?, ?)")
                    .bind(.text(domain), .text(action.rawValue)).run()
            }
            return .policy(policy: policy)
        case .saveCredential(let record):
            let existed = try credentialExists(record.space, user: record.user, connection)
            if record.isDefault { try clearDefaults(record.space, connection) }
            // Saving replaces the token's metadata with the record's (a new password brings its
            // own expiry and refresh token, and clears a revocation); `created` stays the first's.
            try connection.statement(
                "INSERT INTO credential (host, port, protocol, realm, auth_method, proxy_type, user, persistence,"
                    + " is_default, created, last_used, expires, has_refresh_token, token_endpoint, client_id, revoked,"
                    + " modified) VALUES (?, ?, ?, ?, ?, ?, ?, 'permanent', ?, ?, ?, ?, ?, ?, ?, ?, ?)"
                    + " ON CONFLICT (host, port, protocol, ifnull(realm, ''), auth_method, proxy_type, user)"
                    + " DO UPDATE SET is_default = CASE WHEN excluded.is_default THEN 1 ELSE is_default END,"
                    + " expires = excluded.expires, has_refresh_token = excluded.has_refresh_token,"
                    + " token_endpoint = excluded.token_endpoint, client_id = excluded.client_id,"
                    + " revoked = excluded.revoked, password_missing_since = NULL,"
                    + " modified = ifnull(excluded.modified, modified)"
            )
            .bind(
                spaceValues(record.space) + [
                    .text(record.user), .bool(record.isDefault), .real(record.created), .optional(record.lastUsed),
                    .optional(record.expires), .bool(record.hasRefreshToken),
                    .optional(record.tokenRefresh?.endpoint), .optional(record.tokenRefresh?.clientID),
                    .bool(record.isRevoked), .optional(record.modified),
                ]
            ).run()
            // A replica learns a new default only from `defaultChanged`, so say it.
            var changes = [
                CredentialChange(
                    kind: existed ? .updated : .added,
                    space: record.space,
                    user: record.user,
                    record: try readCredential(record.space, user: record.user, connection)
                )
            ]
            if record.isDefault {
                changes.append(CredentialChange(kind: .defaultChanged, space: record.space, user: record.user))
            }
            return .credentials(changes: changes)
        case .removeCredential(let space, let user):
            try connection.statement(credentialFilter("DELETE FROM credential")).bind(
                spaceValues(space) + [.text(user)]
            ).run()
            guard connection.changes > 0 else { return nil }
            return .credentials(changes: [CredentialChange(kind: .removed, space: space, user: user)])
        case .setDefaultCredential(let space, let user):
            guard try credentialExists(space, user: user, connection) else {
                throw StoreError(code: .invalidArgument, message: "no stored credential for \(user) in that space")
            }
            try clearDefaults(space, connection)
            try connection.statement(credentialFilter("UPDATE credential SET is_default = 1"))
                .bind(spaceValues(space) + [.text(user)]).run()
            return .credentials(changes: [CredentialChange(kind: .defaultChanged, space: space, user: user)])
        case .revokeCredential(let space, let user):
            try connection.statement(credentialFilter("UPDATE credential SET revoked = 1"))
                .bind(spaceValues(space) + [.text(user)]).run()
            guard connection.changes > 0 else { return nil }
            return .credentials(changes: [
                CredentialChange(
                    kind: .updated,
                    space: space,
                    user: user,
                    record: try readCredential(space, user: user, connection)
                )
            ])
        case .credentialUsed(let space, let user, let time):
            try connection.statement(credentialFilter("UPDATE credential SET last_used = ?"))
                .bind([.real(time)] + spaceValues(space) + [.text(user)]).run()
            return nil
        case .beginSecretWrites(let writes):
            for write in writes {
                try connection.statement(
                    "INSERT INTO pending_secret_write (host, port, protocol, realm, auth_method, proxy_type, user,"
                        + " operation) VALUES (?, ?, ?, ?, ?, ?, ?, ?)"
                        + " ON CONFLICT (host, port, protocol, ifnull(realm, ''), auth_method, proxy_type, user)"
                        + " DO UPDATE SET operation = excluded.operation"
                )
                .bind(spaceValues(write.key.space) + [.text(write.key.user), .text(write.operation.rawValue)]).run()
            }
            return nil
        case .endSecretWrites(let keys):
            for key in keys {
                try connection.statement(
                    "DELETE FROM pending_secret_write WHERE " + spaceFilter + " AND user = ?"
                )
                .bind(spaceValues(key.space) + [.text(key.user)]).run()
            }
            return nil
        case .passwordsMissing(let keys, let noticed):
            let update = try connection.statement(
                credentialFilter("UPDATE credential SET password_missing_since = ?")
                    + " AND password_missing_since IS NULL"
            )
            for key in keys {
                update.reset()
                try update.bind([.real(noticed)] + spaceValues(key.space) + [.text(key.user)]).run()
            }
            return nil
        case .passwordsFound(let keys):
            let update = try connection.statement(
                credentialFilter("UPDATE credential SET password_missing_since = NULL")
            )
            for key in keys {
                update.reset()
                try update.bind(spaceValues(key.space) + [.text(key.user)]).run()
            }
            return nil
        }
    }

    static let upsertCookieSQL =
        "INSERT OR REPLACE INTO cookie (name, value, domain, host_only, path, expires, secure, http_only,"
        + " same_site, creation, last_access, partition_key) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
    static let deleteCookieSQL =
        "DELETE FROM cookie WHERE name = ? AND domain = ? AND host_only = ? AND path = ? AND partition_key = ?"

    static func upsert(_ cookie: Cookie, with statement: SQLiteStatement) throws {
        statement.reset()
        try statement.bind(1, text: cookie.name)
        try statement.bind(2, text: cookie.value)
        try statement.bind(3, text: cookie.domain)
        try statement.bind(4, integer: cookie.hostOnly ? 1 : 0)
        try statement.bind(5, text: cookie.path)
        try statement.bind(6, real: cookie.expires?.timeIntervalSince1970)
        try statement.bind(7, integer: cookie.secure ? 1 : 0)
        try statement.bind(8, integer: cookie.httpOnly ? 1 : 0)
        try statement.bind(9, text: cookie.sameSite.rawValue)
        try statement.bind(10, real: cookie.creation.timeIntervalSince1970)
        try statement.bind(11, real: cookie.lastAccess.timeIntervalSince1970)
        try statement.bind(12, text: cookie.partitionKey?.serialized ?? "")
        try statement.run()
    }

    static func delete(_ identity: Cookie.Identity, with statement: SQLiteStatement) throws {
        statement.reset()
        try statement.bind(1, text: identity.name)
        try statement.bind(2, text: identity.domain)
        try statement.bind(3, integer: identity.hostOnly ? 1 : 0)
        try statement.bind(4, text: identity.path)
        try statement.bind(5, text: identity.partitionKey?.serialized ?? "")
        try statement.run()
    }

    static func spaceValues(_ space: ProtectionSpace) -> [SQLiteValue] {
        [
            .text(space.host), .integer(Int64(space.port)), .text(space.protocol),
            space.realm.map(SQLiteValue.text) ?? .null,
            .text(space.authenticationMethod.rawValue), .text(space.proxyType.rawValue),
        ]
    }

    static let spaceFilter =
        "host = ? AND port = ? AND protocol = ? AND ifnull(realm, '') = ifnull(?, '') AND auth_method = ? AND proxy_type = ?"

    static func credentialFilter(_ prefix: String) -> String { prefix + " WHERE " + spaceFilter + " AND user = ?" }

    /// The stored record of `user` in `space`, as a change event carries it.
    static func readCredential(
        _ space: ProtectionSpace,
        user: String,
        _ connection: SQLiteConnection
    ) throws
        -> CredentialRecord?
    {
        try readCredentials(connection, where: spaceFilter + " AND user = ?", spaceValues(space) + [.text(user)]).first
    }

    static func credentialExists(_ space: ProtectionSpace, user: String, _ connection: SQLiteConnection) throws -> Bool
    {
        try connection.statement(credentialFilter("SELECT 1 FROM credential")).bind(spaceValues(space) + [.text(user)])
            .step()
    }

    static func clearDefaults(_ space: ProtectionSpace, _ connection: SQLiteConnection) throws {
        try connection.statement("UPDATE credential SET is_default = 0 WHERE " + spaceFilter).bind(spaceValues(space))
            .run()
    }
}
