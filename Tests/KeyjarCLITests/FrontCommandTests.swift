import ArgumentParser
import Foundation
import KeyjarCommands
import KeyjarTestSupport
import Testing

@testable import KeyjarCLI
@testable import KeyjarFront

/// `keyjar` is a front that runs `cookie get`, `git-credential` and `--version` itself and hands
/// every other command line to keyjar-full (docs/performance.md, "The command"): what it loads,
/// which command lines it keeps, that it runs the very commands keyjar-full would, and what
/// happens when keyjar-full is not beside it.
@Suite(.timeLimit(hangLimit), .servicesStopCleanly)
struct FrontCommandTests {
    /// The libraries a binary's dynamic loader maps (what ldd prints).
    static func loadedLibraries(_ binary: String) async throws -> String {
        let traced = try await runCommand(binary, [], environment: ["LD_TRACE_LOADED_OBJECTS": "1"])
        #expect(traced.status == 0, "\(traced.error)")
        return traced.output
    }

    @Test func theFrontLoadsNoneOfLibcurlLibsecretSQLiteAndLibcrypto() async throws {
        let heavy = [
            "libcurl", "libsecret", "libsqlite3", "libglib", "libgnutls", "libcrypto", "libFoundationNetworking",
        ]
        let front = try await Self.loadedLibraries(KeyjarCLI.binary)
        for library in heavy { #expect(!front.contains(library), "\(library) in \(front)") }
        // keyjar-full does load them: the check sees what it looks for.
        let full = try await Self.loadedLibraries(DaemonProcess.builtExecutable(named: "keyjar-full"))
        for library in ["libcurl", "libsecret", "libsqlite3", "libcrypto"] {
            #expect(full.contains(library), "\(full)")
        }
    }

    @Test(arguments: [
        (["keyjar", "--version"], true),
        (["keyjar", "cookie", "get", "https://example.com/"], true),
        (
            [
                "keyjar", "cookie", "get", "--socket", "/s", "--main-document", "https://a.example/",
                "https://b.example/",
            ], true
        ),
        (["keyjar", "git-credential", "get"], true),
        (["/usr/local/bin/git-credential-keyjar", "store"], true),
        (["git-credential-keyjar", "get"], true),
        (["keyjar"], false),
        (["keyjar", "--help"], false),
        (["keyjar", "help", "cookie", "get"], false),
        (["keyjar", "cookie", "get", "--help"], false),
        (["keyjar", "cookie", "get", "-h"], false),
        (["keyjar", "git-credential", "--experimental-dump-help"], false),
        (["keyjar", "--generate-completion-script", "bash"], false),
        (["keyjar", "cookie"], false),
        (["keyjar", "cookie", "list"], false),
        (["keyjar", "cookie", "getaway"], false),
        (["keyjar", "fetch", "https://example.com/"], false),
        (["keyjar", "status"], false),
        (["keyjar", "--version", "cookie"], false),
        (["keyjar-credential", "get"], false),
        (["/usr/bin/docker-credential-keyjar", "get"], false),
        (["keyjar", "nosuchcommand"], false),
    ])
    func whichCommandLinesTheFrontRuns(_ arguments: [String], runsHere: Bool) {
        #expect((CommandTable.runner(for: arguments) == .front) == runsHere, "\(arguments)")
    }

    /// The table lists every command of keyjar-full's tree, each once, in its order, and only
    /// those: a command added to the tree and not to the table (or the reverse) fails here.
    @Test func theTableListsEveryCommandOnce() {
        let topLevel = CommandTable.entries.filter { $0.path.count == 1 }.map { $0.path[0] }
        #expect(topLevel == KeyjarCommand.configuration.subcommands.map { $0._commandName })
        let paths = CommandTable.entries.map(\.path)
        #expect(Set(paths).count == paths.count, "\(paths)")
        for entry in CommandTable.entries where entry.path.count > 1 {
            #expect(topLevel.contains(entry.path[0]), "\(entry.path)")
        }
    }

    /// A plain command line read by hand is the command ArgumentParser reads from it, every
    /// option at its default (a field left unread would show as ArgumentParser's definition).
    @Test(arguments: [
        ["cookie", "get", "https://example.com/a?b=c"], ["cookie", "get", "http://127.0.0.1:8080/"],
        ["git-credential", "get"], ["git-credential", "store"],
        ["git-credential", "erase"], ["git-credential", "capability"], ["git-credential", "help"],
        ["git-credential", "somethingnew"],
    ])
    func aPlainCommandLineReadsAsArgumentParserReadsIt(_ arguments: [String]) throws {
        let plain = try #require(CommandTable.plainCommand(arguments))
        let parsed = try KeyjarFrontCommand.parseAsRoot(arguments)
        #expect(type(of: plain) == type(of: parsed))
        #expect(String(reflecting: plain) == String(reflecting: parsed))
    }

    @Test(arguments: [
        ["cookie", "get"], ["cookie", "get", "https://a.example/", "https://b.example/"],
        ["cookie", "get", "--no-start", "https://a.example/"], ["cookie", "get", "-"], ["cookie", "get", ""],
        ["cookie", "list", "x"], ["git-credential"], ["git-credential", "get", "--timeout", "1"], ["status"], [],
    ])
    func everyOtherCommandLineIsArgumentParsers(_ arguments: [String]) {
        #expect(CommandTable.plainCommand(arguments) == nil)
    }

    /// What the front answers without ArgumentParser (--version; a plain line whose URL its
    /// check refuses, read again by ArgumentParser for the message) is what keyjar-full answers.
    @Test(arguments: [["--version"], ["cookie", "get", "help"], ["cookie", "get", "ftp://example.com/"]])
    func theFrontAnswersAsKeyjarFullDoes(_ arguments: [String]) async throws {
        let environment = ["KEYJAR_NO_AUTOSTART": "1", "KEYJAR_SOCKET": "/nonexistent/keyjar.sock"]
        let front = try await runCommand(KeyjarCLI.binary, arguments, environment: environment)
        let full = try await runCommand(
            DaemonProcess.builtExecutable(named: "keyjar-full"),
            arguments,
            environment: environment
        )
        #expect(front.status == full.status && front.output == full.output && front.error == full.error)
        #expect(front.output.hasPrefix("keyjar ") || front.error.hasPrefix("keyjar: "), "\(front)")
    }

    /// The command the front runs for each of its paths is the type keyjar-full runs there, so
    /// that options, checks and messages cannot differ; and the front runs nothing else.
    @Test func theFrontRunsKeyjarFullsOwnCommands() throws {
        func leaf(_ path: [String], under root: any ParsableCommand.Type) -> (any ParsableCommand.Type)? {
            var command: (any ParsableCommand.Type)? = root
            for name in path {
                command = command?.configuration.subcommands.first { $0._commandName == name }
            }
            return command
        }
        func leaves(under command: any ParsableCommand.Type, path: [String] = []) -> [[String]] {
            let subcommands = command.configuration.subcommands
            if subcommands.isEmpty { return [path] }
            return subcommands.flatMap { leaves(under: $0, path: path + [$0._commandName]) }
        }
        let frontPaths = CommandTable.entries.filter { $0.runner == .front }.map(\.path)
        for path in frontPaths {
            let front = try #require(leaf(path, under: KeyjarFrontCommand.self), "\(path)")
            let full = try #require(leaf(path, under: KeyjarCommand.self), "\(path)")
            #expect(ObjectIdentifier(front) == ObjectIdentifier(full), "\(path)")
        }
        #expect(
            leaves(under: KeyjarFrontCommand.self).sorted { "\($0)" < "\($1)" }
                == frontPaths.sorted { "\($0)" < "\($1)" }
        )
        #expect(KeyjarFrontCommand.configuration.version == KeyjarCommand.configuration.version)
    }

