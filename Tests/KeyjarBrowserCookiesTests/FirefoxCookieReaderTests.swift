import Foundation
import KeyjarBrowserCookies
import KeyjarBrowserFixtures
import KeyjarCore
import KeyjarSQLite
import KeyjarTestSupport
import Testing

@Suite(.timeLimit(hangLimit))
struct FirefoxCookieReaderTests {
    /// A default-release profile with one database, found through profiles.ini's [Install…].
    private func profile(
        _ home: BrowserHome,
        userVersion: Int = 16,
        _ cookies: [FirefoxFixture]
    ) throws
        -> BrowserProfile
    {
        let root = try home.firefoxRoot(
            ".mozilla/firefox",
            profiles: [("default", "a1.default"), ("default-release", "b2.default-release")],
            ini: "[Install4F96D1932A9F858E]\nDefault=b2.default-release\nLocked=1\n\n"
        )
        try home.firefoxDatabase(in: root + "/b2.default-release", userVersion: userVersion, cookies)
        return try home.locator.profile(browser: .firefox, named: nil)
    }

    @Test(arguments: [15, 16])
    func expiryIsSecondsBeforeSchema16AndMillisecondsFrom(userVersion: Int) throws {
        let home = try BrowserHome()
        let expires = Date(timeIntervalSince1970: 4_102_444_800)  // 2100-01-01
        var cookie = FirefoxFixture(host: ".example.com", name: "sid", value: "42", expires: expires)
        cookie.secure = true
        cookie.httpOnly = true
        cookie.sameSite = 2
        cookie.rawSameSite = 2
        let found = try FirefoxCookieReader(profile: profile(home, userVersion: userVersion, [cookie])).read(now: now)

        let read = try #require(found.cookies.first)
        #expect(read.expires == expires)
        #expect(read.domain == "example.com" && !read.hostOnly)
        #expect(read.secure && read.httpOnly && read.sameSite == .strict)
        #expect(read.creation == Date(timeIntervalSince1970: 1_700_000_000))
        #expect(found.skipped.isEmpty)
    }

    @Test func hostOnlySameSiteExpiredAndControlCharacters() throws {
        let home = try BrowserHome()
        var hostOnly = FirefoxFixture(host: "www.example.com", name: "h", value: "1", expires: inADay)
        hostOnly.sameSite = 1
        hostOnly.rawSameSite = 0  // lax only by default: the server said nothing
        var lax = FirefoxFixture(host: "www.example.com", name: "l", value: "1", expires: inADay)
        lax.sameSite = 1
        lax.rawSameSite = 1
        var none = FirefoxFixture(host: "www.example.com", name: "n", value: "1", expires: inADay)
        none.secure = true
        // Not Secure and 0: the server said nothing (None would need Secure).
        let unset = FirefoxFixture(host: "www.example.com", name: "u", value: "1", expires: inADay)
        let expired = FirefoxFixture(host: "www.example.com", name: "old", value: "1", expires: anHourAgo)
        let control = FirefoxFixture(host: "www.example.com", name: "c", value: "a\u{1}b", expires: inADay)
        let found = try FirefoxCookieReader(profile: profile(home, [hostOnly, lax, none, unset, expired, control]))
            .read(now: now)

        let byName = Dictionary(uniqueKeysWithValues: found.cookies.map { ($0.name, $0) })
        #expect(byName.keys.sorted() == ["h", "l", "n", "u"])
        #expect(byName["h"]?.hostOnly == true && byName["h"]?.domain == "www.example.com")
        #expect(byName["h"]?.sameSite == .unspecified)
        #expect(byName["l"]?.sameSite == .lax)
        #expect(byName["n"]?.sameSite == SameSite.none)
        #expect(byName["u"]?.sameSite == .unspecified)
        #expect(found.skipped == [.expired: 1, .controlCharacters: 1])
    }

