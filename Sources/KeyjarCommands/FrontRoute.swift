package import ArgumentParser

/// Which command lines `keyjar` (the front) runs itself; every other one it hands to
/// keyjar-full (``FullCommand``).
///
/// The front runs what programs call on every request or every git operation: `cookie get`,
/// `git-credential` and `--version`. It links only the connection to keyjard, so that such a
/// call costs a few milliseconds rather than loading libcurl, libsecret, SQLite and libcrypto
/// with their thirty-odd libraries (docs/performance.md, "The command"). Help of any kind goes
/// to keyjar-full, which knows the whole tree: the front's tree holds only its own commands.
package enum FrontRoute {
    /// The command paths the front runs; their commands are the very types keyjar-full runs.
    package static let paths: [[String]] = [["cookie", "get"], ["git-credential"]]

    /// Arguments that ask for help, completions or the tree's description.
    private static func asksForHelp(_ argument: String) -> Bool {
        argument == "-h" || argument.hasPrefix("--help") || argument.hasPrefix("--experimental")
            || argument.hasPrefix("--generate-completion")
    }

    /// Whether the front runs the command line `given` (the program's name first, as
    /// `CommandLine.arguments` has it).
    package static func runsHere(_ given: [String]) -> Bool {
        var arguments = Array(given.dropFirst())
        if CommandMain.calledAsGitHelper(given) {
            arguments.insert("git-credential", at: 0)
        }
        if arguments == ["--version"] { return true }
        guard !arguments.contains(where: asksForHelp) else { return false }
        return paths.contains { arguments.starts(with: $0) }
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
