import Foundation
import KeyjarTestSupport
import Testing

/// `keyjar secrets migrate` with a real Secret Service, a real encrypted file and a real keyjard:
/// every password, token and refresh token arrives, the old copies go, and a kill midway loses
/// nothing and is finished by running the command again.
@Suite(.timeLimit(hangLimit), .servicesStopCleanly)
struct SecretsMigrateTests {
    private func environment(_ secrets: PrivateSecretService) -> [String: String] {
        var environment = ProcessInfo.processInfo.environment.merging(secrets.environment) { $1 }
        environment["KEYJAR_SECRETS"] = nil
        return environment
    }

    private func answers(_ keyjar: KeyjarCLI, _ user: String) async throws -> Bool {
        let answer = try await keyjar.run(
            ["git-credential", "get"],
            input: "protocol=https\nhost=git.example\nusername=\(user)\n\n"
        )
        return answer.output.contains("password=pw-\(user)\n")
    }

    private func keyjarItems(_ secrets: PrivateSecretService) async throws -> String {
        try await secrets.secretTool(["search", "--all", "xdg:schema", "org.keyjar.Credential"]).error
    }

    @Test func everySecretMovesToTheEncryptedFileAndBack() async throws {
        let secrets = try await PrivateSecretService()
        let daemon = try await DaemonProcess(environment: environment(secrets))
        let keyjar = KeyjarCLI(daemon: daemon)
        for user in ["alice", "bob"] {
            try await keyjar.ok(
                ["credential", "add", "--url", "https://git.example", "--user", user, "--password-stdin"],
                input: "pw-\(user)"
            )
        }
        try await keyjar.ok(
            ["credential", "add", "--url", "https://api.example", "--token-stdin", "--refresh-token-stdin"]
                + ["--token-endpoint", "https://login.example/token", "--expires-in", "3600"],
            input: "access-1\nrefresh-1\n"
        )
        #expect(try await keyjarItems(secrets).contains("keyjar-user = alice"))

        try await keyjar.ok("secrets", "migrate", "--to", "encrypted", "--passphrase-stdin", input: "the passphrase")
        #expect(try await keyjar.ok("status").contains("secrets: encrypted:"))
        for user in ["alice", "bob"] { #expect(try await answers(keyjar, user)) }
        let token = try await keyjar.ok(
            "credential",
            "show",
            "--url",
            "https://api.example",
            "--method",
            "bearer",
            "--reveal",
            "--force"
        )
        #expect(token.contains("access-1"), "\(token)")
        #expect(!(try await keyjarItems(secrets).contains("keyjar-user")), "the Secret Service kept copies")
        let again = try await keyjar.run(["secrets", "migrate", "--to", "encrypted", "--passphrase-stdin"], input: "x")
        #expect(again.status == 1 && again.error.contains("already"), "\(again)")

        // The database records the new store: a keyjard started later uses it (locked at first).
        #expect(await daemon.stop() == 0)
        let later = try await daemon.restarted()
        let afterRestart = KeyjarCLI(daemon: later)
        #expect(try await afterRestart.ok("status").contains("secrets: encrypted:"))
        try await afterRestart.ok("unlock", "--passphrase-stdin", input: "the passphrase")
        #expect(try await answers(afterRestart, "alice"))

        try await afterRestart.ok("secrets", "migrate", "--to", "secret-service")
        for user in ["alice", "bob"] { #expect(try await answers(afterRestart, user)) }
        #expect(try await keyjarItems(secrets).contains("keyjar-user = bob"))
        let refresh = try await secrets.secretTool(["search", "--all", "xdg:schema", "org.keyjar.RefreshToken"])
        #expect(refresh.error.contains("api.example"), "\(refresh)")
    }

    /// SIGKILL once the copying has begun: keyjard starts again on the old store with every
    /// secret (or on the new one with every secret), and running the command again finishes.
    @Test func aKillDuringAMigrationLosesNothingAndTheNextRunFinishesIt() async throws {
        let secrets = try await PrivateSecretService()
        let daemon = try await DaemonProcess(environment: environment(secrets))
        let keyjar = KeyjarCLI(daemon: daemon)
        let users = (0..<60).map { "user\($0)" }
        for user in users {
            try await keyjar.ok(
                ["credential", "add", "--url", "https://git.example", "--user", user, "--password-stdin"],
                input: "pw-\(user)"
            )
        }
        let sealed = daemon.directory.path("data/secrets.sealed")
        let migration = Task {
            try await keyjar.run(["secrets", "migrate", "--to", "encrypted", "--passphrase-stdin"], input: "pass")
        }
        try await waitUntil("the encrypted file to be made") { FileManager.default.fileExists(atPath: sealed) }
        #expect(await daemon.crash())
        _ = try await migration.value

        let restarted = try await daemon.restarted()
        let after = KeyjarCLI(daemon: restarted)
        let status = try await after.ok("status")
        if status.contains("secrets: secret-service") {
            for user in users { #expect(try await answers(after, user), "\(user) before finishing") }
            try await after.ok("secrets", "migrate", "--to", "encrypted", "--passphrase-stdin", input: "pass")
        } else {
            // Switched before the kill: the copies left behind are removed at start.
            #expect(status.contains("secrets: encrypted:"), "\(status)")
            try await after.ok("unlock", "--passphrase-stdin", input: "pass")
        }
        for user in users { #expect(try await answers(after, user), "\(user)") }
        try await waitUntil(
            "no copy left in the Secret Service",
            asking: {
                !(try await keyjarItems(secrets).contains("keyjar-user"))
            }
        )
    }
}
