import Glibc
package import KeyjarConnection
package import KeyjarCore
import KeyjarLocks
import KeyjarPlatform

/// keyjar-full: every command, with what the front does not link (libcurl through the loader,
/// libsecret, SQLite, libcrypto). The front replaces itself with it for every command line
/// ``CommandTable`` gives it, as git runs git-remote-https only when a remote needs libcurl. It
/// is installed where only `keyjar` looks for it, `PREFIX/libexec/keyjar` (``ProgramLayout``),
/// so that `keyjar` is the one command a user has on PATH.
package enum FullCommand {
    package static let executableName = "keyjar-full"

    /// keyjar-full as ``ProgramLayout`` finds it from the running executable (a
    /// `git-credential-keyjar` link finds it too); nil when it is in none of the places looked.
    package static var path: String? { ProgramLayout.program(named: executableName) }

    /// Replaces this process with keyjar-full, given the same arguments (the first, the name it
    /// was called by, included: `git-credential-keyjar` means the same to it) and environment.
    /// Called before the command line is read: nothing of it has been consumed.
    package static func exec() -> Never {
        guard let path else {
            let candidates = ProgramLayout.candidates(for: executableName)
            fail("cannot find \(executableName) (looked for \(candidates.joined(separator: ", ")))")
        }
        var argv: [UnsafeMutablePointer<CChar>?] = CommandLine.arguments.map { strdup($0) }
        argv.append(nil)
        execv(path, argv)
        let number = errno
        fail("cannot run \(path) (\(String(cString: strerror(number))))")
    }

    private static func fail(_ reason: String) -> Never {
        Output.error(
            reason + ": every command but cookie get and git-credential needs it; scripts/install puts it in "
                + "PREFIX/\(ProgramLayout.helperDirectory) (docs/install.md)."
        )
        exit(CLIError.Status.failure.rawValue)
    }
}

/// Refreshing a stored token needs the loader (libcurl): keyjar-full installs it before it runs
/// a command. The front has none, and refreshes through keyjar-full as a child process
/// (`keyjar credential refresh`): the front keeps its command, its input and its output.
package enum StoredTokenRefresh {
    /// Refreshes the token of `record` through keyjard's lease; throws ``CLIError`` when the
    /// endpoint refuses (the message says why, never the token). `rejected`: the token still
    /// stored that the caller will not use (about to expire), so that keyjard does not answer
    /// with it; nil when the caller only saw the stored one expired.
    package typealias Refresh = @Sendable (CredentialRecord, _ rejected: String?, KeyjarClient) throws -> Void

    private static let refresh = Locked<Refresh?>(nil)

    /// The refresh of a process that links the loader; nil in the front.
    package static var installed: Refresh? { refresh.withLock { $0 } }

    package static func install(_ body: @escaping Refresh) { refresh.withLock { $0 = body } }

    /// The installed refresh, else keyjar-full's `credential refresh`.
    package static var available: Refresh { installed ?? throughFullCommand }

    /// `keyjar credential refresh` in keyjar-full for `record`, named by its exact space and
    /// user (never its token: an argument is readable by every process of the machine), with
    /// this process's keyjard, timeout and autostart. A token the caller rejects is refreshed
    /// whatever its expiry (`--force`); an expired one through keyjard's lease, which lets one
    /// process of many refresh. Its output is dropped; its one-line error becomes this
    /// command's, a failure of its own (unreachable, locked) or else a plain one.
    private static func throughFullCommand(_ record: CredentialRecord, rejected: String?, client: KeyjarClient) throws {
        guard let program = FullCommand.path else {
            let candidates = ProgramLayout.candidates(for: FullCommand.executableName)
            throw CLIError.failure(
                "cannot refresh the token of \(record.user): cannot find \(FullCommand.executableName) (looked for "
                    + candidates.joined(separator: ", ") + ")"
            )
        }
        let result: ProgramRun.Result
        do {
            result = try ProgramRun.run(refreshArguments(program, record, rejected: rejected, client: client))
        } catch {
            throw CLIError.failure("cannot refresh the token of \(record.user): \(error.description)")
        }
        guard result.status != 0 else { return }
        var message = result.errorText()
        if message.hasPrefix("keyjar: ") { message.removeFirst("keyjar: ".count) }
        if message.isEmpty {
            message =
                "\(FullCommand.executableName) credential refresh ended with status \(result.status) and said nothing."
        }
        let status: CLIError.Status =
            switch CLIError.Status(rawValue: result.status) {
            case .unreachable?: .unreachable
            case .locked?: .locked
            default: .failure
            }
        throw CLIError(message: message, status: status)
    }

    /// The child's command line. `--option=value`: a realm or user that starts with a dash is
    /// a value all the same.
    static func refreshArguments(
        _ program: String,
        _ record: CredentialRecord,
        rejected: String?,
        client: KeyjarClient
    ) -> [String] {
        let space = record.space
        let host = space.host.contains(":") ? "[\(space.host)]" : space.host
        let configuration = client.configuration
        var arguments = [
            program, "credential", "refresh", "--exact-space",
            "--url=\(space.protocol)://\(host):\(space.port)",
            "--method=\(MethodArgument(space.authenticationMethod).rawValue)", "--user=\(record.user)",
            // The same keyjard, however this process was told of it (--socket or the environment).
            "--socket=\(configuration.socketPath)", "--timeout=\(configuration.requestTimeout)",
        ]
        if let realm = space.realm { arguments.append("--realm=\(realm)") }
        if let proxy = ProxyArgument(rawValue: space.proxyType.rawValue) {
            arguments.append("--proxy=\(proxy.rawValue)")
        }
        if !configuration.autoStart { arguments.append("--no-start") }
        if rejected != nil { arguments.append("--force") }
        return arguments
    }
}
