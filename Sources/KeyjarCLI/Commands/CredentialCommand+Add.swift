import ArgumentParser
import Foundation
import FoundationNetworking
import Glibc
import Keyjar
import KeyjarCommands
import KeyjarCore
import KeyjarIdentity
import KeyjarLoader

// `keyjar credential add`: a password, a token or a client identity for a protection space.
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
            let expires = try expiry()
            try SecretsUnlock.askingAtTheTerminal(interactive: !passwordStdin, client) {
                try client.setCredential(
                    user: name,
                    password: password,
                    for: protectionSpace,
                    makeDefault: makeDefault,
                    expires: expires
                )
            }
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
            try SecretsUnlock.askingAtTheTerminal(interactive: !passwordStdin, client) {
                try client.setCredential(
                    user: name,
                    password: credential.password ?? "",
                    for: protectionSpace,
                    makeDefault: makeDefault
                )
            }
            Output.error(
                "stored the client certificate \(read.certificate.subject) (SHA-256 \(read.certificate.sha256Fingerprint)) for \(protectionSpace.displayURL)."
            )
        }
    }
}
