import Foundation
import KeyjarBrowserCookies
import KeyjarBrowserFixtures
import KeyjarCore
import KeyjarTestSupport
import Testing

@Suite(.timeLimit(hangLimit))
struct ChromiumCookieReaderTests {
    private func cookie(
        _ name: String,
        _ value: String,
        host: String = ".example.com",
        _ encryption: BrowserDatabaseFixtures.Encryption = .v11(password: safeStoragePassword)
    ) -> ChromiumFixture {
        var cookie = ChromiumFixture(hostKey: host, name: name, value: value)
        cookie.encryption = encryption
        cookie.expires = inADay
        return cookie
    }

    /// v11 values under the password in the real Secret Service; version 24 proves the key by
    /// the host's hash, 23 by the padding and the text.
    @Test(arguments: [23, 24])
    func v11ValuesAreDecryptedWithThePasswordFromTheSecretService(version: Int) async throws {
        // D-Bus calls block their thread: never one of Swift's cooperative pool.
        try await onOwnThread { try storeSafeStoragePassword(for: .chromium) }
        let home = try BrowserHome()
        var session = cookie("session", "s3ss10n", host: "www.example.com")
        session.expires = nil
        session.secure = true
        session.httpOnly = true
        session.sameSite = 1
        var partitioned = cookie("embed", "e", host: "chat.example.net")
        partitioned.topFrameSiteKey = "https://news.example"
        partitioned.sameSite = 0
        partitioned.secure = true
        let old = cookie("legacy", "v10-value", .v10)
        var plain = cookie("plain", "p", .plain)
        plain.sameSite = 2
        try home.chromiumProfile(
            ".config/chromium/Default",
            version: version,
            [cookie("sid", "42"), session, partitioned, old, plain]
        )
        let profile = try home.locator.profile(browser: .chromium, named: nil)
        let found = try await onOwnThread { try ChromiumCookieReader(profile: profile).read(now: now) }

        let byName = Dictionary(uniqueKeysWithValues: found.cookies.map { ($0.name, $0) })
        #expect(
            byName.mapValues(\.value) == [
                "sid": "42", "session": "s3ss10n", "embed": "e", "legacy": "v10-value", "plain": "p",
            ]
        )
        #expect(byName["sid"]?.hostOnly == false && byName["sid"]?.domain == "example.com")
        #expect(byName["sid"]?.sameSite == .unspecified)
        #expect(byName["sid"].flatMap(\.expires).map { abs($0.timeIntervalSince(inADay)) < 0.001 } == true)
        let sessionCookie = try #require(byName["session"])
        #expect(sessionCookie.isSession && sessionCookie.hostOnly && sessionCookie.domain == "www.example.com")
        #expect(sessionCookie.secure && sessionCookie.httpOnly && sessionCookie.sameSite == .lax)
        #expect(byName["embed"]?.partitionKey == CookiePartitionKey(scheme: "https", site: "news.example"))
        #expect(byName["embed"]?.sameSite == SameSite.none)
        #expect(byName["plain"]?.sameSite == .strict && byName["plain"]?.partitionKey == nil)
        #expect(found.skipped.isEmpty)
    }

    @Test func expiredAndControlCharactersAreCountedNotImported() async throws {
        try await onOwnThread { try storeSafeStoragePassword(for: .brave) }
        let home = try BrowserHome()
        var expired = cookie("old", "1")
        expired.expires = anHourAgo
        try home.chromiumProfile(
            ".config/BraveSoftware/Brave-Browser/Default",
            [cookie("ok", "1"), expired, cookie("bad", "a\u{7}b"), cookie("bad2", "x\u{1b}y", .plain)]
        )
        let profile = try home.locator.profile(browser: .brave, named: nil)
        let found = try await onOwnThread { try ChromiumCookieReader(profile: profile).read(now: now) }
        #expect(found.cookies.map(\.name) == ["ok"])
        #expect(found.skipped == [.expired: 1, .controlCharacters: 2])
    }

    @Test func aWrongPasswordIsAClearError() async throws {
        try await onOwnThread { try storeSafeStoragePassword(for: .vivaldi) }
        let home = try BrowserHome()
        try home.chromiumProfile(".config/vivaldi/Default", [cookie("sid", "42", .v11(password: "another one"))])
        let profile = try home.locator.profile(browser: .vivaldi, named: nil)
        let error = await #expect(throws: BrowserCookieImportError.self) {
            try await onOwnThread { try ChromiumCookieReader(profile: profile).read() }
        }
        #expect(error?.code == .noKeyVerifies)
        #expect(error?.message.contains("no key opens vivaldi's 1 encrypted cookie value") == true)
        #expect(error?.message.contains("42") == false && error?.message.contains(safeStoragePassword) == false)
    }

    @Test(arguments: [(25, "version 25"), (15, "version 15")])
    func anUnknownVersionIsNamed(version: Int, named: String) throws {
        let home = try BrowserHome()
        try home.chromiumProfile(".config/chromium/Default", version: version, [])
        let profile = try home.locator.profile(browser: .chromium, named: nil)
        let error = #expect(throws: BrowserCookieImportError.self) { try ChromiumCookieReader(profile: profile).read() }
        #expect(error?.code == .unsupportedSchema)
        #expect(error?.message.contains(named) == true && error?.message.contains("16 to 24") == true)
    }

    @Test func aMissingColumnIsNamed() throws {
        let home = try BrowserHome()
        let directory = home.home + "/.config/chromium/Default"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        try BrowserDatabaseFixtures.run(
            """
            CREATE TABLE meta(key LONGVARCHAR NOT NULL UNIQUE PRIMARY KEY, value LONGVARCHAR);
            INSERT INTO meta VALUES ('version', '20');
            CREATE TABLE cookies(host_key TEXT, name TEXT, value TEXT, encrypted_value BLOB, path TEXT,
              expires_utc INTEGER, creation_utc INTEGER, last_access_utc INTEGER, is_secure INTEGER,
              is_httponly INTEGER, has_expires INTEGER);
            """,
            at: directory + "/Cookies"
        )
        let profile = try home.locator.profile(browser: .chromium, named: nil)
        let error = #expect(throws: BrowserCookieImportError.self) { try ChromiumCookieReader(profile: profile).read() }
        #expect(error?.code == .unsupportedSchema && error?.message.contains("lacks column samesite") == true)
    }
}

@Suite struct ChromiumCookieDecryptorTests {
    @Test func theHostHashDecidesBetweenCandidateKeys() throws {
        let sealed = try ChromiumCookieDecryptor.encrypt(
            Array("value".utf8),
            password: "right",
            version: "v11",
            hostKey: ".example.com"
        )
        var decryptor = ChromiumCookieDecryptor(passwords: ["wrong", "", "right"], hostHashed: true)
        #expect(decryptor.decrypt(sealed, hostKey: ".example.com") == .value(Array("value".utf8)))
        #expect(decryptor.hasVerifiedV11Key)
        // The same ciphertext under another host does not verify: the hash is the host's.
        var other = ChromiumCookieDecryptor(passwords: ["right"], hostHashed: true)
        #expect(other.decrypt(sealed, hostKey: ".example.org") == .undecryptable)
        #expect(!other.hasVerifiedV11Key)
    }
}
