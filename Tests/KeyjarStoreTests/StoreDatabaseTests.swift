import Foundation
import KeyjarCore
import KeyjarStore
import KeyjarTestSupport
import Testing

/// A fresh directory for one test's database files, removed afterwards.
final class TemporaryDirectory {
    let url: URL

    init() throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("keyjar-store-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(at: url) }

    func path(_ name: String) -> String { url.appendingPathComponent(name).path }
}

/// Runs Python's sqlite3 module on a database file: an independent reader and writer.
@discardableResult
func python(_ script: String, _ arguments: String...) async throws -> String {
    try await runCommand("/usr/bin/env", ["python3", "-c", script] + arguments).output
        .trimmingCharacters(in: .whitespacesAndNewlines)
}

let storeNow = Date(timeIntervalSince1970: 1_767_225_600)

func sampleCookie(_ name: String, value: String = "v", domain: String = "example.com") -> Cookie {
    Cookie(
        name: name,
        value: value,
        domain: domain,
        hostOnly: false,
        path: "/",
        expires: storeNow.addingTimeInterval(3600),
        secure: true,
        httpOnly: true,
        sameSite: .lax,
        creation: storeNow,
        lastAccess: storeNow.addingTimeInterval(1.5)
    )
}

struct StoreDatabaseTests {
    static let repositoryRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()

    @Test func migratedSchemaMatchesTheGoldenDump() throws {
        let directory = try TemporaryDirectory()
        let database = try StoreDatabase(path: directory.path("store.sqlite3"))
        let dump = try database.schemaDump()
        let golden = Self.repositoryRoot.appendingPathComponent("Schemas/store.sql")
        if ProcessInfo.processInfo.environment["KEYJAR_UPDATE_SCHEMA"] == "1" {
            // Regenerating is never a pass: the next run, without the variable, checks it.
            try dump.write(to: golden, atomically: true, encoding: .utf8)
            Issue.record("Schemas/store.sql was rewritten; review the diff and run again without KEYJAR_UPDATE_SCHEMA")
            return
        }
        #expect(
            dump == (try String(contentsOf: golden, encoding: .utf8)),
            "run with KEYJAR_UPDATE_SCHEMA=1 to regenerate"
        )
    }

