import Foundation
import KeyjarTestSupport
import Testing

/// The encrypted secrets file as a user of a machine without a desktop keyring meets it: a
/// keyjard with no session bus at all, `--secrets encrypted`, and the commands.
@Suite(.timeLimit(hangLimit), .servicesStopCleanly)
struct UnlockCommandTests {
    private let password = "pä55-of-alice"

    /// keyjard with the encrypted file and no D-Bus: no session bus address, no runtime bus.
    private func lockedDaemon() async throws -> DaemonProcess {
        var environment = ProcessInfo.processInfo.environment
        environment["DBUS_SESSION_BUS_ADDRESS"] = nil
        return try await DaemonProcess(arguments: ["--secrets", "encrypted"], environment: environment)
    }

    private func storedPassword(_ keyjar: KeyjarCLI) async throws -> KeyjarCLI.Result {
        try await keyjar.run(["git-credential", "get"], input: "protocol=https\nhost=git.example\n\n")
    }

    private func add(_ keyjar: KeyjarCLI) async throws -> KeyjarCLI.Result {
        try await keyjar.run(
            ["credential", "add", "--url", "https://git.example", "--user", "alice", "--password-stdin"],
            input: password
        )
    }

    /// Locked, a command that needs a password fails at once with status 4 and says what to
    /// do, and one that needs none works; the first unlock sets the passphrase; a wrong one
    /// changes nothing; lock and a restart of keyjard close it again; nothing is lost.
    @Test func lockedItRefusesWithItsOwnStatusAndUnlockedItKeepsEveryPassword() async throws {
        let daemon = try await lockedDaemon()
        let keyjar = KeyjarCLI(daemon: daemon)

        let refused = try await add(keyjar)
        #expect(refused.status == 4, "\(refused)")
        #expect(refused.error.contains("keyjar unlock"), "\(refused.error)")
        #expect(try await keyjar.ok("cookie", "get", "https://git.example/").isEmpty)
        let status = try await keyjar.ok("status")
        #expect(status.contains("locked"), "\(status)")

        try await keyjar.ok("unlock", "--passphrase-stdin", input: "first passphrase\n")
        try await keyjar.ok(
            ["credential", "add", "--url", "https://git.example", "--user", "alice", "--password-stdin"],
            input: password
        )
        #expect(try await storedPassword(keyjar).output.contains("password=\(password)\n"))

        try await keyjar.ok("lock")
        let locked = try await storedPassword(keyjar)
        #expect(!locked.output.contains(password), "\(locked)")
        #expect(try await add(keyjar).status == 4)

        let sealed = daemon.directory.path("data/secrets.sealed")
        let before = try Data(contentsOf: URL(fileURLWithPath: sealed))
        let wrong = try await keyjar.run(["unlock", "--passphrase-stdin"], input: "not it")
        #expect(wrong.status == 1 && wrong.error.contains("passphrase does not open"), "\(wrong)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: sealed)) == before)

        try await keyjar.ok("unlock", "--passphrase-stdin", input: "first passphrase")
        #expect(try await storedPassword(keyjar).output.contains("password=\(password)\n"))

        // A keyjard stopped at the end of the session (SIGTERM) forgets the key: the next starts locked.
        _ = await daemon.stop()
        let later = try await daemon.restarted()
        let again = KeyjarCLI(daemon: later)
        #expect(try await add(again).status == 4)
        try await again.ok("unlock", "--passphrase-stdin", input: "first passphrase")
        #expect(try await storedPassword(again).output.contains("password=\(password)\n"))

        // Neither the password nor the passphrase is in any file keyjard wrote.
        for name in try FileManager.default.subpathsOfDirectory(atPath: daemon.directory.path) {
            let path = daemon.directory.path(name)
            guard let contents = FileManager.default.contents(atPath: path) else { continue }
            for secret in [password, "first passphrase"] {
                #expect(contents.range(of: Data(secret.utf8)) == nil, "\(name) holds a secret in clear")
            }
        }
    }

