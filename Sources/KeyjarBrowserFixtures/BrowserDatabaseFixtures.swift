package import Foundation
import KeyjarBrowserCookies
import KeyjarPlatform
import KeyjarSQLite

/// Browser cookie databases written as the browsers write them (their tables' real columns,
/// Chromium's real encryption), as SQL text: for the tests and the benchmark, which need real
/// databases to read, and for a test's other process (the `sqlite3` shell) to run.
package enum BrowserDatabaseFixtures {
    /// How a Chromium value is stored.
    package enum Encryption: Sendable, Hashable {
        case plain
        case v10
        case v11(password: String)
    }

    package struct ChromiumCookie: Sendable, Hashable {
        package var hostKey: String
        package var name: String
        package var value: String
        package var path = "/"
        /// nil: a session cookie.
        package var expires: Date?
        package var creation = Date(timeIntervalSince1970: 1_700_000_000)
        package var secure = false
        package var httpOnly = false
        package var sameSite: Int64 = -1
        package var topFrameSiteKey = ""
        package var encryption = Encryption.plain

        package init(hostKey: String, name: String, value: String) {
            self.hostKey = hostKey
            self.name = name
            self.value = value
        }
    }

    package struct FirefoxCookie: Sendable, Hashable {
        package var host: String
        package var name: String
        package var value: String
        package var path = "/"
        package var expires: Date
        package var creation = Date(timeIntervalSince1970: 1_700_000_000)
        package var secure = false
        package var httpOnly = false
        package var sameSite: Int64 = 0
        package var rawSameSite: Int64 = 0
        package var originAttributes = ""

        package init(host: String, name: String, value: String, expires: Date) {
            self.host = host
            self.name = name
            self.value = value
            self.expires = expires
        }
    }

    /// Chromium's `meta` and `cookies` tables as of `version` (23 and 24 have the same columns).
    package static func chromiumSchema(version: Int) -> String {
        """
        CREATE TABLE meta(key LONGVARCHAR NOT NULL UNIQUE PRIMARY KEY, value LONGVARCHAR);
        INSERT INTO meta VALUES ('version', '\(version)'), ('last_compatible_version', '\(version)');
        CREATE TABLE cookies(creation_utc INTEGER NOT NULL, host_key TEXT NOT NULL,
          top_frame_site_key TEXT NOT NULL, name TEXT NOT NULL, value TEXT NOT NULL,
          encrypted_value BLOB NOT NULL, path TEXT NOT NULL, expires_utc INTEGER NOT NULL,
          is_secure INTEGER NOT NULL, is_httponly INTEGER NOT NULL, last_access_utc INTEGER NOT NULL,
          has_expires INTEGER NOT NULL, is_persistent INTEGER NOT NULL, priority INTEGER NOT NULL,
          samesite INTEGER NOT NULL, source_scheme INTEGER NOT NULL, source_port INTEGER NOT NULL,
          last_update_utc INTEGER NOT NULL, source_type INTEGER NOT NULL,
          has_cross_site_ancestor INTEGER NOT NULL,
          UNIQUE (host_key, top_frame_site_key, has_cross_site_ancestor, name, path, source_scheme, source_port));

        """
    }

    /// One row, its value encrypted as the browser would for `version`.
    package static func chromiumInsert(_ cookie: ChromiumCookie, version: Int) throws -> String {
        var plain = cookie.value
        var encrypted: [UInt8] = []
        let hostKey = version >= 24 ? cookie.hostKey : nil
        switch cookie.encryption {
        case .plain: break
        case .v10:
            plain = ""
            encrypted = try ChromiumCookieDecryptor.encrypt(
                Array(cookie.value.utf8),
                password: "peanuts",
                version: "v10",
                hostKey: hostKey
            )
        case .v11(let password):
            plain = ""
            encrypted = try ChromiumCookieDecryptor.encrypt(
                Array(cookie.value.utf8),
                password: password,
                version: "v11",
                hostKey: hostKey
            )
        }
        let creation = chromiumTime(cookie.creation)
        let expires = cookie.expires.map(chromiumTime) ?? 0
        let persistent = cookie.expires == nil ? 0 : 1
        return """
            INSERT OR REPLACE INTO cookies VALUES (\(creation), \(quoted(cookie.hostKey)), \(quoted(cookie.topFrameSiteKey)),
              \(quoted(cookie.name)), \(quoted(plain)), X'\(Hex.encode(encrypted))', \(quoted(cookie.path)), \(expires),
              \(cookie.secure ? 1 : 0), \(cookie.httpOnly ? 1 : 0), \(creation), \(persistent), \(persistent), 1,
              \(cookie.sameSite), 2, 443, \(creation), 0, 0);

            """
    }

    /// Firefox's `moz_cookies` with `PRAGMA user_version` set: expiry in seconds before 16.
    package static func firefoxSchema(userVersion: Int) -> String {
        """
        PRAGMA user_version = \(userVersion);
        CREATE TABLE moz_cookies (id INTEGER PRIMARY KEY, originAttributes TEXT NOT NULL DEFAULT '',
          name TEXT, value TEXT, host TEXT, path TEXT, expiry INTEGER, lastAccessed INTEGER,
          creationTime INTEGER, isSecure INTEGER, isHttpOnly INTEGER, inBrowserElement INTEGER DEFAULT 0,
          sameSite INTEGER DEFAULT 0, rawSameSite INTEGER DEFAULT 0, schemeMap INTEGER DEFAULT 0,
          isPartitionedAttributeSet INTEGER DEFAULT 0,
          CONSTRAINT moz_uniqueid UNIQUE (name, host, path, originAttributes));

        """
    }

    package static func firefoxInsert(_ cookie: FirefoxCookie, userVersion: Int) -> String {
        let seconds = cookie.expires.timeIntervalSince1970
        let expiry = userVersion >= 16 ? Int64(seconds * 1000) : Int64(seconds)
        let creation = Int64(cookie.creation.timeIntervalSince1970 * 1_000_000)
        return """
            INSERT OR REPLACE INTO moz_cookies (originAttributes, name, value, host, path, expiry, lastAccessed,
              creationTime, isSecure, isHttpOnly, sameSite, rawSameSite, schemeMap)
            VALUES (\(quoted(cookie.originAttributes)), \(quoted(cookie.name)), \(quoted(cookie.value)),
              \(quoted(cookie.host)), \(quoted(cookie.path)), \(expiry), \(creation), \(creation),
              \(cookie.secure ? 1 : 0), \(cookie.httpOnly ? 1 : 0), \(cookie.sameSite), \(cookie.rawSameSite), 2);

            """
    }

    /// Creates (or adds to) the database at `path` by running `sql`; its directory must exist.
    package static func run(_ sql: String, at path: String) throws {
        let connection = try SQLiteConnection(path: path)
        try connection.execute(sql)
    }

    package static func chromiumTime(_ date: Date) -> Int64 {
        Int64((date.timeIntervalSince1970 + Double(BrowserCookieRowDecoder.windowsEpochOffset)) * 1_000_000)
    }

    private static func quoted(_ text: String) -> String {
        "'" + text.replacingOccurrences(of: "'", with: "''") + "'"
    }
}
