import ArgumentParser
import Foundation
import Glibc
import Keyjar
import KeyjarCodec
import KeyjarCore

/// `keyjar cookie …`: the shared cookie jar.
struct CookieCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cookie",
        abstract: "Read, store, import and export cookies in the shared jar.",
        discussion: """
            Netscape cookies.txt is the format curl, wget and yt-dlp read and write; JSON keeps every \
            field (SameSite, creation and access times).

            Examples:
              keyjar cookie get https://example.com/account
              curl -H "Cookie: $(keyjar cookie get https://e.example/)" https://e.example/
              keyjar cookie set --url https://example.com/ 'sid=42; Secure; Max-Age=60'
              curl -c jar.txt https://example.com/ && keyjar cookie import jar.txt
              keyjar cookie export -o cookies.txt
              wget --load-cookies cookies.txt https://example.com/
              keyjar cookie list --domain example.com --json
              keyjar cookie delete --domain example.com --name sid
              keyjar cookie clear --domain example.com
            """,
        subcommands: [List.self, Get.self, Set.self, Delete.self, Clear.self, Import.self, Export.self]
    )
}

/// A URL cookies can be sent to or set from: http or https (ws and wss too), with a host.
private func cookieURL(_ text: String) throws(ValidationError) -> URL {
    guard let url = URL(string: text), let scheme = url.scheme?.lowercased(), let host = url.host, !host.isEmpty,
        ["http", "https", "ws", "wss"].contains(scheme)
    else {
        throw ValidationError("'\(text)' is not an http or https URL with a host (for example https://example.com/).")
    }
    return url
}

/// A cookie in one line: everything about it, its whole value included.
private func describe(_ cookie: Cookie) -> String {
    var parts = [cookie.headerPair, "domain=\(cookie.hostOnly ? "" : ".")\(cookie.domain)", "path=\(cookie.path)"]
    parts.append(cookie.expires.map { "expires=\(Output.time($0))" } ?? "session")
    if cookie.secure { parts.append("secure") }
    if cookie.httpOnly { parts.append("httponly") }
    if cookie.sameSite != .unspecified { parts.append("samesite=\(cookie.sameSite.rawValue.lowercased())") }
    return parts.joined(separator: "; ")
}

private func listCookies(_ client: KeyjarClient, domain: String?) throws -> [Cookie] {
    try client.cookies(domain: domain)
}

/// `--format`, else `.json` files are JSON and everything else cookies.txt.
private func fileFormat(_ given: FormatArgument?, path: String?) -> FormatArgument {
    given ?? (path?.lowercased().hasSuffix(".json") == true ? .json : .netscape)
}

