import ArgumentParser
import Foundation
import Keyjar
import KeyjarCommands

/// `keyjar secrets`: where keyjard keeps passwords.
struct SecretsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "secrets",
        abstract: "Move keyjard's passwords and tokens to another secrets backend.",
        subcommands: [Migrate.self]
    )

    /// `keyjar secrets migrate --to BACKEND`.
    struct Migrate: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "migrate",
            abstract: "Move every password and token to another secrets backend, losing none.",
            discussion: """
                Each secret is copied to the new backend and read back before keyjard records the \
                new backend; the copies in the old one are removed only after. Interrupted (a kill, \
                a full disk, a locked keyring), nothing is lost: keyjard keeps using the old \
                backend, or the new one with every secret, and running the command again finishes \
                it. Moving to the encrypted file takes its passphrase (which sets it when the file \
                is new), typed twice at a terminal, or from standard input or a descriptor.

                Examples:
                  keyjar secrets migrate --to encrypted
                  keyjar secrets migrate --to secret-service
                  keyjar secrets migrate --to encrypted --passphrase-stdin < passphrase.txt
                """
        )

        enum Backend: String, ExpressibleByArgument, CaseIterable {
            case secretService = "secret-service"
            case encrypted
            case file
        }

        @OptionGroup var global: GlobalOptions

        @Option(help: ArgumentHelp("The backend to move to: secret-service, encrypted or file.", valueName: "backend"))
        var to: Backend

        @Option(
            help: ArgumentHelp(
                "The file for encrypted or file (default: beside the database).",
                valueName: "path"
            )
        )
        var secretsFile: String?

        @Flag(help: "Read the encrypted file's passphrase from standard input (one trailing newline is dropped).")
        var passphraseStdin = false

        @Option(
            help: ArgumentHelp("Read the encrypted file's passphrase from this open file descriptor.", valueName: "fd")
        )
        var passphraseFd: Int32?

        func validate() throws {
            if secretsFile != nil, to == .secretService {
                throw ValidationError("--secrets-file names the file of --to encrypted or --to file")
            }
            if passphraseStdin || passphraseFd != nil, to != .encrypted {
                throw ValidationError("only the encrypted file has a passphrase")
            }
            if passphraseStdin, passphraseFd != nil {
                throw ValidationError("--passphrase-stdin and --passphrase-fd are two ways to give one passphrase")
            }
        }

        func run() throws {
            let passphrase = to == .encrypted ? try readPassphrase() : nil
            // Every secret is copied and read back before the answer; an encrypted file runs scrypt.
            let client = try global.connect(defaultTimeout: 600)
            do {
                try client.migrateSecrets(
                    to: to.rawValue,
                    path: secretsFile.map { URL(fileURLWithPath: $0).path },
                    passphrase: passphrase
                )
            } catch {
                throw CLIError(error)
            }
            Output.error("every password and token is in the \(to.rawValue) backend now.")
        }

        private func readPassphrase() throws -> String {
            try PasswordInput.passphrase(
                standardInput: passphraseStdin,
                descriptor: passphraseFd,
                prompt: SecretsUnlock.prompt,
                confirming: true
            )
        }
    }
}
