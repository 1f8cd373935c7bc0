import Foundation
import Glibc
import KeyjarCodec
import KeyjarHTTPCache
import KeyjarPlatform
import KeyjarSQLite

/// The disk tier: `index.sqlite3` (one row per entry) and `bodies/` (one file per body) in a
/// 0700 directory, shared by every process of the application. Used under the cache's lock,
/// but for ``BodyFile``s, which their writer owns. The SQL and the body files' life cycle live
/// here and nowhere else (`Schemas/response-cache.sql` is the golden dump of its schema).
///
/// Several processes, one directory. A body file is immutable once it has its final name (a
/// replacement is a new file), and its writer holds `flock(LOCK_EX)` on it from its creation
/// until the row naming it is committed. A row is only ever committed for a complete file, and
/// a file is only unlinked after the row naming it is deleted (or was never committed), so a
/// row always names a whole file, whenever a process is killed. A reader keeps the descriptor
/// it opened: an eviction or a replacement meanwhile unlinks the name, not what is read. What a
/// killed writer leaves (a file no row names) is collected by `ResponseCache.collectLeftovers()`
/// (with ``leftoverCandidates(present:)`` and ``names(_:)``), which skips every file whose lock
/// is held.
final class DiskIndex {
    let directory: URL
    let bodies: URL
    let connection: SQLiteConnection
    /// The time recorded as an entry's last use.
    private let now: @Sendable () -> Date

    /// The index's schema history, only ever appended (`PRAGMA user_version`). Version 1 is the
    /// first schema, written with IF NOT EXISTS: an index made before versions were kept (at 0,
    /// with the same table) becomes version 1 as it is. Version 2 keeps several variants of a
    /// URL: `key` becomes the variant's key (``CachedEntry/key(for:varyValues:)``: the URL's
    /// key, and for a response with Vary a line feed and its `vary` column), `url_key` the
    /// URL's, indexed to list a URL's variants.
    static let migrations = SQLiteMigrations([
        (
            1,
            """
            CREATE TABLE IF NOT EXISTS entry (
                key TEXT PRIMARY KEY,
                url TEXT NOT NULL,
                status INTEGER NOT NULL,
                headers TEXT NOT NULL,
                vary TEXT NOT NULL,
                request_time REAL NOT NULL,
                response_time REAL NOT NULL,
                storage_policy INTEGER NOT NULL,
                user_info TEXT NOT NULL,
                body_file TEXT NOT NULL,
                body_size INTEGER NOT NULL,
                created REAL NOT NULL,
                last_access REAL NOT NULL
            );
            CREATE INDEX IF NOT EXISTS entry_by_access ON entry (last_access);
            """
        ),
        (
            2,
            """
            ALTER TABLE entry ADD COLUMN url_key TEXT NOT NULL DEFAULT '';
            UPDATE entry SET url_key = key;
            UPDATE entry SET key = key || char(10) || vary WHERE vary <> '{}';
            CREATE INDEX entry_by_url ON entry (url_key);
            """
        ),
    ])

