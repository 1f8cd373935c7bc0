import KeyjarSQLite

extension StoreDatabase {
    /// Schema migrations, only ever appended; each runs in its own transaction and sets
    /// `PRAGMA user_version`. `Schemas/store.sql` is the golden dump of the result.
    ///
    /// Every commit writes as few pages as possible: no secondary index on cookies (they are
    /// read whole at start and written by primary key), and no AUTOINCREMENT on the change log
    /// (it would rewrite `sqlite_sequence` each time; sequence numbers stay increasing because
    /// only the oldest entries are ever deleted, and the newest never).
    static let migrations = SQLiteMigrations([
        (
            1,
            """
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
            CREATE TABLE accept_policy (
                id INTEGER PRIMARY KEY CHECK (id = 1),
                policy TEXT NOT NULL
            );
            CREATE TABLE domain_rule (
                domain TEXT PRIMARY KEY NOT NULL,
                action TEXT NOT NULL CHECK (action IN ('allow', 'block', 'sessionOnly'))
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
            CREATE UNIQUE INDEX credential_identity
                ON credential (host, port, protocol, ifnull(realm, ''), auth_method, proxy_type, user);
            CREATE TABLE change_log (
                sequence INTEGER PRIMARY KEY,
                event TEXT NOT NULL,
                recorded REAL NOT NULL
            );
            """
        ),
        (
            2,
            // The change log records the format of each entry (ChangeLogFormat); the entries
            // written before were StoreEventJSON version 1, or the compacted marker.
            """
            ALTER TABLE change_log ADD COLUMN format INTEGER NOT NULL DEFAULT 1 CHECK (format >= 0);
            UPDATE change_log SET format = 0, event = '' WHERE event = '{"compacted":{}}';
            """
        ),
    ])
}
