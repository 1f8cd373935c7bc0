import Glibc
package import KeyjarConnection

/// A failure the command reports in one sentence on standard error, with its exit status.
package struct CLIError: Error, CustomStringConvertible {
    /// The documented exit statuses (docs/command-line.md, `man keyjar`); scripts rely on them.
    package enum Status: Int32 {
        case failure = 1
        case usage = 2
        case unreachable = 3
        /// The secrets are in an encrypted file that is locked: `keyjar unlock` opens it.
        case locked = 4
        /// `keyjar run`: the command was found but cannot be run, or was not found (a shell's).
        case commandNotRunnable = 126
        case commandNotFound = 127
        /// Stopped by a signal, as a shell reports it: 128 + the signal's number.
        case hangUp = 129
        case interrupted = 130
        case terminated = 143

        package init(signal: Int32) {
            switch signal {
            case SIGHUP: self = .hangUp
            case SIGTERM: self = .terminated
            default: self = .interrupted
            }
        }
    }

    package var message: String
    package var status: Status

    package var description: String { message }

    package static func failure(_ message: String) -> CLIError { CLIError(message: message, status: .failure) }
    package static func usage(_ message: String) -> CLIError { CLIError(message: message, status: .usage) }

    /// A client library failure in words for a person: unreachable keyjard is its own status so
    /// that scripts can tell "the service is down" from "the request failed".
    package init(_ error: KeyjarClientError) {
        switch error.code {
        case .unreachable, .timedOut:
            self.init(message: error.message, status: .unreachable)
        case .refused where error.wireCode == WireErrorCode.secretsLocked.rawValue:
            self.init(message: error.message, status: .locked)
        default:
            self.init(message: error.message, status: .failure)
        }
    }

    package init(message: String, status: Status) {
        self.message = message
        self.status = status
    }
}
