import Foundation
import Glibc
import KeyjarBrowserCookies
import KeyjarBrowserFixtures
import KeyjarTestSupport
import Testing

/// `keyjar cookie import --from-browser`, the real binary against a real keyjard, reading
/// databases built in a home of the test's own, values encrypted under a password in the real
/// Secret Service.
@Suite(.timeLimit(hangLimit), .servicesStopCleanly)
struct BrowserImportCommandTests {
    private static let password = "cli-test-safe-storage-password"
    private static let encryption = BrowserDatabaseFixtures.Encryption.v11(password: password)

    /// A home with a Chromium profile of these cookies, and the environment that points keyjar at
    /// it and at a Secret Service of the test's own holding Chromium's key (never the session's:
    /// a test run outside scripts/test must not replace a real browser's key, and tests running
    /// at once must not replace each other's).
    private struct Home {
        let directory: TemporaryDirectory
        let secrets: PrivateSecretService
        var environment: [String: String] {
            var environment = secrets.environment
            environment["HOME"] = directory.path("home")
            environment["XDG_CONFIG_HOME"] = directory.path("home/.config")
            environment["PATH"] = ProcessInfo.processInfo.environment["PATH"]
            return environment
        }
        var database: String { directory.path("home/.config/chromium/Default/Network/Cookies") }

        /// - Parameter storingKey: false leaves the key for the test to store its own way.
        init(_ cookies: [BrowserDatabaseFixtures.ChromiumCookie], storingKey: Bool = true) async throws {
            secrets = try await PrivateSecretService()
            if storingKey {
                // Chromium's key, where Chromium keeps it: its schema, found by `application`.
                let stored = try await secrets.secretTool(
                    [
                        "store", "--label=Chromium Safe Storage", "xdg:schema", "chrome_libsecret_os_crypt_password_v2",
                        "application", "chromium",
                    ],
                    input: BrowserImportCommandTests.password
                )
                guard stored.status == 0 else { throw TestSupportError("secret-tool store: \(stored.error)") }
            }
            directory = try TemporaryDirectory()
            try FileManager.default.createDirectory(
                atPath: directory.path("home/.config/chromium/Default/Network"),
                withIntermediateDirectories: true
            )
            var sql = BrowserDatabaseFixtures.chromiumSchema(version: 24)
            for cookie in cookies { sql += try BrowserDatabaseFixtures.chromiumInsert(cookie, version: 24) }
            try BrowserDatabaseFixtures.run(sql, at: database)
        }
    }

    /// A Cookie header's pairs, in whatever order the header has them.
    private static func pairs(_ header: String) -> Set<String> {
        Set(header.trimmingCharacters(in: .newlines).split(separator: "; ").map(String.init))
    }

    private static func cookie(
        _ name: String,
        _ value: String,
        host: String = ".example.com",
        expires: Date? = Date().addingTimeInterval(86_400)
    ) -> BrowserDatabaseFixtures.ChromiumCookie {
        var cookie = BrowserDatabaseFixtures.ChromiumCookie(hostKey: host, name: name, value: value)
        cookie.expires = expires
        cookie.encryption = encryption
        return cookie
    }

    @Test func importsWhatTheBrowserWouldSend() async throws {
        let daemon = try await DaemonProcess()
        let keyjar = KeyjarCLI(daemon: daemon)
        var session = Self.cookie("session", "s1", host: "www.example.com", expires: nil)
        session.secure = true
        // The jar's rules apply as to any import: None without Secure is refused, with why.
        var insecureNone = Self.cookie("none", "n")
        insecureNone.sameSite = 0
        // A partitioned (CHIPS) cookie of an embedded chat, under the news site that embeds it.
        var embedded = Self.cookie("embed", "e", host: "chat.example.net")
        embedded.secure = true
        embedded.sameSite = 0
        embedded.topFrameSiteKey = "https://news.example"
        let home = try await Home([
            Self.cookie("sid", "42"), session, Self.cookie("old", "1", expires: Date().addingTimeInterval(-60)),
            Self.cookie("bad", "a\u{1}b"), Self.cookie("other", "o", host: "www.example.org"), insecureNone, embedded,
        ])

        let result = try await keyjar.run(
            ["cookie", "import", "--from-browser", "chromium"],
            environment: home.environment
        )
        #expect(result.status == 0, "\(result.error)")
        #expect(
            result.output
                == "imported 4, skipped 3 (1 control characters in name or value, 1 expired, "
                + "1 refused by the jar: SameSite=None requires the Secure attribute)\n"
        )

