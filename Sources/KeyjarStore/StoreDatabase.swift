public import Foundation
public import KeyjarCore
import CMallocInfo
import KeyjarCodec
import Synchronization

/// keyjard's SQLite database: cookies, the accept policy and domain rules, credential metadata
/// (never passwords), and the log of sequenced changes that clients resynchronise from.
///
/// keyjard is its only writer. Every write commits in one transaction together with its change
/// log entries, so a change is acknowledged exactly when it is durable and numbered. The
/// database runs in WAL mode with `synchronous=NORMAL` (a committed transaction survives a crash
/// of keyjard; power loss may lose the last commits), automatic checkpoints off, and
/// ``checkpoint()`` run from a separate connection off the commit path.
///
/// ```swift
/// let database = try StoreDatabase(path: "/tmp/store.sqlite3")
/// let events = try database.commit([.cookies([.added(cookie)])])
/// let snapshot = try database.loadSnapshot()
/// ```
public final class StoreDatabase: @unchecked Sendable {
    // @unchecked: the two connections are only ever used under their own locks (`withWriter`,
    // `checkpoint`); everything else is immutable or atomic.
    public let path: String
    /// The schema version this build writes; a database with a higher one is refused.
    public static var schemaVersion: Int64 { migrations.last?.version ?? 0 }
    /// How many change-log entries are kept for clients that resynchronise by sequence number.
    public let changeLogLimit: Int

    private let writer: SQLiteConnection
    private let writerLock = NSLock()
    let checkpointer: SQLiteConnection
    let checkpointerLock = NSLock()
    let walFrameCounter = WALFrameCounter()
    let checkpointRunning = Atomic<Bool>(false)
    /// When the last commit ended (``monotonicNow()``): how long writing has paused.
    let lastCommit = Atomic<UInt64>(StoreDatabase.monotonicNow())
    private let commitsSinceTrim = Atomic<Int>(0)

    /// The largest event JSON kept in the change log. A bigger change (an import) is logged as
    /// ``ChangeLogFormat/compacted`` instead: a client that missed it resynchronises from a
    /// snapshot, which costs it no more than replaying the event, and the log cannot grow by
    /// megabytes per write.
    public let largestLoggedEvent: Int

    /// Opens (creating if needed) and migrates the database at `path`.
    /// - Throws: ``StoreError`` with code `.futureSchema` when a newer keyjard wrote it.
    public init(path: String, changeLogLimit: Int = 10_000, largestLoggedEvent: Int = 1 << 20) throws {
        self.path = path
        self.changeLogLimit = changeLogLimit
        self.largestLoggedEvent = largestLoggedEvent
        let connection = try Self.wrap { try SQLiteConnection(path: path) }
        connection.retryWhenBusy()
        // The version is checked before anything else: even switching to WAL rewrites the file
        // header of a database this build must not touch.
        try Self.checkVersion(connection, path: path)
        try Self.wrap {
            try connection.execute("PRAGMA journal_mode = WAL")
            try connection.execute("PRAGMA synchronous = NORMAL")
            try connection.execute("PRAGMA wal_autocheckpoint = 0")
            // When a checkpoint lets the writer start the WAL over, the file is cut back to this.
            try connection.execute("PRAGMA journal_size_limit = \(Self.walBytesKept)")
        }
        connection.countWALFrames(into: walFrameCounter)
        try Self.migrate(connection, path: path)
        writer = connection
        checkpointer = try Self.wrap { try SQLiteConnection(path: path) }
        // A restarting checkpoint waits for the writer's current transaction (tens of µs).
        try Self.wrap { try checkpointer.execute("PRAGMA busy_timeout = 1000") }
    }

    static func wrap<T>(_ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let error as SQLiteError {
            throw StoreError(code: .database, message: error.description)
        }
    }

    private static func checkVersion(_ connection: SQLiteConnection, path: String) throws {
        let current = try wrap { try connection.integerPragma("user_version") }
        guard current <= schemaVersion else {
            throw StoreError(
                code: .futureSchema,
                message: "\(path) has schema version \(current), newer than this keyjard supports (\(schemaVersion)); "
                    + "it was left untouched: run a newer keyjard or pass another --database")
        }
    }

    private static func migrate(_ connection: SQLiteConnection, path: String) throws {
        let current = try wrap { try connection.integerPragma("user_version") }
        for migration in migrations where migration.version > current {
            try wrap {
                try connection.transaction {
                    try connection.execute(migration.sql)
                    try connection.execute("PRAGMA user_version = \(migration.version)")
                }
            }
        }
    }

    /// Runs `body` on the writer connection, mapping SQLite failures to ``StoreError``.
    private func withWriter<T>(_ body: (SQLiteConnection) throws -> T) throws -> T {
        try writerLock.withLock {
            // A statement left on a row holds a read snapshot that stops checkpoints; reset all.
            defer { writer.resetStatements() }
            return try Self.wrap { try body(writer) }
        }
    }

