package import ArgumentParser

/// Every command of `keyjar`, and the executable that runs it: the one dispatch rule.
///
/// `keyjar` runs itself what programs call on every request or every git operation — `cookie
/// get`, `git-credential`, `--version` — linking only the connection to keyjard, so that such a
/// call costs a few milliseconds rather than loading libcurl, libsecret, SQLite and libcrypto
/// with their thirty-odd libraries (docs/performance.md, "The command"). Every other command
/// line it replaces itself with keyjar-full (``FullCommand``, off PATH), as git runs
/// git-remote-https only when a remote needs libcurl: from `main`, before anything is parsed,
/// and never halfway through a command. Help of any kind is keyjar-full's, which holds the
/// whole tree (each command defined once, there); `FrontCommandTests` holds this table to it.
package enum CommandTable {
    /// The executable that runs a command line.
    package enum Runner: Sendable, Equatable {
        /// `keyjar` itself.
        case front
        /// keyjar-full, where ``ProgramLayout`` finds it from `keyjar`.
        case full
    }

    /// A command path (`["cookie", "get"]`) and its runner; a longer path overrides a shorter
    /// one it starts with.
    package struct Entry: Sendable {
        package var path: [String]
        package var runner: Runner

        init(_ path: String..., runner: Runner = .full) {
            self.path = path
            self.runner = runner
        }
    }

    /// Every top-level command, in the order `keyjar --help` lists them, and each path run
    /// elsewhere than its command.
    package static let entries: [Entry] = [
        Entry("status"), Entry("cookie"), Entry("cookie", "get", runner: .front), Entry("credential"),
        Entry("policy"), Entry("watch"), Entry("fetch"), Entry("cache"), Entry("git-credential", runner: .front),
        Entry("backup"), Entry("restore"), Entry("unlock"), Entry("lock"), Entry("secrets"), Entry("run"),
        Entry(CommandMain.dockerHelperCommand), Entry("sync"),
    ]

    /// The names `keyjar` is installed under besides its own, each the command it means:
    /// git runs `git-credential-keyjar` for `credential.helper keyjar`, Docker
    /// `docker-credential-keyjar` for `"credsStore": "keyjar"`.
    package static let installedNames: [(name: String, command: String)] = [
        (GitCredentialCommand.helperName, "git-credential"),
        (CommandMain.dockerHelperName, CommandMain.dockerHelperCommand),
    ]

    /// Arguments that ask for help, completions or the tree's description.
    private static func asksForHelp(_ argument: String) -> Bool {
        argument == "-h" || argument.hasPrefix("--help") || argument.hasPrefix("--experimental")
            || argument.hasPrefix("--generate-completion")
    }

    /// Which executable runs the command line `given` (the program's name first, as
    /// `CommandLine.arguments` has it): the entry with the longest path the arguments start
    /// with; keyjar-full for anything else (it reports an unknown command, with the whole
    /// tree's help).
    package static func runner(for given: [String]) -> Runner {
        let arguments = CommandMain.commandLine(given)
        if arguments == ["--version"] { return .front }
        guard !arguments.contains(where: asksForHelp) else { return .full }
        let entry = entries.filter { arguments.starts(with: $0.path) }.max { $0.path.count < $1.path.count }
        return entry?.runner ?? .full
    }

    /// The front's command lines in their plainest shape — no option, every argument a plain
    /// word: `cookie get URL`, `git-credential OPERATION` — as the commands ArgumentParser would
    /// read from them, read without it; nil for any other (ArgumentParser reads it). Written by
    /// hand with a measured reason: ArgumentParser's reading (reflection over every option of
    /// the tree, whose types the runtime looks up by scanning the binary's conformance records)
    /// took 0.3–0.5 ms of a 6.5 ms `keyjar cookie get` (docs/performance.md, "The command").
    /// `FrontCommandTests` checks that both readings give the same command.
    package static func plainCommand(_ arguments: [String]) -> (any ParsableCommand)? {
        func isWord(_ argument: String) -> Bool { !argument.isEmpty && !argument.hasPrefix("-") }
        guard arguments.allSatisfy(isWord) else { return nil }
        switch arguments.count {
        case 3 where arguments[0] == "cookie" && arguments[1] == "get": return CookieGetCommand(url: arguments[2])
        case 2 where arguments[0] == "git-credential": return GitCredentialCommand(operation: arguments[1])
        default: return nil
        }
    }
}
