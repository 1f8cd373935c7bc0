import ArgumentParser
import Keyjar
import KeyjarCommands
import KeyjarCore

/// `keyjar unlock` and `keyjar lock`: the encrypted secrets file's passphrase.
struct UnlockCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "unlock",
        abstract: "Open keyjard's encrypted secrets file with its passphrase.",
        discussion: """
            keyjard keeps passwords in a file sealed under a passphrase when it runs with \
            --secrets encrypted (KEYJAR_SECRETS=encrypted). Until the file is unlocked, every \
            command that needs a password fails at once with status 4; cookies, and credentials \
            that need no password, work as ever. The first unlock sets the passphrase (typed \
            twice at a terminal). A wrong passphrase changes nothing; after three in a row, each \
            next try waits longer, up to 16 s.

            The file stays open until `keyjar lock`, until keyjard stops, or, with \
            --lock-after-idle, until no password has been read or stored for that long. \
            `keyjar status` says which, and when.

            The passphrase is read from the terminal with echo off, or from standard input or a \
            file descriptor (a PAM exec, a systemd unit's credential): never from an argument.

            Examples:
              keyjar unlock
              keyjar unlock --lock-after-idle 15m
              keyjar unlock --passphrase-stdin < passphrase.txt
              keyjar unlock --passphrase-fd 3 3< "$CREDENTIALS_DIRECTORY/keyjar"
            """
    )

    @OptionGroup var global: GlobalOptions

    @Flag(help: "Read the passphrase from standard input (one trailing newline is dropped).")
    var passphraseStdin = false

    @Option(help: ArgumentHelp("Read the passphrase from this open file descriptor.", valueName: "fd"))
    var passphraseFd: Int32?

    @Option(
        help: ArgumentHelp(
            """
            Lock again once no password has been read or stored for this long: 90s, 15m, 2h, 1d, \
            or 0 for never (default: keyjard's --lock-after-idle, else never).
            """,
            valueName: "duration"
        )
    )
    var lockAfterIdle: String?

    func validate() throws {
        if let lockAfterIdle, DurationText.seconds(lockAfterIdle) == nil {
            throw ValidationError(
                "--lock-after-idle takes a duration such as 90s, 15m, 2h or 0, not '\(lockAfterIdle)'"
            )
        }
        if passphraseStdin, passphraseFd != nil {
            throw ValidationError("--passphrase-stdin and --passphrase-fd are two ways to give one passphrase")
        }
        if let passphraseFd, passphraseFd < 0 { throw ValidationError("--passphrase-fd takes a descriptor, 0 or more") }
    }

    func run() throws {
        let passphrase = try PasswordInput.passphrase(
            standardInput: passphraseStdin,
            descriptor: passphraseFd,
            prompt: SecretsUnlock.prompt,
            confirming: false
        )
        // scrypt, and the wait after failed tries, come before the answer.
        let client = try global.connect(defaultTimeout: 60)
        try SecretsUnlock.unlock(
            client,
            passphrase: passphrase,
            confirmingANewOne: passphraseFd == nil && !passphraseStdin,
            lockAfterIdle: idleSeconds
        )
    }

    private var idleSeconds: Int? { lockAfterIdle.flatMap(DurationText.seconds) }

}

/// Opening keyjard's encrypted secrets file: `keyjar unlock`, and a command that finds it locked
/// while a terminal is there to ask on.
enum SecretsUnlock {
    static let prompt = "Passphrase of keyjar's secrets: "

    /// Unlocks with `passphrase`; when there is no file yet, sets it (asking for it once more
    /// at the terminal first when `confirmingANewOne`).
    static func unlock(
        _ client: KeyjarClient,
        passphrase: String,
        confirmingANewOne: Bool,
        lockAfterIdle: Int?
    ) throws {
        do {
            try client.unlockSecrets(passphrase: passphrase, lockAfterIdle: lockAfterIdle)
        } catch let error where error.wireCode == WireErrorCode.notFound.rawValue {
            // No file yet: this passphrase becomes its passphrase.
            if confirmingANewOne { try PasswordInput.confirm(passphrase) }
            do {
                try client.unlockSecrets(passphrase: passphrase, create: true, lockAfterIdle: lockAfterIdle)
            } catch {
                throw CLIError(error)
            }
        } catch {
            throw CLIError(error)
        }
    }

    /// Runs `body`; when keyjard answers that its encrypted secrets are locked and the command
    /// is `interactive` (it asked at the terminal already), asks for the passphrase (setting
    /// one, the first time), unlocks, and runs `body` once more. Otherwise (a script, input
    /// piped in) the answer stands: exit status 4, never a prompt.
    static func askingAtTheTerminal<T>(interactive: Bool, _ client: KeyjarClient, _ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let error as KeyjarClientError where error.wireCode == WireErrorCode.secretsLocked.rawValue {
            guard interactive, PasswordInput.hasTerminal else { throw error }
            Output.error("keyjard keeps passwords in an encrypted file, which is locked (a first one sets it).")
            let passphrase = try PasswordInput.prompt(prompt, what: "passphrase", pipedWith: "keyjar unlock")
            try unlock(client, passphrase: passphrase, confirmingANewOne: true, lockAfterIdle: nil)
            return try body()
        }
    }
}

struct LockCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "lock",
        abstract: "Make keyjard forget the encrypted secrets file's key until the next unlock.",
        discussion: """
            Until `keyjar unlock`, every command that needs a password fails with status 4.

            Examples:
              keyjar lock
            """
    )

    @OptionGroup var global: GlobalOptions

    func run() throws {
        do {
            try global.connect().lockSecrets()
        } catch let error as KeyjarClientError {
            throw CLIError(error)
        }
    }
}
