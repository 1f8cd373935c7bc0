import ArgumentParser
import Foundation
import FoundationNetworking
import Glibc
import Keyjar
import KeyjarCodec
import KeyjarCommands
import KeyjarCore
import KeyjarIdentity
import KeyjarLoader

/// `keyjar credential …`: the shared URL credential storage.
struct CredentialCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "credential",
        abstract: "Manage URL credentials: user names in keyjard, passwords in the Secret Service.",
        discussion: """
            A protection space is a server (or proxy) and port, a realm and an authentication method, \
            as a server's challenge names them. Passwords are read from standard input \
            (--password-stdin) or typed at a prompt, never taken from an argument, and are printed \
            only by `show --reveal`.

            A credential stored for a whole server (no --realm, method default) answers that \
            server's challenges of any realm, Basic, Digest, NTLM or Negotiate. A challenge is \
            answered by the most specific stored space: the exact realm and method, then the realm \
            with method default, then no realm with the method, then no realm and method default; \
            the default credential of the most specific one answers unasked. A space's first \
            credential becomes its default.

            Client certificates (--method client-certificate --identity FILE, a PEM file with \
            certificate and key, or a PKCS#12 bundle) are kept like passwords: the private key in \
            the Secret Service. Certificates trusted with `keyjar fetch --pinned-sha256 … \
            --persistence permanent` are listed with method server-trust, their fingerprint as user.

            Examples:
              keyjar credential add --url https://example.com --realm Admin \\
                  --method basic --user alice
              printf '%s\\n' "$PASSWORD" | keyjar credential add \\
                  --url https://example.com --user alice --password-stdin
              keyjar credential add --proxy http --url http://proxy.example:3128 --user bob
              keyjar credential add --url https://intranet.example \\
                  --method client-certificate --identity alice.p12
              printf '%s\\n%s\\n' "$ACCESS_TOKEN" "$REFRESH_TOKEN" | keyjar credential add \\
                  --url https://api.example --token-stdin --expires-in 3600 \\
                  --refresh-token-stdin --token-endpoint https://login.example/token --client-id cli
              keyjar credential list --json
              keyjar credential show --url https://example.com --user alice --reveal
              keyjar credential default --url https://example.com --user alice
              keyjar credential refresh --url https://api.example
              keyjar credential remove --url https://example.com --user alice
              keyjar credential repair --dry-run
            """,
        subcommands: [
            Add.self, List.self, Show.self, Remove.self, Default.self, Refresh.self, Repair.self, Import.self,
        ]
    )
}

/// Credential records the options select, from keyjard.
func records(_ client: KeyjarClient, matching space: SpaceOptions, user: String?) throws -> [CredentialRecord] {
    try client.credentialRecords().filter { space.matches($0.space) && (user == nil || $0.user == user) }
        .sorted {
            ($0.space.displayURL, $0.space.realm ?? "", $0.user) < ($1.space.displayURL, $1.space.realm ?? "", $1.user)
        }
}

/// Exactly one record, or an error that says how to narrow or what was not found.
func single(_ records: [CredentialRecord], _ space: SpaceOptions, user: String?) throws -> CredentialRecord {
    let who = user.map { " for \($0)" } ?? ""
    guard let first = records.first else {
        throw CLIError.failure("no stored credential\(who) matches \(space.url ?? "the given space").")
    }
    if records.count == 1 { return first }
    if user == nil, Set(records.map(\.space)).count == 1, let preferred = records.first(where: \.isDefault) {
        return preferred
    }
    throw CLIError.usage(
        "\(records.count) stored credentials\(who) match; narrow the choice with --user, --realm or --method "
            + "(see `keyjar credential list`)."
    )
}

/// A credential record as `--json` shows it.
private struct CredentialJSON {
    var url: String
    var `protocol`: String
    var host: String
    var port: Int
    var realm: String?
    var method: String
    var proxy: String?
    var user: String
    var isDefault: Bool
    var persistence: String
    var created: String
    var lastUsed: String?
    var expires: String?
    var expired: Bool
    var revoked: Bool
    var refreshToken: Bool
    var tokenEndpoint: String?
    var password: String?

    init(_ record: CredentialRecord, password: String? = nil) {
        url = record.space.displayURL
        `protocol` = record.space.protocol
        host = record.space.host
        port = record.space.port
        realm = record.space.realm
        method = MethodArgument(record.space.authenticationMethod).rawValue
        proxy = record.space.isProxy ? record.space.proxyType.rawValue : nil
        user = record.user
        isDefault = record.isDefault
        persistence = record.persistence.rawValue
        created = Output.time(Date(timeIntervalSince1970: record.created))
        lastUsed = record.lastUsed.map { Output.time(Date(timeIntervalSince1970: $0)) }
        expires = record.expires.map { Output.time(Date(timeIntervalSince1970: $0)) }
        expired = record.isExpired(at: Date().timeIntervalSince1970)
        revoked = record.isRevoked
        refreshToken = record.hasRefreshToken
        tokenEndpoint = record.tokenRefresh?.endpoint
        self.password = password
    }

