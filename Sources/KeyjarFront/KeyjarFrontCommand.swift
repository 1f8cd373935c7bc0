import ArgumentParser
import KeyjarCommands

/// `keyjar`, the front: runs the commands programs call on every request (`cookie get`,
/// `git-credential`, `--version`) with nothing loaded but the connection to keyjard, and
/// replaces itself with keyjar-full for every other command line (``CommandTable``).
@main
struct KeyjarFrontCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "keyjar",
        version: CommandMain.version,
        subcommands: [CookieGroup.self, GitCredentialCommand.self]
    )

    /// `keyjar cookie` as far as the front goes: help for it comes from keyjar-full.
    struct CookieGroup: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "cookie", subcommands: [CookieGetCommand.self])
    }

    static func main() {
        // Before anything else: a command line the front does not run costs it no more than this.
        guard CommandTable.runner(for: CommandLine.arguments) == .front else { FullCommand.exec() }
        Output.prepare()
        let arguments = CommandMain.arguments(root: Self.self)
        // What ArgumentParser prints for it, without building the tree.
        if arguments == ["--version"] { CommandMain.print(CommandMain.version) }
        CommandMain.runSynchronously(Self.self, arguments: arguments, plain: CommandTable.plainCommand(arguments))
    }
}
