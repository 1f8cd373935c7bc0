import Foundation
import Glibc
import KeyjarHTTPCache
import KeyjarLocks
import KeyjarResponseCache
import KeyjarTestSupport
import Synchronization
import Testing

/// The response cache's two tiers on a real directory and a real SQLite index.
@Suite(.timeLimit(hangLimit), .servicesStopCleanly)
struct ResponseCacheTests {
    static func entry(
        _ url: String,
        _ fields: [(String, String)] = [("Cache-Control", "max-age=600")],
        policy: CacheStoragePolicy = .allowed,
        userInfo: [String: String] = [:],
        created: Date = Date(),
        requestHeaders: [(String, String)] = [("Accept", "text/html")]
    ) -> CachedEntry {
        CachedEntry(
            url: URL(string: url) ?? URL(fileURLWithPath: "/"),
            response: StoredResponse(
                statusCode: 200,
                headers: HTTPHeaderFields(fields),
                requestTime: created,
                responseTime: created,
                requestHeaders: HTTPHeaderFields(requestHeaders)
            ),
            storagePolicy: policy,
            userInfo: userInfo,
            created: created
        )
    }

    static func body(_ cache: ResponseCache, _ url: String) -> String? {
        guard let url = URL(string: url), let hit = cache.lookup(url), let data = try? hit.body.load() else {
            return nil
        }
        return String(decoding: data, as: UTF8.self)
    }

    static func onDisk(
        _ directory: TemporaryDirectory,
        secure: Bool = false,
        capacity: Int = 64 << 20,
        clock: TestClock? = nil
    ) throws
        -> ResponseCache
    {
        var now: @Sendable () -> Date = { Date() }
        if let clock { now = { clock.now } }
        return try ResponseCache(
            configuration: .init(
                memoryCapacity: 1 << 20,
                diskCapacity: capacity,
                directory: URL(fileURLWithPath: directory.path("cache")),
                storesSecureResponsesOnDisk: secure,
                now: now
            )
        )
    }

    /// A clock the test moves by hand.
    final class TestClock: Sendable {
        private let time = Mutex(Date(timeIntervalSince1970: 1_700_000_000))

        var now: Date { time.withLock { $0 } }
        func advance(seconds: TimeInterval = 1) { time.withLock { $0 += seconds } }
    }

    /// A body file shorter than its row says (cut short by a power loss, or by hand) is not
    /// served as if whole: a miss, and the row goes.
    @Test func aBodyFileCutShortIsAMiss() throws {
        let directory = try TemporaryDirectory()
        let url = "http://example.com/cut"
        try Self.onDisk(directory).store(Self.entry(url), body: Data(repeating: 0x61, count: 4_000))
        let bodies = directory.path("cache/bodies")
        let file = try #require(try FileManager.default.contentsOfDirectory(atPath: bodies).first)
        #expect(truncate(bodies + "/" + file, 1_000) == 0)
        let reopened = try Self.onDisk(directory)
        #expect(reopened.lookup(try #require(URL(string: url))) == nil)
        #expect(reopened.entries.isEmpty)
    }

    @Test func aResponseIsKeptWithItsFieldsUserInfoAndBodyAcrossInstances() throws {
        let directory = try TemporaryDirectory()
        do {
            let cache = try Self.onDisk(directory)
            cache.store(Self.entry("http://example.com/a?x=1#top", userInfo: ["k": "v"]), body: Data("hello".utf8))
            #expect(Self.body(cache, "http://example.com/a?x=1") == "hello")
        }
        // A new instance (another process) finds it on disk, fields, Vary values and all.
        let reopened = try Self.onDisk(directory)
        let target = try #require(URL(string: "http://example.com/a?x=1"))
        let hit = try #require(reopened.lookup(target))
        #expect(hit.entry.userInfo == ["k": "v"] && hit.entry.bodySize == 5)
        #expect(hit.entry.response.headers["Cache-Control"] == "max-age=600")
        #expect(String(decoding: try hit.body.load(), as: UTF8.self) == "hello")
        guard case .file = hit.body else {
            Issue.record("a new instance should read the body from its file")
            return
        }
        // Private: the directory 0700, the index and bodies 0600.
        var info = stat()
        #expect(stat(directory.path("cache"), &info) == 0 && info.st_mode & 0o777 == 0o700)
        #expect(stat(directory.path("cache/index.sqlite3"), &info) == 0 && info.st_mode & 0o777 == 0o600)
        let bodies = try FileManager.default.contentsOfDirectory(atPath: directory.path("cache/bodies"))
        #expect(bodies.count == 1)
        #expect(stat(directory.path("cache/bodies/\(bodies[0])"), &info) == 0 && info.st_mode & 0o777 == 0o600)
    }