        // Host-only and Secure kept: only https to www gets the session cookie.
        #expect(try await keyjar.ok("cookie", "get", "https://www.example.com/") == "sid=42; session=s1\n")
        #expect(try await keyjar.ok("cookie", "get", "http://www.example.com/") == "sid=42\n")
        #expect(try await keyjar.ok("cookie", "get", "https://shop.example.com/") == "sid=42\n")
        #expect(try await keyjar("cookie", "list", "--session").lines.map { $0.prefix(11) } == ["session=s1;"])
        let partitioned = try #require(
            try await keyjar.json("cookie", "list", "--json", "--name", "embed") as? [[String: Any]]
        )
        #expect(partitioned.count == 1 && partitioned.first?["partitionKey"] as? String == "https://news.example")
        // No value ever reaches the output.
        #expect(!result.output.contains("42") && !result.error.contains("42"))
    }

    @Test func domainsSelectAndADryRunSendsNothing() async throws {
        let daemon = try await DaemonProcess()
        let keyjar = KeyjarCLI(daemon: daemon)
        let home = try await Home([
            Self.cookie("a", "secret-a", host: ".example.com"), Self.cookie("b", "secret-b", host: "www.example.com"),
            Self.cookie("c", "secret-c", host: "example.org"), Self.cookie("d", "secret-d", host: "notexample.com"),
        ])

        let dryRun = try await keyjar.run(
            ["cookie", "import", "--from-browser", "chromium:Default", "--dry-run"],
            environment: home.environment
        )
        #expect(dryRun.status == 0, "\(dryRun.error)")
        #expect(dryRun.output == "example.com: 2\nexample.org: 1\nnotexample.com: 1\nwould import 4, skip 0\n")
        #expect(!dryRun.output.contains("secret"))
        #expect(try await keyjar.ok("cookie", "list").isEmpty)

        let selected = try await keyjar.run(
            ["cookie", "import", "--from-browser", "chromium", "--domain", "example.com"],
            environment: home.environment
        )
        #expect(selected.output == "imported 2, skipped 0\n", "\(selected.error)")
        #expect(try await keyjar("cookie", "list").lines.map { $0.prefix(2) }.sorted() == ["a=", "b="])
    }

    @Test func errorsNameWhatExists() async throws {
        let daemon = try await DaemonProcess()
        let keyjar = KeyjarCLI(daemon: daemon)
        let home = try await Home([])
        let noProfile = try await keyjar.run(
            ["cookie", "import", "--from-browser", "chromium:Work"],
            environment: home.environment
        )
        #expect(
            noProfile.status == 1 && noProfile.error.contains("chromium has no profile 'Work'; its profiles: Default")
        )
        let noBrowser = try await keyjar.run(
            ["cookie", "import", "--from-browser", "firefox"],
            environment: home.environment
        )
        #expect(noBrowser.status == 1 && noBrowser.error.contains("found: chromium"))
        let both = try await keyjar.run(["cookie", "import", "x.txt", "--from-browser", "firefox"])
        #expect(both.status == 2)
        let containerElsewhere = try await keyjar.run(
            ["cookie", "import", "--from-browser", "chromium", "--container", "Work"]
        )
        #expect(containerElsewhere.status == 2 && containerElsewhere.error.contains("Firefox's only"))
    }

    /// A browser's database is anyone's file: a `cookies` view in place of the table (whose
    /// query could be anything, here a recursive one that never ends) is refused with an error
    /// that names the file, not run (SQLite's defences for untrusted databases).
    @Test func aViewInPlaceOfTheCookieTableIsNotRun() async throws {
        let daemon = try await DaemonProcess()
        let keyjar = KeyjarCLI(daemon: daemon)
        let home = try await Home([Self.cookie("sid", "42")])
        let rewritten = try await runCommand(
            "/usr/bin/sqlite3",
            [
                home.database,
                """
                ALTER TABLE cookies RENAME TO stored;
                CREATE VIEW cookies AS WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n)
                    SELECT stored.* FROM stored, n;
                """,
            ]
        )
        #expect(rewritten.status == 0, "\(rewritten.error)")
        let result = try await keyjar.run(
            ["cookie", "import", "--from-browser", "chromium"],
            environment: home.environment
        )
        #expect(result.status == 1, "\(result.output) \(result.error)")
        #expect(result.error.contains(home.database), "\(result.error)")
        #expect(try await keyjar.ok("cookie", "list").isEmpty)
    }

    /// A profile from before Chromium 56 keeps its key under the older schema: one item without
    /// attributes, found by the schema's name.
    @Test func aKeyUnderTheOlderSchemaIsFound() async throws {
        let daemon = try await DaemonProcess()
        let keyjar = KeyjarCLI(daemon: daemon)
        let home = try await Home([Self.cookie("sid", "42")], storingKey: false)
        let stored = try await home.secrets.secretTool(
            ["store", "--label=Chrome Safe Storage", "xdg:schema", "chrome_libsecret_os_crypt_password"],
            input: Self.password
        )
        #expect(stored.status == 0, "\(stored.error)")
        let result = try await keyjar.run(
            ["cookie", "import", "--from-browser", "chromium"],
            environment: home.environment
        )
        #expect(result.status == 0, "\(result.error)")
        #expect(result.output == "imported 1, skipped 0\n")
        #expect(try await keyjar.ok("cookie", "get", "https://example.com/") == "sid=42\n")
    }

    /// The browser's password is in a keyring that is locked: keyjar says so (it never prompts).
    @Test func aLockedKeyringIsNamed() async throws {
        let daemon = try await DaemonProcess()
        let keyjar = KeyjarCLI(daemon: daemon)
        let home = try await Home([Self.cookie("sid", "42")], storingKey: false)
        let stored = try await home.secrets.secretTool(
            ["store", "--label=Chromium Safe Storage", "application", "chromium"],
            input: Self.password
        )
        #expect(stored.status == 0, "\(stored.error)")
        let lock = try await runCommand(
            "/usr/bin/dbus-send",
            [
                "--session", "--print-reply", "--dest=org.freedesktop.secrets", "/org/freedesktop/secrets",
                "org.freedesktop.Secret.Service.Lock", "array:objpath:/org/freedesktop/secrets/collection/login",
            ],
            environment: home.secrets.environment
        )
        #expect(lock.status == 0, "\(lock.error)")

        let environment = home.environment
        let result = try await keyjar.run(["cookie", "import", "--from-browser", "chromium"], environment: environment)
        #expect(result.status == 1)
        #expect(result.error.contains("the Secret Service's keyring is locked"), "\(result.error)")
        #expect(try await keyjar.ok("cookie", "list").isEmpty)
    }

    /// The browser rotates a session cookie and logs out of another; `--follow` carries both
    /// into the jar, and SIGTERM ends it with status 0 and a summary.
    @Test func followCarriesRotationsAndDeletions() async throws {
        let daemon = try await DaemonProcess()
        let keyjar = KeyjarCLI(daemon: daemon)
        let home = try await Home([Self.cookie("sid", "first"), Self.cookie("gone", "1"), Self.cookie("mine", "b")])

        let process = ChildProcess()
        process.executableURL = URL(fileURLWithPath: KeyjarCLI.binary)
        process.arguments = ["cookie", "import", "--from-browser", "chromium", "--follow"]
        process.environment = keyjar.environment.merging(home.environment) { _, new in new }
        let output = OutputCollector()
        process.standardOutput = output.pipe
        process.standardError = output.pipe
        try process.run()
        output.start()
        // A failure before the SIGTERM below must not leave it running.
        defer { if process.isRunning { kill(process.processIdentifier, SIGKILL) } }
        try await waitUntil("keyjar following the database") { output.text.contains("following ") }
        #expect(try await keyjar.ok("cookie", "get", "https://example.com/").contains("sid=first"))

        // Another process (the "browser") rotates the cookie.
        let browser = try SQLiteShell(database: home.database)
        try await browser.run(try BrowserDatabaseFixtures.chromiumInsert(Self.cookie("sid", "rotated"), version: 24))
        try await waitUntil(
            "the rotated cookie in keyjard",
            asking: {
                try await keyjar.ok("cookie", "get", "https://example.com/").contains("sid=rotated")
            }
        )
        // A program stores its own value under the identity of another imported cookie …
        try await keyjar.ok(
            "cookie",
            "set",
            "--url",
            "https://example.com/",
            "mine=app; Domain=example.com; Max-Age=3600"
        )
        // … and the browser logs out: the cookie it drops goes from the jar too, but the one the
        // program stored since stays (it is not the browser's any more).
        try await browser.run("DELETE FROM cookies WHERE name IN ('gone', 'mine');")
        try await waitUntil(
            "the dropped cookie gone from keyjard (keyjar said: \(output.text))",
            asking: {
                try await !keyjar.ok("cookie", "get", "https://example.com/").contains("gone=1")
            }
        )
        #expect(
            Self.pairs(try await keyjar.ok("cookie", "get", "https://example.com/")) == ["sid=rotated", "mine=app"]
        )
        try await browser.close()

        process.terminate()
        try await waitForExit(process)
        #expect(process.terminationStatus == 0)
        let text = try await output.waitForEnd()
        #expect(text.hasSuffix("stopped following: 1 updated, 1 removed\n"), "\(text)")
        #expect(!text.contains("rotated") && !text.contains("first"))
    }
}

