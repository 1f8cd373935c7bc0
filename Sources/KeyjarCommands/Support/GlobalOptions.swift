package import ArgumentParser
import FoundationEssentials
package import KeyjarConnection

/// Where keyjard is, shared by every command that talks to it.
package struct GlobalOptions: ParsableArguments {
    package init() {}

    /// The options as ArgumentParser reads a command line that gives none of them (the front's
    /// plain command lines, ``CommandTable/plainCommand(_:)``).
    package static var unset: GlobalOptions {
        var options = GlobalOptions()
        options.socket = nil
        options.noStart = false
        options.timeout = nil
        return options
    }

    @Option(
        help: ArgumentHelp(
            "keyjard's socket (default: $KEYJAR_SOCKET, else $XDG_RUNTIME_DIR/keyjar/keyjar.sock).",
            valueName: "path"
        )
    )
    package var socket: String?

    @Flag(help: "Fail (exit status 3) instead of starting keyjard when none is serving.")
    package var noStart = false

    @Option(
        help: ArgumentHelp(
            "How long to wait for keyjard's answer before failing with exit status 3 (default: $KEYJAR_TIMEOUT, else 30).",
            valueName: "seconds"
        )
    )
    package var timeout: Double?

    package func validate() throws {
        if let timeout, !(timeout > 0) { throw ValidationError("--timeout must be more than 0 seconds.") }
        if let socket, socket.isEmpty { throw ValidationError("--socket needs a path.") }
    }

    /// The socket, relative to the working directory when given relative.
    package var socketPath: String { socket.map { KeyjarPaths.absolute($0) } ?? KeyjarClient.defaultSocketPath }

    /// Connects like any Keyjar client: keyjard is started when none answers, unless
    /// `--no-start` or `KEYJAR_NO_AUTOSTART=1`. Only a command that reads the replica or
    /// watches changes (`fetch`, `watch`) keeps one; the others are one-shot clients (no
    /// snapshot, no thread).
    package func connect(keepingReplica: Bool = false, defaultTimeout: Double? = nil) throws -> KeyjarClient {
        var configuration = KeyjarClient.Configuration(
            socketPath: socketPath,
            clientName: "keyjar",
            keepsReplica: keepingReplica
        )
        if let wait = timeout ?? (ProcessInfo.processInfo.environment["KEYJAR_TIMEOUT"] == nil ? defaultTimeout : nil) {
            configuration.requestTimeout = wait
        }
        if noStart { configuration.autoStart = false }
        do {
            return try KeyjarClient(configuration: configuration)
        } catch {
            throw CLIError(error)
        }
    }
}
