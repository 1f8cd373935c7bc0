import CMallocInfo
import Foundation
import KeyjarCodec
public import KeyjarCore
import KeyjarSQLite

// Reading: what keyjard loads at start, snapshots, credential metadata, and the change log.
extension StoreDatabase {
    /// Everything a client replica starts from, with the sequence number it is current to.
    public struct Snapshot: Sendable, Hashable {
        public var cookies: [Cookie]
        public var policy: CookiePolicy
        public var credentials: [CredentialRecord]
        public var sequence: UInt64
    }

    public func loadSnapshot() throws -> Snapshot {
        try withWriter { connection in
            Snapshot(
                cookies: try Self.readCookies(connection),
                policy: try Self.readPolicy(connection),
                credentials: try Self.readCredentials(connection),
                sequence: try Self.latestSequence(connection)
            )
        }
    }

    public func credentialRecords() throws -> [CredentialRecord] { try withWriter { try Self.readCredentials($0) } }

    public func latestSequence() throws -> UInt64 { try withWriter { try Self.latestSequence($0) } }

    /// The secret-store writes begun and not ended: those a crash cut short.
    public func pendingSecretWrites() throws -> [SecretWrite] {
        try withWriter { connection in
            let statement = try connection.statement(
                "SELECT host, port, protocol, realm, auth_method, proxy_type, user, operation FROM pending_secret_write"
            )
            var writes: [SecretWrite] = []
            while try statement.step() {
                let operation = SecretWrite.Operation(rawValue: statement.text(7)) ?? .store
                writes.append(
                    SecretWrite(operation, SecretStoreKey(space: Self.space(statement), user: statement.text(6)))
                )
            }
            return writes
        }
    }

    /// When keyjard first found each credential's password missing (``Write/passwordsMissing(_:noticed:)``),
    /// in seconds since 1970, for the credentials whose password has not been found since.
    public func passwordsMissingSince() throws -> [SecretStoreKey: Double] {
        try withWriter { connection in
            let statement = try connection.statement(
                "SELECT host, port, protocol, realm, auth_method, proxy_type, user, password_missing_since"
                    + " FROM credential WHERE password_missing_since IS NOT NULL"
            )
            var since: [SecretStoreKey: Double] = [:]
            while try statement.step() {
                since[SecretStoreKey(space: Self.space(statement), user: statement.text(6))] = statement.double(7)
            }
            return since
        }
    }

    /// The space in a row's first six columns (host, port, protocol, realm, auth_method,
    /// proxy_type), as stored, not canonicalised again: a wildcard space's port 0 and protocol
    /// `*` (`ProtectionSpace(anySchemeAndPortOf:)`) would come back as port 80.
    static func space(_ statement: SQLiteStatement) -> ProtectionSpace {
        ProtectionSpace(
            verbatimHost: statement.text(0),
            port: Int(statement.int64(1)),
            protocol: statement.text(2),
            realm: statement.isNull(3) ? nil : statement.text(3),
            authenticationMethod: .init(rawValue: statement.text(4)) ?? .default,
            proxyType: .init(rawValue: statement.text(5)) ?? .none
        )
    }

    static func latestSequence(_ connection: SQLiteConnection) throws -> UInt64 {
        let statement = try connection.statement("SELECT max(sequence) FROM change_log")
        return try statement.step() ? UInt64(statement.int64(0)) : 0
    }

    /// Hands every stored cookie to `body`, one row at a time: keyjard fills its jar this way
    /// without holding all of them twice (as an array and in the jar) at start-up. Reading
    /// leaves freed row buffers in the heap; they are handed back to the system afterwards.
    public func forEachCookie(_ body: (Cookie) throws -> Void) throws {
        defer { malloc_trim(0) }
        try withWriter { connection in try Self.readCookies(connection, into: body) }
    }

    /// The accept policy and domain rules.
    public func policy() throws -> CookiePolicy { try withWriter { try Self.readPolicy($0) } }

    static func readCookies(_ connection: SQLiteConnection) throws -> [Cookie] {
        var cookies: [Cookie] = []
        try readCookies(connection) { cookies.append($0) }
        return cookies
    }