    @Test func containersPartitionsAndUnsendableOriginAttributes() throws {
        let home = try BrowserHome()
        let plain = FirefoxFixture(host: ".example.com", name: "plain", value: "1", expires: inADay)
        var work = FirefoxFixture(host: ".example.com", name: "work", value: "2", expires: inADay)
        work.originAttributes = "^userContextId=2"
        var mine = FirefoxFixture(host: ".example.com", name: "mine", value: "3", expires: inADay)
        mine.originAttributes = "^userContextId=6"
        var partitioned = FirefoxFixture(host: "chat.example.net", name: "p", value: "4", expires: inADay)
        partitioned.originAttributes = "^partitionKey=%28https%2Cnews.example%2C8443%29"
        var privateWindow = FirefoxFixture(host: ".example.com", name: "private", value: "5", expires: inADay)
        privateWindow.originAttributes = "^privateBrowsingId=1"
        var isolated = FirefoxFixture(host: ".example.com", name: "fpi", value: "6", expires: inADay)
        isolated.originAttributes = "^firstPartyDomain=example.com"
        let profile = try profile(home, [plain, work, mine, partitioned, privateWindow, isolated])
        let containers = """
            {"version":5,"lastUserContextId":6,"identities":[
             {"userContextId":1,"public":true,"l10nID":"userContextPersonal.label"},
             {"userContextId":2,"public":true,"l10nID":"userContextWork.label"},
             {"userContextId":5,"public":false,"name":"userContextIdInternal.thumbnail"},
             {"userContextId":6,"public":true,"name":"Side project"}]}
            """
        try containers.write(toFile: profile.directory + "/containers.json", atomically: true, encoding: .utf8)

        // No container: the normal window's cookies, the partitioned one under its key.
        let normal = try FirefoxCookieReader(profile: profile).read(now: now)
        #expect(normal.cookies.map(\.name).sorted() == ["p", "plain"])
        let key = try #require(normal.cookies.first { $0.name == "p" }?.partitionKey)
        #expect(key == CookiePartitionKey(scheme: "https", site: "news.example"))
        #expect(normal.skipped == [.otherContainer: 2, .privateBrowsing: 1, .firstPartyIsolation: 1])

        // A built-in container by its English name, and a user's by its own.
        #expect(
            try FirefoxCookieReader(profile: profile, container: "Work").read(now: now).cookies.map(\.name) == ["work"]
        )
        #expect(
            try FirefoxCookieReader(profile: profile, container: "side project").read(now: now).cookies.map(\.name)
                == ["mine"]
        )
        let error = #expect(throws: BrowserCookieImportError.self) {
            try FirefoxCookieReader(profile: profile, container: "Gaming").read(now: now)
        }
        #expect(error?.code == .containerNotFound)
        #expect(error?.message.contains("Personal, Work, Side project") == true)
    }

    @Test func aNewerSchemaIsNamed() throws {
        let home = try BrowserHome()
        let profile = try profile(home, userVersion: 17, [])
        let error = #expect(throws: BrowserCookieImportError.self) { try FirefoxCookieReader(profile: profile).read() }
        #expect(error?.code == .unsupportedSchema)
        #expect(error?.message.contains("version 17") == true && error?.message.contains("up to 16") == true)
    }

    @Test func aDatabaseThatIsNotSQLiteIsCorrupt() throws {
        let home = try BrowserHome()
        let profile = try profile(home, [])
        try Data(repeating: 0x41, count: 8192).write(to: URL(fileURLWithPath: profile.cookieDatabase))
        let error = #expect(throws: BrowserCookieImportError.self) { try FirefoxCookieReader(profile: profile).read() }
        #expect(error?.code == .databaseCorrupt)
    }

    /// A browser that holds its database exclusively in the middle of a write: after the
    /// bounded retries its files are copied, and the copy shows what was committed.
    @Test func aDatabaseHeldExclusivelyIsReadFromACopyOfItsFiles() async throws {
        let home = try BrowserHome()
        let profile = try profile(home, [FirefoxFixture(host: ".example.com", name: "a", value: "1", expires: inADay)])
        let shell = try SQLiteShell(database: profile.cookieDatabase)
        try await shell.run("PRAGMA cache_size = 1; BEGIN EXCLUSIVE; DELETE FROM moz_cookies;")
        let found = try await onOwnThread { try FirefoxCookieReader(profile: profile).read(now: now) }
        #expect(found.cookies.map(\.name) == ["a"])
        try await shell.run("ROLLBACK;")
        try await shell.close()
    }

    /// Chromium's way: exclusive locking mode with a WAL, so no reader ever gets in and the
    /// newest cookies are in the WAL only.
    @Test func anExclusiveWALIsReadWithItsFrames() async throws {
        let home = try BrowserHome()
        let profile = try profile(
            home,
            [FirefoxFixture(host: ".example.com", name: "old", value: "1", expires: inADay)]
        )
        let shell = try SQLiteShell(database: profile.cookieDatabase)
        try await shell.run(
            "PRAGMA locking_mode = EXCLUSIVE; PRAGMA journal_mode = WAL; PRAGMA wal_autocheckpoint = 0;"
        )
        try await shell.run(
            BrowserDatabaseFixtures.firefoxInsert(
                FirefoxFixture(host: ".example.com", name: "fresh", value: "2", expires: inADay),
                userVersion: 16
            )
        )
        let found = try await onOwnThread { try FirefoxCookieReader(profile: profile).read(now: now) }
        #expect(found.cookies.map(\.name).sorted() == ["fresh", "old"])
        try await shell.close()
    }

    /// The browser runs: its last writes are still in the WAL, not in the database file.
    @Test func cookiesStillInTheWALAreRead() async throws {
        let home = try BrowserHome()
        let profile = try profile(
            home,
            [FirefoxFixture(host: ".example.com", name: "old", value: "1", expires: inADay)]
        )
        let shell = try SQLiteShell(database: profile.cookieDatabase)
        try await shell.run("PRAGMA journal_mode=WAL; PRAGMA wal_autocheckpoint=0;")
        try await shell.run(
            BrowserDatabaseFixtures.firefoxInsert(
                FirefoxFixture(host: ".example.com", name: "fresh", value: "2", expires: inADay),
                userVersion: 16
            )
        )
        // The new row is in the WAL only: a copy of the main file alone does not hold it.
        let copy = try TemporaryDirectory()
        try FileManager.default.copyItem(atPath: profile.cookieDatabase, toPath: copy.path("cookies.sqlite"))
        let mainFileOnly = try SQLiteConnection(path: copy.path("cookies.sqlite"), readOnly: true)
        let rows = try mainFileOnly.statement("SELECT count(*) FROM moz_cookies")
        #expect(try rows.step() && rows.int64(0) == 1)

        let found = try await onOwnThread { try FirefoxCookieReader(profile: profile).read(now: now) }
        #expect(found.cookies.map(\.name).sorted() == ["fresh", "old"])
        try await shell.close()
    }
}
