import Foundation
import KeyjarTestSupport
import Testing

@Suite(.timeLimit(hangLimit), .servicesStopCleanly)
struct CredentialCommandTests {
    @Test func addListShowDefaultAndRemove() async throws {
        let daemon = try await DaemonProcess()
        let keyjar = KeyjarCLI(daemon: daemon)
        let host = uniqueHost("cli-cred")
        let url = "https://\(host)"
        let space = ["--url", url, "--realm", "Admin", "--method", "basic"]

        // Given two users in one space, passwords piped in
        try await keyjar.ok(
            ["credential", "add"] + space + ["--user", "alice", "--password-stdin"],
            input: "alice-pw\n"
        )
        try await keyjar.ok(["credential", "add"] + space + ["--user", "bob", "--password-stdin"], input: "bob-pw")
        try await keyjar.ok(
            [
                "credential", "add", "--proxy", "http", "--url", "http://proxy.\(host):3128", "--user", "carol",
                "--password-stdin",
            ],
            input: "carol-pw\n"
        )

        // Then list shows them, the first of a space as its default, and never a password
        let listing = try await keyjar.ok("credential", "list", "--url", url)
        #expect(
            listing == """
                \(url):443 realm "Admin" method basic user alice (default)
                \(url):443 realm "Admin" method basic user bob

                """
        )
        let all = try await keyjar.ok("credential", "list")
        #expect(all.contains("proxy http://proxy.\(host):3128 method default user carol (default)"))
        let records = try #require(
            try await keyjar.json("credential", "list", "--json", "--url", url) as? [[String: Any]]
        )
        #expect(records.map { $0["user"] as? String } == ["alice", "bob"])
        #expect(records.first?["method"] as? String == "basic" && records.first?["port"] as? Int == 443)
        for output in await [
            listing, all, try keyjar.ok("credential", "list", "--json"),
            try keyjar.ok("credential", "show", "--url", url),
        ] {
            #expect(!output.contains("alice-pw") && !output.contains("bob-pw") && !output.contains("carol-pw"))
        }

        // And show picks the default, and reveals only when forced into a pipe
        #expect(try await keyjar.ok("credential", "show", "--url", url).contains("user: alice"))
        let refused = try await keyjar("credential", "show", "--url", url, "--reveal")
        #expect(refused.status == 2 && refused.output.isEmpty && refused.error.contains("--force"))
        #expect(
            try await keyjar.ok("credential", "show", "--url", url, "--user", "bob", "--reveal", "--force").contains(
                "password: bob-pw\n"
            )
        )
        let shown = try #require(
            try await keyjar.json("credential", "show", "--url", url, "--reveal", "--force", "--json") as? [String: Any]
        )
        #expect(shown["password"] as? String == "alice-pw" && shown["default"] as? Bool == true)

        // When bob becomes the default, and a password is replaced
        try await keyjar.ok("credential", "default", "--url", url, "--user", "bob")
        #expect(try await keyjar.ok("credential", "show", "--url", url).contains("user: bob"))
        try await keyjar.ok(
            ["credential", "add"] + space + ["--user", "alice", "--password-stdin"],
            input: "new-pw\n"
        )
        #expect(
            try await keyjar.ok("credential", "show", "--url", url, "--user", "alice", "--reveal", "--force").contains(
                "password: new-pw\n"
            )
        )

        // And removed, they are gone, from the Secret Service too
        try await keyjar.ok("credential", "remove", "--url", url, "--user", "alice")
        #expect(try await keyjar("credential", "list", "--url", url).lines.count == 1)
        let secretTool = try await runCommand("/usr/bin/secret-tool", ["search", "--all", "keyjar-server", host])
        #expect(!secretTool.output.contains("alice") && !secretTool.error.contains("alice"))
        let gone = try await keyjar("credential", "show", "--url", url, "--user", "alice")
        #expect(gone.status == 1 && gone.error.contains("no stored credential for alice"))
        try await keyjar.ok("credential", "remove", "--url", url, "--all")
        try await keyjar.ok(
            "credential",
            "remove",
            "--proxy",
            "http",
            "--url",
            "http://proxy.\(host):3128",
            "--user",
            "carol"
        )
        #expect(try await keyjar.ok("credential", "list").isEmpty)
    }

    @Test func ambiguousSelectionsAskToNarrow() async throws {
        let daemon = try await DaemonProcess()
        let keyjar = KeyjarCLI(daemon: daemon)
        let url = "https://\(uniqueHost("cli-narrow"))"
        try await keyjar.ok(
            ["credential", "add", "--url", url, "--realm", "A", "--user", "u", "--password-stdin"],
            input: "1"
        )
        try await keyjar.ok(
            ["credential", "add", "--url", url, "--realm", "B", "--user", "u", "--password-stdin"],
            input: "2"
        )

        let ambiguous = try await keyjar("credential", "remove", "--url", url, "--user", "u")
        #expect(ambiguous.status == 2 && ambiguous.error.contains("2 stored credentials for u match"))
        try await keyjar.ok("credential", "remove", "--url", url, "--user", "u", "--realm", "B")
        #expect(
            try await keyjar.ok("credential", "show", "--url", url, "--reveal", "--force").contains("password: 1\n")
        )
        try await keyjar.ok("credential", "remove", "--url", url, "--user", "u")
    }

    @Test func badInputIsRefusedWithoutStoringAnything() async throws {
        let daemon = try await DaemonProcess()
        let keyjar = KeyjarCLI(daemon: daemon)
        let url = "https://\(uniqueHost("cli-bad"))"

        let cases: [([String], String)] = [
            (
                ["--url", url, "--user", "a", "--method", "kerberos-ish"],
                "the value 'kerberos-ish' is invalid for '--method"
            ),
            (["--url", "not a url", "--user", "a"], "'not a url' is not a URL"),
            (["--url", "example.com", "--user", "a"], "'example.com' is not a URL"),
            (["--url", "https://a:secret@example.com", "--user", "a"], "never takes passwords from arguments"),
            (["--url", url, "--user", "a", "--persistence", "session"], "Please provide one of 'permanent'"),
            (["--url", url, "--user", "a", "--proxy", "gopher"], "the value 'gopher' is invalid for '--proxy"),
            (["--url", url], "missing --user"),
            (["--url", url, "--user", "a", "--password", "x"], "unknown option '--password'"),
            // Validation: what could never be told apart or matched is refused.
            (["--url", url, "--user", ""], "--user needs a user name"),
            (["--url", url + ":0", "--user", "a"], "a port is a number from 1 to 65535"),
            (["--url", url + ":99999", "--user", "a"], "a port is a number from 1 to 65535"),
            (["--url", url, "--realm", "", "--user", "a"], "--realm needs a realm"),
        ]
        for (arguments, message) in cases {
            let result = try await keyjar.run(["credential", "add"] + arguments + ["--password-stdin"], input: "pw\n")
            #expect(result.status == 2, "\(arguments)")
            #expect(result.error.contains(message), "\(arguments): \(result.error)")
            // The error contract: one line, `keyjar: …`, naming where the help is.
            #expect(result.error.hasPrefix("keyjar: ") && result.error.filter { $0 == "\n" }.count == 1)
            #expect(result.error.contains("See 'keyjar credential add --help'."), "\(result.error)")
            // Secrets never echo back, even in an error.
            #expect(!result.error.contains("secret@") || message.contains("never takes"), "\(arguments)")
        }
        let empty = try await keyjar.run(
            ["credential", "add", "--url", url, "--user", "a", "--password-stdin"],
            input: "\n"
        )
        // Bad input, like a missing terminal: status 2.
        #expect(empty.status == 2 && empty.error.contains("empty"))
        #expect(try await keyjar.ok("credential", "list").isEmpty)
    }

    @Test func statusShowsHalfCredentialsAndRepairKeepsThem() async throws {
        let secrets = try await PrivateSecretService()
        let daemon = try await DaemonProcess(environment: secrets.environment)
        let keyjar = KeyjarCLI(daemon: daemon)
        for user in ["alice", "bob"] {
            try await keyjar.ok(
                ["credential", "add", "--url", "https://half.example", "--user", user, "--password-stdin"],
                input: "pw-\(user)"
            )
        }
        #expect(try await keyjar.ok("status").contains("credentials and passwords: every credential has its password"))
        let bob = PrivateSecretService.keyjarAttributes(host: "half.example", port: 443, protocol: "https", user: "bob")
        #expect(try await secrets.secretTool(["clear"] + bob).status == 0)

        let status = try await keyjar.ok("status")
        #expect(
            status.contains(
                "credentials and passwords: not in pairs (`keyjar credential repair` adopts the passwords, keeps the credentials):\n"
            )
        )
        let bobsStatus = try #require(status.split(separator: "\n").first { $0.contains("user bob") })
        #expect(
            bobsStatus.hasPrefix("  credential without its password (gone since ")
                && bobsStatus.hasSuffix("): https://half.example:443 method default user bob"),
            "\(bobsStatus)"
        )
        let json = try #require(try await keyjar.json("status", "--json") as? [String: Any])
        let mismatches = try #require(json["credentialMismatches"] as? [[String: Any]])
        #expect(mismatches.map { $0["kind"] as? String } == ["passwordMissing"])

        let bobsLine = "credential without its password: https://half.example:443 method default user bob\n"
        #expect(try await keyjar.ok("credential", "repair", "--dry-run") == "would keep " + bobsLine)
        #expect(try await keyjar.ok("credential", "repair") == "kept " + bobsLine)
        let both =
            "https://half.example:443 method default user alice (default)\nhttps://half.example:443 method default user bob\n"
        #expect(try await keyjar.ok("credential", "list") == both)
        #expect(
            try await keyjar.ok("credential", "repair", "--remove-unpaired", "--dry-run") == "would remove " + bobsLine
        )
        #expect(try await keyjar.ok("credential", "repair", "--remove-unpaired") == "removed " + bobsLine)
        #expect(
            try await keyjar.ok("credential", "list")
                == "https://half.example:443 method default user alice (default)\n"
        )
        #expect(try await keyjar.ok("credential", "repair") == "nothing to repair: every credential has its password\n")
        for output in await [status, try keyjar.ok("status", "--json")] { #expect(!output.contains("pw-")) }
    }

    /// A database restored from a backup older than the keyring lacks the records of the
    /// passwords stored since; the repair `keyjar status` recommends adopts them back.
    @Test func repairAfterRestoringAnOlderDatabaseLeavesEveryPasswordUsable() async throws {
        let secrets = try await PrivateSecretService()
        let daemon = try await DaemonProcess(environment: secrets.environment)
        let keyjar = KeyjarCLI(daemon: daemon)
        try await keyjar.ok(
            ["credential", "add", "--url", "https://restored.example", "--user", "alice", "--password-stdin"],
            input: "pw-alice"
        )
        #expect(await daemon.stop() == 0)
        let backup = daemon.databasePath + ".backup"
        try FileManager.default.copyItem(atPath: daemon.databasePath, toPath: backup)

        let later = try await daemon.restarted()
        let laterKeyjar = KeyjarCLI(daemon: later)
        try await laterKeyjar.ok(
            ["credential", "add", "--url", "https://restored.example", "--user", "bob", "--password-stdin"],
            input: "pw-bob"
        )
        #expect(await later.stop() == 0)
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: daemon.databasePath + suffix) }
        try FileManager.default.copyItem(atPath: backup, toPath: daemon.databasePath)

        let restored = try await daemon.restarted()
        let restoredKeyjar = KeyjarCLI(daemon: restored)
        let status = try await restoredKeyjar.ok("status")
        #expect(
            status.contains("  password without a credential: https://restored.example:443 method default user bob\n")
        )
        #expect(
            try await restoredKeyjar.ok("credential", "repair")
                == "adopted password without a credential: https://restored.example:443 method default user bob\n"
        )
        for user in ["alice", "bob"] {
            let shown = try await restoredKeyjar.ok(
                "credential",
                "show",
                "--url",
                "https://restored.example",
                "--user",
                user,
                "--reveal",
                "--force"
            )
            #expect(shown.contains("password: pw-\(user)\n"), "\(shown)")
        }
        #expect(try await restoredKeyjar.ok("status").contains("every credential has its password"))
    }
}