    static func readCookies(_ connection: SQLiteConnection, into body: (Cookie) throws -> Void) throws {
        let statement = try connection.statement(
            "SELECT name, value, domain, host_only, path, expires, secure, http_only, same_site, creation, last_access,"
                + " partition_key FROM cookie"
        )
        while try statement.step() {
            // '' is an unpartitioned cookie. A key that does not read as one (the CHECK admits any
            // `…://…`) was not written by keyjard: that row is left in the file but not loaded,
            // since loading it unpartitioned would send it to every site.
            var partitionKey: CookiePartitionKey?
            let partitionColumn = statement.text(11)
            if !partitionColumn.isEmpty {
                guard let key = CookiePartitionKey(serialized: partitionColumn) else { continue }
                partitionKey = key
            }
            try body(
                Cookie(
                    name: statement.text(0),
                    value: statement.text(1),
                    domain: statement.text(2),
                    hostOnly: statement.bool(3),
                    path: statement.text(4),
                    expires: statement.optionalDouble(5).map(Date.init(timeIntervalSince1970:)),
                    secure: statement.bool(6),
                    httpOnly: statement.bool(7),
                    sameSite: SameSite(rawValue: statement.text(8)) ?? .unspecified,
                    creation: Date(timeIntervalSince1970: statement.double(9)),
                    lastAccess: Date(timeIntervalSince1970: statement.double(10)),
                    partitionKey: partitionKey
                )
            )
        }
    }

    static func readPolicy(_ connection: SQLiteConnection) throws -> CookiePolicy {
        var policy = CookiePolicy()
        let global = try connection.statement("SELECT policy FROM accept_policy WHERE id = 1")
        if try global.step(), let accept = CookieAcceptPolicy(rawValue: global.text(0)) { policy.acceptPolicy = accept }
        let rules = try connection.statement("SELECT domain, action FROM domain_rule")
        while try rules.step() {
            if let action = CookieDomainAction(rawValue: rules.text(1)) { policy.domainRules[rules.text(0)] = action }
        }
        return policy
    }

    static func readCredentials(
        _ connection: SQLiteConnection,
        where filter: String? = nil,
        _ values: [SQLiteValue] = []
    ) throws -> [CredentialRecord] {
        let statement = try connection.statement(
            "SELECT host, port, protocol, realm, auth_method, proxy_type, user, is_default, created, last_used,"
                + " expires, has_refresh_token, token_endpoint, client_id, revoked, modified FROM credential"
                + (filter.map { " WHERE " + $0 } ?? "")
        )
        _ = try statement.bind(values)
        var records: [CredentialRecord] = []
        while try statement.step() {
            records.append(
                CredentialRecord(
                    space: space(statement),
                    user: statement.text(6),
                    persistence: .permanent,
                    isDefault: statement.bool(7),
                    created: statement.double(8),
                    lastUsed: statement.optionalDouble(9),
                    expires: statement.optionalDouble(10),
                    hasRefreshToken: statement.bool(11),
                    tokenRefresh: statement.isNull(12)
                        ? nil
                        : TokenRefresh(
                            endpoint: statement.text(12),
                            clientID: statement.isNull(13) ? nil : statement.text(13)
                        ),
                    isRevoked: statement.bool(14),
                    modified: statement.optionalDouble(15)
                )
            )
        }
        return records
    }

    /// The logged events after `sequence`, oldest first; nil when entries after it were already
    /// trimmed or one of them was too large to keep (or `sequence` is from another database),
    /// so the caller must take a snapshot.
    public func events(after sequence: UInt64) throws -> [SequencedEvent]? {
        try withWriter { connection in
            let latest = try Self.latestSequence(connection)
            guard sequence <= latest else { return nil }
            if sequence == latest { return [] }
            let oldest = try connection.statement("SELECT min(sequence) FROM change_log")
            guard try oldest.step(), !oldest.isNull(0), UInt64(oldest.int64(0)) <= sequence + 1 else { return nil }
            let statement = try connection.statement(
                "SELECT sequence, event, format FROM change_log WHERE sequence > ? ORDER BY sequence"
            )
            try statement.bind(.integer(Int64(sequence)))
            var events: [SequencedEvent] = []
            while try statement.step() {
                // An entry this build cannot replay (compacted, or written in another format)
                // is caught up with by a snapshot, like a trimmed one.
                guard ChangeLogFormat(rawValue: statement.int64(2))?.isReplayable == true else { return nil }
                do {
                    let event = try StoreEventJSON.decode(statement.text(1).utf8)
                    events.append(SequencedEvent(sequence: UInt64(statement.int64(0)), event: event))
                } catch {
                    throw StoreError(
                        code: .encoding,
                        message: "change log entry \(statement.int64(0)) is unreadable: \(error)"
                    )
                }
            }
            return events
        }
    }
}