    // MARK: - Reading

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
                cookies: try Self.readCookies(connection), policy: try Self.readPolicy(connection),
                credentials: try Self.readCredentials(connection), sequence: try Self.latestSequence(connection))
        }
    }

    public func credentialRecords() throws -> [CredentialRecord] { try withWriter { try Self.readCredentials($0) } }

    public func latestSequence() throws -> UInt64 { try withWriter { try Self.latestSequence($0) } }

    private static func latestSequence(_ connection: SQLiteConnection) throws -> UInt64 {
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

    private static func readCookies(_ connection: SQLiteConnection) throws -> [Cookie] {
        var cookies: [Cookie] = []
        try readCookies(connection) { cookies.append($0) }
        return cookies
    }

    private static func readCookies(_ connection: SQLiteConnection, into body: (Cookie) throws -> Void) throws {
        let statement = try connection.statement(
            "SELECT name, value, domain, host_only, path, expires, secure, http_only, same_site, creation, last_access"
                + " FROM cookie")
        while try statement.step() {
            try body(
                Cookie(
                    name: statement.text(0), value: statement.text(1), domain: statement.text(2),
                    hostOnly: statement.bool(3), path: statement.text(4),
                    expires: statement.optionalDouble(5).map(Date.init(timeIntervalSince1970:)),
                    secure: statement.bool(6), httpOnly: statement.bool(7),
                    sameSite: SameSite(rawValue: statement.text(8)) ?? .unspecified,
                    creation: Date(timeIntervalSince1970: statement.double(9)),
                    lastAccess: Date(timeIntervalSince1970: statement.double(10))))
        }
    }

    private static func readPolicy(_ connection: SQLiteConnection) throws -> CookiePolicy {
        var policy = CookiePolicy()
        let global = try connection.statement("SELECT policy FROM accept_policy WHERE id = 1")
        if try global.step(), let accept = CookieAcceptPolicy(rawValue: global.text(0)) { policy.acceptPolicy = accept }
        let rules = try connection.statement("SELECT domain, action FROM domain_rule")
        while try rules.step() {
            if let action = CookieDomainAction(rawValue: rules.text(1)) { policy.domainRules[rules.text(0)] = action }
        }
        return policy
    }

    private static func readCredentials(_ connection: SQLiteConnection) throws -> [CredentialRecord] {
        let statement = try connection.statement(
            "SELECT host, port, protocol, realm, auth_method, proxy_type, user, is_default, created, last_used"
                + " FROM credential")
        var records: [CredentialRecord] = []
        while try statement.step() {
            let space = ProtectionSpace(
                host: statement.text(0), port: Int(statement.int64(1)), protocol: statement.text(2),
                realm: statement.isNull(3) ? nil : statement.text(3),
                authenticationMethod: .init(rawValue: statement.text(4)) ?? .default,
                proxyType: .init(rawValue: statement.text(5)) ?? .none)
            records.append(
                CredentialRecord(
                    space: space, user: statement.text(6), persistence: .permanent, isDefault: statement.bool(7),
                    created: statement.double(8), lastUsed: statement.optionalDouble(9)))
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
                "SELECT sequence, event, format FROM change_log WHERE sequence > ? ORDER BY sequence")
            try statement.bind(.integer(Int64(sequence)))
            var events: [SequencedEvent] = []
            while try statement.step() {
                // An entry this build cannot replay (compacted, or written in another format)
                // is caught up with by a snapshot, like a trimmed one.
                guard ChangeLogFormat(rawValue: statement.int64(2)) == .storeEventJSONVersion1 else { return nil }
                do {
                    let event = try StoreEventJSON.decode(statement.text(1).utf8)
                    events.append(SequencedEvent(sequence: UInt64(statement.int64(0)), event: event))
                } catch {
                    throw StoreError(code: .encoding, message: "change log entry \(statement.int64(0)) is unreadable: \(error)")
                }
            }
            return events
        }
    }

    // MARK: - Writing

    /// One write to the store. Each becomes one logged ``StoreEvent`` (when it changes anything).
    public enum Write: Sendable, Hashable {
        case cookies([CookieChange])
        case policy(CookiePolicy)
        /// Saves a permanent credential's metadata; `isDefault` makes it the space's only default.
        case saveCredential(CredentialRecord)
        case removeCredential(ProtectionSpace, user: String)
        case setDefaultCredential(ProtectionSpace, user: String)
        case credentialUsed(ProtectionSpace, user: String, at: Double)
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
                    let format: ChangeLogFormat = compacted ? .compacted : .storeEventJSONVersion1
                    let log = try connection.statement("INSERT INTO change_log (event, format, recorded) VALUES (?, ?, ?)")
                    try log.bind(.text(compacted ? "" : json), .integer(format.rawValue), .real(now.timeIntervalSince1970))
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

    private func trimChangeLog() throws {
        try withWriter { connection in
            let latest = try Self.latestSequence(connection)
            guard latest > UInt64(changeLogLimit) else { return }
            try connection.statement("DELETE FROM change_log WHERE sequence <= ?")
                .bind(.integer(Int64(latest) - Int64(changeLogLimit))).run()
        }
    }

    private static func apply(_ write: Write, _ connection: SQLiteConnection) throws -> StoreEvent? {
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
            try connection.statement(
                "INSERT INTO credential (host, port, protocol, realm, auth_method, proxy_type, user, persistence,"
                    + " is_default, created, last_used) VALUES (?, ?, ?, ?, ?, ?, ?, 'permanent', ?, ?, ?)"
                    + " ON CONFLICT (host, port, protocol, ifnull(realm, ''), auth_method, proxy_type, user)"
                    + " DO UPDATE SET is_default = CASE WHEN excluded.is_default THEN 1 ELSE is_default END")
                .bind(spaceValues(record.space) + [
                    .text(record.user), .bool(record.isDefault), .real(record.created), .optional(record.lastUsed),
                ]).run()
            // A replica learns a new default only from `defaultChanged`, so say it.
            var changes = [CredentialChange(kind: existed ? .updated : .added, space: record.space, user: record.user)]
            if record.isDefault { changes.append(CredentialChange(kind: .defaultChanged, space: record.space, user: record.user)) }
            return .credentials(changes: changes)
        case .removeCredential(let space, let user):
            try connection.statement(credentialFilter("DELETE FROM credential")).bind(spaceValues(space) + [.text(user)]).run()
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
        case .credentialUsed(let space, let user, let time):
            try connection.statement(credentialFilter("UPDATE credential SET last_used = ?"))
                .bind([.real(time)] + spaceValues(space) + [.text(user)]).run()
            return nil
        }
    }

    private static let upsertCookieSQL =
        "INSERT OR REPLACE INTO cookie (name, value, domain, host_only, path, expires, secure, http_only,"
        + " same_site, creation, last_access) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
    private static let deleteCookieSQL = "DELETE FROM cookie WHERE name = ? AND domain = ? AND host_only = ? AND path = ?"

    private static func upsert(_ cookie: Cookie, with statement: SQLiteStatement) throws {
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
        try statement.run()
    }

    private static func delete(_ identity: Cookie.Identity, with statement: SQLiteStatement) throws {
        statement.reset()
        try statement.bind(1, text: identity.name)
        try statement.bind(2, text: identity.domain)
        try statement.bind(3, integer: identity.hostOnly ? 1 : 0)
        try statement.bind(4, text: identity.path)
        try statement.run()
    }

    private static func spaceValues(_ space: ProtectionSpace) -> [SQLiteValue] {
        [
            .text(space.host), .integer(Int64(space.port)), .text(space.protocol), space.realm.map(SQLiteValue.text) ?? .null,
            .text(space.authenticationMethod.rawValue), .text(space.proxyType.rawValue),
        ]
    }

    private static let spaceFilter =
        "host = ? AND port = ? AND protocol = ? AND ifnull(realm, '') = ifnull(?, '') AND auth_method = ? AND proxy_type = ?"

    private static func credentialFilter(_ prefix: String) -> String { prefix + " WHERE " + spaceFilter + " AND user = ?" }

    private static func credentialExists(_ space: ProtectionSpace, user: String, _ connection: SQLiteConnection) throws -> Bool {
        try connection.statement(credentialFilter("SELECT 1 FROM credential")).bind(spaceValues(space) + [.text(user)]).step()
    }

    private static func clearDefaults(_ space: ProtectionSpace, _ connection: SQLiteConnection) throws {
        try connection.statement("UPDATE credential SET is_default = 0 WHERE " + spaceFilter).bind(spaceValues(space)).run()
    }

    /// SQLite's own consistency check of the whole file (`PRAGMA integrity_check`): "ok", or
    /// the problems it found, one a line.
    public func integrityCheck() throws -> String {
        try withWriter { connection in
            let statement = try connection.statement("PRAGMA integrity_check")
            var lines: [String] = []
            while try statement.step() { lines.append(statement.text(0)) }
            return lines.joined(separator: "\n")
        }
    }

    /// A setting of the writer connection as SQLite reports it (`PRAGMA name`), for tests of the
    /// per-connection settings (`synchronous`, `wal_autocheckpoint`) that no other connection sees.
    public func writerPragma(_ name: String) throws -> String {
        try withWriter { connection in
            let statement = try connection.statement("PRAGMA \(name)")
            guard try statement.step() else { return "" }
            return statement.text(0)
        }
    }

    /// The schema as SQLite stores it, for the golden-schema test against `Schemas/store.sql`.
    public func schemaDump() throws -> String {
        try withWriter { connection in
            let statement = try connection.statement(
                "SELECT sql FROM sqlite_master WHERE sql IS NOT NULL AND name NOT LIKE 'sqlite_%' ORDER BY type DESC, name")
            var lines: [String] = []
            while try statement.step() { lines.append(statement.text(0) + ";") }
            return "-- keyjard store schema, version \(Self.schemaVersion) (generated by StoreDatabase.schemaDump)\n"
                + lines.joined(separator: "\n") + "\n"
        }
    }
}
