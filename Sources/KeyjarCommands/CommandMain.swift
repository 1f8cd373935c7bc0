package import ArgumentParser
import FoundationEssentials
import Glibc
import KeyjarConnection
import KeyjarCore

/// What `keyjar` and keyjar-full do with their arguments: the same reading of them and the same
/// error contract (docs/command-line.md, "Exit status and errors"): every error is one `keyjar: …` line on
/// standard error, and the exit status says what kind it was (usage errors 2 rather than
/// ArgumentParser's 64; output that cannot be written 1).
package enum CommandMain {
    package static let version = "keyjar 0.1.0"

    /// The arguments as the command tree reads them: ``commandLine(_:)``, and `keyjar help
    /// SUBCOMMAND…` as `keyjar SUBCOMMAND… --help`.
    package static func arguments(
        _ given: [String] = CommandLine.arguments,
        root: any ParsableCommand.Type
    ) -> [String] {
        var arguments = commandLine(given)
        if arguments.first == "help" {
            let names = Array(arguments.dropFirst())
            // An unknown name is a usage error rather than the top-level help with status 0.
            if let unknown = unknownSubcommand(in: names, root: root) {
                Output.error("there is no command '\(UserInput.shown(unknown))'. See 'keyjar --help'.")
                Glibc.exit(CLIError.Status.usage.rawValue)
            }
            arguments = names + ["--help"]
        }
        return arguments
    }

    /// The arguments after the program's name; called by one of its installed names
    /// (``CommandTable/installedNames``: the last component of its path, compared as a string,
    /// as a Foundation URL costs a tenth of the front's call), that name's command first.
    package static func commandLine(_ given: [String]) -> [String] {
        let arguments = Array(given.dropFirst())
        guard let called = given.first?.split(separator: "/").last,
            let installed = CommandTable.installedNames.first(where: { $0.name == called })
        else { return arguments }
        return [installed.command] + arguments
    }

    /// The name Docker runs for `"credsStore": "keyjar"`, and the command it means.
    package static let dockerHelperName = "docker-credential-keyjar"
    package static let dockerHelperCommand = "docker-credential"

    /// Parses `arguments` with `root` and runs the command, then exits.
    package static func run(_ root: any ParsableCommand.Type, arguments: [String]) async -> Never {
        do {
            var command = try root.parseAsRoot(arguments)
            if var asyncCommand = command as? any AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
            try Output.finish()
        } catch {
            exit(reporting: error, root: root)
        }
        Glibc.exit(0)
    }

    /// ``run(_:arguments:)`` for a tree of synchronous commands (the front's): no task, no
    /// thread of Swift's cooperative pool is started. `plain`: the command already read from
    /// `arguments` (``FrontRoute/plainCommand(_:)``); one its checks refuse is read again by
    /// ArgumentParser, whose message names the command.
    package static func runSynchronously(
        _ root: any ParsableCommand.Type,
        arguments: [String],
        plain: (any ParsableCommand)? = nil
    ) -> Never {
        do {
            var command: any ParsableCommand
            if var plain, (try? plain.validate()) != nil {
                command = plain
            } else {
                command = try root.parseAsRoot(arguments)
            }
            try command.run()
            try Output.finish()
        } catch {
            exit(reporting: error, root: root)
        }
        Glibc.exit(0)
    }

    /// The first of `names` that is not a subcommand of the one before it.
    package static func unknownSubcommand(in names: [String], root: any ParsableCommand.Type) -> String? {
        var command = root
        for name in names {
            guard
                let next = command.configuration.subcommands.first(where: {
                    $0._commandName == name || $0.configuration.aliases.contains(name)
                })
            else { return name }
            command = next
        }
        return nil
    }

    private static func exit(reporting error: any Error, root: any ParsableCommand.Type) -> Never {
        // What was written before the failure still goes out (a listing cut short says why).
        try? Output.finish()
        let cliError: CLIError? =
            switch error {
            case let error as CLIError: error
            case let error as KeyjarClientError: CLIError(error)
            default: nil
            }
        if let cliError {
            Output.error(cliError.message)
            Glibc.exit(cliError.status.rawValue)
        }
        switch root.exitCode(for: error) {
        case .success:
            // --help, --version, completion scripts.
            print(root.fullMessage(for: error))
        case .validationFailure:
            Output.error(usageMessage(for: error, root: root))
            Glibc.exit(CLIError.Status.usage.rawValue)
        default:
            Output.error(usageMessage(for: error, root: root))
            Glibc.exit(CLIError.Status.failure.rawValue)
        }
    }

    /// Prints `text` as the whole result and exits: through Output, so that it too fails when
    /// it cannot be written.
    package static func print(_ text: String) -> Never {
        Output.line(text)
        do {
            try Output.finish()
        } catch {
            Output.error(error.message)
            Glibc.exit(error.status.rawValue)
        }
        Glibc.exit(0)
    }

    /// ArgumentParser's message as one `keyjar:` sentence with where to read more, without its
    /// "Error: " prefix and the usage block (which `--help` shows).
    package static func usageMessage(for error: any Error, root: any ParsableCommand.Type) -> String {
        var text = root.message(for: error).trimmingWhitespaceAndNewlines()
        if text.hasPrefix("Error: ") { text.removeFirst("Error: ".count) }
        text = text.split(separator: "\n").map { $0.trimmingWhitespace() }.joined(separator: " ")
        if let first = text.first, first.isUppercase, text.dropFirst().first?.isLowercase == true {
            text = first.lowercased() + text.dropFirst()
        }
        if !text.hasSuffix(".") { text += "." }
        // ArgumentParser names the subcommand whose help explains it: "See 'keyjar cookie set --help' …".
        var hint = "See 'keyjar --help'"
        for line in root.fullMessage(for: error).split(separator: "\n") {
            guard let start = line.firstRange(of: "See '"), let end = line.firstRange(of: "--help'") else { continue }
            hint = String(line[start.lowerBound..<end.upperBound])
        }
        return text + " " + hint + "."
    }
}
