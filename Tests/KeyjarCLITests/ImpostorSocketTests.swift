import Foundation
import Glibc
import KeyjarTestSupport
import Testing

/// A client tells its own keyjard from another local user's process before it sends anything:
/// the socket's directory must be a real directory of the user that nobody else can enter,
/// and the process serving it must run as the user (`SO_PEERCRED`). Otherwise another user who
/// made `/tmp/keyjar-UID` first (no XDG_RUNTIME_DIR: cron, `su`, a container), or who got a
/// socket of theirs into the user's directory, would be sent the user's passwords. The real
/// `keyjar` against a listener run as uid 65534 with `setpriv` (root only, skipped otherwise).
@Suite(.timeLimit(hangLimit), .servicesStopCleanly)
struct ImpostorSocketTests {
    static let other: uid_t = 65534

    /// Listens as uid 65534 at `argv[1]`, and for each connection prints how many bytes it got.
    static let listener = """
        import socket, sys
        s = socket.socket(socket.AF_UNIX); s.bind(sys.argv[1]); s.listen(8)
        print("listening", flush=True)
        while True:
            c, _ = s.accept()
            c.settimeout(60)
            total = 0
            try:
                while True:
                    b = c.recv(65536)
                    if not b: break
                    total += len(b)
            except OSError:
                pass
            print("received", total, flush=True)
            c.close()
        """

    /// A listener of uid 65534 at `path`, its output collected.
    final class Impostor {
        let process = ChildProcess()
        let output = OutputCollector()

        init(at path: String) async throws {
            process.executableURL = URL(fileURLWithPath: "/usr/bin/setpriv")
            process.arguments = [
                "--reuid=\(other)", "--regid=\(other)", "--clear-groups", "/usr/bin/python3", "-c", listener, path,
            ]
            process.standardOutput = output.pipe
            try process.run()
            output.start()
            try await waitUntil("the impostor listening") { output.text.contains("listening\n") }
        }

        deinit { kill(process.processIdentifier, SIGKILL) }
    }

    /// A directory of uid 65534 that it and everyone can write, inside a test directory it can
    /// reach: what another user makes in /tmp.
    static func theirDirectory(in directory: TemporaryDirectory, _ name: String) -> String {
        let path = directory.path(name)
        #expect(mkdir(path, 0o777) == 0 && chmod(path, 0o777) == 0 && chown(path, other, other) == 0)
        return path
    }

    func keyjar(
        _ arguments: [String],
        socket: String,
        autoStart: Bool = false,
        input: String = ""
    ) async throws -> (
        status: Int32, output: String, error: String
    ) {
        var environment = ProcessInfo.processInfo.environment
        environment["KEYJAR_SOCKET"] = socket
        environment["KEYJAR_NO_AUTOSTART"] = autoStart ? nil : "1"
        environment["KEYJAR_KEYJARD"] = DaemonProcess.binary
        return try await runCommand(
            KeyjarCLI.binary,
            arguments + ["--timeout", "5"],
            environment: environment,
            input: input
        )
    }

    /// A socket in the user's own private directory, served by another user's process: refused
    /// on its peer's uid, and the impostor gets nothing, not even the hello.
    @Test(.enabled(if: getuid() == 0, "needs root to run a process as another user"))
    func aSocketServedByAnotherUserGetsNothing() async throws {
        let directory = try TemporaryDirectory()
        #expect(chmod(directory.path, 0o711) == 0)
        let theirs = Self.theirDirectory(in: directory, "theirs")
        let impostor = try await Impostor(at: theirs + "/keyjar.sock")
        // Moved into a directory of the user's alone: only the peer check is left to refuse it.
        let mine = directory.path("run")
        #expect(mkdir(mine, 0o700) == 0)
        #expect(rename(theirs + "/keyjar.sock", mine + "/keyjar.sock") == 0)

        let result = try await keyjar(
            ["credential", "add", "--url", "https://bank.example", "--user", "alice", "--password-stdin"],
            socket: mine + "/keyjar.sock",
            input: "the-password\n"
        )
        #expect(result.status != 0)
        #expect(result.error.contains("runs as uid \(Self.other), not as you"), "\(result.error)")
        try await waitUntil("the impostor's connection ending") { impostor.output.text.contains("received") }
        #expect(impostor.output.text == "listening\nreceived 0\n", "\(impostor.output.text)")
    }

    /// A socket directory another user made (as they could make `/tmp/keyjar-UID`), or a link
    /// in its place: refused before connecting, naming the path and its owner; and no keyjard
    /// is started there either.
    @Test(.enabled(if: getuid() == 0, "needs root to run a process as another user"))
    func aSocketDirectoryOfAnotherUserIsRefused() async throws {
        let directory = try TemporaryDirectory()
        #expect(chmod(directory.path, 0o711) == 0)
        let theirs = Self.theirDirectory(in: directory, "keyjar-\(getuid())")
        let impostor = try await Impostor(at: theirs + "/keyjar.sock")
        let refused = try await keyjar(["cookie", "list"], socket: theirs + "/keyjar.sock")
        #expect(refused.status != 0)
        #expect(refused.error.contains("\(theirs) belongs to uid \(Self.other), not to you"), "\(refused.error)")

        let link = directory.path("link")
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: theirs)
        let linked = try await keyjar(["cookie", "list"], socket: link + "/keyjar.sock")
        #expect(linked.status != 0 && linked.error.contains("\(link) is a symbolic link"), "\(linked.error)")
        #expect(!impostor.output.text.contains("received"), "the impostor was connected to")

        // With auto-start: no keyjard is started in their (empty) directory.
        let empty = Self.theirDirectory(in: directory, "empty")
        let started = try await keyjar(["cookie", "list"], socket: empty + "/keyjar.sock", autoStart: true)
        #expect(started.status != 0 && started.error.contains("belongs to uid \(Self.other)"), "\(started.error)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: empty).isEmpty)
    }
}
