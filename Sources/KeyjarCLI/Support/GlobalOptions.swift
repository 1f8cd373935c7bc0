import ArgumentParser
import Keyjar
import KeyjarProtocol

/// Where keyjard is, shared by every command that talks to it.
struct GlobalOptions: ParsableArguments {
    @Option(help: ArgumentHelp("keyjard's socket (default: $KEYJAR_SOCKET, else $XDG_RUNTIME_DIR/keyjar/keyjar.sock).", valueName: "path"))
    var socket: String?

    @Flag(help: "Fail (exit status 3) instead of starting keyjard when none is serving.")
    var noStart = false

    var socketPath: String { socket ?? KeyjarPaths.defaultSocketPath() }

    /// Connects like any Keyjar client: keyjard is started when none answers, unless
    /// `--no-start` or `KEYJAR_NO_AUTOSTART=1`. Only a command that reads the replica or
    /// watches changes (`fetch`, `watch`) keeps one; the others only send requests.
    func connect(keepingReplica: Bool = false) throws -> KeyjarClient {
        var configuration = KeyjarClient.Configuration(socketPath: socketPath, clientName: "keyjar", keepsReplica: keepingReplica)
        if noStart { configuration.autoStart = false }
        do {
            return try KeyjarClient(configuration: configuration)
        } catch {
            throw CLIError(error)
        }
    }
}

extension KeyjarClient {
    /// `call` with the failure turned into the command's error.
    func request(_ request: Request) throws -> Response {
        do {
            return try call(request)
        } catch {
            throw CLIError(error)
        }
    }
}

/// A reply of the wrong kind means keyjard and keyjar disagree about the protocol. The reply
/// itself is not shown: it could be a password.
func unexpected(_ response: Response) -> CLIError {
    .failure("keyjard sent an unexpected reply; are keyjar and keyjard the same version?")
}
