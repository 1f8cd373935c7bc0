import ArgumentParser
import Foundation
import Glibc
import Keyjar

/// `keyjar`: manage the shared cookie and credential store, and bring it to other tools.
///
/// Every command gives its `commandName`: ArgumentParser builds the whole command tree on each
/// call, and a name it must derive comes from `String(describing:)` of the type, a runtime
/// conformance search through every loaded library (measured: about a tenth of an empty call).
@main
struct KeyjarCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "keyjar",
        abstract: "Manage the shared store of HTTP cookies and URL credentials kept by keyjard.",
        discussion: """
            keyjar talks to keyjard, the per-user service that owns the store, and starts it when none \
            is serving (like any Keyjar client). Results go to standard output, messages to standard \
            error.

            Exit status: 0 success, 1 failure (output that cannot be written included), 2 bad \
            usage or input, 3 keyjard unreachable or not answering (--timeout), 130 interrupted. \
            Every error is one line on standard error that starts with "keyjar: ".

            Examples:
              keyjar status
              keyjar cookie get https://example.com/
              keyjar fetch -o report.pdf https://intranet.example/report.pdf
              keyjar cookie export -o cookies.txt
              curl -b cookies.txt https://example.com/
              keyjar credential add --url https://example.com --user alice
              git config --global credential.helper keyjar
            """,
        version: "keyjar 0.1.0",
        subcommands: [
            StatusCommand.self, CookieCommand.self, CredentialCommand.self, PolicyCommand.self, WatchCommand.self,
            FetchCommand.self, CacheCommand.self, GitCredentialCommand.self,
        ]
    )

    /// Runs the command with Keyjar's error contract (README, "Exit status and errors"): every
    /// error is one `keyjar: …` line on standard error, and the exit status says what kind it
    /// was (usage errors 2 rather than ArgumentParser's 64; output that cannot be written 1).
    static func main() async {
        Output.prepare()
        var arguments = Array(CommandLine.arguments.dropFirst())
        // Installed (or linked) as `git-credential-keyjar`, git finds it from
        // `credential.helper keyjar` and calls it with just the operation.
        if URL(fileURLWithPath: CommandLine.arguments.first ?? "").lastPathComponent == GitCredentialCommand.helperName
        {
            arguments.insert(GitCredentialCommand.configuration.commandName ?? "git-credential", at: 0)
        }
        // `keyjar help SUBCOMMAND…` is `keyjar SUBCOMMAND… --help`, so that an unknown name is
        // a usage error rather than the top-level help with status 0.
        if arguments.first == "help" {
            let names = Array(arguments.dropFirst())
            if let unknown = unknownSubcommand(in: names) {
                Output.error("there is no command '\(UserInput.shown(unknown))'. See 'keyjar --help'.")
                Glibc.exit(CLIError.Status.usage.rawValue)
            }
            arguments = names + ["--help"]
        }
        do {
            var command = try parseAsRoot(arguments)
            if var asyncCommand = command as? any AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
            try Output.finish()
        } catch {
            exit(reporting: error)
        }
    }

    /// The first of `names` that is not a subcommand of the one before it.
    static func unknownSubcommand(in names: [String]) -> String? {
        var command: any ParsableCommand.Type = KeyjarCommand.self
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

    private static func exit(reporting error: any Error) -> Never {
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
        switch exitCode(for: error) {
        case .success:
            // --help, --version, completion scripts: through Output, so that they too fail
            // when they cannot be written.
            Output.line(fullMessage(for: error))
            do {
                try Output.finish()
            } catch {
                Output.error(error.message)
                Glibc.exit(error.status.rawValue)
            }
            Glibc.exit(0)
        case .validationFailure:
            Output.error(usageMessage(for: error))
            Glibc.exit(CLIError.Status.usage.rawValue)
        default:
            Output.error(usageMessage(for: error))
            Glibc.exit(CLIError.Status.failure.rawValue)
        }
    }

    /// ArgumentParser's message as one `keyjar:` sentence with where to read more, without its
    /// "Error: " prefix and the usage block (which `--help` shows).
    static func usageMessage(for error: any Error) -> String {
        var text = message(for: error).trimmingCharacters(in: .whitespacesAndNewlines)
        if text.hasPrefix("Error: ") { text.removeFirst("Error: ".count) }
        text = text.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }.joined(separator: " ")
        if let first = text.first, first.isUppercase, text.dropFirst().first?.isLowercase == true {
            text = first.lowercased() + text.dropFirst()
        }
        if !text.hasSuffix(".") { text += "." }
        // ArgumentParser names the subcommand whose help explains it: "See 'keyjar cookie set --help' …".
        var hint = "See 'keyjar --help'"
        for line in fullMessage(for: error).split(separator: "\n") {
            guard let start = line.range(of: "See '"), let end = line.range(of: "--help'") else { continue }
            hint = String(line[start.lowerBound..<end.upperBound])
        }
        return text + " " + hint + "."
    }
}
