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
        (
            3,
            // Partitioned cookies (CHIPS): the partition key joins the cookie's identity, so the
            // primary key changes, which SQLite can only do by rebuilding the table (the old one
            // renamed first, so the new one's CREATE statement reads as written). '' is an
            // unpartitioned cookie: a primary-key column of a WITHOUT ROWID table cannot be NULL,
            // and a CHECK keeps a partition key in its `scheme://site` shape. The column is not
            // the last: SQLite 3.40's integrity_check (Debian 12's) reports a false "NULL value"
            // in a WITHOUT ROWID table whose last column is part of its primary key.
            """
            ALTER TABLE cookie RENAME TO cookie_v2;
            CREATE TABLE cookie (
                name TEXT NOT NULL,
                value TEXT NOT NULL,
                domain TEXT NOT NULL,
                host_only INTEGER NOT NULL CHECK (host_only IN (0, 1)),
                path TEXT NOT NULL,
                partition_key TEXT NOT NULL DEFAULT '' CHECK (partition_key = '' OR partition_key LIKE '%://%'),
                expires REAL,
                secure INTEGER NOT NULL CHECK (secure IN (0, 1)),
                http_only INTEGER NOT NULL CHECK (http_only IN (0, 1)),
                same_site TEXT NOT NULL CHECK (same_site IN ('Strict', 'Lax', 'None', 'Unspecified')),
                creation REAL NOT NULL,
                last_access REAL NOT NULL,
                PRIMARY KEY (name, domain, host_only, path, partition_key)
            ) WITHOUT ROWID;
            INSERT INTO cookie (name, value, domain, host_only, path, expires, secure, http_only, same_site,
                creation, last_access)
                SELECT name, value, domain, host_only, path, expires, secure, http_only, same_site,
                    creation, last_access FROM cookie_v2;
            DROP TABLE cookie_v2;
            """
        ),
        (
            4,
            // Tokens: when a credential's password expires, whether an OAuth refresh token is
            // stored beside it in the Secret Service, where Keyjar refreshes it, and whether the
            // token endpoint refused the refresh token (revoked until stored anew).
            """
            ALTER TABLE credential ADD COLUMN expires REAL;
            ALTER TABLE credential ADD COLUMN has_refresh_token INTEGER NOT NULL DEFAULT 0
                CHECK (has_refresh_token IN (0, 1));
            ALTER TABLE credential ADD COLUMN token_endpoint TEXT
                CHECK (token_endpoint IS NULL OR has_refresh_token = 1);
            ALTER TABLE credential ADD COLUMN client_id TEXT;
            ALTER TABLE credential ADD COLUMN revoked INTEGER NOT NULL DEFAULT 0 CHECK (revoked IN (0, 1));
            """
        ),
        (
            5,
            // The secret-store writes keyjard began and has not finished (StoreDatabase.SecretWrite):
            // a crash between a credential's two writes is undone or finished from here at the
            // next start, not left for a repair to guess at. Never a secret: the key alone.
            """
            CREATE TABLE pending_secret_write (
                host TEXT NOT NULL,
                port INTEGER NOT NULL,
                protocol TEXT NOT NULL,
                realm TEXT,
                auth_method TEXT NOT NULL,
                proxy_type TEXT NOT NULL,
                user TEXT NOT NULL,
                operation TEXT NOT NULL CHECK (operation IN ('store', 'remove'))
            );
            CREATE UNIQUE INDEX pending_secret_write_identity
                ON pending_secret_write (host, port, protocol, ifnull(realm, ''), auth_method, proxy_type, user);
            """
        ),
        (
            6,
            // When keyjard first found a credential's password gone from the secret store
            // (another program deleted it): reported with the credential until it is stored
            // again, and logged once, not at every start.
            """
            ALTER TABLE credential ADD COLUMN password_missing_since REAL;
            """
        ),
        (
            7,
            // Where this database's passwords are (StoreDatabase.SecretsBackend): chosen once, at
            // the first start, and kept, so that a keyjard started from another environment (a
            // shell without a session bus) does not look for them elsewhere.
            """
            CREATE TABLE secrets_backend (
                id INTEGER PRIMARY KEY CHECK (id = 1),
                kind TEXT NOT NULL CHECK (kind IN ('secret-service', 'encrypted', 'file')),
                path TEXT CHECK ((kind = 'secret-service') = (path IS NULL))
            );
            -- The store a migration left copies in (id 2): removed after the switch, finished at
            -- the next start if keyjard stopped before.
            CREATE TABLE secrets_left_behind (
                id INTEGER PRIMARY KEY CHECK (id = 2),
                kind TEXT NOT NULL CHECK (kind IN ('secret-service', 'encrypted', 'file')),
                path TEXT CHECK ((kind = 'secret-service') = (path IS NULL))
            );
            """
        ),
        (
            8,
            // When each credential's secret was last stored (CredentialRecord.modified): what
            // `keyjar sync` compares when two machines changed one credential. `created` stays
            // the first store's. NULL for records stored before.
            """
            ALTER TABLE credential ADD COLUMN modified REAL;
            """
        ),
    ])
}
