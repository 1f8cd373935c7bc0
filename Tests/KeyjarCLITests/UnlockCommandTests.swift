import Foundation
import KeyjarPlatform
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

        // The file's data key, as keyjard keeps it for a restart (the session keyring, which
        // this test's process shares): the last 32 bytes of what is kept.
        let kept = "keyjar:encrypted-secrets:" + daemon.directory.path("data/secrets.sealed")
        let dataKey = try #require(try SessionKeyring.withPayload(kept) { Data($0.suffix(32)) })
        #expect(dataKey.count == 32)
        // Neither the password, nor the passphrase, nor the data key (raw, hex or base64) is in
        // any file keyjard wrote: database and WAL, secrets file, logs, the runtime directory.
        let written = try FileManager.default.subpathsOfDirectory(atPath: daemon.directory.path)
        #expect(written.contains("data/store.sqlite3") && written.contains("data/secrets.sealed"), "\(written)")
        let hex = dataKey.map { String(format: "%02x", $0) }.joined()
        for name in written {
            let path = daemon.directory.path(name)
            guard let contents = FileManager.default.contents(atPath: path) else { continue }
            for secret in [Data(password.utf8), Data("first passphrase".utf8), dataKey, Data(hex.utf8)]
                + [Data(dataKey.base64EncodedString().utf8)]
            {
                #expect(contents.range(of: secret) == nil, "\(name) holds a secret in clear")
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

    /// At a terminal, the first `credential add` asks for the passphrase that sets the file up
    /// (typed twice), then stores the password: nothing to know beforehand. Piped, it does not
    /// ask (status 4, as above).
    @Test func atATerminalTheFirstAddSetsThePassphrase() async throws {
        let daemon = try await lockedDaemon()
        let keyjar = KeyjarCLI(daemon: daemon)
        // A pseudo-terminal as the command's controlling terminal; each prompt answered.
        let session = try await runCommand(
            "/usr/bin/env",
            [
                "python3", "-c",
                """
                import fcntl, os, subprocess, sys, termios
                master, slave = os.openpty()
                def terminal():
                    os.setsid(); fcntl.ioctl(0, termios.TIOCSCTTY, 0)
                child = subprocess.Popen(sys.argv[1:], stdin=slave, stdout=slave, stderr=slave, preexec_fn=terminal)
                seen = b""
                for prompt, answer in [(b"Password for", b"pw-typed"), (b"Passphrase of keyjar", b"the passphrase"),
                                       (b"same passphrase again", b"the passphrase")]:
                    while prompt not in seen:
                        seen += os.read(master, 1024)
                    # Typed once echo is off: turning it off flushes what was typed before.
                    while termios.tcgetattr(slave)[3] & termios.ECHO:
                        pass
                    os.write(master, answer + b"\\n")
                os.close(slave)
                status = child.wait()
                try:
                    while chunk := os.read(master, 1024):
                        seen += chunk
                except OSError:
                    pass
                print(status)
                print(seen.decode(errors="replace"))
                """,
                KeyjarCLI.binary, "credential", "add", "--url", "https://git.example", "--user", "alice",
            ],
            environment: keyjar.environment
        )
        #expect(session.output.hasPrefix("0\n"), "\(session)")
        #expect(session.output.contains("encrypted file, which is locked"), "\(session)")
        let answer = try await storedPassword(keyjar)
        #expect(answer.output.contains("password=pw-typed\n"), "\(answer)")
        try await keyjar.ok("lock")
        try await keyjar.ok("unlock", "--passphrase-stdin", input: "the passphrase")
    }

    /// Over the wire, as a guesser meets it: three wrong passphrases cost scrypt's time only,
    /// each one after is answered no sooner than a wait that doubles (1 s, 2 s, …), and the right
    /// one still opens the file (after its wait) and starts the count again. Only lower bounds
    /// are checked: a busy machine makes every answer later, never earlier.
    @Test func repeatedWrongPassphrasesAreAnsweredLaterEachTime() async throws {
        let daemon = try await lockedDaemon()
        let keyjar = KeyjarCLI(daemon: daemon)
        try await keyjar.ok("unlock", "--passphrase-stdin", input: "the passphrase")
        try await keyjar.ok("lock")
        let clock = ContinuousClock()
        func attempt(_ passphrase: String) async throws -> (status: Int32, took: Duration) {
            let start = clock.now
            let result = try await keyjar.run(["unlock", "--passphrase-stdin"], input: passphrase)
            return (result.status, start.duration(to: clock.now))
        }
        for _ in 0..<3 { #expect(try await attempt("wrong").status == 1) }
        let fourth = try await attempt("wrong")
        #expect(fourth.status == 1 && fourth.took >= .seconds(1), "\(fourth)")
        let fifth = try await attempt("wrong")
        #expect(fifth.status == 1 && fifth.took >= .seconds(2), "\(fifth)")
        let right = try await attempt("the passphrase")
        #expect(right.status == 0 && right.took >= .seconds(4), "\(right)")
        #expect(try await add(keyjar).status == 0)
    }

    /// keyjard killed (SIGKILL) while passwords are being stored: every one acknowledged before
    /// is there after a restart, the file opens (it is replaced whole, never half-written), and
    /// the restarted keyjard is open at once (a crash keeps the key for the session).
    @Test func aKillDuringWritesLosesNoAcknowledgedPassword() async throws {
        let daemon = try await lockedDaemon()
        let keyjar = KeyjarCLI(daemon: daemon)
        try await keyjar.ok("unlock", "--passphrase-stdin", input: "the passphrase")
        let acknowledged = Acknowledged()
        let writer = Task {
            for index in 0..<40 {
                let user = "user\(index)"
                let result = try await keyjar.run(
                    ["credential", "add", "--url", "https://git.example", "--user", user, "--password-stdin"],
                    input: "pw-\(user)"
                )
                guard result.status == 0 else { return }
                await acknowledged.add(user)
            }
        }
        let killAfter = Int.random(in: 3...12)
        try await waitUntil("\(killAfter) acknowledged writes") { await acknowledged.users.count >= killAfter }
        #expect(await daemon.crash())
        try await writer.value

        let restarted = try await daemon.restarted()
        let again = KeyjarCLI(daemon: restarted)
        let stored = await acknowledged.users
        #expect(stored.count >= killAfter)
        for user in stored {
            let answer = try await again.run(
                ["git-credential", "get"],
                input: "protocol=https\nhost=git.example\nusername=\(user)\n\n"
            )
            #expect(answer.output.contains("password=pw-\(user)\n"), "\(user): \(answer)")
        }
        try await again.ok("lock")
        try await again.ok("unlock", "--passphrase-stdin", input: "the passphrase")
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

/// The users whose password keyjard acknowledged, in order.
private actor Acknowledged {
    private(set) var users: [String] = []

    func add(_ user: String) { users.append(user) }
}
