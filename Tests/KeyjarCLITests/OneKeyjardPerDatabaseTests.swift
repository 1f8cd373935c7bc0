import Foundation
import Glibc
import KeyjarTestSupport
import Testing

/// One keyjard per database, found by every client: a shell without the desktop's
/// `XDG_RUNTIME_DIR` (cron, `su`, ssh without pam_systemd, a container) computes another socket
/// for the same database. Its `keyjar` reaches the keyjard that serves the database (through
/// the pointer beside it) instead of starting a second one, whose jar would diverge; and a
/// second keyjard started by hand on a served database refuses, naming the first.
@Suite(.timeLimit(hangLimit), .servicesStopCleanly)
struct OneKeyjardPerDatabaseTests {
    @Test func aSecondKeyjardOnAServedDatabaseRefusesNamingTheFirst() async throws {
        let daemon = try await DaemonProcess()
        let other = try TemporaryDirectory()
        let second = try await runCommand(
            DaemonProcess.binary,
            ["--socket", other.path("run/keyjar.sock"), "--database", daemon.databasePath]
        )
        #expect(second.status == 1)
        #expect(
            second.error.contains(
                "another keyjard (pid \(daemon.pid)) already serves the database \(daemon.databasePath) at \(daemon.socketPath)"
            ),
            "\(second.error)"
        )
        #expect(!FileManager.default.fileExists(atPath: other.path("run/keyjar.sock")))
    }

    @Test func aShellWithAnotherRuntimeDirectoryReachesTheKeyjardOfItsDatabase() async throws {
        let daemon = try await DaemonProcess()
        let keyjar = KeyjarCLI(daemon: daemon)
        let runtime = try TemporaryDirectory()
        var shell = ProcessInfo.processInfo.environment
        shell["KEYJAR_SOCKET"] = nil
        shell["KEYJAR_NO_AUTOSTART"] = nil
        shell["XDG_RUNTIME_DIR"] = runtime.path
        shell["KEYJAR_DATABASE"] = daemon.databasePath
        shell["KEYJAR_KEYJARD"] = DaemonProcess.binary
        let ownSocket = runtime.path("keyjar/keyjar.sock")

        let set = try await runCommand(
            KeyjarCLI.binary,
            ["cookie", "set", "--url", "https://shell.example/", "from=shell; Max-Age=86400"],
            environment: shell
        )
        #expect(set.status == 0, "\(set.error)")
        // The cookie is in the one jar every client of the database sees, at once.
        #expect(try await keyjar.ok("cookie", "get", "https://shell.example/") == "from=shell\n")
        #expect(!FileManager.default.fileExists(atPath: ownSocket), "a second keyjard was started")

        let status = try await runCommand(KeyjarCLI.binary, ["status"], environment: shell)
        #expect(status.status == 0, "\(status.error)")
        #expect(
            status.output.contains("socket: \(daemon.socketPath) (nothing listens at \(ownSocket)"),
            "\(status.output)"
        )
        #expect(status.output.contains("pid \(daemon.pid)"))

        // Once that keyjard is gone, the shell starts its own on its own socket, as before.
        #expect(await daemon.stop() == 0)
        let started = try await runCommand(
            KeyjarCLI.binary,
            ["cookie", "get", "https://shell.example/"],
            environment: shell
        )
        #expect(started.status == 0 && started.output == "from=shell\n", "\(started.error)")
        #expect(FileManager.default.fileExists(atPath: ownSocket))
        // Stop that keyjard (its pid is in the database's pointer).
        let pointer = try String(contentsOfFile: daemon.databasePath + ".keyjard", encoding: .utf8)
        let pid = pointer.split(separator: "\n").first { $0.hasPrefix("pid ") }.flatMap { Int32($0.dropFirst(4)) }
        #expect(pointer.contains("socket \(ownSocket)\n"), "\(pointer)")
        let shellsKeyjard = try #require(pid)
        #expect(kill(shellsKeyjard, SIGTERM) == 0)
        // Not this test's child (the command started it in a session of its own): watched.
        try await waitUntil("the shell's keyjard stopping") { kill(shellsKeyjard, 0) != 0 && errno == ESRCH }
    }

    /// A client that starts no keyjard (KEYJAR_NO_AUTOSTART=1, the stress clients) still
    /// reaches the one that serves its database elsewhere, and starts none when there is none.
    @Test func aClientThatStartsNoKeyjardStillReachesTheOneOfItsDatabase() async throws {
        let daemon = try await DaemonProcess()
        let keyjar = KeyjarCLI(daemon: daemon)
        let runtime = try TemporaryDirectory()
        var shell = ProcessInfo.processInfo.environment
        shell["KEYJAR_SOCKET"] = nil
        shell["KEYJAR_NO_AUTOSTART"] = "1"
        shell["XDG_RUNTIME_DIR"] = runtime.path
        shell["KEYJAR_DATABASE"] = daemon.databasePath
        shell["KEYJAR_KEYJARD"] = DaemonProcess.binary

        let set = try await runCommand(
            KeyjarCLI.binary,
            ["cookie", "set", "--url", "https://unstarted.example/", "from=shell; Max-Age=86400"],
            environment: shell
        )
        #expect(set.status == 0, "\(set.error)")
        #expect(try await keyjar.ok("cookie", "get", "https://unstarted.example/") == "from=shell\n")

        #expect(await daemon.stop() == 0)
        let none = try await runCommand(
            KeyjarCLI.binary,
            ["cookie", "get", "https://unstarted.example/"],
            environment: shell
        )
        #expect(none.status == 3, "\(none.output) \(none.error)")
        #expect(!FileManager.default.fileExists(atPath: runtime.path("keyjar/keyjar.sock")), "a keyjard was started")
    }
}
