import Foundation
import Keyjar
import KeyjarCore
import KeyjarTestSupport
import Testing

/// `keyjar backup` and `keyjar restore` through the real `keyjar`, keyjard and gnome-keyring.
@Suite(.timeLimit(hangLimit), .servicesStopCleanly)
struct BackupCommandTests {
    private static let passphrase = "correct horse battery staple\n"
    /// keyjard with room for the whole store.
    private static let roomy = ["--max-cookies", "200000", "--max-cookies-per-site", "1000"]

    /// Every stored password, by credential, read through keyjard.
    private static func passwords(_ daemon: DaemonProcess) throws -> [String: String] {
        let client = try KeyjarClient(
            configuration: .init(socketPath: daemon.socketPath, autoStart: false, keepsReplica: false)
        )
        defer { client.close() }
        var passwords: [String: String] = [:]
        for record in try client.credentialRecords() {
            passwords["\(record.space.protocol)://\(record.space.host):\(record.space.port) \(record.user)"] =
                try client.password(user: record.user, for: record.space) ?? "(missing)"
        }
        return passwords
    }

    /// Passwords in keyjard's file backend, for speed (gnome-keyring searches its whole
    /// collection on every store and lookup); the keyring's own path is the next test's.
    @Test func aWholeStoreSurvivesBackupWipeAndRestore() async throws {
        let daemon = try await DaemonProcess(arguments: Self.roomy + ["--secrets", "file"])
        let keyjar = KeyjarCLI(daemon: daemon)
        let work = try TemporaryDirectory()

        // 10,000 cookies on 100 sites, 100 credentials, a domain rule (`keyjar-bench backup`
        // does 100,000 and 1,000 with a release build).
        let expires = Date().timeIntervalSince1970 + 86_400 * 30
        var cookies: [String] = []
        for site in 0..<100 {
            for index in 0..<100 {
                cookies.append(
                    #"{"name":"c\#(index)","value":"cookie-MARK-\#(site)-\#(index)","domain":"site\#(site).example","#
                        + #""hostOnly":false,"path":"/","expires":\#(expires),"secure":true,"httpOnly":false,"#
                        + #""sameSite":"Lax","creation":\#(1_700_000_000 + site * 100 + index)}"#
                )
            }
        }
        try Data(("[" + cookies.joined(separator: ",\n") + "]").utf8).write(
            to: URL(fileURLWithPath: work.path("c.json"))
        )
        try await keyjar.ok("cookie", "import", work.path("c.json"))
        let lines = (0..<100).map { "https://user\($0):pw-SECRET-\($0)@host\($0).example" }
        try Data((lines.joined(separator: "\n") + "\n").utf8).write(
            to: URL(fileURLWithPath: work.path("git-credentials"))
        )
        try await keyjar.ok("credential", "import", "--from", "git-store", work.path("git-credentials"))
        try await keyjar.ok("policy", "domain", "block", "ads.example")

        let cookiesBefore = try await keyjar.ok("cookie", "export", "--format", "json")
        let credentialsBefore = try await keyjar.ok("credential", "list")
        let passwordsBefore = try Self.passwords(daemon)
        #expect(passwordsBefore.count == 100 && cookiesBefore.contains("cookie-MARK-99-99"))

        let file = work.path("keyjar.backup")
        let backedUp = try await keyjar.run(["backup", file, "--passphrase-stdin"], input: Self.passphrase)
        #expect(backedUp.status == 0, "\(backedUp.error)")
        #expect(backedUp.output == "backed up 10000 cookies, 100 credentials and 1 domain rule\n")
        #expect(fileMode(file, followingLinks: false).map { $0 & 0o777 } == 0o600)
        let bytes = try Data(contentsOf: URL(fileURLWithPath: file))
        for clear in ["pw-SECRET-", "cookie-MARK-", "host99.example", "user1"] {
            #expect(bytes.range(of: Data(clear.utf8)) == nil, "\(clear) in clear in the backup")
        }

        // Wiped: the database and the passwords.
        #expect(await daemon.stop() == 0)
        let data = daemon.directory.path("data")
        for name in try FileManager.default.contentsOfDirectory(atPath: data) {
            try FileManager.default.removeItem(atPath: data + "/" + name)
        }
        let fresh = try await daemon.restarted()
        let restoring = KeyjarCLI(daemon: fresh)
        #expect(try await restoring.ok("credential", "list").isEmpty)

        // A changed byte or a wrong passphrase: refused whole, nothing stored.
        var damaged = bytes
        damaged[damaged.count / 2] ^= 0x01
        try damaged.write(to: URL(fileURLWithPath: work.path("damaged.backup")))
        let refused = try await restoring.run(
            ["restore", work.path("damaged.backup"), "--passphrase-stdin"],
            input: Self.passphrase
        )
        #expect(refused.status == 1 && refused.error.contains("the backup is damaged"), "\(refused.error)")
        let wrong = try await restoring.run(["restore", file, "--passphrase-stdin"], input: "not it\n")
        #expect(wrong.status == 1 && wrong.error.contains("the passphrase does not open this backup"))
        #expect((try await restoring.json("cookie", "list", "--json") as? [Any])?.isEmpty == true)
        #expect(try await restoring.ok("credential", "list").isEmpty)

        let restored = try await restoring.run(["restore", file, "--passphrase-stdin"], input: Self.passphrase)
        #expect(restored.status == 0, "\(restored.error)")
        #expect(restored.output == "restored 10000 cookies; 100 credentials; 1 domain rule added\n")
        #expect(try await restoring.ok("cookie", "export", "--format", "json") == cookiesBefore)
        #expect(try await restoring.ok("credential", "list") == credentialsBefore)
        #expect(try Self.passwords(fresh) == passwordsBefore)
        #expect(try await restoring.ok("policy", "domain", "list").contains("ads.example"))
    }

