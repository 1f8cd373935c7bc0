import ArgumentParser
import Foundation
import Glibc
import Keyjar

/// `keyjar`: manage the shared cookie and credential store, and bring it to other tools.
@main
struct KeyjarCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "keyjar",
        abstract: "Manage the shared store of HTTP cookies and URL credentials kept by keyjard.",
        discussion: """
            keyjar talks to keyjard, the per-user service that owns the store, and starts it when none \
            is serving (like any Keyjar client). Results go to standard output, messages to standard \
            error.

            Exit status: 0 success, 1 failure, 2 bad usage or input, 3 keyjard unreachable.

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

    /// Runs the command with Keyjar's exit statuses: usage errors exit 2 (ArgumentParser's own
    /// default is 64), and errors are one `keyjar: …` line on standard error.
    static func main() async {
        var arguments = Array(CommandLine.arguments.dropFirst())
        // Installed (or linked) as `git-credential-keyjar`, git finds it from
        // `credential.helper keyjar` and calls it with just the operation.
        if URL(fileURLWithPath: CommandLine.arguments.first ?? "").lastPathComponent == GitCredentialCommand.helperName
        {
            arguments.insert(GitCredentialCommand.configuration.commandName ?? "git-credential", at: 0)
        }
        do {
            var command = try parseAsRoot(arguments)
            if var asyncCommand = command as? any AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
        } catch {
            exit(reporting: error)
        }
    }

    private static func exit(reporting error: any Error) -> Never {
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
        if exitCode(for: error) == .validationFailure {
            FileHandle.standardError.write(Data((fullMessage(for: error) + "\n").utf8))
            Glibc.exit(CLIError.Status.usage.rawValue)
        }
        exit(withError: error)
    }
}