    private func secretsLock(_ keyjar: KeyjarCLI) async throws -> [String: Any] {
        let status = try await keyjar.ok("status", "--json")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(status.utf8)) as? [String: Any])
        return try #require(object["secretsLock"] as? [String: Any], "\(status)")
    }

    /// An unlock with an idle timeout (its own, or keyjard's `--lock-after-idle`) stays open
    /// while passwords are used and locks once they are not; `status` says until when. Without
    /// one, the file stays open until `keyjar lock`.
    @Test func anUnlockedFileLocksOnceUnusedForItsIdleTimeout() async throws {
        var environment = ProcessInfo.processInfo.environment
        environment["DBUS_SESSION_BUS_ADDRESS"] = nil
        environment["KEYJAR_LOCK_AFTER_IDLE"] = "2h"
        let daemon = try await DaemonProcess(arguments: ["--secrets", "encrypted"], environment: environment)
        let keyjar = KeyjarCLI(daemon: daemon)
        #expect(try await secretsLock(keyjar)["locked"] as? Bool == true)
        #expect(try await keyjar.ok("status").contains("secrets file: locked (`keyjar unlock` opens it)"))

        try await keyjar.ok("unlock", "--passphrase-stdin", input: "the passphrase")
        var lock = try await secretsLock(keyjar)
        #expect(lock["locked"] as? Bool == false)
        #expect(lock["lockAfterIdle"] as? Int == 7_200, "keyjard's KEYJAR_LOCK_AFTER_IDLE: \(lock)")
        let locksIn = try #require(lock["locksIn"] as? Int)
        #expect((1...7_200).contains(locksIn))
        #expect(lock["locksAt"] is String)
        let text = try await keyjar.ok("status")
        #expect(text.contains("unlocked until ") && text.contains("(locks after 2h unused)"), "\(text)")

        try await keyjar.ok("unlock", "--passphrase-stdin", "--lock-after-idle", "0", input: "the passphrase")
        lock = try await secretsLock(keyjar)
        #expect(lock["locked"] as? Bool == false && lock["lockAfterIdle"] == nil && lock["locksIn"] == nil, "\(lock)")
        #expect(try await keyjar.ok("status").contains("secrets file: unlocked until `keyjar lock` or keyjard stops"))
        #expect(try await add(keyjar).status == 0)

        // One second unused, and it locks by itself: what needs a password is refused, and
        // nothing stored is lost.
        try await keyjar.ok("unlock", "--passphrase-stdin", "--lock-after-idle", "1s", input: "the passphrase")
        try await waitUntil("the idle file to lock") { try await secretsLock(keyjar)["locked"] as? Bool == true }
        #expect(try await add(keyjar).status == 4)
        #expect(!(try await storedPassword(keyjar).output.contains(password)))
        try await keyjar.ok("unlock", "--passphrase-stdin", input: "the passphrase")
        #expect(try await storedPassword(keyjar).output.contains("password=\(password)\n"))

        let typo = try await keyjar.run(["unlock", "--passphrase-stdin", "--lock-after-idle", "15 min"], input: "x")
        #expect(typo.status == 2 && typo.error.contains("--lock-after-idle takes a duration"), "\(typo)")
    }

    /// An unlocked key survives a restart of keyjard (SIGHUP, an upgrade) within the login
    /// session, through the kernel's session keyring: never a file, never another session. A
    /// lock, and the end of the session (SIGTERM), forget it.
    @Test func anUnlockSurvivesARestartWithinTheLoginSessionOnly() async throws {
        var environment = ProcessInfo.processInfo.environment
        environment["DBUS_SESSION_BUS_ADDRESS"] = nil
        let arguments = ["--secrets", "encrypted"]
        let daemon = try await DaemonProcess(arguments: arguments, environment: environment)
        try await KeyjarCLI(daemon: daemon).ok("unlock", "--passphrase-stdin", input: "the passphrase")
        #expect(try await add(KeyjarCLI(daemon: daemon)).status == 0)

        #expect(await daemon.stopForRestart() == 0)
        let restarted = try await daemon.restarted()
        let keyjar = KeyjarCLI(daemon: restarted)
        #expect(try await storedPassword(keyjar).output.contains("password=\(password)\n"))
        #expect(try await secretsLock(keyjar)["locked"] as? Bool == false)
        #expect(restarted.log.contains("open with the key kept in the session keyring"), "\(restarted.log)")

        // Another login session has a session keyring of its own: its keyjard starts locked.
        #expect(await restarted.stopForRestart() == 0)
        let peer = DaemonProcess.builtExecutable(named: "KeyjarTestPeer")
        let elsewhere = try await DaemonProcess(
            in: daemon.directory,
            arguments: arguments,
            environment: environment,
            launcher: [peer, "new-session-keyring"]
        )
        #expect(try await add(KeyjarCLI(daemon: elsewhere)).status == 4)
        #expect(await elsewhere.stopForRestart() == 0)

        // `keyjar lock` forgets it: the next keyjard starts locked.
        var next = try await daemon.restarted()
        #expect(try await secretsLock(KeyjarCLI(daemon: next))["locked"] as? Bool == false)
        try await KeyjarCLI(daemon: next).ok("lock")
        #expect(await next.stopForRestart() == 0)
        next = try await daemon.restarted()
        #expect(try await add(KeyjarCLI(daemon: next)).status == 4)

        // So does the end of the login session.
        try await KeyjarCLI(daemon: next).ok("unlock", "--passphrase-stdin", input: "the passphrase")
        #expect(await next.stop() == 0)
        next = try await daemon.restarted()
        #expect(try await add(KeyjarCLI(daemon: next)).status == 4)
        #expect(try await secretsLock(KeyjarCLI(daemon: next))["locked"] as? Bool == true)
    }

    /// A passphrase can come from a descriptor (a systemd credential, a PAM exec), and
    /// keyjard without an encrypted file says there is nothing to unlock.
    @Test func thePassphraseMayComeFromADescriptorAndOnlyAnEncryptedFileIsUnlocked() async throws {
        let daemon = try await lockedDaemon()
        let keyjar = KeyjarCLI(daemon: daemon)
        let file = daemon.directory.path("passphrase")
        try "from a file\n".write(toFile: file, atomically: true, encoding: .utf8)
        let fromDescriptor = try await runCommand(
            "/bin/sh",
            ["-c", "exec \"$0\" unlock --passphrase-fd 3 3<\"$1\"", KeyjarCLI.binary, file],
            environment: keyjar.environment
        )
        #expect(fromDescriptor.status == 0, "\(fromDescriptor.error)")
        #expect(try await add(keyjar).status == 0)

        let plain = KeyjarCLI(daemon: try await DaemonProcess())
        let nothing = try await plain.run(["unlock", "--passphrase-stdin"], input: "anything")
        #expect(nothing.status == 1 && nothing.error.contains("no passphrase to unlock"), "\(nothing)")
        let both = try await plain.run(["unlock", "--passphrase-stdin", "--passphrase-fd", "0"])
        #expect(both.status == 2, "\(both)")
    }
}