    @Test func theKeyIsTheWholeURLButItsFragment() throws {
        let cache = try ResponseCache(configuration: .init())
        cache.store(Self.entry("https://example.com/list?page=1"), body: Data("one".utf8))
        cache.store(Self.entry("https://example.com/list?page=2"), body: Data("two".utf8))
        #expect(Self.body(cache, "https://example.com/list?page=1") == "one")
        #expect(Self.body(cache, "https://example.com/list?page=2") == "two")
        #expect(Self.body(cache, "http://example.com/list?page=1") == nil)
        #expect(Self.body(cache, "https://example.com/list?page=1#section") == "one")
    }

    @Test func storagePoliciesAndHttpsDecideWhereAResponseGoes() throws {
        let directory = try TemporaryDirectory()
        do {
            let cache = try Self.onDisk(directory)
            cache.store(Self.entry("http://example.com/memory", policy: .allowedInMemoryOnly), body: Data("m".utf8))
            cache.store(Self.entry("http://example.com/none", policy: .notAllowed), body: Data("n".utf8))
            cache.store(Self.entry("https://example.com/secure"), body: Data("s".utf8))
            #expect(Self.body(cache, "http://example.com/memory") == "m")
            #expect(Self.body(cache, "https://example.com/secure") == "s")
            #expect(Self.body(cache, "http://example.com/none") == nil)
        }
        let reopened = try Self.onDisk(directory)
        #expect(Self.body(reopened, "http://example.com/memory") == nil)
        #expect(Self.body(reopened, "https://example.com/secure") == nil)
        // An application that opts in keeps https responses on disk.
        do {
            let optedIn = try Self.onDisk(directory, secure: true)
            optedIn.store(Self.entry("https://example.com/secure"), body: Data("s".utf8))
        }
        #expect(Self.body(try Self.onDisk(directory), "https://example.com/secure") == "s")
    }

    @Test func aValidationUpdatesTheFieldsAndKeepsTheBody() throws {
        let directory = try TemporaryDirectory()
        let cache = try Self.onDisk(directory)
        let url = try #require(URL(string: "http://example.com/v"))
        cache.store(
            Self.entry(url.absoluteString, [("Cache-Control", "max-age=1"), ("ETag", "\"1\"")]),
            body: Data("body".utf8)
        )
        let old = try #require(cache.lookup(url)).entry.response
        cache.update(
            url,
            response: HTTPCacheRules.updated(
                old,
                notModified: HTTPHeaderFields([("Cache-Control", "max-age=900")]),
                requestTime: Date(),
                responseTime: Date()
            )
        )
        for reader in [cache, try Self.onDisk(directory)] {
            let hit = try #require(reader.lookup(url))
            #expect(hit.entry.response.headers["Cache-Control"] == "max-age=900")
            #expect(hit.entry.response.headers["ETag"] == "\"1\"")
            #expect(String(decoding: try hit.body.load(), as: UTF8.self) == "body")
        }
    }

