import Foundation
import KeyjarTestSupport
import Testing

/// Where keyjard puts passwords when nobody says: chosen at a database's first start from what
/// the machine offers, recorded, and kept whatever environment a later keyjard starts from.
@Suite(.timeLimit(hangLimit), .servicesStopCleanly)
struct SecretsBackendChoiceTests {
    private let password = "pä55-of-alice"

    /// The test's environment with no choice made, no session bus, and no runtime directory
    /// (an SSH login without a session, a container).
    private var headless: [String: String] {
        var environment = ProcessInfo.processInfo.environment
        for name in ["KEYJAR_SECRETS", "DBUS_SESSION_BUS_ADDRESS", "XDG_RUNTIME_DIR", "DISPLAY", "WAYLAND_DISPLAY"] {
            environment[name] = nil
        }
        return environment
    }

    private func backend(_ daemon: DaemonProcess) async throws -> String {
        let status = try await KeyjarCLI(daemon: daemon).ok("status", "--json")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(status.utf8)) as? [String: Any])
        return try #require(object["secretsBackend"] as? String)
    }

    /// No session bus: the encrypted file, asked for with `keyjar unlock`. Once chosen, a
    /// keyjard started where a Secret Service is (another shell) keeps to it, even one whose
    /// KEYJAR_SECRETS names another store while credentials are stored.
    @Test func withoutASessionBusItChoosesTheEncryptedFileAndKeepsToIt() async throws {
        let daemon = try await DaemonProcess(environment: headless)
        #expect(try await backend(daemon).hasPrefix("encrypted:"))
        #expect(daemon.log.contains("no Secret Service"), "\(daemon.log)")
        let keyjar = KeyjarCLI(daemon: daemon)
        let locked = try await keyjar.run(
            ["credential", "add", "--url", "https://git.example", "--user", "alice", "--password-stdin"],
            input: password
        )
        #expect(locked.status == 4 && locked.error.contains("keyjar unlock"), "\(locked)")
        try await keyjar.ok("unlock", "--passphrase-stdin", input: "the passphrase")
        try await keyjar.ok(
            ["credential", "add", "--url", "https://git.example", "--user", "alice", "--password-stdin"],
            input: password
        )
        #expect(await daemon.stopForRestart() == 0)

        let secrets = try await PrivateSecretService()
        var desktop = ProcessInfo.processInfo.environment.merging(secrets.environment) { $1 }
        desktop["KEYJAR_SECRETS"] = nil
        let elsewhere = try await DaemonProcess(in: daemon.directory, environment: desktop)
        #expect(try await backend(elsewhere).hasPrefix("encrypted:"))
        let answer = try await KeyjarCLI(daemon: elsewhere).run(
            ["git-credential", "get"],
            input: "protocol=https\nhost=git.example\n\n"
        )
        #expect(answer.output.contains("password=\(password)\n"), "\(answer)")
        #expect(await elsewhere.stopForRestart() == 0)

        // KEYJAR_SECRETS from another shell gives way to the record: git still gets the password.
        desktop["KEYJAR_SECRETS"] = "secret-service"
        let other = try await DaemonProcess(in: daemon.directory, environment: desktop)
        #expect(try await backend(other).hasPrefix("encrypted:"))
        #expect(other.log.contains("KEYJAR_SECRETS asks for secret-service"), "\(other.log)")
        #expect(await other.stopForRestart() == 0)
        let stillThere = try await daemon.restarted()
        let again = try await KeyjarCLI(daemon: stillThere).run(
            ["git-credential", "get"],
            input: "protocol=https\nhost=git.example\n\n"
        )
        #expect(again.output.contains("password=\(password)\n"), "\(again)")
    }

    /// A Secret Service with an open collection is chosen; one that is locked or has no
    /// collection is chosen only where a desktop can ask to open or create one.
    @Test func aSecretServiceIsChosenWhereItsCollectionCanBeUsed() async throws {
        let open = try await PrivateSecretService()
        var environment = headless.merging(open.environment) { $1 }
        environment["XDG_RUNTIME_DIR"] = nil
        let withOpen = try await DaemonProcess(environment: environment)
        #expect(try await backend(withOpen) == "secret-service")

        try await open.lockLoginCollection()
        let withLocked = try await DaemonProcess(environment: environment)
        #expect(try await backend(withLocked).hasPrefix("encrypted:"))
        #expect(withLocked.log.contains("no open collection and no desktop"), "\(withLocked.log)")
        environment["DISPLAY"] = ":99"
        let onADesktop = try await DaemonProcess(environment: environment)
        #expect(try await backend(onADesktop) == "secret-service")

        let empty = try await PrivateSecretService(loginKeyring: false)
        environment = headless.merging(empty.environment) { $1 }
        #expect(try await backend(try await DaemonProcess(environment: environment)).hasPrefix("encrypted:"))
    }

    /// An SSH-like session, no runtime directory and no bus: the first `keyjar unlock` starts
    /// keyjard, which chooses the encrypted file, and sets its passphrase; git then gets the
    /// password stored after.
    @Test func anSSHSessionWorksFromTheFirstUnlock() async throws {
        let directory = try TemporaryDirectory()
        var environment = headless
        environment["KEYJAR_NO_AUTOSTART"] = nil
        environment["KEYJAR_KEYJARD"] = DaemonProcess.binary
        environment["KEYJAR_SOCKET"] = directory.path("keyjar.sock")
        environment["KEYJAR_DATABASE"] = directory.path("store.sqlite3")
        func keyjar(_ arguments: [String], input: String) async throws -> (status: Int32, output: String, error: String)
        {
            try await runCommand(KeyjarCLI.binary, arguments, environment: environment, input: input)
        }
        let unlocked = try await keyjar(["unlock", "--passphrase-stdin"], input: "the passphrase")
        #expect(unlocked.status == 0, "\(unlocked)")
        let status = try await keyjar(["status", "--json", "--no-start"], input: "")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(status.output.utf8)) as? [String: Any])
        let pid = try #require(object["pid"] as? Int32)
        defer { kill(pid, SIGTERM) }
        #expect((object["secretsBackend"] as? String)?.hasPrefix("encrypted:") == true, "\(object)")
        let added = try await keyjar(
            ["credential", "add", "--url", "https://git.example", "--user", "alice", "--password-stdin"],
            input: password
        )
        #expect(added.status == 0, "\(added)")
        let answer = try await keyjar(["git-credential", "get"], input: "protocol=https\nhost=git.example\n\n")
        #expect(answer.output.contains("password=\(password)\n"), "\(answer)")
        kill(pid, SIGTERM)
        #expect(await eventually { kill(pid, 0) != 0 })
    }
}
