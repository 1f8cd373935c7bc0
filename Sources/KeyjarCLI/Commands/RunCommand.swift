import ArgumentParser
import Foundation
import Glibc
import Keyjar
import KeyjarCommands
import KeyjarCore

/// `keyjar run --env NAME=URL[#user]… [--mask] -- COMMAND…`: a command started with stored
/// passwords or tokens in its environment, so that a tool that reads `GITHUB_TOKEN` or
/// `NPM_TOKEN` gets it without its value ever being typed, on a command line or in a file.
struct RunCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "run",
        abstract: "Run a command with stored passwords or tokens in environment variables.",
        discussion: """
            Each --env NAME=URL[#user] sets NAME to the password or token of the stored \
            credential that answers at URL's origin by Keyjar's matching rule (see `keyjar help \
            credential`), of that user when one is named after '#' (or in the URL), else the one \
            that answers unasked. A token Keyjar can refresh that has expired, or expires within \
            a minute, is refreshed first (once for every process). A credential that cannot be \
            found stops keyjar before the command starts (status 1).

            The values are in the command's environment only: never on a command line, in a \
            file or in keyjar's output. With --mask the command's standard output and error \
            pass through keyjar, which writes *** wherever a value appears (a value split across \
            writes too; output that might begin a value waits for the next write).

            Exit status: the command's (a command ended by a signal ends keyjar by the same \
            signal); 127 when the command is not found, 126 when it cannot be run. Signals \
            keyjar is sent with kill(1) are passed to the command.

            Examples:
              keyjar run --env GITHUB_TOKEN=https://api.github.com -- gh repo list
              keyjar run --env NPM_TOKEN=https://registry.npmjs.org#ci --mask -- npm publish
            """
    )

    @OptionGroup var global: GlobalOptions

    // Read in `validate()`, not by a transform: ArgumentParser would repeat a refused value,
    // and a URL may hold a password.
    @Option(
        name: .customLong("env"),
        help: ArgumentHelp(
            "An environment variable and the credential it holds: NAME=URL, or NAME=URL#user.",
            valueName: "name=url[#user]"
        )
    )
    var environmentArguments: [String] = []

    private var variables: [EnvironmentCredential] {
        environmentArguments.compactMap { try? EnvironmentCredential(parsing: $0) }
    }

    @Flag(help: "Write *** for the values wherever they appear in the command's output and errors.")
    var mask = false

    @Argument(
        parsing: .postTerminator,
        help: ArgumentHelp("The command and its arguments, after --.", valueName: "command")
    )
    var command: [String] = []

    /// A token that expires sooner than this is refreshed before the command gets it.
    static let refreshMargin: Double = 60

    func validate() throws {
        guard !command.isEmpty else { throw ValidationError("give the command to run after --.") }
        guard !environmentArguments.isEmpty else { throw ValidationError("give at least one --env NAME=URL.") }
        var names = Set<String>()
        for argument in environmentArguments {
            let variable = try EnvironmentCredential(parsing: argument)
            guard names.insert(variable.name).inserted else {
                throw ValidationError("--env \(variable.name) is given twice.")
            }
        }
    }

    func run() throws {
        let client = try global.connect()
        var values: [(name: String, value: String)] = []
        for variable in variables { values.append((variable.name, try Self.secret(for: variable, client: client))) }
        if mask {
            MaskedChild.run(command, setting: values, mask: SecretMask(secrets: values.map(\.value)))
        }
        for (name, value) in values { setenv(name, value, 1) }
        try Output.finish()
        // An exec keeps the thread's signal mask and what is ignored: the command starts with
        // every signal at its default and none blocked (Swift's worker threads block some),
        // so that Ctrl-C and kill reach it.
        signal(SIGPIPE, SIG_DFL)
        var none = sigset_t()
        sigemptyset(&none)
        pthread_sigmask(SIG_SETMASK, &none, nil)
        var argv: [UnsafeMutablePointer<CChar>?] = command.map { strdup($0) } + [nil]
        execvp(command[0], &argv)
        let number = errno
        throw CLIError.cannotRun(command[0], errorNumber: number)
    }

    /// The stored secret `variable` names: refreshed first when it is a token about to expire.
    private static func secret(for variable: EnvironmentCredential, client: KeyjarClient) throws -> String {
        let lookup = StoredCredentialLookup(spaces: [variable.space], user: variable.user)
        var found = try lookup.answer(client: client)
        if let token = try lookup.tokenToRefresh(client: client, answering: found, margin: refreshMargin),
            let refresh = StoredTokenRefresh.installed
        {
            // A token that still works is handed back as refused: keyjard would answer with it.
            let current = found == nil ? nil : try client.password(user: token.user, for: token.space)
            do {
                try refresh(token, current, client)
            } catch let error as CLIError where found != nil {
                // Still valid for a while: the command gets it as it is, and is told why.
                Output.error("\(variable.name): the token expires soon and was not refreshed: \(error.message)")
            }
            found = try lookup.answer(client: client)
        }
        let whose = variable.user.map { " for \($0)" } ?? ""
        guard let record = found else {
            throw CLIError.failure(
                "\(variable.name): no stored credential\(whose) answers at \(variable.space.displayURL) "
                    + "(`keyjar credential list` shows what is stored; where several users are and none is the default, name one with #user)."
            )
        }
        guard record.space.authenticationMethod != .clientCertificate, record.space.authenticationMethod.keepsSecret
        else {
            throw CLIError.failure(
                "\(variable.name): the credential at \(record.space.summary) is no password or token."
            )
        }
        guard let secret = try client.password(user: record.user, for: record.space) else {
            throw CLIError.failure(
                "\(variable.name): the password of \(record.user) at \(record.space.summary) is missing from the "
                    + "secret store (`keyjar credential repair` says more)."
            )
        }
        return secret
    }
}

extension CLIError {
    /// A command that could not be started, with the status a shell gives: 127 not found, 126
    /// found but not runnable.
    static func cannotRun(_ program: String, errorNumber: Int32) -> CLIError {
        CLIError(
            message: "cannot run \(UserInput.shown(program)): \(String(cString: strerror(errorNumber))).",
            status: errorNumber == ENOENT ? .commandNotFound : .commandNotRunnable
        )
    }
}
