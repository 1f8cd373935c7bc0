import Foundation
import KeyjarCore
import KeyjarStore
import KeyjarTestSupport
import Testing

/// Partitioned cookies (CHIPS) on disk: the partition key is part of a stored cookie's identity,
/// survives a reopen, and a store of schema version 2 (before partition keys) migrates to it.
struct PartitionedCookieStoreTests {
    static let news = CookiePartitionKey(scheme: "https", site: "news.example")
    static let shop = CookiePartitionKey(scheme: "https", site: "shop.example")

    static func chat(_ value: String, partition: CookiePartitionKey?) -> Cookie {
        var cookie = sampleCookie("chat", value: value, domain: "chat.example")
        cookie.partitionKey = partition
        return cookie
    }

    @Test func cookiesThatDifferOnlyInPartitionAreStoredApartAndReadBackWithTheirKeys() throws {
        // Given the same name, domain and path in two partitions and unpartitioned
        let directory = try TemporaryDirectory()
        let path = directory.path("store.sqlite3")
        do {
            let database = try StoreDatabase(path: path)
            try database.commit([
                .cookies([
                    .added(Self.chat("n", partition: Self.news)), .added(Self.chat("s", partition: Self.shop)),
                    .added(Self.chat("u", partition: nil)),
                ])
            ])
            // When one of them is deleted by its identity
            try database.commit([.cookies([.removed(Self.chat("s", partition: Self.shop), cause: .deleted)])])
        }
        // Then after a reopen the other two are there, each with its own key and value
        let reopened = try StoreDatabase(path: path)
        let stored = try reopened.loadSnapshot().cookies.sorted { $0.value < $1.value }
        #expect(stored.map(\.value) == ["n", "u"])
        #expect(stored.map(\.partitionKey) == [Self.news, nil])
    }

    @Test func theChangeLogReplaysAPartitionedCookieWithItsKey() throws {
        let directory = try TemporaryDirectory()
        let database = try StoreDatabase(path: directory.path("store.sqlite3"))
        try database.commit([.cookies([.added(Self.chat("n", partition: Self.news))])])
        let replayed = try #require(try database.events(after: 0))
        #expect(replayed.map(\.event) == [.cookies(changes: [.added(Self.chat("n", partition: Self.news))])])
    }

    @Test func aSchemaVersion2StoreMigratesAndKeepsItsCookiesUnpartitioned() async throws {
        // Given a store exactly as schema version 2 made it, with a cookie and a logged event
        let directory = try TemporaryDirectory()
        let path = directory.path("store.sqlite3")
        try await python(
            """
            import sqlite3,sys
            c=sqlite3.connect(sys.argv[1])
            c.executescript(sys.argv[2])
            c.execute("INSERT INTO cookie VALUES ('chat','u','chat.example',0,'/',NULL,1,0,'None',1767225600,1767225600)")
            c.execute("INSERT INTO change_log (event, recorded, format) VALUES ('{\\"policy\\":{\\"policy\\":{\\"acceptPolicy\\":\\"always\\",\\"domainRules\\":{}}}}', 0, 1)")
            c.execute('PRAGMA user_version = 2')
            c.commit()
            """,
            path,
            Self.schemaVersion2
        )
        // When this build opens it and stores the same cookie in a partition
        let database = try StoreDatabase(path: path)
        try database.commit([.cookies([.added(Self.chat("n", partition: Self.news))])])
        // Then the old cookie is still there, unpartitioned, beside the partitioned one
        let stored = try database.loadSnapshot().cookies.sorted { $0.value < $1.value }
        #expect(stored.map(\.value) == ["n", "u"])
        #expect(stored.map(\.partitionKey) == [Self.news, nil])
        // ...the old log entry still replays, and the new one is format 2
        #expect(try database.events(after: 0)?.map(\.sequence) == [1, 2])
        let formats = try await python(
            "import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute('SELECT group_concat(format) FROM change_log').fetchone()[0])",
            path
        )
        #expect(formats == "1,2")
        #expect(try database.integrityCheck() == "ok")
    }

    @Test func aRowWithAKeyThatIsNotOneIsNotLoadedAsAnUnpartitionedCookie() async throws {
        // Given a row whose partition key passes the table's CHECK but is no partition key
        let directory = try TemporaryDirectory()
        let path = directory.path("store.sqlite3")
        do {
            let database = try StoreDatabase(path: path)
            try database.commit([.cookies([.added(Self.chat("n", partition: Self.news))])])
        }
        try await python(
            "import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); c.execute(\"UPDATE cookie SET partition_key = 'https://a/b'\"); c.commit()",
            path
        )
        // Then it is not loaded (it would go to every site)
        #expect(try StoreDatabase(path: path).loadSnapshot().cookies.isEmpty)
    }

    /// Schema version 2 as it was released (its golden dump, Schemas/store.sql before partition keys).
    static let schemaVersion2 = """
        -- keyjard store schema, version 2 (generated by StoreDatabase.schemaDump)
        CREATE TABLE accept_policy (
            id INTEGER PRIMARY KEY CHECK (id = 1),
            policy TEXT NOT NULL
        );
        CREATE TABLE change_log (
            sequence INTEGER PRIMARY KEY,
            event TEXT NOT NULL,
            recorded REAL NOT NULL
        , format INTEGER NOT NULL DEFAULT 1 CHECK (format >= 0));
        CREATE TABLE cookie (
            name TEXT NOT NULL,
            value TEXT NOT NULL,
            domain TEXT NOT NULL,
            host_only INTEGER NOT NULL CHECK (host_only IN (0, 1)),
            path TEXT NOT NULL,
            expires REAL,
            secure INTEGER NOT NULL CHECK (secure IN (0, 1)),
            http_only INTEGER NOT NULL CHECK (http_only IN (0, 1)),
            same_site TEXT NOT NULL CHECK (same_site IN ('Strict', 'Lax', 'None', 'Unspecified')),
            creation REAL NOT NULL,
            last_access REAL NOT NULL,
            PRIMARY KEY (name, domain, host_only, path)
        ) WITHOUT ROWID;
        CREATE TABLE credential (
            host TEXT NOT NULL,
            port INTEGER NOT NULL,
            protocol TEXT NOT NULL,
            realm TEXT,
            auth_method TEXT NOT NULL,
            proxy_type TEXT NOT NULL,
            user TEXT NOT NULL,
            persistence TEXT NOT NULL CHECK (persistence = 'permanent'),
            is_default INTEGER NOT NULL CHECK (is_default IN (0, 1)),
            created REAL NOT NULL,
            last_used REAL
        );
        CREATE TABLE domain_rule (
            domain TEXT PRIMARY KEY NOT NULL,
            action TEXT NOT NULL CHECK (action IN ('allow', 'block', 'sessionOnly'))
        ) WITHOUT ROWID;
        CREATE UNIQUE INDEX credential_identity
            ON credential (host, port, protocol, ifnull(realm, ''), auth_method, proxy_type, user);
        """
}