    /// docs/operations.md, "Changing the secrets backend", step by step: from the Secret Service
    /// to the file backend, every password answers again.
    @Test func changingTheSecretsBackendAsTheOperationsPageSaysKeepsEveryPassword() async throws {
        let secrets = try await PrivateSecretService()
        let daemon = try await DaemonProcess(environment: secrets.environment)
        let keyjar = KeyjarCLI(daemon: daemon)
        let work = try TemporaryDirectory()
        for user in ["alice", "bob"] {
            try await keyjar.ok(
                ["credential", "add", "--url", "https://git.example", "--user", user, "--password-stdin"],
                input: "pw-\(user)"
            )
        }
        let file = work.path("keyjar.backup")
        try await keyjar.ok(["backup", file, "--passphrase-stdin"], input: Self.passphrase)
        #expect(await daemon.stop() == 0)

        let switched = try await daemon.restarted(arguments: ["--secrets", "file"])
        let after = KeyjarCLI(daemon: switched)
        #expect(try await after.ok("status").contains("credential without its password"))
        let dryRun = try await after.ok("credential", "repair", "--remove-unpaired", "--dry-run")
        #expect(dryRun.components(separatedBy: "would remove ").count == 3, "\(dryRun)")
        try await after.ok("credential", "repair", "--remove-unpaired")
        let restored = try await after.run(["restore", file, "--passphrase-stdin"], input: Self.passphrase)
        #expect(restored.status == 0, "\(restored.error)")
        #expect(try await after.ok("status").contains("credentials and passwords: every credential has its password"))
        for user in ["alice", "bob"] {
            let answer = try await after.run(
                ["git-credential", "get"],
                input: "protocol=https\nhost=git.example\nusername=\(user)\n\n"
            )
            #expect(answer.output.contains("password=pw-\(user)\n"), "\(answer.error)")
        }
        #expect(FileManager.default.fileExists(atPath: switched.directory.path("data/secrets.json")))
    }

    @Test func restoreKeepsWhatIsNewerHereAndTouchesNothingElse() async throws {
        let secrets = try await PrivateSecretService()
        let daemon = try await DaemonProcess(environment: secrets.environment)
        let keyjar = KeyjarCLI(daemon: daemon)
        let work = try TemporaryDirectory()
        let url = "https://shop.example/"
        try await keyjar.ok("cookie", "set", "--url", url, "cart=old; Max-Age=86400")
        try await keyjar.ok("cookie", "set", "--url", url, "theme=dark; Max-Age=86400")
        try await keyjar.ok(
            ["credential", "add", "--url", "https://git.example", "--user", "alice", "--password-stdin"],
            input: "alice-old"
        )
        let file = work.path("b")
        try await keyjar.ok(["backup", file, "--passphrase-stdin"], input: Self.passphrase)

        // Since the backup: cart changed here, theme deleted, a cookie and a credential added.
        try await keyjar.ok("cookie", "set", "--url", url, "cart=new; Max-Age=86400")
        try await keyjar.ok("cookie", "delete", "--domain", "shop.example", "--name", "theme")
        try await keyjar.ok("cookie", "set", "--url", url, "since=1; Max-Age=86400")
        try await keyjar.ok(
            ["credential", "add", "--url", "https://git.example", "--user", "bob", "--password-stdin"],
            input: "bob-pw"
        )

        let restored = try await keyjar.run(["restore", file, "--passphrase-stdin"], input: Self.passphrase)
        #expect(restored.status == 0, "\(restored.error)")
        #expect(
            restored.output == "restored 1 cookie, kept 1 not older here; 0 credentials, kept 1 not older here; "
                + "0 domain rules added\n"
        )
        let header = try await keyjar.ok("cookie", "get", url)
        #expect(
            Set(header.trimmingCharacters(in: .newlines).components(separatedBy: "; ")) == [
                "cart=new", "theme=dark", "since=1",
            ]
        )
        #expect(
            try await keyjar.ok("credential", "list")
                == "https://git.example:443 method default user alice (default)\nhttps://git.example:443 method default user bob\n"
        )
    }
}