extension CookieCommand {
    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "List stored cookies, one a line (or a JSON array with --json).",
            discussion: "--json prints the same shape as `export --format json`, so a listing can be imported."
        )

        @OptionGroup var global: GlobalOptions

        @Option(help: ArgumentHelp("Only cookies for this domain and its subdomains.", valueName: "domain"))
        var domain: String?

        @Option(help: ArgumentHelp("Only cookies with this name.", valueName: "name"))
        var name: String?

        @Flag(help: "Only session cookies (no expiry).")
        var session = false

        @Flag(help: "Only persistent cookies (with an expiry).")
        var persistent = false

        @Flag(help: "Print a JSON array.")
        var json = false

        func validate() throws {
            if session && persistent { throw ValidationError("--session and --persistent exclude each other.") }
        }

        func run() throws {
            let client = try global.connect()
            let cookies = try listCookies(client, domain: domain).filter { cookie in
                (name == nil || cookie.name == name) && (!session || cookie.isSession)
                    && (!persistent || !cookie.isSession)
            }
            if json {
                Output.line(String(decoding: CookieJSONFile.serialize(cookies), as: UTF8.self))
                return
            }
            for cookie in cookies { Output.line(describe(cookie)) }
        }
    }

    struct Get: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print the Cookie header that a request to URL would send (nothing when there is none).",
            discussion:
                "The header value only, without `Cookie: `, so it can go straight into curl -H or wget --header."
        )

        @OptionGroup var global: GlobalOptions

        @Argument(help: ArgumentHelp("The request URL.", valueName: "url"))
        var url: String

        @Option(
            help: ArgumentHelp(
                "The URL of the page that makes the request (third-party rules, SameSite).",
                valueName: "url"
            )
        )
        var mainDocument: String?

        func validate() throws {
            _ = try cookieURL(url)
            if let mainDocument { _ = try cookieURL(mainDocument) }
        }

        func run() throws {
            let client = try global.connect()
            let header = try client.cookieHeader(
                for: try cookieURL(url),
                mainDocumentURL: try mainDocument.map(cookieURL)
            )
            if let header, !header.isEmpty { Output.line(header) }
        }
    }

    struct Set: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "set",
            abstract: "Store cookies as a response from URL would set them, under the accept policy.",
            discussion: """
                Each argument is one Set-Cookie header value. A cookie that is refused (by the policy, \
                a public-suffix Domain, a Secure cookie over http, …) is reported with the reason and \
                the command exits with status 1; the others are still stored.
                """
        )

        @OptionGroup var global: GlobalOptions

        @Option(help: ArgumentHelp("The URL of the response that sets the cookies.", valueName: "url"))
        var url: String

        @Option(
            help: ArgumentHelp(
                "The URL of the page that made the request (third-party rules, SameSite).",
                valueName: "url"
            )
        )
        var mainDocument: String?

        @Argument(
            help: ArgumentHelp(
                "Set-Cookie header values, e.g. 'sid=42; Secure; Max-Age=3600'.",
                valueName: "set-cookie"
            )
        )
        var headers: [String]

        func validate() throws {
            _ = try cookieURL(url)
            if let mainDocument { _ = try cookieURL(mainDocument) }
            if headers.isEmpty { throw ValidationError("Give at least one Set-Cookie value.") }
        }

        func run() throws {
            let client = try global.connect()
            let outcomes = try client.storeCookies(
                headers,
                for: try cookieURL(url),
                mainDocumentURL: try mainDocument.map(cookieURL)
            )
            let rejections = zip(headers, outcomes).compactMap { header, outcome in
                outcome.map { (header.split(separator: ";").first.map(String.init) ?? header, $0) }
            }
            for (cookie, reason) in rejections { Output.error("cookie '\(cookie)' was not stored: \(reason)") }
            if !rejections.isEmpty {
                throw CLIError.failure(
                    rejections.count == 1 ? "the cookie was rejected." : "\(rejections.count) cookies were rejected."
                )
            }
        }
    }

    struct Delete: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Delete the cookies with a name on a domain (exactly that domain, not its subdomains).",
            discussion: "Fails when no cookie matches."
        )

        @OptionGroup var global: GlobalOptions

        @Option(
            help: ArgumentHelp(
                "The cookie's domain, as `list` shows it (a leading dot is ignored).",
                valueName: "domain"
            )
        )
        var domain: String

        @Option(help: ArgumentHelp("The cookie's name.", valueName: "name"))
        var name: String

        @Option(help: ArgumentHelp("Only the cookie with this path.", valueName: "path"))
        var path: String?

        func run() throws {
            let client = try global.connect()
            let wanted = domain.lowercased().drop { $0 == "." }
            let doomed = try listCookies(client, domain: String(wanted)).filter { cookie in
                cookie.domain == wanted && cookie.name == name && (path == nil || cookie.path == path)
            }
            guard !doomed.isEmpty else { throw CLIError.failure("no cookie named '\(name)' is stored for \(domain).") }
            try client.deleteCookies(doomed.map(\.identity))
        }
    }

    struct Clear: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Delete every cookie of a domain and its subdomains, or (with --all) every cookie."
        )

        @OptionGroup var global: GlobalOptions

        @Option(help: ArgumentHelp("The domain whose cookies (subdomains included) to delete.", valueName: "domain"))
        var domain: String?

        @Flag(help: "Delete every cookie in the shared jar.")
        var all = false

        func validate() throws {
            if (domain == nil) == !all { throw ValidationError("Give either --domain DOMAIN or --all.") }
        }

        func run() throws {
            let client = try global.connect()
            try client.clearCookies(domain: domain)
        }
    }

    struct Import: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Import cookies from a cookies.txt or JSON file ('-' for standard input).",
            discussion: """
                Lines that cannot be imported are reported with their line numbers on standard error \
                and make the command exit with status 1; the good lines are imported all the same. \
                A summary goes to standard output.
                """
        )

        @OptionGroup var global: GlobalOptions

        @Option(
            help: ArgumentHelp("The file format (default: json for *.json files, else netscape).", valueName: "format")
        )
        var format: FormatArgument?

        @Argument(help: ArgumentHelp("The file to read.", valueName: "file"))
        var file: String

        /// Lines (or JSON elements) per request: each batch is one transaction, and neither
        /// this process nor keyjard ever holds more than one batch of a file of any size. The
        /// size is keyjard's peak memory against the per-transaction cost (docs/performance.md).
        static let batchSize = 7_500

        func run() throws {
            let name = file == "-" ? "<stdin>" : file
            let input: FileHandle
            if file == "-" {
                input = FileHandle.standardInput
            } else {
                guard let handle = FileHandle(forReadingAtPath: file) else {
                    throw CLIError.failure("cannot read \(file): \(String(cString: strerror(errno))).")
                }
                input = handle
            }
            let format = fileFormat(format, path: file).format
            var batcher = CookieFileBatcher(kind: format == .json ? .jsonArray : .lines, maximumItems: Self.batchSize)
            let client = try global.connect()
            var imported = 0
            var expired = 0
            var problemCount = 0
            func send(_ batches: [CookieFileBatcher.Batch]) throws {
                for batch in batches {
                    let report = try client.importCookies(batch.text, format: format, firstLine: batch.firstLine)
                    imported += report.imported
                    expired += report.expired
                    problemCount += report.problems.count
                    for problem in report.problems { Output.error("\(name):\(problem.line): \(problem.message)") }
                }
            }
            var decoder = UTF8Check()
            while true {
                let chunk = try input.read(upToCount: 1 << 20) ?? Data()
                if chunk.isEmpty { break }
                guard decoder.accepts(chunk) else { throw CLIError.failure("\(file) is not UTF-8 text.") }
                try send(batcher.feed(chunk))
            }
            guard decoder.isComplete else { throw CLIError.failure("\(file) is not UTF-8 text.") }
            do {
                try send(batcher.finish())
            } catch let error as CookieFileBatcher.Malformed {
                Output.error("\(name): \(error.description)")
                problemCount += 1
            }
            var summary = "imported \(imported) cookie\(imported == 1 ? "" : "s")"
            if expired > 0 { summary += ", skipped \(expired) already expired" }
            Output.line(summary)
            if problemCount > 0 {
                throw CLIError.failure(
                    "\(problemCount) line\(problemCount == 1 ? " was" : "s were") not imported (see above)."
                )
            }
        }
    }

    /// Checks that a file arriving in pieces is UTF-8, a sequence cut between pieces included.
    struct UTF8Check {
        private var carried: [UInt8] = []

        /// Whether the bytes so far can be the start of UTF-8 text.
        mutating func accepts(_ chunk: Data) -> Bool {
            var bytes = carried + chunk
            // An incomplete sequence at the end waits for the next piece.
            var keep = 0
            for back in 1...min(3, bytes.count) {
                let byte = bytes[bytes.count - back]
                if byte & 0xC0 == 0x80 { continue }
                let length = byte >= 0xF0 ? 4 : byte >= 0xE0 ? 3 : byte >= 0xC0 ? 2 : 1
                if length > back { keep = back }
                break
            }
            carried = Array(bytes.suffix(keep))
            bytes.removeLast(keep)
            return String(validating: bytes, as: UTF8.self) != nil
        }

        var isComplete: Bool { carried.isEmpty }
    }

    struct Export: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Export every unexpired cookie as cookies.txt or JSON.",
            discussion: """
                Writes to standard output, or to FILE with -o (created readable by you only: cookies \
                are often as good as passwords).
                """
        )

        @OptionGroup var global: GlobalOptions

        @Option(
            help: ArgumentHelp(
                "The file format (default: json for *.json output files, else netscape).",
                valueName: "format"
            )
        )
        var format: FormatArgument?

        @Option(
            name: [.short, .customLong("output")],
            help: ArgumentHelp("Write to this file instead of standard output.", valueName: "file")
        )
        var output: String?

        @Flag(help: "Add libsoup's SameSite column to cookies.txt lines (curl then rejects them).")
        var includeSameSite = false

        func run() throws {
            let client = try global.connect()
            let text = try client.exportCookies(
                format: fileFormat(format, path: output).format,
                includeSameSite: includeSameSite
            )
            guard let output else {
                FileHandle.standardOutput.write(Data(text.utf8))
                return
            }
            try writePrivately(text, to: output)
        }

        private func writePrivately(_ text: String, to path: String) throws {
            let descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
            guard descriptor >= 0 else {
                throw CLIError.failure("cannot write \(path): \(String(cString: strerror(errno))).")
            }
            defer { close(descriptor) }
            let bytes = Array(text.utf8)
            var written = 0
            while written < bytes.count {
                let count = bytes[written...].withUnsafeBufferPointer { write(descriptor, $0.baseAddress, $0.count) }
                if count < 0 && errno == EINTR { continue }
                guard count > 0 else {
                    throw CLIError.failure("cannot write \(path): \(String(cString: strerror(errno))).")
                }
                written += count
            }
        }
    }
}
