import ArgumentParser
import Foundation
import FoundationNetworking
import KeyjarCodec
import KeyjarCommands
import KeyjarHTTPCache
import KeyjarResponseCache

/// `keyjar cache …`: the response cache `keyjar fetch --cache` uses.
struct CacheCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cache",
        abstract: "List or clear the response cache of keyjar fetch --cache.",
        discussion: """
            The cache lives in $XDG_CACHE_HOME/keyjar/keyjar/ (else ~/.cache/keyjar/keyjar/): an \
            index and one file per body, private to the user. Other programs using KeyjarLoader \
            keep caches of their own beside it, one per application.

            Examples:
              keyjar cache list
              keyjar cache list --json
              keyjar cache clear --url https://example.com/page
              keyjar cache clear
            """,
        subcommands: [List.self, Clear.self]
    )

    /// keyjar's own cache, at its default place.
    static func open() throws -> ResponseCache {
        do {
            return try ResponseCache(configuration: fetchConfiguration)
        } catch {
            throw CLIError.failure(error.description)
        }
    }

    /// What `keyjar fetch --cache` opens: https responses go to disk too (asking for the cache
    /// is the user's opting in).
    static let fetchConfiguration = ResponseCache.Configuration(
        memoryCapacity: 4 << 20,
        diskCapacity: 256 << 20,
        directory: ResponseCache.Configuration.defaultDirectory(application: "keyjar"),
        storesSecureResponsesOnDisk: true
    )

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "list",
            abstract: "List the cached responses, most recently used first."
        )

        @Flag(help: "Print a JSON array of objects.")
        var json = false

        func run() throws {
            let now = Date()
            let entries = try CacheCommand.open().entries.map { entry in
                let freshness = CacheFreshness(of: entry.response, at: now)
                return EntryJSON(
                    url: entry.url.absoluteString,
                    status: entry.response.statusCode,
                    bytes: entry.bodySize,
                    age: Int(freshness.age),
                    fresh: freshness.isFresh,
                    stored: entry.created.timeIntervalSince1970
                )
            }
            if json {
                Output.line(Output.json(.array(entries.map(\.json))))
                return
            }
            for entry in entries {
                Output.line(
                    "\(entry.status) \(entry.bytes) bytes, \(entry.fresh ? "fresh" : "stale") (age \(entry.age) s) \(entry.url)"
                )
            }
        }
    }

    struct EntryJSON {
        var url: String
        var status: Int
        var bytes: Int
        var age: Int
        var fresh: Bool
        var stored: Double

        /// The `--json` object: a member for each property, named after it.
        var json: JSONValue {
            .object([
                ("age", .integer(age)), ("bytes", .integer(bytes)), ("fresh", .bool(fresh)),
                ("status", .integer(status)), ("stored", .number(of: stored)), ("url", .string(url)),
            ])
        }
    }

    struct Clear: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "clear",
            abstract: "Remove every cached response, or one URL's."
        )

        @Option(help: ArgumentHelp("Remove only this URL's response.", valueName: "url"))
        var url: String?

        func validate() throws {
            if let url { _ = try FetchCommand.parseURL(url) }
        }

        func run() throws {
            let cache = try CacheCommand.open()
            if let url {
                cache.remove(try FetchCommand.parseURL(url))
            } else {
                cache.removeAll()
            }
        }
    }
}

/// `--cache-policy`: the URL Loading System's request cache policies.
enum CachePolicyArgument: String, CaseIterable, ExpressibleByArgument {
    case useProtocol = "use-protocol"
    case reload
    case returnCacheDataElseLoad = "return-cache-data-else-load"
    case returnCacheDataDontLoad = "return-cache-data-dont-load"

    var policy: URLRequest.CachePolicy {
        switch self {
        case .useProtocol: .useProtocolCachePolicy
        case .reload: .reloadIgnoringLocalCacheData
        case .returnCacheDataElseLoad: .returnCacheDataElseLoad
        case .returnCacheDataDontLoad: .returnCacheDataDontLoad
        }
    }
}
