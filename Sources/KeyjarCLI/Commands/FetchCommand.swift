import ArgumentParser
import Foundation
import FoundationNetworking
import Glibc
import Keyjar
import KeyjarCommands
import KeyjarCore
import KeyjarIdentity
import KeyjarLoader
import KeyjarLocks
import Synchronization

/// `keyjar fetch URL`: one load through KeyjarLoader with the shared cookies and credentials.
struct FetchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fetch",
        abstract: "Load a URL with the shared cookies and stored credentials (curl-like).",
        discussion: """
            The request carries the shared store's cookies, every Set-Cookie of every response \
            (redirects included) is stored under the accept policy, and a server's challenge is \
            answered with the space's stored default credential. http, https, ftp and file URLs; \
            proxies from the standard environment variables; redirects are followed.

            With --user, keyjar asks for the password (or reads it with --password-stdin), sends \
            it when the server asks, and keeps it by --persistence once the server accepted it: \
            `none` (the default) forgets it, `permanent` stores it for every program of the user. \
            A password the server refuses is never stored, and the command fails.

            The body goes to standard output, or to a file: -o FILE, or -O for the server's name \
            (Content-Disposition, else the URL's), unique unless --overwrite. The file appears only \
            once complete; until then the data is in FILE.keyjar-part beside it. When the server \
            names a validator (ETag or Last-Modified), a download that is interrupted (Ctrl-C, \
            --max-time, a lost connection, even kill -9) keeps that partial data, and -C with the \
            same -o or -O continues it, asking only for the remaining bytes (the whole file again \
            if it changed on the server). With --cache, responses are kept in and answered from the response cache \
            (RFC 9111; `keyjar cache` lists and clears it), by --cache-policy. A progress line is drawn on standard error when that is a terminal.

            A certificate that fails verification is refused, and keyjar shows it with its SHA-256 \
            fingerprint: --pinned-sha256 trusts that one certificate for that host and port \
            (--persistence permanent keeps the decision in the shared store, for every program; \
            `keyjar credential list --method server-trust` lists kept decisions). A server that \
            asks for a client certificate gets the one stored for it (`keyjar credential add \
            --method client-certificate --identity FILE`).

            Exit status: 0 loaded (whatever the HTTP status, unless --fail), 1 the load failed, \
            a challenge went unanswered (the body is still written, unless --fail), the password \
            was refused or --fail saw a status of 400 or more, 2 bad usage, 3 keyjard unreachable.

            Examples:
              keyjar fetch https://example.com/
              keyjar fetch -i -o page.html https://example.com/page
              keyjar fetch -O --output-dir ~/Downloads https://example.com/report?id=7
              keyjar fetch -C -o debian.iso https://cdimage.example/debian.iso
              keyjar fetch --cache --cache-policy return-cache-data-else-load \\
                  https://example.com/feed
              keyjar fetch --user alice --persistence permanent \\
                  https://intranet.example/report
              keyjar fetch --pinned-sha256 5F:1A:…:C3 --persistence permanent \\
                  https://nas.home.arpa/
              keyjar fetch -X PUT -H 'Content-Type: application/json' \\
                  -d @body.json https://api.example/item/7
              printf '%s' "$PASSWORD" | keyjar fetch --user alice --password-stdin \\
                  -f https://api.example/me
            """
    )

    @OptionGroup var global: GlobalOptions

    @Argument(help: ArgumentHelp("The URL to load (http, https, ftp or file).", valueName: "url"))
    var url: String

    @Option(
        name: .shortAndLong,
        help: ArgumentHelp(
            "Save the body as this file (replacing it) instead of writing it to standard output.",
            valueName: "file"
        )
    )
    var output: String?

    @Flag(
        name: [.customShort("O"), .customLong("remote-name")],
        help:
            "Save the body under the server's name for it (Content-Disposition, else the URL's last path component), unique unless --overwrite."
    )
    var remoteName = false

    @Option(
        help: ArgumentHelp("Save -O's file, or a relative -o file, in this directory.", valueName: "directory")
    )
    var outputDir: String?

    @Flag(help: "With -O, replace a file of the same name instead of choosing a unique one.")
    var overwrite = false

    @Flag(
        name: [.customShort("C"), .customLong("continue")],
        help:
            "With -o or -O, continue an interrupted download of the same URL: only the remaining bytes are asked for (the whole file again if it changed on the server)."
    )
    var continueDownload = false

    @Flag(
        name: [.customShort("i"), .customLong("include")],
        help: "Write the response head before the body (to standard output when the body goes to a file)."
    )
    var includeHead = false

    @Option(
        name: [.customShort("X"), .customLong("request")],
        help: ArgumentHelp("The request method.", valueName: "method")
    )
    var method: String?

    @Option(
        name: [.customShort("H"), .customLong("header")],
        help: ArgumentHelp(
            "Send this header field ('Name: value'); repeatable (repeated names join with commas).",
            valueName: "field"
        )
    )
    var headers: [String] = []

    @Option(
        name: [.customShort("d"), .customLong("data")],
        help: ArgumentHelp(
            "Send this body (POST unless -X says otherwise); @FILE reads a file, @- standard input.",
            valueName: "data"
        )
    )
    var data: [String] = []

    @Flag(
        name: .shortAndLong,
        help: "Fail (exit status 1, no body) when the server answers with a status of 400 or more."
    )
    var fail = false

    @Flag(help: "Do not follow redirects: deliver the redirect response itself.")
    var noFollow = false

    @Option(help: ArgumentHelp("Follow at most this many redirects.", valueName: "count"))
    var maxRedirects = 16

    @Option(help: ArgumentHelp("Give up when the whole load takes longer than this.", valueName: "seconds"))
    var maxTime: Double?

    @Flag(name: .shortAndLong, help: "Draw no progress line.")
    var silent = false

    @Flag(help: "Neither send nor store cookies.")
    var noCookies = false

    @Flag(help: "Use the response cache ($XDG_CACHE_HOME/keyjar/keyjar/; see keyjar cache).")
    var cache = false

    @Option(
        help: ArgumentHelp(
            "With --cache: use-protocol (RFC 9111, the default), reload, return-cache-data-else-load or return-cache-data-dont-load (never the network).",
            valueName: "policy"
        )
    )
    var cachePolicy: CachePolicyArgument?

    @Flag(
        name: [.customShort("k"), .customLong("insecure")],
        help: "Accept a server certificate that fails verification (this run only)."
    )
    var insecure = false

    @Option(
        help: ArgumentHelp(
            "Verify the server's certificate against the CA certificates in this PEM file instead of the system's bundle, as curl's --cacert (default: $CURL_CA_BUNDLE, else $SSL_CERT_FILE).",
            valueName: "file"
        )
    )
    var cacert: String?

    @Option(
        help: ArgumentHelp(
            "Verify the server's certificate against the CA certificates in this directory (hashed, as c_rehash or `openssl rehash` makes it), as curl's --capath (default: $SSL_CERT_DIR).",
            valueName: "directory"
        )
    )
    var capath: String?

    @Option(
        name: .customLong("pinned-sha256"),
        help: ArgumentHelp(
            "Trust the server's certificate, although it fails verification, if its SHA-256 fingerprint is this one (as keyjar shows it when it refuses one); with --persistence, keep trusting it.",
            valueName: "fingerprint"
        )
    )
    var pinnedSHA256: String?

    @Option(
        name: [.customShort("u"), .customLong("user")],
        help: ArgumentHelp("Answer the server's challenge as this user (the password is asked for).", valueName: "name")
    )
    var user: String?

    @Flag(help: "With --user, read the password from standard input (one trailing newline is dropped).")
    var passwordStdin = false

    @Flag(
        help:
            "Send the --user password and -H Authorization to every host a redirect leads to, as curl's --location-trusted (without it they go only to the scheme, host and port of the URL given)."
    )
    var locationTrusted = false

    @Option(
        help: ArgumentHelp(
            "With --user or --pinned-sha256, keep the accepted password or certificate: none, session (this run only) or permanent.",
            valueName: "persistence"
        )
    )
    var persistence: FetchPersistenceArgument = .none

    /// `--user`, else the user named in the URL (`https://alice@host/`), as curl takes it.
    var effectiveUser: String? { user ?? (try? Self.parseURL(url))?.user }

    func validate() throws {
        _ = try Self.parseURL(url)
        if let user = effectiveUser {
            guard !user.isEmpty else { throw ValidationError("--user needs a user name.") }
            if user.contains(":") {
                throw ValidationError(
                    "--user takes only a user name: keyjar never takes passwords from arguments (it asks, or reads --password-stdin)."
                )
            }
        } else {
            if passwordStdin { throw ValidationError("--password-stdin only applies with --user.") }
            if persistence != .none && pinnedSHA256 == nil {
                throw ValidationError("--persistence only applies with --user or --pinned-sha256.")
            }
        }
        if let pinnedSHA256, CertificateSummary.canonicalFingerprint(pinnedSHA256) == nil {
            throw ValidationError(
                "--pinned-sha256 takes a certificate's SHA-256 fingerprint: 32 bytes in hex (colons optional)."
            )
        }
        if passwordStdin, data.contains("@-") {
            throw ValidationError("--password-stdin and -d @- cannot both read standard input.")
        }
        if let method, method.isEmpty || !method.allSatisfy({ $0.isLetter || $0 == "-" || $0 == "_" }) {
            throw ValidationError("'\(method)' is not an HTTP method.")
        }
        if cachePolicy != nil, !cache { throw ValidationError("--cache-policy only applies with --cache.") }
        if remoteName, output != nil { throw ValidationError("-o and -O both name the file; give one.") }
        if continueDownload, output == nil || output == "-", !remoteName {
            throw ValidationError("-C continues a download to a file: give -o FILE or -O.")
        }
        if overwrite, !remoteName {
            throw ValidationError("--overwrite only applies with -O (-o always replaces its file).")
        }
        if outputDir != nil, output == nil, !remoteName {
            throw ValidationError("--output-dir only applies with -o or -O.")
        }
        if let output, output.isEmpty || output.hasSuffix("/") {
            throw ValidationError("-o needs a file name, not '\(output)'.")
        }
        if let maxTime, !(maxTime > 0) { throw ValidationError("--max-time must be more than 0 seconds.") }
        if maxRedirects < 0 { throw ValidationError("--max-redirects cannot be negative.") }
        for header in headers {
            do { _ = try FetchRequest.header(header) } catch { throw ValidationError(error.message) }
        }
    }

    /// A URL keyjar can load, never one holding a password.
    static func parseURL(_ text: String) throws(ValidationError) -> URL {
        try UserInput.url(text, schemes: ["http", "https", "ftp", "file"])
    }
}

enum FetchPersistenceArgument: String, CaseIterable, ExpressibleByArgument {
    case none, session, permanent

    var persistence: URLCredential.Persistence {
        switch self {
        case .none: .none
        case .session: .forSession
        case .permanent: .permanent
        }
    }
}