    /// A command line the front hands over, through the front, reaches keyjar-full with its
    /// arguments, environment and standard input as they were.
    @Test func aHandedOverCommandGetsItsArgumentsAndInput() async throws {
        let daemon = try await DaemonProcess()
        let keyjar = KeyjarCLI(daemon: daemon)
        let secret = "pä ss word"
        try await keyjar.ok(
            "credential",
            "add",
            "--url",
            "https://example.com",
            "--user",
            "al ice",
            "--password-stdin",
            input: secret
        )
        let listed = try await keyjar.ok("credential", "list")
        #expect(listed.contains("al ice"), "\(listed)")
        let answer = try await keyjar.ok("git-credential", "get", input: "protocol=https\nhost=example.com\n\n")
        #expect(answer.contains("password=\(secret)\n"), "\(answer)")
    }

    /// The front alone (no keyjar-full where it looks): its own commands work, any other fails
    /// with one line that names what is missing and where it belongs.
    @Test func withoutKeyjarFullTheFrontSaysWhatIsMissing() async throws {
        let daemon = try await DaemonProcess()
        let directory = try TemporaryDirectory()
        let alone = directory.path("keyjar")
        try await installExecutable(copying: KeyjarCLI.binary, to: alone)
        let environment = KeyjarCLI(daemon: daemon).environment
        let version = try await runCommand(alone, ["--version"], environment: environment)
        #expect(version.status == 0 && version.output.hasPrefix("keyjar "), "\(version)")
        let get = try await runCommand(alone, ["cookie", "get", "https://example.com/"], environment: environment)
        #expect(get.status == 0 && get.error.isEmpty, "\(get)")
        // A Unicode host is the front's own too: named by its A-labels as keyjar-full names it.
        let keyjar = KeyjarCLI(daemon: daemon)
        try await keyjar.ok("cookie", "set", "--url", "https://b\u{FC}cher.example/", "a=1; Max-Age=86400")
        try await keyjar.ok(
            ["credential", "add", "--url", "https://B\u{DC}cher.example", "--user", "alice", "--password-stdin"],
            input: "idn-pw\n"
        )
        for url in ["https://B\u{FC}cher.example/", "https://xn--bcher-kva.example/", "https://b%C3%BCcher.example/"] {
            let found = try await runCommand(alone, ["cookie", "get", url], environment: environment)
            #expect(found.status == 0 && found.output == "a=1\n", "\(url): \(found)")
        }
        let answer = try await runCommand(
            alone,
            ["git-credential", "get"],
            environment: environment,
            input: "protocol=https\nhost=b\u{FC}cher.example\n\n"
        )
        #expect(answer.status == 0 && answer.output == "username=alice\npassword=idn-pw\n", "\(answer)")
        let status = try await runCommand(alone, ["status"], environment: environment)
        #expect(status.status == 1, "\(status)")
        #expect(
            status.error
                == "keyjar: cannot find keyjar-full (looked for \(directory.path("keyjar-full"))): every command "
                + "but cookie get and git-credential needs it; scripts/install puts it in PREFIX/libexec/keyjar "
                + "(docs/install.md).\n",
            "\(status.error)"
        )
        #expect(status.output.isEmpty)
    }

    /// Installed as scripts/install lays it out, the front in `PREFIX/bin` runs the keyjar-full
    /// of `PREFIX/libexec/keyjar`, whatever name it was called by, with the arguments as given;
    /// one beside it (an older layout's) is only the fallback.
    @Test func anInstalledFrontRunsKeyjarFullFromLibexec() async throws {
        let prefix = try TemporaryDirectory()
        for directory in ["bin", "libexec/keyjar"] {
            try FileManager.default.createDirectory(
                atPath: prefix.path(directory),
                withIntermediateDirectories: true
            )
        }
        let front = prefix.path("bin/keyjar")
        try await installExecutable(copying: KeyjarCLI.binary, to: front)
        try FileManager.default.createSymbolicLink(
            atPath: prefix.path("bin/docker-credential-keyjar"),
            withDestinationPath: "keyjar"
        )
        // Each stand-in says which it is and what it was given.
        let report = #"printf '%s\n' "$0" "$@""#
        try await installExecutable(
            script: "#!/bin/sh\necho libexec\n\(report)\n",
            at: prefix.path("libexec/keyjar/keyjar-full")
        )
        try await installExecutable(script: "#!/bin/sh\necho beside\n\(report)\n", at: prefix.path("bin/keyjar-full"))
        let status = try await runCommand(front, ["status", "--json", "a b"], environment: [:])
        #expect(status.status == 0, "\(status)")
        #expect(status.output == "libexec\n\(prefix.path("libexec/keyjar/keyjar-full"))\nstatus\n--json\na b\n")
        let helper = try await runCommand(prefix.path("bin/docker-credential-keyjar"), ["list"], environment: [:])
        #expect(helper.output == "libexec\n\(prefix.path("libexec/keyjar/keyjar-full"))\nlist\n", "\(helper)")
        try FileManager.default.removeItem(atPath: prefix.path("libexec/keyjar/keyjar-full"))
        let fallback = try await runCommand(front, ["status"], environment: [:])
        #expect(fallback.output == "beside\n\(prefix.path("bin/keyjar-full"))\nstatus\n", "\(fallback)")
    }
}
