import Foundation
import KeyjarBrowserCookies
import KeyjarBrowserFixtures
import KeyjarTestSupport
import Testing

typealias ChromiumFixture = BrowserDatabaseFixtures.ChromiumCookie
typealias FirefoxFixture = BrowserDatabaseFixtures.FirefoxCookie

/// The Safe Storage password every test of this process keeps in the Secret Service for each
/// Chromium browser: one value, so that tests running at once never replace each other's (the
/// CLI's tests, in the same process, keep theirs in Secret Services of their own).
let safeStoragePassword = "test-safe-storage-password"

/// Stores the test password as the browser's, in the test process's Secret Service; only when
/// that is the throwaway one scripts/test starts (KEYJAR_TEST_SECRET_SERVICE), since the item
/// replaces the browser's own key, and a real browser's would be lost for good.
func storeSafeStoragePassword(for browser: Browser) throws {
    guard testSessionIsPrivate else {
        throw TestSupportError(
            "refusing to store a browser's Safe Storage key in a Secret Service that may be the user's: "
                + "run the suite with scripts/test"
        )
    }
    try ChromiumSafeStoragePassword.store(safeStoragePassword, application: browser.secretServiceApplication)
}

let now = Date()
let inADay = now.addingTimeInterval(86_400)
let anHourAgo = now.addingTimeInterval(-3_600)

/// A home directory of the test's own, with helpers that lay out browsers' profiles in it.
final class BrowserHome: Sendable {
    let directory: TemporaryDirectory
    var home: String { directory.path("home") }
    var environment: BrowserEnvironment { BrowserEnvironment(home: home) }
    var locator: BrowserProfileLocator { BrowserProfileLocator(environment: environment) }

    init() throws {
        directory = try TemporaryDirectory()
        try FileManager.default.createDirectory(atPath: directory.path("home"), withIntermediateDirectories: true)
    }

    /// A Firefox root with `profiles.ini` and one directory per profile (relative paths).
    func firefoxRoot(
        _ relativeRoot: String,
        profiles: [(name: String, path: String)],
        ini extra: String = ""
    )
        throws -> String
    {
        let root = home + "/" + relativeRoot
        var ini = extra
        for (index, profile) in profiles.enumerated() {
            try FileManager.default.createDirectory(
                atPath: root + "/" + profile.path,
                withIntermediateDirectories: true
            )
            ini += "[Profile\(index)]\nName=\(profile.name)\nIsRelative=1\nPath=\(profile.path)\n\n"
        }
        try ini.write(toFile: root + "/profiles.ini", atomically: true, encoding: .utf8)
        return root
    }

    /// A Firefox cookie database with these rows.
    func firefoxDatabase(in directory: String, userVersion: Int = 16, _ cookies: [FirefoxFixture]) throws {
        var sql = BrowserDatabaseFixtures.firefoxSchema(userVersion: userVersion)
        for cookie in cookies { sql += BrowserDatabaseFixtures.firefoxInsert(cookie, userVersion: userVersion) }
        try BrowserDatabaseFixtures.run(sql, at: directory + "/cookies.sqlite")
    }

    /// A Chromium profile directory with a `Network/Cookies` database of these rows.
    @discardableResult
    func chromiumProfile(
        _ relativeDirectory: String,
        version: Int = 24,
        network: Bool = true,
        _ cookies: [ChromiumFixture]
    ) throws -> String {
        let directory = home + "/" + relativeDirectory
        let databaseDirectory = network ? directory + "/Network" : directory
        try FileManager.default.createDirectory(atPath: databaseDirectory, withIntermediateDirectories: true)
        var sql = BrowserDatabaseFixtures.chromiumSchema(version: version)
        for cookie in cookies { sql += try BrowserDatabaseFixtures.chromiumInsert(cookie, version: version) }
        try BrowserDatabaseFixtures.run(sql, at: databaseDirectory + "/Cookies")
        return directory
    }
}
