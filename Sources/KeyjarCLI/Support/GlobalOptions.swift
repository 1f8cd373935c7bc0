import ArgumentParser
import Keyjar

/// Where keyjard is, shared by every command that talks to it.
struct GlobalOptions: ParsableArguments {
    @Option(
        help: ArgumentHelp(
            "keyjard's socket (default: $KEYJAR_SOCKET, else $XDG_RUNTIME_DIR/keyjar/keyjar.sock).",
            valueName: "path"
        )
    )
    var socket: String?

    @Flag(help: "Fail (exit status 3) instead of starting keyjard when none is serving.")
    var noStart = false

    var socketPath: String { socket ?? KeyjarClient.defaultSocketPath }

    /// Connects like any Keyjar client: keyjard is started when none answers, unless
    /// `--no-start` or `KEYJAR_NO_AUTOSTART=1`. Only a command that reads the replica or
    /// watches changes (`fetch`, `watch`) keeps one; the others are one-shot clients (no
    /// snapshot, no thread).
    func connect(keepingReplica: Bool = false) throws -> KeyjarClient {
        var configuration = KeyjarClient.Configuration(
            socketPath: socketPath,
            clientName: "keyjar",
            keepsReplica: keepingReplica
        )
        if noStart { configuration.autoStart = false }
        do {
            return try KeyjarClient(configuration: configuration)
        } catch {
            throw CLIError(error)
        }
    }
}