    @Test func removingOneAllOrSinceADate() throws {
        let directory = try TemporaryDirectory()
        let cache = try Self.onDisk(directory)
        let past = Date(timeIntervalSinceNow: -3_600)
        cache.store(Self.entry("http://example.com/old", created: past), body: Data("o".utf8))
        cache.store(Self.entry("http://example.com/new"), body: Data("n".utf8))
        cache.store(Self.entry("http://example.com/gone"), body: Data("g".utf8))
        cache.remove(try #require(URL(string: "http://example.com/gone")))
        #expect(Self.body(cache, "http://example.com/gone") == nil)
        cache.removeEntries(since: Date(timeIntervalSinceNow: -60))
        #expect(Self.body(cache, "http://example.com/new") == nil)
        #expect(Self.body(cache, "http://example.com/old") == "o")
        #expect(cache.entries.map(\.url.absoluteString) == ["http://example.com/old"])
        cache.removeAll()
        #expect(cache.entries.isEmpty && cache.diskUsage == 0 && cache.memoryUsage == 0)
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path("cache/bodies")).isEmpty)
    }

    @Test func theLeastRecentlyUsedGoFirstWhenTheDiskIsFull() throws {
        let directory = try TemporaryDirectory()
        let clock = TestClock()
        let cache = try Self.onDisk(directory, capacity: 3_000, clock: clock)
        let kilobyte = Data(repeating: 0x61, count: 1_000)
        for name in ["a", "b", "c"] {
            cache.store(Self.entry("http://example.com/\(name)"), body: kilobyte)
            clock.advance()
        }
        // "a" is used again, so "b" is the least recently used when "d" needs room.
        let first = try #require(URL(string: "http://example.com/a"))
        _ = try Self.onDisk(directory, capacity: 3_000, clock: clock).lookup(first)
        clock.advance()
        cache.store(Self.entry("http://example.com/d"), body: kilobyte)
        let reopened = try Self.onDisk(directory, capacity: 3_000, clock: clock)
        #expect(Set(reopened.entries.map(\.url.lastPathComponent)) == ["a", "c", "d"])
        #expect(reopened.diskUsage == 3_000)
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path("cache/bodies")).count == 3)
    }

    @Test func theMemoryTierKeepsToItsCapacity() throws {
        let cache = try ResponseCache(configuration: .init(memoryCapacity: 8_000))
        for index in 0..<20 {
            cache.store(Self.entry("http://example.com/\(index)"), body: Data(repeating: 0x62, count: 1_000))
        }
        #expect(cache.memoryUsage <= 8_000 && cache.memoryUsage >= 7_000)
        #expect(Self.body(cache, "http://example.com/19")?.count == 1_000)
        #expect(Self.body(cache, "http://example.com/0") == nil)
    }

    /// A process killed while it writes a body leaves a cache that opens, serves the last
    /// complete response for that URL, and has nothing half written left.
    @Test func aWriterKilledMidwayLeavesNoPartialEntry() async throws {
        let directory = try TemporaryDirectory()
        let url = "https://example.com/big"
        let writer = ChildProcess()
        writer.executableURL = URL(fileURLWithPath: DaemonProcess.builtExecutable(named: "KeyjarTestPeer"))
        writer.arguments = ["cache-write", directory.path("cache"), url]
        let output = Pipe()
        writer.standardOutput = output
        try writer.run()
        #expect(await DaemonProcess.readLine(from: output.fileHandleForReading) == "stored")
        for _ in 0..<5 { #expect(await DaemonProcess.readLine(from: output.fileHandleForReading) == "writing") }
        kill(writer.processIdentifier, SIGKILL)
        try await waitForExit(writer)
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: directory.path("cache/bodies")).contains {
                $0.hasSuffix(".partial")
            }
        )

        let cache = try Self.onDisk(directory, secure: true)
        #expect(Self.body(cache, url) == "first")
        cache.collectLeftovers()
        let left = try FileManager.default.contentsOfDirectory(atPath: directory.path("cache/bodies"))
        #expect(left.count == 1 && !left.contains { $0.hasSuffix(".partial") }, "\(left)")
    }

    @Test func concurrentWritersAndReadersOfOneURLSeeWholeBodies() throws {
        let directory = try TemporaryDirectory()
        let cache = try Self.onDisk(directory)
        let url = try #require(URL(string: "http://example.com/race"))
        let failures = Locked<[String]>([])
        DispatchQueue.concurrentPerform(iterations: 8) { thread in
            for round in 0..<50 {
                if thread.isMultiple(of: 2) {
                    let size = 1 + (thread * 50 + round) * 97 % 20_000
                    cache.store(Self.entry(url.absoluteString), body: Data(repeating: UInt8(thread), count: size))
                } else if let hit = cache.lookup(url) {
                    let body = (try? hit.body.load()) ?? Data()
                    if body.count != hit.entry.bodySize || Set(body).count > 1 {
                        failures.withLock { $0.append("\(body.count) of \(hit.entry.bodySize)") }
                    }
                }
            }
        }
        #expect(failures.withLock { $0 }.isEmpty)
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path("cache/bodies")).count == 1)
    }

    @Test func anIndexThatIsNotADatabaseIsAClearError() throws {
        let directory = try TemporaryDirectory()
        try FileManager.default.createDirectory(atPath: directory.path("cache"), withIntermediateDirectories: true)
        try Data("not sqlite at all, just text that is long enough".utf8).write(
            to: URL(fileURLWithPath: directory.path("cache/index.sqlite3"))
        )
        do {
            _ = try Self.onDisk(directory)
            Issue.record("a corrupt index was accepted")
        } catch {
            #expect("\(error)".contains("index.sqlite3"), "\(error)")
        }
    }

    @Test func theIndexSchemaMatchesTheGoldenDump() throws {
        let directory = try TemporaryDirectory()
        let dump = try #require(try Self.onDisk(directory).schemaDump())
        let golden = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Schemas/response-cache.sql")
        if ProcessInfo.processInfo.environment["KEYJAR_UPDATE_SCHEMA"] == "1" {
            // Regenerating is never a pass: the next run, without the variable, checks it.
            try dump.write(to: golden, atomically: true, encoding: .utf8)
            Issue.record(
                "Schemas/response-cache.sql was rewritten; review it and run again without KEYJAR_UPDATE_SCHEMA"
            )
            return
        }
        #expect(dump == (try String(contentsOf: golden, encoding: .utf8)))
    }

    /// Runs one SQL statement on an index with Python's sqlite3 (another program, as a newer or
    /// older Keyjar would be) and returns the first column of its first row.
    static func sqlite(_ path: String, _ sql: String) async throws -> String {
        let script = """
            import sqlite3, sys
            connection = sqlite3.connect(sys.argv[1])
            rows = connection.execute(sys.argv[2]).fetchall()
            connection.commit()
            print(rows[0][0] if rows else "")
            """
        let result = try await runCommand("/usr/bin/env", ["python3", "-c", script, path, sql])
        guard result.status == 0 else { throw TestSupportError("sqlite3 \(sql): \(result.error)") }
        return result.output.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    @Test func anIndexOfANewerKeyjarIsAClearErrorAndLeftUntouched() async throws {
        let directory = try TemporaryDirectory()
        let index = directory.path("cache/index.sqlite3")
        do {
            let cache = try Self.onDisk(directory)
            cache.store(Self.entry("http://example.com/theirs"), body: Data("theirs".utf8))
        }
        _ = try await Self.sqlite(index, "PRAGMA user_version = 7")
        let error = #expect(throws: ResponseCacheError.self) { try Self.onDisk(directory) }
        #expect("\(error.map { "\($0)" } ?? "")".contains("schema version 7, newer than this Keyjar supports (2)"))
        #expect(try await Self.sqlite(index, "PRAGMA user_version") == "7")
        #expect(try await Self.sqlite(index, "SELECT count(*) FROM entry") == "1")
        let bodies = try FileManager.default.contentsOfDirectory(atPath: directory.path("cache/bodies"))
        #expect(bodies.count == 1)
    }

    @Test func theDefaultDirectoryFollowsXDG() {
        #expect(
            ResponseCache.Configuration.defaultDirectory(application: "app", environment: ["XDG_CACHE_HOME": "/c"]).path
                == "/c/keyjar/app"
        )
        #expect(
            ResponseCache.Configuration.defaultDirectory(application: "app", environment: ["HOME": "/h"]).path
                == "/h/.cache/keyjar/app"
        )
    }
}
