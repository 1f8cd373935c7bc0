import ArgumentParser
import KeyjarCommands
import KeyjarLoader

/// `keyjar`: manage the shared cookie and credential store, and bring it to other tools. This is
/// keyjar-full, the whole tree; `keyjar` itself is the front (KeyjarFront), which runs the
/// commands called on every request and hands the rest here.
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
        version: CommandMain.version,
        subcommands: [
            StatusCommand.self, CookieCommand.self, CredentialCommand.self, PolicyCommand.self, WatchCommand.self,
            FetchCommand.self, CacheCommand.self, GitCredentialCommand.self, BackupCommand.self, RestoreCommand.self,
            UnlockCommand.self, LockCommand.self, SecretsCommand.self, RunCommand.self, DockerCredentialCommand.self,
            SyncCommand.self,
        ]
    )

    /// keyjar-full: what the front hands over (docs/command-line.md, "Exit status and errors",
    /// holds for both). The loader refreshes stored tokens here; the front has none.
    static func main() async {
        Output.prepare()
        StoredTokenRefresh.install { record, rejected, client in
            // The token endpoint trusts what curl would here (SSL_CERT_FILE, CURL_CA_BUNDLE, …).
            let anchors = TrustAnchors.fromEnvironment()
            if case .failure(let failure) = URLLoader.refreshStoredToken(
                record,
                rejected: rejected,
                client: client,
                trustAnchors: anchors
            ) {
                throw CLIError.failure(failure.description)
            }
        }
        await CommandMain.run(Self.self, arguments: CommandMain.arguments(root: Self.self))
    }
}
