import ArgumentParser
import Foundation
import FoundationNetworking
import Glibc
import Keyjar
import KeyjarCore
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

            The body goes to standard output, or with -o to a file that appears only when the load \
            succeeded. With --cache, responses are kept in and answered from the response cache \
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
              keyjar fetch --cache --cache-policy return-cache-data-else-load https://example.com/feed
              keyjar fetch --user alice --persistence permanent https://intranet.example/report
              keyjar fetch --pinned-sha256 5F:1A:…:C3 --persistence permanent https://nas.home.arpa/
              keyjar fetch -X PUT -H 'Content-Type: application/json' -d @body.json https://api.example/item/7
              printf '%s' "$PASSWORD" | keyjar fetch --user alice --password-stdin -f https://api.example/me
            """
    )

    @OptionGroup var global: GlobalOptions

    @Argument(help: ArgumentHelp("The URL to load (http, https, ftp or file).", valueName: "url"))
    var url: String

    @Option(
        name: .shortAndLong,
        help: ArgumentHelp("Write the body to this file instead of standard output.", valueName: "file")
    )
    var output: String?

    @Flag(name: [.customShort("i"), .customLong("include")], help: "Write the response head before the body.")
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

    @Option(
        help: ArgumentHelp(
            "With --user or --pinned-sha256, keep the accepted password or certificate: none, session (this run only) or permanent.",
            valueName: "persistence"
        )
    )
    var persistence: FetchPersistenceArgument = .none

    func validate() throws {
        _ = try Self.parseURL(url)
        if let user {
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
        if let maxTime, !(maxTime > 0) { throw ValidationError("--max-time must be more than 0 seconds.") }
        if maxRedirects < 0 { throw ValidationError("--max-redirects cannot be negative.") }
        for header in headers {
            do { _ = try FetchRequest.header(header) } catch { throw ValidationError(error.message) }
        }
    }

    /// A URL keyjar can load, never one holding a password.
    static func parseURL(_ text: String) throws(ValidationError) -> URL {
        guard let url = URL(string: text), let scheme = url.scheme?.lowercased() else {
            throw ValidationError(
                "'\(text.contains("@") ? "the URL" : text)' is not a URL (for example https://example.com/)."
            )
        }
        guard ["http", "https", "ftp", "file"].contains(scheme) else {
            throw ValidationError("keyjar fetch loads http, https, ftp and file URLs, not \(scheme):.")
        }
        if scheme != "file", (url.host ?? "").isEmpty {
            throw ValidationError("the URL has no host (for example https://example.com/).")
        }
        if url.password != nil {
            throw ValidationError(
                "the URL contains a password; keyjar never takes passwords from arguments (use --user with the prompt or --password-stdin)."
            )
        }
        return url
    }

    func run() async throws {
        var request = FetchRequest(url: try Self.parseURL(url), method: method?.uppercased())
        request.headers = try headers.map { header throws(CLIError) in try FetchRequest.header(header) }
        request.body = try FetchRequest.body(data) { FileHandle.standardInput.readDataToEndOfFile() }
        let credential = try user.map { name in
            FetchCredential(
                user: name,
                password: passwordStdin
                    ? try PasswordInput.fromStandardInput()
                    : try PasswordInput.prompt("Password for \(name) at \(request.url.host ?? url): "),
                persistence: persistence.persistence
            )
        }

        let client = try global.connect(keepingReplica: true)
        let shared = SharedCredentialStorage(client: client)
        let loader = URLLoader(
            configuration: .init(
                cookieStorage: SharedCookieStorage(client: client),
                credentialStorage: credential == nil ? shared : TypedPasswordStorage(shared: shared),
                responseCache: cache ? try CacheCommand.open() : nil,
                maximumRedirects: maxRedirects
            )
        )
        let destination =
            try output.map { path throws(CLIError) in try BodyDestination.file(path) } ?? .standardOutput()
        let options = FetchDelegate.Options(
            includeHead: includeHead,
            failOnHTTPError: fail,
            followRedirects: !noFollow,
            acceptUntrustedCertificate: insecure,
            pinnedFingerprint: pinnedSHA256.flatMap(CertificateSummary.canonicalFingerprint),
            trustPersistence: persistence.persistence,
            showProgress: ProgressMeter.wanted(silent: silent, bodyToFile: destination.isFile)
        )

        var urlRequest = request.urlRequest(timeout: maxTime, handleCookies: !noCookies)
        urlRequest.cachePolicy = (cachePolicy ?? .useProtocol).policy
        let (outcome, delegate) = await load(
            urlRequest,
            loader: loader,
            destination: destination,
            options: options,
            credential: credential
        )
        try finish(outcome, delegate: delegate, destination: destination, credential: credential, client: client)
    }

    /// Runs the load on one serial queue (delegate, time limit and signals alike) until it ends.
    private func load(
        _ request: URLRequest,
        loader: URLLoader,
        destination: BodyDestination,
        options: FetchDelegate.Options,
        credential: FetchCredential?
    ) async -> (FetchOutcome, FetchDelegate) {
        let queue = DispatchQueue(label: "keyjar.fetch")
        let maxTime = maxTime
        let holder = Locked<FetchDelegate?>(nil)
        let outcome = await withCheckedContinuation { (continuation: CheckedContinuation<FetchOutcome, Never>) in
            let delegate = FetchDelegate(
                queue: queue,
                options: options,
                destination: destination,
                credential: credential
            ) {
                continuation.resume(returning: $0)
            }
            holder.withLock { $0 = delegate }
            let connection = loader.connection(
                with: request,
                delegate: delegate,
                delegateQueue: queue,
                startImmediately: false
            )
            // Interrupted, the load is cancelled so that -o leaves no partial file behind.
            delegate.signalSources = [SIGINT, SIGTERM, SIGHUP].map { number in
                signal(number, SIG_IGN)
                let source = DispatchSource.makeSignalSource(signal: number, queue: queue)
                source.setEventHandler {
                    delegate.stop(connection, because: CLIError(message: "interrupted.", status: .failure))
                }
                source.resume()
                return source
            }
            if let maxTime {
                queue.asyncAfter(deadline: .now() + maxTime) {
                    delegate.stop(
                        connection,
                        because: .failure("the load took longer than --max-time \(Self.seconds(maxTime)).")
                    )
                }
            }
            queue.async { connection.start() }
        }
        guard let delegate = holder.withLock({ $0 }) else {
            preconditionFailure("the delegate is made before the load can end")
        }
        return (outcome, delegate)
    }

    private func finish(
        _ outcome: FetchOutcome,
        delegate: FetchDelegate,
        destination: BodyDestination,
        credential: FetchCredential?,
        client: KeyjarClient
    ) throws {
        guard case .finished(let status) = outcome else {
            destination.abandon()
            if let trust = delegate.refusedCertificate, let leaf = trust.leaf {
                throw CLIError.failure(
                    "the certificate of \(trust.host):\(trust.port) is not trusted (\(trust.failureReason)).\n"
                        + "  subject: \(leaf.subject)\n  issuer: \(leaf.issuer)\n"
                        + "  valid: \(leaf.notValidBefore.formatted(.iso8601)) to \(leaf.notValidAfter.formatted(.iso8601))\n"
                        + "  SHA-256: \(leaf.sha256Fingerprint)\n"
                        + "If you trust it, run again with --pinned-sha256 \(leaf.sha256Fingerprint.replacingOccurrences(of: ":", with: ""))"
                        + " (add --persistence permanent to keep trusting it)."
                )
            }
            if case .failed(let error) = outcome { throw error }
            return
        }
        if let credential, delegate.refused {
            destination.abandon()
            throw CLIError.failure(
                "the server refused the password for \(credential.user) (HTTP \(status.map(String.init) ?? "?")); nothing was stored."
            )
        }
        try destination.commit()
        if let credential, let space = delegate.answeredSpace, credential.persistence == .permanent {
            try store(credential, in: space, client: client)
        }
        if status == 401 || status == 407, credential == nil, let challenge = delegate.unanswered {
            // As curl does, the body went out; the status says the load did not get through.
            let asker = challenge.space.isProxy ? "the proxy" : "the server"
            let realm = challenge.space.realm.map { " (realm \"\($0)\")" } ?? ""
            if let user = challenge.failedUser {
                throw CLIError.failure(
                    "\(asker) refused the stored password for \(user)\(realm); store the new one with `keyjar credential add`, or pass --user NAME."
                )
            }
            throw CLIError.failure("\(asker) asks for a password\(realm) and none is stored for it; pass --user NAME.")
        }
    }

    /// Keeps the accepted password in the shared store; keyjard makes a space's first
    /// credential its default, so later loads (and every other program) use it without asking.
    private func store(_ credential: FetchCredential, in space: ProtectionSpace, client: KeyjarClient) throws {
        try client.setCredential(user: credential.user, password: credential.password, for: space)
        Output.error("stored the password for \(credential.user) at \(space.summary).")
    }

    private static func seconds(_ value: Double) -> String {
        value == value.rounded() ? "\(Int(value)) s" : "\(value) s"
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
