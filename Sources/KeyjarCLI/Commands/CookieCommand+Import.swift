import ArgumentParser
import Foundation
import Glibc
import Keyjar
import KeyjarCodec
import KeyjarCommands
import KeyjarCore

// `keyjar cookie import`: a cookie file or a browser's cookies into the shared jar.
extension CookieCommand {
    struct Import: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "import",
            abstract: "Import cookies from a cookies.txt or JSON file ('-' for standard input), or from a browser.",
            discussion: """
                The format is --format, else JSON for a *.json file or for content that starts with \
                '[' (what `list --json` and `export --format json` print), else cookies.txt. Lines \
                that cannot be imported are reported with their line numbers on standard error and \
                make the command exit with status 1; the good lines are imported all the same. A \
                summary goes to standard output: how many cookies the file held, how many the jar \
                kept (new, or replacing stored ones), how many did not fit its limits (180 a site, \
                3300 in all, by default) and how many stored cookies were evicted to make room.

                --from-browser reads a browser's own cookie database (while it runs), keeping what \
                the browser would send: expiry, host-only or domain, Secure, HttpOnly, SameSite, \
                partition. Firefox: the default profile, else PROFILE (its name or path); cookies \
                outside containers, else --container's. Chrome, Chromium, Brave, Edge, Vivaldi, \
                Opera: the last used profile, else PROFILE (`Default`, `Profile 1`, or the name the \
                browser shows); values are decrypted with the browser's key from the Secret \
                Service. Expired cookies and values with control characters are skipped and \
                counted. --follow then re-imports what the browser changes (a rotated session \
                cookie), and deletes from the jar a cookie it imported that the browser dropped, \
                until Ctrl-C or SIGTERM (status 0, with a summary).

                Examples:
                  keyjar cookie import --from-browser firefox
                  keyjar cookie import --from-browser chrome:"Profile 1" --domain example.com
                  keyjar cookie import --from-browser firefox --container Work --dry-run
                  keyjar cookie import --from-browser chromium --domain example.com --follow
                """
        )

        @OptionGroup var global: GlobalOptions

        @Option(
            help: ArgumentHelp("The file format (default: json for *.json files, else netscape).", valueName: "format")
        )
        var format: FormatArgument?

        @Argument(help: ArgumentHelp("The file to read.", valueName: "file"))
        var file: String?

        @Option(
            help: ArgumentHelp(
                "Import from a browser's cookies instead of a file: firefox, chrome, chromium, brave, edge, vivaldi or opera, optionally with a profile's name, directory or path after a colon.",
                valueName: "browser[:profile]"
            )
        )
        var fromBrowser: String?

        @Option(help: ArgumentHelp("Firefox only: the cookies of this container (default: none).", valueName: "name"))
        var container: String?

        @Option(
            help: ArgumentHelp(
                "Only cookies of this domain and its subdomains (repeatable).",
                valueName: "domain"
            )
        )
        var domain: [String] = []

        @Flag(help: "Print how many cookies each site would get; send nothing.")
        var dryRun = false

        @Flag(help: "After the import, keep importing what the browser changes until interrupted.")
        var follow = false

        func validate() throws {
            if (file == nil) == (fromBrowser == nil) {
                throw ValidationError("Give either FILE or --from-browser BROWSER.")
            }
            if fromBrowser == nil, container != nil || !domain.isEmpty || dryRun || follow {
                throw ValidationError("--container, --domain, --dry-run and --follow go with --from-browser.")
            }
            if fromBrowser != nil, format != nil {
                throw ValidationError("--format goes with a file, not --from-browser.")
            }
            if dryRun && follow { throw ValidationError("--dry-run and --follow exclude each other.") }
            for name in domain { _ = try UserInput.domain(name) }
            if let fromBrowser { _ = try BrowserSelection(fromBrowser, container: container) }
        }

        /// Lines (or JSON elements) per request: neither this process nor keyjard ever holds
        /// more than one batch of a file of any size (keyjard holds the plan besides, bounded
        /// by the jar's limits). The size is keyjard's peak memory against the per-request
        /// cost (docs/performance.md, Imports).
        static let batchSize = 7_500

        func run() throws {
            if let fromBrowser {
                return try BrowserImport(
                    selection: BrowserSelection(fromBrowser, container: container),
                    domains: domain.map { try UserInput.domain($0) },
                    global: global
                ).run(dryRun: dryRun, follow: follow)
            }
            let file = file ?? "-"
            let name = file == "-" ? "<stdin>" : file
            let input = try open()
            var first = try read(input)
            // A UTF-8 byte-order mark (Windows editors write one) is not part of the first line.
            if first.starts(with: [0xEF, 0xBB, 0xBF]) { first.removeFirst(3) }
            let format = try detectedFormat(startingWith: first)
            var batcher = CookieFileBatcher(kind: format == .json ? .jsonArray : .lines, maximumItems: Self.batchSize)
            let client = try global.connect()
            var total = CookieImportReport()
            var problemCount = 0
            // keyjard plans the batches as one import, so that subscribers get the net change
            // of the whole file; it commits at the end. An older keyjard commits each batch.
            let planned = try client.beginCookieImport()
            func send(_ batches: [CookieFileBatcher.Batch]) throws {
                for batch in batches {
                    let report = try client.importCookies(batch.text, format: format, firstLine: batch.firstLine)
                    total.imported += report.imported
                    total.expired += report.expired
                    total.added += report.added
                    total.replaced += report.replaced
                    total.evicted += report.evicted
                    problemCount += report.problems.count
                    for problem in report.problems { Output.error("\(name):\(problem.line): \(problem.message)") }
                }
            }
            var decoder = UTF8Check()
            var chunk = first
            while !chunk.isEmpty {
                guard decoder.accepts(chunk) else { throw CLIError.failure("\(name) is not UTF-8 text.") }
                try send(batcher.feed(chunk))
                chunk = try read(input)
            }
            guard decoder.isComplete else { throw CLIError.failure("\(name) is not UTF-8 text.") }
            do {
                try send(batcher.finish())
            } catch let error as CookieFileBatcher.Malformed {
                Output.error("\(name): \(error.description)")
                problemCount += 1
            }
            if planned {
                let outcome = try client.finishCookieImport()
                total.added += outcome.added
                total.replaced += outcome.replaced
                total.evicted += outcome.evicted
            }
            Output.line(Self.summary(total, rejected: problemCount))
            if problemCount > 0 {
                throw CLIError.failure(
                    "\(problemCount) line\(problemCount == 1 ? " was" : "s were") not imported (see above)."
                )
            }
        }

        /// What the import came to, in one line: what the file held and what the jar kept of it.
        static func summary(_ report: CookieImportReport, rejected: Int) -> String {
            func count(_ number: Int, _ noun: String) -> String { "\(number) \(noun)\(number == 1 ? "" : "s")" }
            let read = report.imported + report.expired + rejected
            var parts = ["\(report.kept) kept (\(report.added) new, \(report.replaced) replacing stored ones)"]
            let pushedOut = report.imported - report.kept
            if pushedOut > 0 { parts.append("\(pushedOut) not kept: over the jar's limits") }
            if report.evicted > 0 { parts.append("\(count(report.evicted, "stored cookie")) evicted to make room") }
            if report.expired > 0 { parts.append("\(report.expired) already expired") }
            if rejected > 0 { parts.append("\(rejected) rejected") }
            return "read \(count(read, "cookie")): " + parts.joined(separator: ", ")
        }

        private func open() throws(CLIError) -> FileHandle {
            let file = file ?? "-"
            if file == "-" { return FileHandle.standardInput }
            var isDirectory: ObjCBool = false
            if FileManager.default.fileExists(atPath: file, isDirectory: &isDirectory), isDirectory.boolValue {
                throw .failure("cannot read \(file): it is a directory.")
            }
            guard let handle = FileHandle(forReadingAtPath: file) else {
                throw .failure("cannot read \(file): \(String(cString: strerror(errno))).")
            }
            return handle
        }

        private func read(_ input: FileHandle) throws(CLIError) -> Data {
            let file = file ?? "-"
            do {
                return try input.read(upToCount: 1 << 20) ?? Data()
            } catch {
                // Foundation's text for a read error is its domain and code; errno says it.
                let number = (error as NSError).domain == NSPOSIXErrorDomain ? Int32((error as NSError).code) : EIO
                throw .failure(
                    "cannot read \(file == "-" ? "standard input" : file): \(String(cString: strerror(number)))."
                )
            }
        }

        /// `--format`; else JSON for a `.json` name or content that starts as a JSON array
        /// (`keyjar cookie list --json | keyjar cookie import -`); else cookies.txt.
        private func detectedFormat(startingWith start: Data) throws(CLIError) -> CookieFileFormat {
            if let format { return format.format }
            if (file ?? "-").lowercased().hasSuffix(".json") { return .json }
            let firstByte = start.first { ![0x20, 0x09, 0x0A, 0x0D].contains($0) }
            return firstByte == UInt8(ascii: "[") ? .json : .netscape
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
}
