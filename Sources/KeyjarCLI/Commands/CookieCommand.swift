import ArgumentParser
import Foundation
import Glibc
import Keyjar
import KeyjarCodec
import KeyjarCommands
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
        subcommands: [List.self, CookieGetCommand.self, Set.self, Delete.self, Clear.self, Import.self, Export.self]
    )
}

private func cookieURL(_ text: String) throws(ValidationError) -> URL {
    try UserInput.cookieURL(text)
}

/// A cookie in one line: everything about it, its whole value included.
private func describe(_ cookie: Cookie) -> String {
    var parts = [cookie.headerPair, "domain=\(cookie.hostOnly ? "" : ".")\(cookie.domain)", "path=\(cookie.path)"]
    parts.append(cookie.expires.map { "expires=\(Output.time($0))" } ?? "session")
    if cookie.secure { parts.append("secure") }
    if cookie.httpOnly { parts.append("httponly") }
    if cookie.sameSite != .unspecified { parts.append("samesite=\(cookie.sameSite.rawValue.lowercased())") }
    if let partitionKey = cookie.partitionKey { parts.append("partitioned=\(partitionKey)") }
    return parts.joined(separator: "; ")
}

/// `--partition`: a partition key as list shows it (`https://example.com`), or `none`.
enum PartitionArgument: ExpressibleByArgument, Equatable {
    case none
    case key(CookiePartitionKey)

    init?(argument: String) {
        if argument == "none" {
            self = .none
        } else if let key = CookiePartitionKey(serialized: argument) {
            self = .key(key)
        } else {
            return nil
        }
    }

    static let help = ArgumentHelp(
        "Only cookies partitioned under this top-level site, as list shows it (https://example.com); "
            + "'none' for unpartitioned ones.",
        valueName: "partition"
    )

    func matches(_ cookie: Cookie) -> Bool {
        switch self {
        case .none: !cookie.isPartitioned
        case .key(let key): cookie.partitionKey == key
        }
    }
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
            commandName: "list",
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

        @Option(help: PartitionArgument.help)
        var partition: PartitionArgument?

        @Flag(help: "Print a JSON array.")
        var json = false

        func validate() throws {
            if session && persistent { throw ValidationError("--session and --persistent exclude each other.") }
            if let domain { _ = try UserInput.domain(domain) }
        }

        func run() throws {
            let client = try global.connect()
            let cookies = try listCookies(client, domain: try domain.map { try UserInput.domain($0) }).filter {
                cookie in
                (name == nil || cookie.name == name) && (!session || cookie.isSession)
                    && (!persistent || !cookie.isSession) && (partition?.matches(cookie) ?? true)
            }
            if json {
                Output.line(String(decoding: CookieJSONFile.serialize(cookies), as: UTF8.self))
                return
            }
            // Names and values are servers' words.
            for cookie in cookies { Output.line(TerminalText.safe(describe(cookie))) }
        }
    }

    struct Set: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "set",
            abstract: "Store cookies as a response from URL would set them, under the accept policy.",
            discussion: """
                Each argument is one Set-Cookie header value. A cookie that is refused (by the policy, \
                a public-suffix Domain, a Secure cookie over http, …) is reported with the reason and \
                the command exits with status 1; the others are still stored. A Partitioned cookie is \
                stored under the site of --main-document (else of URL itself).
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
            let rejections = zip(headers, outcomes).compactMap { header, outcome -> (String, String)? in
                guard case .rejected(let reason) = outcome else { return nil }
                return (header.split(separator: ";").first.map(String.init) ?? header, reason)
            }
            for (cookie, reason) in rejections {
                // Only the name=value's start: a rejected 5 KB cookie is not echoed whole.
                Output.error("cookie '\(UserInput.shown(cookie, limit: 60))' was not stored: \(reason)")
            }
            if !rejections.isEmpty {
                throw CLIError.failure(
                    rejections.count == 1 ? "the cookie was rejected." : "\(rejections.count) cookies were rejected."
                )
            }
        }
    }

    struct Delete: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "delete",
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

        @Option(help: PartitionArgument.help)
        var partition: PartitionArgument?

        func validate() throws { _ = try UserInput.domain(domain) }

        func run() throws {
            let client = try global.connect()
            let wanted = try UserInput.domain(domain)
            let doomed = try listCookies(client, domain: wanted).filter { cookie in
                cookie.domain == wanted && cookie.name == name && (path == nil || cookie.path == path)
                    && (partition?.matches(cookie) ?? true)
            }
            guard !doomed.isEmpty else { throw CLIError.failure("no cookie named '\(name)' is stored for \(domain).") }
            try client.deleteCookies(doomed.map(\.identity))
        }
    }

    struct Clear: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "clear",
            abstract: "Delete every cookie of a domain and its subdomains, or (with --all) every cookie.",
            discussion: "Fails (status 1) when there is no cookie to delete, as `delete` does."
        )

        @OptionGroup var global: GlobalOptions

        @Option(help: ArgumentHelp("The domain whose cookies (subdomains included) to delete.", valueName: "domain"))
        var domain: String?

        @Flag(help: "Delete every cookie in the shared jar.")
        var all = false

        func validate() throws {
            if (domain == nil) == !all { throw ValidationError("Give either --domain DOMAIN or --all.") }
            if let domain { _ = try UserInput.domain(domain) }
        }

        func run() throws {
            let client = try global.connect()
            let wanted = try domain.map { try UserInput.domain($0) }
            // As `delete`: a command that finds nothing to delete says so with status 1, so a
            // script's misspelt domain does not pass for done.
            guard try !listCookies(client, domain: wanted).isEmpty else {
                throw CLIError.failure(
                    wanted.map { "no cookie is stored for \($0) or its subdomains." } ?? "no cookie is stored."
                )
            }
            try client.clearCookies(domain: wanted)
        }
    }

    struct Export: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "export",
            abstract: "Export every unexpired cookie as cookies.txt or JSON.",
            discussion: """
                Writes to standard output, or to FILE with -o (created readable by you only: cookies \
                are often as good as passwords). cookies.txt has no column for a partitioned cookie's \
                partition key: those are left out, and standard error says how many (JSON keeps them).
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
            help: ArgumentHelp(
                "Write to this file (replaced whole, mode 0600; through a symbolic link; '-' is standard output).",
                valueName: "file"
            )
        )
        var output: String?

        @Flag(help: "Add libsoup's SameSite column to cookies.txt lines (curl then rejects them).")
        var includeSameSite = false

        func run() throws {
            // Resolved before anything is asked of keyjard: a directory or a missing one is
            // refused at once.
            let target = try OutputFile.resolve(output ?? "-", in: FileManager.default.currentDirectoryPath)
            let client = try global.connect()
            let (text, omitted) = try client.exportCookiesReportingOmitted(
                format: fileFormat(format, path: output).format,
                includeSameSite: includeSameSite
            )
            try target.writePrivately(Array(text.utf8), named: output ?? "standard output")
            if omitted > 0 {
                Output.error(
                    "left out \(omitted) partitioned cookie\(omitted == 1 ? "" : "s"): cookies.txt has no place for "
                        + "a partition key (--format json keeps them)"
                )
            }
        }
    }
}
