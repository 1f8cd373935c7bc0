import Foundation
import Glibc
import KeyjarTestSupport
import Testing

/// The command's contract with its users (docs/command-line.md, "Exit status and errors"), held
/// against the real `keyjar` binary: output that cannot be written is an error; every error is
/// one `keyjar: …` line with a documented status; secrets are read exactly; files named with -o
/// are written through, never replaced; a stopped or foreign keyjard does not hang a command.
@Suite(.timeLimit(hangLimit), .servicesStopCleanly)
struct CommandContractTests {
    /// Runs keyjar through the shell, for redirections a pipe cannot make (`>/dev/full`, `>&-`)
    /// and a working directory of the test's choosing.
    static func shell(
        _ keyjar: KeyjarCLI,
        _ arguments: [String],
        redirect: String = "",
        in directory: String? = nil,
        input: String? = nil,
        environment extra: [String: String] = [:]
    ) async throws -> KeyjarCLI.Result {
        let change = directory.map { "cd '\($0)' && " } ?? ""
        let result = try await runCommand(
            "/bin/sh",
            ["-c", change + "exec \"$0\" \"$@\" \(redirect)", KeyjarCLI.binary] + arguments,
            environment: keyjar.environment.merging(extra) { _, new in new },
            input: input ?? ""
        )
        return KeyjarCLI.Result(status: result.status, output: result.output, error: result.error)
    }

    // MARK: Output that cannot be written

