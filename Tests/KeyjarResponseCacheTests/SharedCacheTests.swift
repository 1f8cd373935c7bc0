import Foundation
import Glibc
import KeyjarHTTPCache
import KeyjarResponseCache
import KeyjarTestSupport
import Testing

/// One cache directory shared by several processes (KeyjarTestPeer, and other instances as
/// other processes would open it), its index's migrations, and several Vary variants per URL.
@Suite(.timeLimit(hangLimit), .servicesStopCleanly)
struct SharedCacheTests {
    static func files(_ directory: TemporaryDirectory) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: directory.path("cache/bodies")).sorted()
    }

    static func language(_ value: String) -> HTTPHeaderFields { HTTPHeaderFields([("Accept-Language", value)]) }

    static func variant(_ url: String, _ language: String, etag: String? = nil) -> CachedEntry {
        ResponseCacheTests.entry(
            url,
            [("Cache-Control", "max-age=600"), ("Vary", "Accept-Language")] + (etag.map { [("ETag", $0)] } ?? []),
            requestHeaders: [("Accept-Language", language)]
        )
    }

    static func text(_ hit: (entry: CachedEntry, body: CachedBody)?) -> String? {
        guard let hit, let data = try? hit.body.load() else { return nil }
        return String(decoding: data, as: UTF8.self)
    }

    // MARK: Several processes

    /// A body whose writer is alive (it holds the file's lock) survives another instance's
    /// open and collection, however long it takes; once that writer is killed, its partial
    /// body is collected and the last complete response still answers.
    @Test func aBodyBeingWrittenSurvivesCollectionAndAKilledWritersIsCollected() async throws {
        let directory = try TemporaryDirectory()
        let writerCache = try ResponseCacheTests.onDisk(directory)
        let slow = "http://example.com/slow"
        let writer = writerCache.makeWriter(for: ResponseCacheTests.entry(slow))
        writer.append(Data("half of ".utf8))
        #expect(try Self.files(directory).filter { $0.hasSuffix(".partial") }.count == 1)
        // Another instance: descriptors of its own, as another process has.
        let other = try ResponseCacheTests.onDisk(directory)
        other.collectLeftovers()
        #expect(try Self.files(directory).filter { $0.hasSuffix(".partial") }.count == 1)
        writer.append(Data("the body".utf8))
        writer.finish()
        #expect(ResponseCacheTests.body(other, slow) == "half of the body")

        // A writer in another process, killed midway: its lock went with it.
        let url = "https://example.com/big"
        let peer = ChildProcess()
        peer.executableURL = URL(fileURLWithPath: DaemonProcess.builtExecutable(named: "KeyjarTestPeer"))
        peer.arguments = ["cache-write", directory.path("cache"), url]
        let output = Pipe()
        peer.standardOutput = output
        try peer.run()
        // It writes forever: ended whatever the expectations below find.
        defer { if peer.isRunning { kill(peer.processIdentifier, SIGKILL) } }
        #expect(await DaemonProcess.readLine(from: output.fileHandleForReading) == "stored")
        #expect(await DaemonProcess.readLine(from: output.fileHandleForReading) == "writing")
        // Alive: collected around, not collected.
        other.collectLeftovers()
        #expect(try Self.files(directory).filter { $0.hasSuffix(".partial") }.count == 1)
        kill(peer.processIdentifier, SIGKILL)
        try await waitForExit(peer)
        other.collectLeftovers()
        #expect(try Self.files(directory).filter { $0.hasSuffix(".partial") }.isEmpty)
        #expect(try Self.files(directory).count == 2)
        #expect(ResponseCacheTests.body(try ResponseCacheTests.onDisk(directory, secure: true), url) == "first")
        #expect(ResponseCacheTests.body(other, slow) == "half of the body")
    }

    /// Body files no row names and rows whose file is gone are collected; named files stay.
    @Test func collectionRemovesOrphansBothWays() throws {
        let directory = try TemporaryDirectory()
        let cache = try ResponseCacheTests.onDisk(directory)
        cache.store(ResponseCacheTests.entry("http://example.com/kept"), body: Data("kept".utf8))
        cache.store(ResponseCacheTests.entry("http://example.com/lost"), body: Data("lost".utf8))
        let named = try Self.files(directory)
        #expect(named.count == 2)
        // An orphan (a writer killed after the rename, before its row) and a lost body.
        try Data("orphan".utf8).write(to: URL(fileURLWithPath: directory.path("cache/bodies/0123abcd")))
        try Data("orphan".utf8).write(to: URL(fileURLWithPath: directory.path("cache/bodies/4567.partial")))
        let lost = try #require(
            named.first {
                (try? String(contentsOfFile: directory.path("cache/bodies/\($0)"), encoding: .utf8)) == "lost"
            }
        )
        unlink(directory.path("cache/bodies/\(lost)"))
        cache.collectLeftovers()
        #expect(try Self.files(directory) == named.filter { $0 != lost })
        // (Another instance: this one still has both in its memory tier.)
        #expect(try ResponseCacheTests.onDisk(directory).entries.map(\.url.lastPathComponent) == ["kept"])
    }

    /// N processes store, read, revalidate and (their disk capacity small) evict on one cache;
    /// some are killed at random points and started again. Each reader checks each body it gets
    /// (whole, and its entry's); at the end the index names only complete files of the right
    /// size, and after a collection no file is left that it does not name.
    @Test func severalProcessesKilledAtRandomLeaveAWholeCache() async throws {
        let directory = try TemporaryDirectory()
        let seed = UInt64(Date().timeIntervalSince1970 * 1_000)
        var random = SplitMix64(seed: seed)
        let peers = 6
        let operations = 200
        // Half the peers are killed once, after a random number of operations.
        let killAfter = (0..<peers).map { $0 < peers / 2 ? Int(random.next() % UInt64(operations - 1)) + 1 : nil }
        let seeds = (0..<(2 * peers)).map { _ in random.next() % (1 << 62) }
        let peer = DaemonProcess.builtExecutable(named: "KeyjarTestPeer")
        let cachePath = directory.path("cache")

        let problems = await withTaskGroup(of: [String].self) { group in
            for index in 0..<peers {
                group.addTask {
                    var problems: [String] = []
                    if let killAfter = killAfter[index] {
                        let process = ChildProcess()
                        process.executableURL = URL(fileURLWithPath: peer)
                        process.arguments = ["cache-stress", cachePath, String(seeds[index]), String(operations)]
                        let output = Pipe()
                        process.standardOutput = output
                        do { try process.run() } catch { return ["peer \(index) did not start: \(error)"] }
                        for _ in 0...killAfter {
                            guard let line = await DaemonProcess.readLine(from: output.fileHandleForReading) else {
                                problems.append("peer \(index) ended early")
                                break
                            }
                            if line.hasPrefix("BAD") { problems.append("peer \(index): \(line)") }
                        }
                        kill(process.processIdentifier, SIGKILL)
                        do { try await waitForExit(process) } catch { problems.append("\(error)") }
                    }
                    // (Started again, when it was killed.)
                    let seed = killAfter[index] == nil ? seeds[index] : seeds[peers + index]
                    do {
                        let result = try await runCommand(
                            peer,
                            ["cache-stress", cachePath, String(seed), String(operations)]
                        )
                        let lines = result.output.split(separator: "\n")
                        if result.status != 0 || lines.last != "done" {
                            problems.append(
                                "peer \(index): status \(result.status), \(lines.last ?? "no output") \(result.error)"
                            )
                        }
                    } catch {
                        problems.append("peer \(index): \(error)")
                    }
                    return problems
                }
            }
            return await group.reduce(into: [String]()) { $0 += $1 }
        }
        #expect(problems.isEmpty, "seed \(seed): \(problems)")

        // Before any collection: every row names a complete file of its size.
        let rows = try await Self.rows(directory.path("cache/index.sqlite3"))
        #expect(!rows.isEmpty)
        for (file, size) in rows {
            var info = stat()
            let exists = stat(directory.path("cache/bodies/\(file)"), &info) == 0
            #expect(exists && Int(info.st_size) == size, "seed \(seed): \(file) of \(size) bytes")
        }
        let cache = try ResponseCacheTests.onDisk(directory)
        cache.collectLeftovers()
        let after = try await Self.rows(directory.path("cache/index.sqlite3"))
        #expect(try Self.files(directory) == after.map(\.file).sorted(), "seed \(seed)")
        #expect(cache.diskUsage <= 256 << 10)
    }

    /// The index's rows (body file, size), read by another program (Python's sqlite3).
    static func rows(_ index: String) async throws -> [(file: String, size: Int)] {
        let script = """
            import sqlite3, sys
            for file, size in sqlite3.connect(sys.argv[1]).execute("SELECT body_file, body_size FROM entry"):
                print(file, size)
            """
        let result = try await runCommand("/usr/bin/env", ["python3", "-c", script, index])
        guard result.status == 0 else { throw TestSupportError("reading the index: \(result.error)") }
        return result.output.split(separator: "\n").compactMap { line in
            let parts = line.split(separator: " ")
            guard parts.count == 2, let size = Int(parts[1]) else { return nil }
            return (String(parts[0]), size)
        }
    }

    // MARK: Migrations

    /// An index as Keyjar wrote it before variants were kept (version 1, or 0 before versions
    /// were recorded), written by another program: opening migrates it to version 2 with its
    /// entries, a Vary entry under its variant's key, so that storing the same variant again
    /// replaces it instead of adding a second.
    @Test(arguments: [0, 1])
    func anOlderIndexIsMigratedWithItsEntries(version: Int) async throws {
        let directory = try TemporaryDirectory()
        try FileManager.default.createDirectory(
            atPath: directory.path("cache/bodies"),
            withIntermediateDirectories: true
        )
        try Data("kept".utf8).write(to: URL(fileURLWithPath: directory.path("cache/bodies/plainbody")))
        try Data("bonjour".utf8).write(to: URL(fileURLWithPath: directory.path("cache/bodies/frenchbody")))
        let index = directory.path("cache/index.sqlite3")
        let now = Date().timeIntervalSince1970
        let script = """
            import sqlite3, sys
            c = sqlite3.connect(sys.argv[1])
            c.executescript(\"\"\"
            CREATE TABLE entry (key TEXT PRIMARY KEY, url TEXT NOT NULL, status INTEGER NOT NULL,
                headers TEXT NOT NULL, vary TEXT NOT NULL, request_time REAL NOT NULL,
                response_time REAL NOT NULL, storage_policy INTEGER NOT NULL, user_info TEXT NOT NULL,
                body_file TEXT NOT NULL, body_size INTEGER NOT NULL, created REAL NOT NULL,
                last_access REAL NOT NULL);
            CREATE INDEX entry_by_access ON entry (last_access);\"\"\")
            rows = [("http://example.com/kept", "{}", "plainbody", 4, '[["Cache-Control","max-age=600"]]'),
                    ("http://example.com/fr", '{"accept-language":"fr"}', "frenchbody", 7,
                     '[["Cache-Control","max-age=600"],["Vary","Accept-Language"]]')]
            for url, vary, body, size, headers in rows:
                c.execute("INSERT INTO entry VALUES (?,?,200,?,?,?,?,0,'{}',?,?,?,?)",
                          (url, url, headers, vary, \(now), \(now), body, size, \(now), \(now)))
            c.execute("PRAGMA user_version = %s" % sys.argv[2])
            c.commit()
            """
        let made = try await runCommand("/usr/bin/env", ["python3", "-c", script, index, String(version)])
        #expect(made.status == 0, "\(made.error)")
        let reopened = try ResponseCacheTests.onDisk(directory)
        #expect(ResponseCacheTests.body(reopened, "http://example.com/kept") == "kept")
        let french = try #require(URL(string: "http://example.com/fr"))
        #expect(Self.text(reopened.lookup(french, requestHeaders: Self.language("fr"))) == "bonjour")
        #expect(reopened.lookup(french, requestHeaders: Self.language("en")) == nil)
        #expect(try await ResponseCacheTests.sqlite(index, "PRAGMA user_version") == "2")
        #expect(
            try await ResponseCacheTests.sqlite(index, "SELECT url_key FROM entry WHERE body_file = 'frenchbody'")
                == french.absoluteString
        )
        // The same variant stored again replaces the migrated row.
        reopened.store(Self.variant(french.absoluteString, "fr"), body: Data("salut".utf8))
        #expect(reopened.variants(of: french).count == 1)
        #expect(Self.text(reopened.lookup(french, requestHeaders: Self.language("fr"))) == "salut")
        #expect(try await ResponseCacheTests.sqlite(index, "SELECT count(*) FROM entry") == "2")
    }

    // MARK: Variants

    /// Each Vary variant is kept under its own request values, in memory and on disk: both
    /// answer, a third value does not, one is updated alone, and removing the URL removes all.
    @Test(arguments: [false, true])
    func eachVariantIsKeptUnderItsOwnValues(onDisk: Bool) throws {
        let directory = try TemporaryDirectory()
        let cache = try onDisk ? ResponseCacheTests.onDisk(directory) : ResponseCache(configuration: .init())
        let page = "http://example.com/page"
        let url = try #require(URL(string: page))
        cache.store(Self.variant(page, "en", etag: "\"en\""), body: Data("hello".utf8))
        cache.store(Self.variant(page, "fr", etag: "\"fr\""), body: Data("bonjour".utf8))
        // A reader with no memory tier of its own (another process) sees the disk's.
        let readers = onDisk ? [cache, try ResponseCacheTests.onDisk(directory)] : [cache]
        for reader in readers {
            #expect(Self.text(reader.lookup(url, requestHeaders: Self.language("en"))) == "hello")
            #expect(Self.text(reader.lookup(url, requestHeaders: Self.language("fr"))) == "bonjour")
            #expect(reader.lookup(url, requestHeaders: Self.language("de")) == nil)
            #expect(Set(reader.variants(of: url).compactMap { $0.response.headers["ETag"] }) == ["\"en\"", "\"fr\""])
            #expect(reader.entries.count == 2)
        }
        let french = try #require(cache.variants(of: url).first { $0.response.headers["ETag"] == "\"fr\"" })
        #expect(Self.text(cache.lookup(url, variantOf: french)) == "bonjour")
        var refreshed = french.response
        refreshed.headers.append("X-Validated", "yes")
        cache.update(french, response: refreshed)
        #expect(cache.lookup(url, requestHeaders: Self.language("fr"))?.entry.response.headers["X-Validated"] == "yes")
        #expect(cache.lookup(url, requestHeaders: Self.language("en"))?.entry.response.headers["X-Validated"] == nil)
        // The same values again replace their variant only.
        cache.store(Self.variant(page, "en", etag: "\"en2\""), body: Data("hi".utf8))
        #expect(cache.variants(of: url).count == 2)
        #expect(Self.text(cache.lookup(url, requestHeaders: Self.language("en"))) == "hi")
        cache.remove(url)
        #expect(cache.variants(of: url).isEmpty && cache.entries.isEmpty)
        if onDisk { #expect(try Self.files(directory).isEmpty) }
    }
}