    init(directory: URL, now: @escaping @Sendable () -> Date) throws(ResponseCacheError) {
        self.directory = directory
        self.now = now
        bodies = directory.appendingPathComponent("bodies")
        for path in [directory.path, bodies.path] {
            do {
                try PrivateDirectory.make(path)
            } catch {
                throw ResponseCacheError("the cache directory \(error)")
            }
        }
        let indexPath = directory.appendingPathComponent("index.sqlite3").path
        let start: SQLiteMigrations.Start
        do {
            let descriptor = open(indexPath, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
            if descriptor >= 0 { close(descriptor) }
            connection = try SQLiteConnection(path: indexPath)
            connection.retryWhenBusy()
            try Self.useWAL(connection)
            try connection.execute("PRAGMA synchronous = NORMAL")
            start = try Self.migrations.start(of: connection)
            if case .known = start { try Self.migrations.apply(to: connection) }
        } catch {
            throw ResponseCacheError("cannot open the cache index \(indexPath): \(error)")
        }
        if case .future(let version) = start {
            // Another program's newer layout: this one neither reads nor rewrites it.
            throw ResponseCacheError(
                "the cache index \(indexPath) has schema version \(version), newer than this Keyjar supports "
                    + "(\(Self.migrations.latest)); it was left untouched"
            )
        }
    }

    /// WAL is a property of the file, set by whichever process creates the index. Processes
    /// opening a new index at once can find it locked by that change, and SQLite returns
    /// SQLITE_BUSY for it without calling the busy handler: tried again, for up to ten seconds
    /// (the change itself takes microseconds; a loaded machine may hold its process off).
    private static func useWAL(_ connection: SQLiteConnection) throws {
        var attempt = 0
        while true {
            do {
                try connection.execute("PRAGMA journal_mode = WAL")
                return
            } catch {
                attempt += 1
                guard attempt < 5_000 else { throw error }
                usleep(2_000)
            }
        }
    }

    /// The schema as SQLite stores it, for the golden-schema test against
    /// `Schemas/response-cache.sql`.
    func schemaDump() throws -> String {
        let statement = try connection.statement(
            "SELECT sql FROM sqlite_master WHERE sql IS NOT NULL AND name NOT LIKE 'sqlite_%' ORDER BY type DESC, name"
        )
        var lines: [String] = []
        while try statement.step() { lines.append(statement.text(0) + ";") }
        return
            "-- Keyjar response cache index, version \(Self.migrations.latest) (generated by ResponseCache.schemaDump)\n"
            + lines.joined(separator: "\n") + "\n"
    }

    private func rows(_ sql: String, _ values: SQLiteValue...) throws -> [String] {
        let statement = try connection.statement(sql).bind(values)
        defer { statement.reset() }
        var result: [String] = []
        while try statement.step() { result.append(statement.text(0)) }
        return result
    }

    private func unlinkBodies(_ files: [String]) {
        for file in files { unlink(bodies.appendingPathComponent(file).path) }
    }

    // MARK: Entries

    private static let columns =
        "url, status, headers, vary, request_time, response_time, storage_policy, user_info, body_file, body_size, created"

    /// A row read: its entry, its key and its body file's name.
    struct Row {
        var entry: CachedEntry
        var key: String
        var file: String
    }

    // A statement read from is reset at once: left active, it would hold its read
    // transaction, and a write after another process's would fail (SQLITE_BUSY_SNAPSHOT).
    func entry(_ key: String) -> Row? {
        guard
            let statement = try? connection.statement("SELECT \(Self.columns), key FROM entry WHERE key = ?").bind(
                .text(key)
            )
        else { return nil }
        defer { statement.reset() }
        guard (try? statement.step()) == true, let entry = Self.entry(statement) else { return nil }
        return Row(entry: entry, key: statement.text(11), file: statement.text(8))
    }

    /// Every variant stored for a URL (by its key).
    func variants(_ urlKey: String) -> [Row] {
        guard
            let statement = try? connection.statement("SELECT \(Self.columns), key FROM entry WHERE url_key = ?").bind(
                .text(urlKey)
            )
        else { return [] }
        defer { statement.reset() }
        var found: [Row] = []
        while (try? statement.step()) == true {
            if let entry = Self.entry(statement) {
                found.append(Row(entry: entry, key: statement.text(11), file: statement.text(8)))
            }
        }
        return found
    }

    func url(of row: Row) -> URL { bodies.appendingPathComponent(row.file) }

    func allEntries() -> [(key: String, entry: CachedEntry)] {
        guard
            let statement = try? connection.statement(
                "SELECT \(Self.columns), key FROM entry ORDER BY last_access DESC"
            )
        else { return [] }
        defer { statement.reset() }
        var entries: [(String, CachedEntry)] = []
        while (try? statement.step()) == true {
            if let entry = Self.entry(statement) { entries.append((statement.text(11), entry)) }
        }
        return entries
    }

    private static func entry(_ statement: SQLiteStatement) -> CachedEntry? {
        guard let url = URL(string: statement.text(0)),
            let headers = json(statement.text(2), Self.headerPairs),
            let vary = json(statement.text(3), Self.varyValues),
            let userInfo = json(statement.text(7), Self.userInfo),
            let policy = CacheStoragePolicy(rawValue: Int(statement.int64(6)))
        else { return nil }
        let response = StoredResponse(
            statusCode: Int(statement.int64(1)),
            headers: HTTPHeaderFields(headers.compactMap { $0.count == 2 ? ($0[0], $0[1]) : nil }),
            requestTime: Date(timeIntervalSince1970: statement.double(4)),
            responseTime: Date(timeIntervalSince1970: statement.double(5)),
            varyValues: vary
        )
        return CachedEntry(
            url: url,
            response: response,
            storagePolicy: policy,
            userInfo: userInfo,
            bodySize: Int(statement.int64(9)),
            created: Date(timeIntervalSince1970: statement.double(10))
        )
    }

    /// A JSON column read by `read`; nil when it is not JSON or not of that shape, a row then
    /// being skipped as unreadable (as when a cast of JSONSerialization's objects failed).
    private static func json<Value>(
        _ text: String,
        _ read: (JSONValue) throws(JSONShapeError) -> Value
    ) -> Value? {
        guard let json = JSONReader.parse(Array(text.utf8)) else { return nil }
        return try? read(json)
    }

    /// `headers`: an array of `[name, value]` arrays of strings (one of another length is
    /// skipped by the caller).
    private static func headerPairs(_ json: JSONValue) throws(JSONShapeError) -> [[String]] {
        try json.elements { (pair) throws(JSONShapeError) in
            try pair.elements { (part) throws(JSONShapeError) in try part.decodeString() }
        }
    }

    /// `vary`: an object of field names and the request's values; null, for an absent field,
    /// or any value but a string reads as absent.
    private static func varyValues(_ json: JSONValue) throws(JSONShapeError) -> [String: String?] {
        var values: [String: String?] = [:]
        for (name, value) in try json.members() { values[name] = .some(try? value.decodeString()) }
        return values
    }

    /// `user_info`: an object of strings.
    private static func userInfo(_ json: JSONValue) throws(JSONShapeError) -> [String: String] {
        var info: [String: String] = [:]
        for (key, value) in try json.members() { info[key] = try value.decodeString() }
        return info
    }

    private static func headersJSON(_ headers: HTTPHeaderFields) -> String {
        CachedEntry.columnJSON(.array(headers.fields.map { JSONValue.array([.string($0.name), .string($0.value)]) }))
    }

    private static func userInfoJSON(_ userInfo: [String: String]) -> String {
        CachedEntry.columnJSON(CachedEntry.sortedObject(userInfo.mapValues(JSONValue.string)))
    }

    /// Indexes a complete body (its writer's lock still held) under its variant key, replacing
    /// the entry there was: the row is committed first, then the old body unlinked, then the
    /// new body's lock let go. On failure the new body is removed.
    func insert(_ entry: CachedEntry, body: BodyFile) {
        let key = entry.key
        let lastUse = now().timeIntervalSince1970
        let old: [String]
        do {
            old = try connection.transaction {
                let old = try rows("SELECT body_file FROM entry WHERE key = ?", .text(key))
                try connection.statement(
                    "INSERT OR REPLACE INTO entry (key, url_key, \(Self.columns), last_access) "
                        + "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
                ).bind(
                    .text(key),
                    .text(CachedEntry.key(for: entry.url)),
                    .text(entry.url.absoluteString),
                    .integer(Int64(entry.response.statusCode)),
                    .text(Self.headersJSON(entry.response.headers)),
                    .text(CachedEntry.varyJSON(entry.response.varyValues)),
                    .real(entry.response.requestTime.timeIntervalSince1970),
                    .real(entry.response.responseTime.timeIntervalSince1970),
                    .integer(Int64(entry.storagePolicy.rawValue)),
                    .text(Self.userInfoJSON(entry.userInfo)),
                    .text(body.name),
                    .integer(Int64(entry.bodySize)),
                    .real(entry.created.timeIntervalSince1970),
                    .real(lastUse)
                ).run()
                return old
            }
        } catch {
            body.discard()
            return
        }
        unlinkBodies(old.filter { $0 != body.name })
        body.release()
    }

    /// A validated variant's new fields and times; with `stored`, only while the row still
    /// holds the response with those fields: another process may have replaced it with a new
    /// response (a new body) since it was read, and the old one's fields must not land on it.
    func update(_ key: String, response: StoredResponse, ifStored stored: HTTPHeaderFields? = nil) {
        let condition = stored == nil ? "" : " AND headers = ?"
        var values: [SQLiteValue] = [
            .integer(Int64(response.statusCode)),
            .text(Self.headersJSON(response.headers)),
            .real(response.requestTime.timeIntervalSince1970),
            .real(response.responseTime.timeIntervalSince1970),
            .text(key),
        ]
        if let stored { values.append(.text(Self.headersJSON(stored))) }
        _ = try? connection.statement(
            "UPDATE entry SET status = ?, headers = ?, request_time = ?, response_time = ? WHERE key = ?" + condition
        ).bind(values).run()
    }

    func touch(_ key: String) {
        _ = try? connection.statement("UPDATE entry SET last_access = ? WHERE key = ?").bind(
            .real(now().timeIntervalSince1970),
            .text(key)
        ).run()
    }

    /// Deletes the rows `select` finds (key, then body file) in one transaction, then unlinks
    /// their bodies: a row never names a file already gone.
    private func delete(selecting select: String, _ values: SQLiteValue...) {
        let files: [String]
        do {
            files = try connection.transaction {
                let statement = try connection.statement(select).bind(values)
                var found: [(String, String)] = []
                while try statement.step() { found.append((statement.text(0), statement.text(1))) }
                statement.reset()
                for (key, _) in found {
                    try connection.statement("DELETE FROM entry WHERE key = ?").bind(.text(key)).run()
                }
                return found.map(\.1)
            }
        } catch {
            return
        }
        unlinkBodies(files)
    }

    /// Removes one variant.
    func remove(key: String) {
        delete(selecting: "SELECT key, body_file FROM entry WHERE key = ?", .text(key))
    }

    /// Removes every variant of a URL.
    func remove(urlKey: String) {
        delete(selecting: "SELECT key, body_file FROM entry WHERE url_key = ?", .text(urlKey))
    }

    func removeAll() {
        delete(selecting: "SELECT key, body_file FROM entry")
    }

    func removeEntries(since date: Date) {
        delete(selecting: "SELECT key, body_file FROM entry WHERE created >= ?", .real(date.timeIntervalSince1970))
    }

    func totalSize() -> Int {
        guard let statement = try? connection.statement("SELECT coalesce(sum(body_size), 0) FROM entry") else {
            return 0
        }
        defer { statement.reset() }
        guard (try? statement.step()) == true else { return 0 }
        return Int(statement.int64(0))
    }

    /// Removes the least recently used entries until the bodies fit `capacity`: the rows in one
    /// transaction (another process's eviction at once removes its own choice, never half of
    /// one), then their files.
    func evict(toFit capacity: Int) {
        guard totalSize() > capacity else { return }
        let files: [String]
        do {
            files = try connection.transaction {
                var total = 0
                let sum = try connection.statement("SELECT coalesce(sum(body_size), 0) FROM entry")
                if try sum.step() { total = Int(sum.int64(0)) }
                sum.reset()
                let statement = try connection.statement(
                    "SELECT key, body_file, body_size FROM entry ORDER BY last_access ASC"
                )
                var victims: [(String, String)] = []
                while total > capacity, try statement.step() {
                    victims.append((statement.text(0), statement.text(1)))
                    total -= Int(statement.int64(2))
                }
                statement.reset()
                for (key, _) in victims {
                    try connection.statement("DELETE FROM entry WHERE key = ?").bind(.text(key)).run()
                }
                return victims.map(\.1)
            }
        } catch {
            return
        }
        unlinkBodies(files)
    }
}