    @Test func usesWALWithNormalSynchronousAndNoAutomaticCheckpoints() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("store.sqlite3")
        let database = try StoreDatabase(path: path)
        // The journal mode is the file's; another process (Python) reads it there.
        #expect(
            try await python(
                "import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute('PRAGMA journal_mode').fetchone()[0])",
                path
            ) == "wal"
        )
        // The other two belong to keyjard's own writer connection. 1 = NORMAL (2 would be FULL).
        #expect(try database.writerPragma("synchronous") == "1")
        #expect(try database.writerPragma("wal_autocheckpoint") == "0")
    }

    @Test func refusesADatabaseFromTheFutureAndLeavesItUntouched() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("store.sqlite3")
        try await python(
            "import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); c.execute('PRAGMA user_version=99'); c.execute('CREATE TABLE future(x)'); c.commit()",
            path
        )
        let before = try Data(contentsOf: URL(fileURLWithPath: path))
        #expect(throws: StoreError(code: .futureSchema, message: "")) { try StoreDatabase(path: path) }
        do {
            _ = try StoreDatabase(path: path)
        } catch let error as StoreError {
            #expect(error.message.contains("schema version 99"))
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before)
    }

    @Test func cookieChangesPersistAcrossReopen() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("store.sqlite3")
        do {
            let database = try StoreDatabase(path: path)
            let a = sampleCookie("a")
            let b = sampleCookie("b")
            var b2 = b
            b2.value = "updated"
            try database.commit([.cookies([.added(a), .added(b)])], now: storeNow)
            try database.commit([.cookies([.replaced(old: b, new: b2), .removed(a, cause: .deleted)])], now: storeNow)
        }
        let reopened = try StoreDatabase(path: path)
        let snapshot = try reopened.loadSnapshot()
        var expected = sampleCookie("b")
        expected.value = "updated"
        #expect(snapshot.cookies == [expected])
        #expect(snapshot.sequence == 2)
    }

    @Test func policyAndDomainRulesPersist() throws {
        let directory = try TemporaryDirectory()
        let database = try StoreDatabase(path: directory.path("store.sqlite3"))
        #expect(try database.loadSnapshot().policy == CookiePolicy())
        let policy = CookiePolicy(
            acceptPolicy: .noThirdParty,
            domainRules: ["ads.com": .block, "news.org": .sessionOnly]
        )
        try database.commit([.policy(policy)])
        #expect(try database.loadSnapshot().policy == policy)
        try database.commit([.policy(CookiePolicy(acceptPolicy: .always))])
        #expect(try database.loadSnapshot().policy == CookiePolicy(acceptPolicy: .always))
    }

    /// Where the passwords are: none recorded at first, then the last one recorded, after a reopen.
    @Test func theSecretsBackendRecordPersists() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("store.sqlite3")
        #expect(try StoreDatabase(path: path).secretsBackend() == nil)
        for backend: StoreDatabase.SecretsBackend in [
            .secretService, .encrypted(path: "/h/secrets.sealed"), .file(path: "/h/s p.json"),
        ] {
            try StoreDatabase(path: path).recordSecretsBackend(backend)
            #expect(try StoreDatabase(path: path).secretsBackend() == backend)
        }
    }

    @Test func credentialMetadataKeepsOneDefaultPerSpace() throws {
        let directory = try TemporaryDirectory()
        let database = try StoreDatabase(path: directory.path("store.sqlite3"))
        let space = ProtectionSpace(
            host: "example.com",
            protocol: "https",
            realm: "r",
            authenticationMethod: .httpBasic
        )
        let otherRealm = ProtectionSpace(
            host: "example.com",
            protocol: "https",
            realm: nil,
            authenticationMethod: .httpBasic
        )
        func record(_ user: String, _ space: ProtectionSpace, isDefault: Bool) -> CredentialRecord {
            CredentialRecord(space: space, user: user, persistence: .permanent, isDefault: isDefault, created: 1)
        }
        let events = try database.commit([
            .saveCredential(record("alice", space, isDefault: true)),
            .saveCredential(record("bob", space, isDefault: false)),
            .saveCredential(record("alice", otherRealm, isDefault: true)),
        ])
        #expect(events.map(\.sequence) == [1, 2, 3])
        #expect(
            events[0].event
                == .credentials(changes: [
                    CredentialChange(
                        kind: .added,
                        space: space,
                        user: "alice",
                        record: record("alice", space, isDefault: true)
                    ),
                    CredentialChange(kind: .defaultChanged, space: space, user: "alice"),
                ])
        )
        try database.commit([.setDefaultCredential(space, user: "bob")])
        let records = try database.loadSnapshot().credentials
        #expect(records.count == 3)
        #expect(Set(records.filter(\.isDefault).map { "\($0.user)@\($0.space.realm ?? "-")" }) == ["bob@r", "alice@-"])
        // Saving again is an update, and does not duplicate.
        let again = try database.commit([.saveCredential(record("bob", space, isDefault: false))])
        #expect(
            again.first?.event
                == .credentials(changes: [
                    // The record as stored: still the default it was made above.
                    CredentialChange(
                        kind: .updated,
                        space: space,
                        user: "bob",
                        record: record("bob", space, isDefault: true)
                    )
                ])
        )
        #expect(try database.loadSnapshot().credentials.first { $0.user == "bob" }?.isDefault == true)
        // Removing reports once; removing again changes nothing and logs nothing.
        #expect(try database.commit([.removeCredential(space, user: "bob")]).count == 1)
        #expect(try database.commit([.removeCredential(space, user: "bob")]).isEmpty)
        #expect(throws: StoreError.self) { try database.commit([.setDefaultCredential(space, user: "nobody")]) }
        var session = record("carol", space, isDefault: false)
        session.persistence = .forSession
        #expect(throws: StoreError.self) { try database.commit([.saveCredential(session)]) }
    }

    @Test func changeLogReplaysExactlyWhatWasMissed() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("store.sqlite3")
        let database = try StoreDatabase(path: path)
        for index in 0..<5 { try database.commit([.cookies([.added(sampleCookie("c\(index)"))])]) }
        let missed = try #require(try database.events(after: 2))
        #expect(missed.map(\.sequence) == [3, 4, 5])
        #expect(missed.first?.event == .cookies(changes: [.added(sampleCookie("c2"))]))
        #expect(try database.events(after: 5) == [])
        #expect(try database.events(after: 99) == nil)  // from another database: take a snapshot
        // Sequence numbers continue after a restart.
        let reopened = try StoreDatabase(path: path)
        #expect(try reopened.commit([.policy(CookiePolicy(acceptPolicy: .never))]).first?.sequence == 6)
    }

    @Test func trimmedChangeLogAsksForASnapshot() throws {
        let directory = try TemporaryDirectory()
        let database = try StoreDatabase(path: directory.path("store.sqlite3"), changeLogLimit: 10)
        for index in 0..<300 { try database.commit([.cookies([.added(sampleCookie("c\(index % 7)"))])]) }
        #expect(try database.events(after: 1) == nil)
        #expect(try database.events(after: 295)?.map(\.sequence) == [296, 297, 298, 299, 300])
    }

    @Test func anEventTooLargeToLogAsksForASnapshotButIsStillNumbered() throws {
        // Given a log that keeps events of at most 2,000 bytes
        let directory = try TemporaryDirectory()
        let database = try StoreDatabase(path: directory.path("store.sqlite3"), largestLoggedEvent: 2_000)
        try database.commit([.cookies([.added(sampleCookie("small"))])])
        // When one write changes many cookies
        let bulk = (0..<50).map { CookieChange.added(sampleCookie("bulk\($0)")) }
        let events = try database.commit([.cookies(bulk)])
        try database.commit([.cookies([.added(sampleCookie("after"))])])
        // Then its subscribers still get the whole event, numbered like any other...
        #expect(events.map(\.sequence) == [2])
        #expect(events.first?.event == .cookies(changes: bulk))
        #expect(events.first.map { $0.json.utf8.count > 2_000 } == true)
        // ...but a client that missed it is sent a snapshot, and one that saw it replays the rest.
        #expect(try database.events(after: 1) == nil)
        #expect(try database.events(after: 2)?.map(\.sequence) == [3])
        #expect(try database.loadSnapshot().cookies.count == 52)
    }

    @Test func aChangeLogEntryOfAnotherFormatAsksForASnapshot() async throws {
        // Given a log whose middle entry was written in a format this build does not know
        let directory = try TemporaryDirectory()
        let path = directory.path("store.sqlite3")
        let database = try StoreDatabase(path: path)
        for index in 0..<3 { try database.commit([.cookies([.added(sampleCookie("c\(index)"))])]) }
        try await python(
            "import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); c.execute('UPDATE change_log SET format = 7 WHERE sequence = 2'); c.commit()",
            path
        )
        // Then a reader that missed it takes a snapshot, and one past it replays the rest
        #expect(try database.events(after: 1) == nil)
        #expect(try database.events(after: 2)?.map(\.sequence) == [3])
        #expect(
            try await python(
                "import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute('SELECT group_concat(format) FROM change_log').fetchone()[0])",
                path
            ) == "2,7,2"
        )
    }

    @Test func aVersion1LogIsMigratedWithItsFormatRecorded() async throws {
        // Given a database as schema version 1 wrote it: no format column, the compacted marker
        // in the event text
        let directory = try TemporaryDirectory()
        let path = directory.path("store.sqlite3")
        do {
            let database = try StoreDatabase(path: path)
            try database.commit([.cookies([.added(sampleCookie("a"))])])
            try database.commit([.cookies([.added(sampleCookie("b"))])])
        }
        try await python(
            """
            import sqlite3,sys
            c=sqlite3.connect(sys.argv[1])
            c.execute('ALTER TABLE change_log DROP COLUMN format')
            for column in ['modified', 'password_missing_since', 'token_endpoint', 'client_id', 'revoked', 'has_refresh_token', 'expires']:
                c.execute('ALTER TABLE credential DROP COLUMN ' + column)
            c.execute('DROP TABLE pending_secret_write')
            c.execute('DROP TABLE secrets_backend')
            c.execute('DROP TABLE secrets_left_behind')
            c.execute("INSERT INTO change_log (event, recorded) VALUES ('{\\"compacted\\":{}}', 0)")
            c.execute('PRAGMA user_version = 1')
            c.commit()
            """,
            path
        )
        // When this build opens it and logs one more change
        let migrated = try StoreDatabase(path: path)
        try migrated.commit([.cookies([.added(sampleCookie("c"))])])
        // Then the old entries are version 1, the marker became a compacted entry, and a reader
        // that missed the compacted one takes a snapshot
        let formats = try await python(
            "import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute(\"SELECT group_concat(format || ':' || (length(event) > 0)) FROM change_log\").fetchone()[0])",
            path
        )
        #expect(formats == "1:1,1:1,0:0,2:1")
        #expect(try migrated.events(after: 2) == nil)
        #expect(try migrated.events(after: 3)?.map(\.sequence) == [4])
        // ...and the version-1 entries replay as they were written
        try await python(
            "import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); c.execute('DELETE FROM change_log WHERE format = 0'); c.commit()",
            path
        )
        let replayed = try #require(try migrated.events(after: 0))
        #expect(replayed.map(\.sequence) == [1, 2, 4])
        #expect(replayed.first?.event == .cookies(changes: [.added(sampleCookie("a"))]))
    }

    @Test func walFramesCountsTheWALAndACheckpointLetsItStartOver() throws {
        let directory = try TemporaryDirectory()
        let database = try StoreDatabase(path: directory.path("store.sqlite3"))
        for index in 0..<300 { try database.commit([.cookies([.added(sampleCookie("c\(index)"))])]) }
        let framesBefore = database.walFrames
        #expect(framesBefore >= 300)
        try database.commit([.cookies([.added(sampleCookie("no-checkpoint"))])])
        #expect(database.walFrames > framesBefore, "without a checkpoint the WAL only grows")
        // (Under a stream of writes a passive pass never reaches the end, and only a
        // restarting one starts the WAL over; on its own, either lets the next commit do it.)
        try database.checkpoint(.restart)
        try database.commit([.cookies([.added(sampleCookie("after-restart"))])])
        #expect(database.walFrames < 10)
        #expect(try database.loadSnapshot().cookies.count == 302)
    }

    @Test func checkpointEmptiesTheWAL() throws {
        let directory = try TemporaryDirectory()
        let database = try StoreDatabase(path: directory.path("store.sqlite3"))
        for index in 0..<50 { try database.commit([.cookies([.added(sampleCookie("c\(index)"))])]) }
        #expect(try database.checkpoint() == 0)
        try database.checkpoint(.truncate)
        let wal = try FileManager.default.attributesOfItem(atPath: directory.path("store.sqlite3-wal"))
        #expect((wal[.size] as? Int) == 0)
    }

    /// What a killed keyjard left in the WAL goes into the database when the next one opens it,
    /// and the WAL file is emptied: killed more often than its checkpointer runs, keyjards would
    /// otherwise pass an ever longer WAL on until it alone filled the disk (seen in the stress
    /// run: a 64 MiB WAL on a 64 MiB file system, the database still 4 KiB).
    @Test func openingCheckpointsWhatTheLastKeyjardLeftInTheWAL() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("store.sqlite3")
        // The first "keyjard" writes and never checkpoints or closes (as if killed).
        let killed = try StoreDatabase(path: path)
        for index in 0..<200 { try killed.commit([.cookies([.added(sampleCookie("c\(index)"))])]) }
        let left = try FileManager.default.attributesOfItem(atPath: path + "-wal")[.size] as? Int ?? 0
        let before = try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int ?? 0
        #expect(left > 100_000, "the WAL holds the writes: \(left) bytes")

        let next = try StoreDatabase(path: path)
        #expect(try FileManager.default.attributesOfItem(atPath: path + "-wal")[.size] as? Int == 0)
        let database = try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int ?? 0
        #expect(database > before + 50_000, "the writes are in the database file: \(before) → \(database) bytes")
        #expect(try next.loadSnapshot().cookies.count == 200)
        _ = killed
    }
}
