import ArgumentParser
import Foundation
import FoundationNetworking
import Glibc
import Keyjar
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
              keyjar credential remove --url https://example.com --user alice
              keyjar credential repair --dry-run
            """,
        subcommands: [Add.self, List.self, Show.self, Remove.self, Default.self, Repair.self, Import.self]
    )
}

/// Credential records the options select, from keyjard.
private func records(_ client: KeyjarClient, matching space: SpaceOptions, user: String?) throws -> [CredentialRecord] {
    try client.credentialRecords().filter { space.matches($0.space) && (user == nil || $0.user == user) }
        .sorted {
            ($0.space.displayURL, $0.space.realm ?? "", $0.user) < ($1.space.displayURL, $1.space.realm ?? "", $1.user)
        }
}

/// Exactly one record, or an error that says how to narrow or what was not found.
private func single(_ records: [CredentialRecord], _ space: SpaceOptions, user: String?) throws -> CredentialRecord {
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
private struct CredentialJSON: Encodable {
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

    enum CodingKeys: String, CodingKey {
        case url, `protocol`, host, port, realm, method, proxy, user, persistence, created, lastUsed, expires, expired
        case revoked, refreshToken, tokenEndpoint, password
        case isDefault = "default"
    }
}

extension CredentialCommand {
    struct Add: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "add",
            abstract: "Store a credential (replacing the user's password if it is already stored).",
            discussion: """
                The password is read from standard input with --password-stdin, otherwise typed at \
                the terminal without echo. The first credential of a space becomes its default.

                Only permanent persistence is possible here: a session credential lives only inside \
                the process that stores it (SharedCredentialStorage with .forSession), and keyjar \
                exits as soon as it has stored it, so it would be gone at once.

                A bearer token (an OAuth 2 access token, a personal access token) is stored with \
                --token-stdin under method bearer: it answers the server's Bearer challenges and is \
                sent as "Authorization: Bearer TOKEN". Its user names it (default "token"). Standard \
                input holds the token on its first line; with --refresh-token-stdin, the OAuth \
                refresh token on its second line (tokens never contain a line break). With a \
                refresh token and --token-endpoint, keyjar refreshes an expired or refused token \
                there once (RFC 6749 section 6) and stores the new one for every program. \
                --expires and --expires-in give the token's expiry; an expired credential is \
                never offered (`keyjar credential list` shows it as expired).
                """
        )

        @OptionGroup var global: GlobalOptions
        @OptionGroup var space: SpaceOptions

        @Option(help: ArgumentHelp("The user name (default: the user in --url).", valueName: "name"))
        var user: String?

        @Flag(help: "Read the password from standard input (one trailing newline is dropped).")
        var passwordStdin = false

        @Flag(help: "Store a bearer token read from standard input's first line (method bearer).")
        var tokenStdin = false

        @Flag(help: "With --token-stdin: standard input's second line is the OAuth refresh token.")
        var refreshTokenStdin = false

        @Option(
            help: ArgumentHelp(
                "The OAuth token endpoint the refresh token is redeemed at (https; http only to this machine).",
                valueName: "url"
            )
        )
        var tokenEndpoint: String?

        @Option(help: ArgumentHelp("The OAuth client id sent with a refresh.", valueName: "id"))
        var clientID: String?

        @Option(
            help: ArgumentHelp(
                "When the credential expires: an ISO 8601 time (2026-12-31T23:59:59Z) or date (UTC midnight).",
                valueName: "time"
            )
        )
        var expires: String?

        @Option(help: ArgumentHelp("Seconds from now until the credential expires.", valueName: "seconds"))
        var expiresIn: Int?

        @Option(
            help: ArgumentHelp(
                "How long the credential is kept: permanent (the only choice here, see above).",
                valueName: "persistence"
            )
        )
        var persistence: PersistenceArgument = .permanent

        @Flag(name: .customLong("default"), help: "Make it the space's default credential.")
        var makeDefault = false

        @Option(
            help: ArgumentHelp(
                "A client certificate and its key: a PEM file, or a PKCS#12 bundle (its passphrase read like a password); implies --method client-certificate.",
                valueName: "file"
            )
        )
        var identity: String?

        func validate() throws {
            guard space.url != nil else { throw ValidationError("Missing --url: the server the credential is for.") }
            if expires != nil && expiresIn != nil {
                throw ValidationError("Give --expires or --expires-in, not both.")
            }
            if let expiresIn, expiresIn <= 0 {
                throw ValidationError("--expires-in takes a number of seconds above 0.")
            }
            if let expires { _ = try Self.expiry(expires) }
            if refreshTokenStdin && !tokenStdin {
                throw ValidationError(
                    "--refresh-token-stdin comes with --token-stdin (the access token on the first line)."
                )
            }
            if tokenEndpoint != nil && !refreshTokenStdin {
                throw ValidationError("--token-endpoint needs the refresh token: add --refresh-token-stdin.")
            }
            if clientID != nil && tokenEndpoint == nil {
                throw ValidationError("--client-id is sent to the token endpoint: add --token-endpoint.")
            }
            if let tokenEndpoint {
                let endpoint = try UserInput.url(tokenEndpoint, example: "https://login.example/oauth/token")
                if TokenRefresh.problem(withEndpoint: endpoint.absoluteString) != nil {
                    throw ValidationError("--token-endpoint must be an https URL (http only to this machine).")
                }
            }
            if tokenStdin {
                if passwordStdin { throw ValidationError("Give --token-stdin or --password-stdin, not both.") }
                if identity != nil {
                    throw ValidationError("--token-stdin stores a token, --identity a certificate: give one.")
                }
                if space.proxy != nil {
                    throw ValidationError("Bearer tokens are for servers, not proxies: leave out --proxy.")
                }
                if let method = space.method, method.method != .httpBearer {
                    throw ValidationError(
                        "--token-stdin stores a bearer token: its method is bearer, not \(method.rawValue)."
                    )
                }
                _ = try UserInput.user(user ?? space.userFromURL ?? UserInput.tokenUser)
                return
            }
            if space.method?.method == .httpBearer {
                throw ValidationError("Missing --token-stdin: a bearer credential is a token read from standard input.")
            }
            if identity != nil {
                if expires != nil || expiresIn != nil {
                    throw ValidationError("A client certificate expires when it says; leave out --expires.")
                }
                if let method = space.method, method != .clientCertificate {
                    throw ValidationError(
                        "--identity stores a client certificate: its method is client-certificate, not \(method.rawValue)."
                    )
                }
            } else {
                if space.method == .clientCertificate {
                    throw ValidationError("Missing --identity: the file with the client certificate and its key.")
                }
                if space.method == .serverTrust {
                    throw ValidationError(
                        "A server-trust decision is made by loading the URL: keyjar fetch --pinned-sha256 FINGERPRINT --persistence permanent URL."
                    )
                }
                guard let name = user ?? space.userFromURL else {
                    throw ValidationError("Missing --user: the user name.")
                }
                _ = try UserInput.user(name)
            }
        }

        /// An `--expires` value in seconds since 1970.
        static func expiry(_ text: String) throws(ValidationError) -> Double {
            let full = ISO8601DateFormatter()
            let fractional = ISO8601DateFormatter()
            fractional.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
            let day = ISO8601DateFormatter()
            day.formatOptions = [.withFullDate]
            guard let date = full.date(from: text) ?? fractional.date(from: text) ?? day.date(from: text) else {
                throw ValidationError(
                    "--expires takes an ISO 8601 time such as 2026-12-31T23:59:59Z (or a date, 2026-12-31), not \"\(text)\"."
                )
            }
            return date.timeIntervalSince1970
        }

        /// The expiry the options give, in seconds since 1970.
        private func expiry() throws -> Double? {
            if let expiresIn { return Date().timeIntervalSince1970 + Double(expiresIn) }
            return try expires.map { text throws(ValidationError) in try Self.expiry(text) }
        }

        func run() throws {
            if let identity { return try addIdentity(from: identity) }
            if tokenStdin { return try addToken() }
            let protectionSpace = try space.exactSpace()
            guard let name = user ?? space.userFromURL else { throw CLIError.usage("--user is required.") }
            let password =
                passwordStdin
                ? try PasswordInput.fromStandardInput()
                : try PasswordInput.prompt("Password for \(name) at \(protectionSpace.displayURL): ")
            let client = try global.connect()
            try client.setCredential(
                user: name,
                password: password,
                for: protectionSpace,
                makeDefault: makeDefault,
                expires: try expiry()
            )
        }

        /// Stores a bearer token (and its refresh token and endpoint) under method bearer.
        private func addToken() throws {
            let exact = try space.exactSpace()
            let protectionSpace = ProtectionSpace(
                host: exact.host,
                port: exact.port,
                protocol: exact.protocol,
                realm: exact.realm,
                authenticationMethod: .httpBearer
            )
            let name = user ?? space.userFromURL ?? UserInput.tokenUser
            let (token, refreshToken) = try TokenInput.read(
                StandardInput.readAll(for: "token"),
                withRefreshToken: refreshTokenStdin
            )
            let client = try global.connect()
            try client.setCredential(
                user: name,
                password: token,
                for: protectionSpace,
                makeDefault: makeDefault,
                expires: try expiry(),
                refreshToken: refreshToken,
                tokenRefresh: tokenEndpoint.map { TokenRefresh(endpoint: $0, clientID: clientID) }
            )
        }

        /// Reads the identity (asking for a passphrase only when it needs one) and stores it,
        /// certificate and key as the credential's secret, named by the certificate's subject.
        private func addIdentity(from path: String) throws {
            let url = URL(fileURLWithPath: path)
            let passphrase = passwordStdin ? try PasswordInput.fromStandardInput(what: "passphrase") : nil
            var result = Result { () throws(ClientIdentity.ReadError) in
                try ClientIdentity(contentsOf: url, passphrase: passphrase)
            }
            if case .failure(let error) = result, error.mightNeedPassphrase, !passwordStdin {
                // Encrypted: ask for the passphrase, once.
                let typed = try PasswordInput.prompt("Passphrase for \(path): ")
                result = Result { () throws(ClientIdentity.ReadError) in
                    try ClientIdentity(contentsOf: url, passphrase: typed)
                }
            }
            let read: ClientIdentity
            switch result {
            case .success(let identity): read = identity
            case .failure(let error):
                // The reason names the file itself when it could not be read.
                let text =
                    error.description.hasPrefix("cannot read") ? error.description : "\(path): \(error.description)"
                throw CLIError.failure(text.hasSuffix(".") ? text : text + ".")
            }
            var protectionSpace = try space.exactSpace()
            protectionSpace = ProtectionSpace(
                host: protectionSpace.host,
                port: protectionSpace.port,
                protocol: protectionSpace.protocol,
                authenticationMethod: .clientCertificate
            )
            let credential = read.credential(persistence: .permanent)
            let name = user ?? read.label
            let client = try global.connect()
            try client.setCredential(
                user: name,
                password: credential.password ?? "",
                for: protectionSpace,
                makeDefault: makeDefault
            )
            Output.error(
                "stored the client certificate \(read.certificate.subject) (SHA-256 \(read.certificate.sha256Fingerprint)) for \(protectionSpace.displayURL)."
            )
        }
    }

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
                Output.line(try Output.json(found.map { CredentialJSON($0) }))
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
                Output.line(try Output.json(CredentialJSON(record, password: password)))
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