/// Firefox through the CLI: a Flatpak profile, a container, and a partitioned cookie that must
/// reach keyjard under its partition (it travels in the JSON cookie file's `partitionKey`).
@Suite(.timeLimit(hangLimit), .servicesStopCleanly)
struct FirefoxImportCommandTests {
    @Test func aContainersCookiesAndAPartitionArriveAsTheBrowserHasThem() async throws {
        let daemon = try await DaemonProcess()
        let keyjar = KeyjarCLI(daemon: daemon)
        let directory = try TemporaryDirectory()
        let root = directory.path("home/.var/app/org.mozilla.firefox/.mozilla/firefox")
        try FileManager.default.createDirectory(atPath: root + "/p.default-release", withIntermediateDirectories: true)
        try "[Profile0]\nName=default-release\nIsRelative=1\nPath=p.default-release\nDefault=1\n"
            .write(toFile: root + "/profiles.ini", atomically: true, encoding: .utf8)
        let expires = Date().addingTimeInterval(86_400)
        var work = BrowserDatabaseFixtures.FirefoxCookie(
            host: ".example.com",
            name: "work",
            value: "w",
            expires: expires
        )
        work.originAttributes = "^userContextId=2"
        var embedded = BrowserDatabaseFixtures.FirefoxCookie(
            host: "chat.example.net",
            name: "embed",
            value: "e",
            expires: expires
        )
        embedded.secure = true
        embedded.originAttributes = "^partitionKey=%28https%2Cnews.example%29"
        let plain = BrowserDatabaseFixtures.FirefoxCookie(
            host: ".example.com",
            name: "plain",
            value: "p",
            expires: expires
        )
        var sql = BrowserDatabaseFixtures.firefoxSchema(userVersion: 16)
        for cookie in [work, embedded, plain] { sql += BrowserDatabaseFixtures.firefoxInsert(cookie, userVersion: 16) }
        try BrowserDatabaseFixtures.run(sql, at: root + "/p.default-release/cookies.sqlite")
        let environment = ["HOME": directory.path("home"), "XDG_CONFIG_HOME": directory.path("home/.config")]

        let inWork = try await keyjar.run(
            ["cookie", "import", "--from-browser", "firefox", "--container", "Work"],
            environment: environment
        )
        #expect(inWork.output == "imported 1, skipped 2 (2 in another container)\n", "\(inWork.error)")
        #expect(try await keyjar.ok("cookie", "get", "https://example.com/") == "work=w\n")

        let normal = try await keyjar.run(["cookie", "import", "--from-browser", "firefox"], environment: environment)
        #expect(normal.output == "imported 2, skipped 1 (1 in another container)\n", "\(normal.error)")
        // The partitioned cookie goes to chat.example.net only under news.example.
        let cookies = try #require(
            try await keyjar.json("cookie", "list", "--json", "--name", "embed") as? [[String: Any]]
        )
        #expect(cookies.first?["partitionKey"] as? String == "https://news.example")
    }
}