    /// A member for each property, named after it but `isDefault` (`default`); the optional
    /// ones left out when absent.
    var json: JSONValue {
        .object(omittingAbsent: [
            "created": .string(created),
            "default": .bool(isDefault),
            "expired": .bool(expired),
            "expires": expires.map(JSONValue.string),
            "host": .string(host),
            "lastUsed": lastUsed.map(JSONValue.string),
            "method": .string(method),
            "password": password.map(JSONValue.string),
            "persistence": .string(persistence),
            "port": .integer(port),
            "protocol": .string(self.protocol),
            "proxy": proxy.map(JSONValue.string),
            "realm": realm.map(JSONValue.string),
            "refreshToken": .bool(refreshToken),
            "revoked": .bool(revoked),
            "tokenEndpoint": tokenEndpoint.map(JSONValue.string),
            "url": .string(url),
            "user": .string(user),
        ])
    }
}

extension CredentialCommand {
    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "list",
            abstract: "List stored credentials (never their passwords or tokens).",
            discussion: """
                One line each: space, user, and notes: `(default)` for a space's default \
                credential, `(expires TIME)` or `(expired TIME)`, `(refreshable)` for a token \
                keyjar can refresh, `(revoked: log in again)` for a token whose refresh token the \
                token endpoint refused. Expired and revoked credentials answer nothing until \
                stored again.
                """
        )

        @OptionGroup var global: GlobalOptions
        @OptionGroup var space: SpaceOptions

        @Option(help: ArgumentHelp("Only this user's credentials.", valueName: "name"))
        var user: String?

        @Flag(help: "Print a JSON array.")
        var json = false

        func run() throws {
            let client = try global.connect()
            let found = try records(client, matching: space, user: user)
            if json {
                Output.line(Output.json(.array(found.map { CredentialJSON($0).json })))
                return
            }
            let now = Date().timeIntervalSince1970
            for record in found {
                let who =
                    switch record.space.authenticationMethod {
                    case .serverTrust: "certificate \(record.user)"
                    case .clientCertificate: "identity \(record.user)"
                    default: "user \(record.user)"
                    }
                var notes: [String] = []
                if record.isDefault { notes.append("default") }
                if let expires = record.expires {
                    let time = Output.time(Date(timeIntervalSince1970: expires))
                    notes.append(record.isExpired(at: now) ? "expired \(time)" : "expires \(time)")
                }
                if record.tokenRefresh != nil, record.hasRefreshToken { notes.append("refreshable") }
                // Revoked last and loudest: only logging in again brings it back.
                if record.isRevoked { notes.append("revoked: log in again") }
                Output.line("\(record.space.summary) \(who)" + notes.map { " (\($0))" }.joined())
            }
        }
    }

    struct Show: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "show",
            abstract: "Show one credential; its password only with --reveal.",
            discussion: """
                Without --user, the space's default credential. --reveal prints the password only \
                when standard output is a terminal; add --force to print it into a pipe or file.
                """
        )

        @OptionGroup var global: GlobalOptions
        @OptionGroup var space: SpaceOptions

        @Option(help: ArgumentHelp("The user name.", valueName: "name"))
        var user: String?

        @Flag(help: "Also print the password.")
        var reveal = false

        @Flag(help: "With --reveal, print the password even when standard output is not a terminal.")
        var force = false

        @Flag(help: "Print a JSON object.")
        var json = false

        func validate() throws {
            if force && !reveal { throw ValidationError("--force only applies to --reveal.") }
        }

        func run() throws {
            if reveal && !force && !Output.standardOutputIsTerminal {
                throw CLIError.usage(
                    "refusing to print a password into a pipe or file; add --force if that is what you want."
                )
            }
            let client = try global.connect()
            let name = user ?? space.userFromURL
            let record = try single(try records(client, matching: space, user: name), space, user: name)
            var password: String?
            if reveal {
                guard let stored = try client.password(user: record.user, for: record.space) else {
                    throw CLIError.failure(
                        "the password of \(record.user) at \(record.space.displayURL) is not in the secret store."
                    )
                }
                password = stored
            }
            if json {
                Output.line(Output.json(CredentialJSON(record, password: password).json))
                return
            }
            var lines = [
                "url: \(record.space.displayURL)",
                "realm: \(record.space.realm.map { TerminalText.safe($0) } ?? "(none)")",
                "method: \(MethodArgument(record.space.authenticationMethod).rawValue)",
                "user: \(record.user)",
                "default: \(record.isDefault ? "yes" : "no")",
                "persistence: \(record.persistence.rawValue)",
                "created: \(Output.time(Date(timeIntervalSince1970: record.created)))",
            ]
            if let lastUsed = record.lastUsed {
                lines.append("last used: \(Output.time(Date(timeIntervalSince1970: lastUsed)))")
            }
            if let password { lines.append("password: \(password)") }
            Output.line(lines.joined(separator: "\n"))
        }
    }

    struct Remove: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "remove",
            abstract: "Remove a credential (its password leaves the Secret Service too).",
            discussion: "The options must select exactly one credential, unless --all removes every one they select."
        )

        @OptionGroup var global: GlobalOptions
        @OptionGroup var space: SpaceOptions

        @Option(help: ArgumentHelp("The user name.", valueName: "name"))
        var user: String?

        @Flag(help: "Remove every credential the options select.")
        var all = false

        func validate() throws {
            guard space.url != nil else {
                throw ValidationError("Missing --url: the server whose credential to remove.")
            }
        }

        func run() throws {
            let client = try global.connect()
            let name = user ?? space.userFromURL
            let found = try records(client, matching: space, user: name)
            let doomed = all ? found : [try single(found, space, user: name)]
            if doomed.isEmpty {
                throw CLIError.failure("no stored credential matches \(space.url ?? "the given space").")
            }
            for record in doomed { try client.removeCredential(user: record.user, for: record.space) }
        }
    }

    struct Default: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "default",
            abstract: "Make a stored credential its space's default (the one answered first)."
        )

        @OptionGroup var global: GlobalOptions
        @OptionGroup var space: SpaceOptions

        @Option(help: ArgumentHelp("The user name.", valueName: "name"))
        var user: String?

        func validate() throws {
            guard space.url != nil else { throw ValidationError("Missing --url: the server of the credential.") }
            guard user ?? space.userFromURL != nil else {
                throw ValidationError("Missing --user: the user to make the default.")
            }
        }

        func run() throws {
            let client = try global.connect()
            let name = user ?? space.userFromURL
            let record = try single(try records(client, matching: space, user: name), space, user: name)
            try client.setDefaultCredential(user: record.user, for: record.space)
        }
    }

    struct Repair: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "repair",
            abstract: "Adopt passwords no credential owns; list credentials whose password is missing.",
            discussion: """
                A credential is two writes: its password to the Secret Service, its record to \
                keyjard's database. A crash between the two, a database restored from a backup \
                older than the keyring, or another program removing a keyring item can leave one \
                half; `keyjar status` lists such halves. Nothing is lost by repairing: a password \
                without a record (its keyring item names the space and user) is adopted back as \
                a permanent credential; a record without its password is kept, since you may \
                still know the password (`keyjar credential add` stores it again), and removed \
                only with --remove-unpaired. Passwords are neither read nor printed.

                Keyjar keeps one store per user and Secret Service: a keyjard run with another \
                --database on the same Secret Service would adopt this store's passwords (run \
                such a second store with --secrets file).
                """
        )

        @OptionGroup var global: GlobalOptions

        @Flag(help: "Only list what would be done.")
        var dryRun = false

        @Flag(help: "Remove the credentials whose password is missing, listing each.")
        var removeUnpaired = false

        func run() throws {
            let client = try global.connect()
            let mismatches: [CredentialMismatch]
            if dryRun {
                let status = try client.status()
                guard let found = status.credentialMismatches else {
                    throw CLIError.failure("credentials and passwords cannot be compared: \(status.secretsDetail)")
                }
                mismatches = found
            } else {
                mismatches = try client.repairCredentials(removeUnpaired: removeUnpaired)
            }
            if mismatches.isEmpty {
                Output.line("nothing to repair: every credential has its password")
                return
            }
            for mismatch in mismatches { Output.line("\(outcome(of: mismatch)) \(mismatch.summary)") }
        }

        /// What repair does (or, with --dry-run, would do) with one half.
        private func outcome(of mismatch: CredentialMismatch) -> String {
            switch (mismatch.kind, dryRun) {
            case (.credentialMissing, false): "adopted"
            case (.credentialMissing, true): "would adopt"
            case (.passwordMissing, false): removeUnpaired ? "removed" : "kept"
            case (.passwordMissing, true): removeUnpaired ? "would remove" : "would keep"
            }
        }
    }
}

extension CredentialMismatch {
    /// One line for people: which half is left, and of what.
    var summary: String {
        switch kind {
        case .passwordMissing: "credential without its password: \(space.summary) user \(user)"
        case .credentialMissing: "password without a credential: \(space.summary) user \(user)"
        }
    }

    /// The line `keyjar status` shows: with when keyjard found the password gone, if it did.
    var statusLine: String {
        guard kind == .passwordMissing, let noticed else { return summary }
        let since = Output.time(Date(timeIntervalSince1970: noticed))
        return "credential without its password (gone since \(since)): \(space.summary) user \(user)"
    }
}