    /// Every command that prints a result, with standard output full and closed: one
    /// `keyjar:` line and status 1, never a crash and never a silent success.
    @Test func everyCommandFailsClearlyWhenItsOutputCannotBeWritten() async throws {
        let daemon = try await DaemonProcess()
        let keyjar = KeyjarCLI(daemon: daemon)
        let cacheHome = try TemporaryDirectory()
        let server = try await LocalHTTPServer(script: FetchCommandTests.server)
        let host = uniqueHost("out")
        try await keyjar.ok("cookie", "set", "--url", "https://\(host)/", "sid=1; Max-Age=86400")
        try await keyjar.ok(
            ["credential", "add", "--url", "https://\(host)", "--user", "u", "--password-stdin"],
            input: "pw"
        )
        try await keyjar.ok("policy", "domain", "block", "ads.\(host)")
        let environment = ["XDG_CACHE_HOME": cacheHome.path]
        _ = try await keyjar.run(["fetch", "-s", "--cache", server.base + "/counted"], environment: environment)
        let file = daemon.directory.path("import.txt")
        try ".\(host)\tTRUE\t/\tFALSE\t0\tn\tv\n".write(toFile: file, atomically: true, encoding: .utf8)
        let commands: [[String]] = [
            ["status"], ["status", "--json"], ["cookie", "list"], ["cookie", "list", "--json"],
            ["cookie", "get", "https://\(host)/"], ["cookie", "export"], ["cookie", "export", "--format", "json"],
            ["cookie", "import", file], ["credential", "list"], ["credential", "list", "--json"],
            ["credential", "show", "--url", "https://\(host)"], ["policy", "get"], ["policy", "get", "--json"],
            ["policy", "domain", "list"], ["cache", "list"], ["cache", "list", "--json"],
            ["fetch", "-s", server.base + "/hello"], ["fetch", "-s", "-o", "-", server.base + "/hello"],
            ["--version"], ["cookie", "--help"], ["--generate-completion-script", "bash"],
        ]
        for arguments in commands {
            for redirect in [">/dev/full", ">&-"] {
                let result = try await Self.shell(keyjar, arguments, redirect: redirect, environment: environment)
                #expect(result.status == 1, "keyjar \(arguments) \(redirect): \(result.status) \(result.error)")
                #expect(
                    result.error.hasPrefix("keyjar: ") && result.error.filter { $0 == "\n" }.count == 1
                        && result.error.contains("standard output"),
                    "keyjar \(arguments) \(redirect): \(result.error)"
                )
            }
        }
        let git = try await Self.shell(
            keyjar,
            ["git-credential", "get"],
            redirect: ">/dev/full",
            input: "protocol=https\nhost=\(host)\n\n"
        )
        #expect(git.status == 1 && git.error.contains("standard output"), "\(git.error)")
    }

    // MARK: The error contract

    @Test func errorsAreOneLineWithTheDocumentedStatus() async throws {
        let daemon = try await DaemonProcess()
        let keyjar = KeyjarCLI(daemon: daemon)

        let unknown = try await keyjar("help", "bogus")
        #expect(unknown.status == 2 && unknown.output.isEmpty && unknown.error.hasPrefix("keyjar: "))
        #expect(try await keyjar("help", "cookie", "list").status == 0)
        let usage = try await keyjar("cookie", "frobnicate")
        #expect(usage.status == 2 && usage.error.hasPrefix("keyjar: ") && !usage.error.contains("Error:"))

        // Nothing to delete is a failure for both ways of deleting.
        let host = uniqueHost("nothing")
        #expect(try await keyjar("cookie", "delete", "--domain", host, "--name", "x").status == 1)
        #expect(try await keyjar("cookie", "clear", "--domain", host).status == 1)

        // A directory given as a file: the system's reason, not Foundation's error domain.
        for arguments in [
            ["cookie", "import", daemon.directory.path], ["cookie", "export", "-o", daemon.directory.path],
        ] {
            let result = try await keyjar.run(arguments)
            #expect(
                result.status == 1
                    && result.error
                        == "keyjar: cannot \(arguments[1] == "import" ? "read" : "write") \(daemon.directory.path): it is a directory.\n",
                "\(result.error)"
            )
        }

        // A file that is missing or a directory: said once, with the system's reason.
        let missing = daemon.directory.path("none.pem")
        let identity = try await keyjar("credential", "add", "--url", "https://\(host)", "--identity", missing)
        #expect(
            identity.status == 1 && identity.error == "keyjar: cannot read \(missing): No such file or directory.\n"
        )
        let body = try await keyjar("fetch", "-d", "@" + daemon.directory.path, "http://127.0.0.1:9/")
        #expect(body.error == "keyjar: cannot read the request body from \(daemon.directory.path): Is a directory.\n")

        // A refused 5 KB cookie is named, not echoed whole.
        let long = String(repeating: "a", count: 5_000)
        let refused = try await keyjar("cookie", "set", "--url", "https://\(host)/", "big=\(long)")
        #expect(refused.status == 1 && refused.error.count < 600, "\(refused.error.count)")

        // Unreachable, status --json still prints its object.
        let none = try await keyjar.run(
            ["status", "--json", "--no-start", "--socket", daemon.directory.path("none.sock")],
            environment: KeyjarCLI.unservedDatabase(in: daemon.directory)
        )
        #expect(none.status == 3)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(none.output.utf8)) as? [String: Any])
        #expect(object["reachable"] as? Bool == false)
    }

    /// A socket that answers but is not keyjard's: "not keyjard", status 3, not the decoder's words.
    @Test func aSocketThatIsNotKeyjardsIsUnreachable() async throws {
        let directory = try TemporaryDirectory()
        let socket = directory.path("foreign.sock")
        let foreign = try await LocalHTTPServer(
            script: """
                import os, socket, sys, threading
                s = socket.socket(socket.AF_UNIX); s.bind(sys.argv[1]); s.listen()
                print(0, flush=True)
                while True:
                    c, _ = s.accept(); c.recv(100); c.sendall(b"\\xff\\xff\\xff\\x7fgarbage, not keyjard")
                """,
            arguments: [socket]
        )
        _ = foreign
        let result = try await runCommand(
            KeyjarCLI.binary,
            ["status", "--no-start", "--socket", socket]
        )
        #expect(result.status == 3, "\(result.error)")
        #expect(
            result.error
                == "keyjar: \(socket) is not keyjard's socket: what answers there does not speak Keyjar's protocol\n"
        )
    }

    /// A stopped keyjard accepts connections and never answers: every command gives up after
    /// its timeout (--timeout, KEYJAR_TIMEOUT), git's helper after 5 s unless told otherwise.
    @Test func aStoppedKeyjardFailsCommandsAfterTheirTimeout() async throws {
        let daemon = try await DaemonProcess()
        let keyjar = KeyjarCLI(daemon: daemon)
        kill(daemon.pid, SIGSTOP)
        defer { kill(daemon.pid, SIGCONT) }
        let status = try await keyjar("status", "--timeout", "0.5")
        #expect(status.status == 3 && status.error.contains("did not answer within 0.5 s"), "\(status.error)")
        let list = try await keyjar.run(["cookie", "list"], environment: ["KEYJAR_TIMEOUT": "0.5"])
        #expect(list.status == 3 && list.error.contains("within 0.5 s"), "\(list.error)")
        // git's helper as git runs it: no KEYJAR_TIMEOUT.
        var environment = keyjar.environment
        environment["KEYJAR_TIMEOUT"] = nil
        let git = try await runCommand(
            KeyjarCLI.binary,
            ["git-credential", "get"],
            environment: environment,
            input: "protocol=https\nhost=example.com\n\n"
        )
        #expect(git.status == 3 && git.error.contains("within 5 s"), "\(git.error)")
    }

    // MARK: Secrets read exactly

    @Test func aPipedPasswordLosesExactlyOneLineEnding() async throws {
        let daemon = try await DaemonProcess()
        let keyjar = KeyjarCLI(daemon: daemon)
        let url = "https://\(uniqueHost("crlf"))"
        for (input, stored) in [("pw\r\n", "pw"), ("pw\n", "pw"), ("pw", "pw"), ("pw\n\n", "pw\n"), ("p w\r", "p w\r")]
        {
            try await keyjar.ok(["credential", "add", "--url", url, "--user", "c", "--password-stdin"], input: input)
            let shown = try await keyjar.ok("credential", "show", "--url", url, "--user", "c", "--reveal", "--force")
            #expect(shown.contains("password: \(stored)\n"), "\(input.debugDescription): \(shown.debugDescription)")
        }
    }

    /// Standard input that cannot be read (a directory) is an error naming what was to be read,
    /// for a password, a token and a request body alike; the command does not crash.
    @Test func unreadableStandardInputIsAnError() async throws {
        let daemon = try await DaemonProcess()
        let keyjar = KeyjarCLI(daemon: daemon)
        let url = "https://\(uniqueHost("stdin"))"
        for (arguments, what) in [
            (["credential", "add", "--url", url, "--user", "c", "--password-stdin"], "password"),
            (["credential", "add", "--url", url, "--token-stdin"], "token"),
            (["fetch", "--data", "@-", "http://127.0.0.1:9/"], "request body"),
        ] {
            let result = try await Self.shell(keyjar, arguments, redirect: "< /")
            #expect(result.status == 1, "\(arguments): \(result.error)")
            #expect(
                result.error == "keyjar: cannot read the \(what) from standard input: Is a directory.\n",
                "\(arguments)"
            )
        }
        #expect(try await keyjar.ok("credential", "list").isEmpty)
    }

    /// Ctrl-C at the password prompt gives the terminal back with echo on.
    @Test func ctrlCAtThePromptRestoresTheTerminal() async throws {
        let daemon = try await DaemonProcess()
        let keyjar = KeyjarCLI(daemon: daemon)
        // A pseudo-terminal as the command's controlling terminal; Ctrl-C typed on it.
        let report = try await runCommand(
            "/usr/bin/env",
            [
                "python3", "-c",
                """
                import fcntl, os, signal, subprocess, sys, termios
                master, slave = os.openpty()
                def terminal():
                    # A clean signal state, whatever this script was started with.
                    signal.pthread_sigmask(signal.SIG_SETMASK, [])
                    signal.signal(signal.SIGINT, signal.SIG_DFL)
                    os.setsid(); fcntl.ioctl(0, termios.TIOCSCTTY, 0)
                child = subprocess.Popen(sys.argv[1:], stdin=slave, stdout=slave, stderr=slave, preexec_fn=terminal)
                seen = b""
                while b"Password" not in seen:
                    seen += os.read(master, 1024)
                while termios.tcgetattr(slave)[3] & termios.ECHO:
                    pass
                os.write(master, b"\\x03")
                status = child.wait()
                print(status, bool(termios.tcgetattr(slave)[3] & termios.ECHO))
                """,
                KeyjarCLI.binary, "credential", "add", "--url", "https://\(uniqueHost("tty"))", "--user", "c",
            ],
            environment: keyjar.environment
        )
        // Killed by SIGINT (as the shell's 130), and echo is on again.
        #expect(report.output == "-2 True\n", "\(report.output) \(report.error)")
    }

    // MARK: Files and paths users give

    @Test func outputFilesAreWrittenThroughNeverReplaced() async throws {
        let daemon = try await DaemonProcess()
        let keyjar = KeyjarCLI(daemon: daemon)
        let server = try await LocalHTTPServer(script: FetchCommandTests.server)
        let directory = daemon.directory
        let url = server.base + "/hello"

        // A symbolic link is written through: the link stays, its target gets the body.
        try "old".write(toFile: directory.path("target.txt"), atomically: true, encoding: .utf8)
        try FileManager.default.createSymbolicLink(atPath: directory.path("link"), withDestinationPath: "target.txt")
        try await keyjar.ok("fetch", "-s", "-o", directory.path("link"), url)
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: directory.path("link")) == "target.txt")
        #expect(try String(contentsOfFile: directory.path("target.txt"), encoding: .utf8) == "hello\n")

        // A FIFO is written into, not replaced by a file.
        let fifo = directory.path("fifo")
        #expect(mkfifo(fifo, 0o600) == 0)
        async let read = runCommand("/bin/cat", [fifo])
        try await keyjar.ok("fetch", "-s", "-o", fifo, url)
        #expect(try await read.output == "hello\n")
        #expect(fileMode(fifo).map { $0 & S_IFMT } == S_IFIFO)
        let resumed = try await keyjar("fetch", "-s", "-C", "-o", fifo, url)
        #expect(resumed.status == 2 && resumed.error.contains("regular file"), "\(resumed.error)")

        // `-o -` is standard output; nothing named "-" appears.
        let dash = try await Self.shell(keyjar, ["fetch", "-s", "-o", "-", url], in: directory.path)
        #expect(dash.status == 0 && dash.output == "hello\n")
        #expect(!FileManager.default.fileExists(atPath: directory.path("-")))

        // An export over an existing 0644 file leaves it 0600; through a link, the target.
        let exported = directory.path("exported.txt")
        #expect(FileManager.default.createFile(atPath: exported, contents: Data("x".utf8)))
        #expect(chmod(exported, 0o644) == 0)
        try await keyjar.ok("cookie", "export", "-o", exported)
        #expect(fileMode(exported, followingLinks: true).map { $0 & 0o777 } == 0o600)
        try FileManager.default.createSymbolicLink(atPath: directory.path("export-link"), withDestinationPath: exported)
        try await keyjar.ok("cookie", "export", "-o", directory.path("export-link"))
        #expect(fileMode(directory.path("export-link")).map { $0 & S_IFMT } == S_IFLNK)
    }

    /// A relative socket is the one in the working directory, for the command and for the
    /// keyjard it starts (whose own working directory is `/`); KEYJAR_SECRETS reaches it.
    @Test func aRelativeSocketIsResolvedWhereTheCommandRuns() async throws {
        let directory = try TemporaryDirectory()
        let keyjard = DaemonProcess.builtExecutable(named: "keyjard")
        var environment = ProcessInfo.processInfo.environment
        environment["KEYJAR_NO_AUTOSTART"] = nil
        environment["KEYJAR_SOCKET"] = nil
        environment["KEYJAR_KEYJARD"] = keyjard
        environment["KEYJAR_DATABASE"] = "store.sqlite3"
        environment["KEYJAR_SECRETS"] = "file"
        let result = try await runCommand(
            "/bin/sh",
            ["-c", "cd '\(directory.path)' && exec \"$0\" status --json --socket k.sock", KeyjarCLI.binary],
            environment: environment
        )
        let object = try #require(
            try JSONSerialization.jsonObject(with: Data(result.output.utf8)) as? [String: Any],
            "\(result.error)"
        )
        let pid = try #require(object["pid"] as? Int32)
        defer { kill(pid, SIGTERM) }
        #expect(object["socketPath"] as? String == directory.path("k.sock"))
        #expect(object["databasePath"] as? String == directory.path("store.sqlite3"))
        #expect((object["secretsBackend"] as? String)?.hasPrefix("file") == true, "\(object)")
        for file in ["k.sock", "autostart.lock", "keyjard.log"] {
            #expect(FileManager.default.fileExists(atPath: directory.path(file)), "\(file)")
        }
        // KEYJAR_SOCKET the same way: the keyjard just started answers.
        environment["KEYJAR_SOCKET"] = "k.sock"
        let again = try await runCommand(
            "/bin/sh",
            ["-c", "cd '\(directory.path)' && exec \"$0\" status --json --no-start", KeyjarCLI.binary],
            environment: environment
        )
        #expect(again.status == 0 && again.output.contains("\"pid\" : \(pid)"), "\(again.output) \(again.error)")
        kill(pid, SIGTERM)
        #expect(await eventually { kill(pid, 0) != 0 })
    }

    // MARK: Names and files as people have them

    @Test func domainsAreNormalisedTheSameWayEverywhere() async throws {
        let daemon = try await DaemonProcess()
        let keyjar = KeyjarCLI(daemon: daemon)
        try await keyjar.ok("cookie", "set", "--url", "https://bücher.example/", "a=1; Max-Age=86400")
        // Stored under its IDNA name; found by the Unicode one, a URL, any case, a trailing dot.
        for given in ["bücher.example", "BÜCHER.example.", "https://bücher.example/x", "xn--bcher-kva.example"] {
            let listed = try await keyjar.ok("cookie", "list", "--domain", given)
            #expect(listed.hasPrefix("a=1; domain=xn--bcher-kva.example"), "\(given): \(listed)")
        }
        // A rule written in Unicode blocks the cookies of that host.
        try await keyjar.ok("policy", "domain", "block", "Bücher.example")
        let blocked = try await keyjar("cookie", "set", "--url", "https://www.bücher.example/", "b=2")
        #expect(blocked.status == 1, "\(blocked.error)")
        try await keyjar.ok("cookie", "delete", "--domain", "BÜCHER.example", "--name", "a")
        #expect(try await keyjar.ok("cookie", "list").isEmpty)
        #expect(try await keyjar("cookie", "clear", "--domain", "*.example").status == 2)
        #expect(try await keyjar("cookie", "list", "--domain", "a b").status == 2)
    }

    @Test func importsSayWhatWasKept() async throws {
        let daemon = try await DaemonProcess()
        let keyjar = KeyjarCLI(daemon: daemon)
        let file = daemon.directory.path("one-site.txt")
        let expiry = Int(Date().timeIntervalSince1970) + 86_400
        try (0..<500).map { ".one.example\tTRUE\t/\tFALSE\t\(expiry)\tn\($0)\tv" }.joined(separator: "\n")
            .write(toFile: file, atomically: true, encoding: .utf8)
        let result = try await keyjar.ok("cookie", "import", file)
        let listed = try #require(try await keyjar.json("cookie", "list", "--json") as? [[String: Any]])
        #expect(listed.count < 500)
        #expect(
            result == "read 500 cookies: \(listed.count) kept (\(listed.count) new, 0 replacing stored ones), "
                + "\(500 - listed.count) not kept: over the jar's limits\n"
        )
    }

    @Test func cookieFilesAsPeopleHaveThem() async throws {
        let daemon = try await DaemonProcess()
        let keyjar = KeyjarCLI(daemon: daemon)
        let file = daemon.directory.path("cookies.txt")
        let expiry = Int(Date().timeIntervalSince1970) + 86_400
        // A byte-order mark, a Unicode domain, a fractional expiry, and curl's line for a
        // cookie a dev server on localhost set with Domain=localhost.
        let lines = [
            ".bücher.example\tTRUE\t/\tFALSE\t\(expiry).5\tbom\t1",
            ".localhost\tTRUE\t/\tFALSE\t\(expiry)\tdev\t2",
        ]
        try (Data([0xEF, 0xBB, 0xBF]) + Data(lines.joined(separator: "\n").utf8)).write(to: URL(fileURLWithPath: file))
        let imported = try await keyjar("cookie", "import", file)
        #expect(imported.status == 0 && imported.output.hasPrefix("read 2 cookies: 2 kept"), "\(imported.error)")
        #expect(try await keyjar.ok("cookie", "get", "https://www.bücher.example/") == "bom=1\n")
        #expect(try await keyjar.ok("cookie", "get", "http://localhost:8080/") == "dev=2\n")
        let listed = try #require(try await keyjar.json("cookie", "list", "--json") as? [[String: Any]])
        #expect(listed.first { $0["name"] as? String == "dev" }?["hostOnly"] as? Bool == true)

        // A listing piped back in is recognised as JSON.
        let json = try await keyjar.ok("cookie", "list", "--json")
        try await keyjar.ok("cookie", "clear", "--all")
        let piped = try await keyjar.run(["cookie", "import", "-"], input: json)
        #expect(piped.status == 0 && piped.output.hasPrefix("read 2 cookies: 2 kept"), "\(piped.error)")
    }

    // MARK: Help, manual, completions

    /// Help that goes to a pipe wraps at 80 columns: no example may be long enough to be cut
    /// (pasted, a cut command breaks), in any command's help.
    @Test func examplesInHelpAreNeverWrapped() async throws {
        let dump = try await runCommand(KeyjarCLI.binary, ["--experimental-dump-help"])
        let root = try #require(
            (try JSONSerialization.jsonObject(with: Data(dump.output.utf8)) as? [String: Any])?["command"]
                as? [String: Any]
        )
        func paths(_ command: [String: Any], _ prefix: [String]) -> [[String]] {
            let subcommands = (command["subcommands"] as? [[String: Any]] ?? [])
                .filter { $0["commandName"] as? String != "help" }
            return [prefix] + subcommands.flatMap { paths($0, prefix + [$0["commandName"] as? String ?? ""]) }
        }
        let all = paths(root, [])
        #expect(all.count > 30)
        for path in all {
            let help = try await runCommand(KeyjarCLI.binary, path + ["--help"]).output
            var inExamples = false
            var continued = false
            for line in help.split(separator: "\n", omittingEmptySubsequences: false) {
                if line.hasSuffix("Examples:") || line.hasSuffix("Example:") || line.hasPrefix("Set-up") {
                    inExamples = true
                    continue
                }
                if line.isEmpty || !line.hasPrefix(" ") {
                    inExamples = false
                    continued = false
                    continue
                }
                guard inExamples else { continue }
                // Every example line starts a command, or continues one that ended in "\".
                #expect(line.hasPrefix("  ") && (continued || line.dropFirst(2).first != " "), "\(path): \(line)")
                continued = line.hasSuffix("\\")
            }
        }
    }

    @Test func theManualHasItsSectionsAndNoEmptyLines() throws {
        let page = try String(
            contentsOf: GeneratedFilesTests.root.appendingPathComponent("docs/keyjar.1"),
            encoding: .utf8
        )
        #expect(!page.contains("\n\n"), "an empty line is a warning in mdoc")
        for section in [".Sh \"EXIT STATUS\"", ".Sh ENVIRONMENT", ".Sh FILES"] {
            #expect(page.contains(section), "\(section)")
        }
        #expect(!page.contains(".Ex -std"))
        for variable in ["KEYJAR_SOCKET", "KEYJAR_TIMEOUT", "KEYJAR_SECRETS", "KEYJAR_KEYJARD", "KEYJAR_NO_AUTOSTART"] {
            #expect(page.contains(".It Ev \(variable)"), "\(variable)")
        }
        let bash = try String(
            contentsOf: GeneratedFilesTests.root.appendingPathComponent("completions/keyjar.bash"),
            encoding: .utf8
        )
        #expect(bash.contains("'get'$'\\n''store'$'\\n''erase'"), "git-credential's operations are completed")
    }
}
