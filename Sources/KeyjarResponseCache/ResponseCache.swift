public import Foundation
import Glibc
public import KeyjarHTTPCache
import KeyjarLocks
import KeyjarPlatform
import KeyjarSQLite

/// An application's response cache: a memory tier and, when given a directory, a disk tier
/// (an SQLite index of entries, each body a file of its own).
///
/// Why not Foundation's `URLCache`: it keys entries by host, port and path only, so `?page=1`
/// and `?page=2`, and `http:` and `https:`, answer for each other; it unarchives a disk entry
/// whole, body included; its files are readable by other users (0644); it has no Vary and no
/// streaming (docs/performance.md, Response cache). Here the key is the whole URL but its
/// fragment, bodies stream in and out of files, and everything is 0600 in a 0700 directory.
///
/// Vary (RFC 9111 §4.1): each response is kept under its request's values of the fields its
/// Vary names, so a URL has as many stored variants as there were distinct values; a request
/// gets the one that matches it (``lookup(_:requestHeaders:)``).
///
/// A disk entry is written body first (to `bodies/NAME.partial`, renamed when complete), then
/// indexed in one transaction; several processes may share the directory (see ``DiskIndex``):
/// a reader gets a whole body or a miss, and the index never names a partial or missing body,
/// whenever a process is killed. What a killed writer leaves is collected after the cache is
/// opened, off the open path (``collectLeftovers()``). Sizes are kept under the capacities by
/// evicting the least recently used entries.
public final class ResponseCache: Sendable {
    public struct Configuration: Sendable {
        public var memoryCapacity: Int
        public var diskCapacity: Int
        /// The disk tier's directory; nil keeps everything in memory.
        public var directory: URL?
        /// https responses go to disk only when the application says so (in memory they may).
        public var storesSecureResponsesOnDisk: Bool
        /// The time the disk tier records as a response's last use, which orders eviction
        /// (least recently used first). The wall clock; a test gives its own, so that the
        /// order it checks does not depend on how far apart its steps happened to run.
        public var now: @Sendable () -> Date

        public init(
            memoryCapacity: Int = 4 << 20,
            diskCapacity: Int = 64 << 20,
            directory: URL? = nil,
            storesSecureResponsesOnDisk: Bool = false,
            now: @escaping @Sendable () -> Date = { Date() }
        ) {
            self.memoryCapacity = memoryCapacity
            self.diskCapacity = diskCapacity
            self.directory = directory
            self.storesSecureResponsesOnDisk = storesSecureResponsesOnDisk
            self.now = now
        }

        /// An application's cache at its default place, with the default capacities.
        public static func application(
            _ identifier: String = ProcessInfo.processInfo.processName
        ) -> Configuration {
            Configuration(directory: defaultDirectory(application: identifier))
        }

        /// `$XDG_CACHE_HOME/keyjar/<application>/`, else `~/.cache/keyjar/<application>/`.
        public static func defaultDirectory(
            application: String,
            environment: [String: String] = ProcessInfo.processInfo.environment
        ) -> URL {
            let base = XDGDirectories(environment: environment).cacheHome
            return URL(fileURLWithPath: base).appendingPathComponent("keyjar").appendingPathComponent(application)
        }
    }

    struct MemoryEntry {
        var entry: CachedEntry
        var body: Data
        var lastAccess: UInt64
    }

    struct State {
        var disk: DiskIndex?
        /// URL key → variant key → entry.
        var memory: [String: [String: MemoryEntry]] = [:]
        var memoryUsage = 0
        var clock: UInt64 = 0
    }

    public let configuration: Configuration
    let state: Locked<State>

    /// Opens (or creates) the cache; with a directory, schedules the collection of what a
    /// killed process left there (on a utility queue: opening does not wait for it).
    /// - Throws: ``ResponseCacheError`` when the directory or its index cannot be used.
    public init(configuration: Configuration) throws(ResponseCacheError) {
        self.configuration = configuration
        let disk = try configuration.directory.map { directory throws(ResponseCacheError) in
            try DiskIndex(directory: directory, now: configuration.now)
        }
        state = Locked(State(disk: disk))
        if disk != nil {
            DispatchQueue.global(qos: .utility).async { [weak self] in self?.collectLeftovers() }
        }
    }

    // MARK: Reading

    /// The stored variant of `url` that answers a request with `requestHeaders` (its Vary
    /// values match, ``HTTPCacheRules/selectVariant(_:for:)``), and its body; nil when none
    /// does. (Whether it may answer, fresh or not, is ``HTTPCacheRules``' decision.)
    public func lookup(
        _ url: URL,
        requestHeaders: HTTPHeaderFields
    ) -> (entry: CachedEntry, body: CachedBody)? {
        let urlKey = CachedEntry.key(for: url)
        return state.withLock { state -> (CachedEntry, CachedBody)? in
            state.clock += 1
            // The variant's key is chosen first, its copy of the URL's variants let go before
            // the entry is touched: held, it would make the touch copy them.
            // A piece (a 206) is not a complete response: it answers only ranges (lookupPiece).
            let selected = state.memory[urlKey].flatMap { variants -> String? in
                if variants.count == 1, let only = variants.first {
                    return !only.value.entry.isPiece && only.value.entry.response.varyMatches(requestHeaders)
                        ? only.key : nil
                }
                let keys = variants.keys.filter { variants[$0]?.entry.isPiece == false }
                return HTTPCacheRules.selectVariant(
                    keys.compactMap { variants[$0]?.entry.response },
                    for: requestHeaders
                )
                .map { keys[$0] }
            }
            if let selected, let hit = Self.touchMemory(&state, urlKey, selected) { return hit }
            guard let disk = state.disk else { return nil }
            return Self.openOnDisk(disk) { rows in
                HTTPCacheRules.selectVariant(rows.map(\.entry.response), for: requestHeaders).map { rows[$0] }
            } reread: {
                disk.variants(urlKey).filter { !$0.entry.isPiece }
            }
        }
    }

    /// The stored piece (a 206, RFC 9111 §3.3) of the variant of `url` that a request with
    /// `requestHeaders` selects, and its body; nil when there is none. Whether and how it
    /// answers the request's range is ``ByteRanges``' decision.
    public func lookupPiece(
        _ url: URL,
        requestHeaders: HTTPHeaderFields
    ) -> (entry: CachedEntry, body: CachedBody)? {
        let urlKey = CachedEntry.key(for: url)
        return state.withLock { state -> (CachedEntry, CachedBody)? in
            state.clock += 1
            let selected = state.memory[urlKey].flatMap { variants -> String? in
                let keys = variants.keys.filter { variants[$0]?.entry.isPiece == true }
                return HTTPCacheRules.selectVariant(
                    keys.compactMap { variants[$0]?.entry.response },
                    for: requestHeaders
                )
                .map { keys[$0] }
            }
            if let selected, let hit = Self.touchMemory(&state, urlKey, selected) { return hit }
            guard let disk = state.disk else { return nil }
            return Self.openOnDisk(disk) { rows in
                HTTPCacheRules.selectVariant(rows.map(\.entry.response), for: requestHeaders).map { rows[$0] }
            } reread: {
                disk.variants(urlKey).filter(\.entry.isPiece)
            }
        }
    }

    /// The piece stored under `key` (``CachedEntry/pieceKey(for:varyValues:)``) and its body.
    func lookupPiece(key: String, urlKey: String) -> (entry: CachedEntry, body: CachedBody)? {
        state.withLock { state -> (CachedEntry, CachedBody)? in
            state.clock += 1
            if let hit = Self.touchMemory(&state, urlKey, key) { return hit }
            guard let disk = state.disk else { return nil }
            return Self.openOnDisk(disk) {
                $0.first
            } reread: {
                disk.entry(key).map { [$0] } ?? []
            }
        }
    }

    /// The stored variant `entry` (found by its URL and Vary values, as ``variants(of:)`` or
    /// an earlier lookup gave it), and its body; nil when it is no longer stored.
    public func lookup(_ url: URL, variantOf entry: CachedEntry) -> (entry: CachedEntry, body: CachedBody)? {
        let urlKey = CachedEntry.key(for: url)
        let key = CachedEntry.key(for: url, varyValues: entry.response.varyValues)
        return state.withLock { state -> (CachedEntry, CachedBody)? in
            state.clock += 1
            if let hit = Self.touchMemory(&state, urlKey, key) { return hit }
            guard let disk = state.disk else { return nil }
            return Self.openOnDisk(disk) {
                $0.first
            } reread: {
                disk.entry(key).map { [$0] } ?? []
            }
        }
    }

    /// The variant of `url` stored (or validated) last, whatever request it answers, and its
    /// body; nil when there is none. For tools and tests: a request is answered by
    /// ``lookup(_:requestHeaders:)``.
    public func lookup(_ url: URL) -> (entry: CachedEntry, body: CachedBody)? {
        guard let latest = variants(of: url).first else { return nil }
        return lookup(url, variantOf: latest)
    }

    /// Every stored variant of `url` (its complete responses, not its pieces), the one stored
    /// (or validated) last first.
    public func variants(of url: URL) -> [CachedEntry] {
        let urlKey = CachedEntry.key(for: url)
        return state.withLock { state in
            var found = state.memory[urlKey]?.values.map(\.entry).filter { !$0.isPiece } ?? []
            let known = Set(found.map(\.key))
            found +=
                state.disk?.variants(urlKey).map(\.entry).filter { !$0.isPiece && !known.contains($0.key) } ?? []
            return found.sorted { $0.response.responseTime > $1.response.responseTime }
        }
    }

    private static func touchMemory(_ state: inout State, _ urlKey: String, _ key: String) -> (CachedEntry, CachedBody)?
    {
        guard var hit = state.memory[urlKey]?[key] else { return nil }
        hit.lastAccess = state.clock
        state.memory[urlKey]?[key] = hit
        return (hit.entry, .data(hit.body))
    }

    /// Opens the body of the row `choose` picks among `reread()`'s. A body that is gone was
    /// replaced or evicted by another process after its row was read (rows go before their
    /// files): the rows are read once more. A row whose body is still missing then was emptied
    /// by hand: that row, only if it still names that file, is deleted (never the row another
    /// process has put there since).
    private static func openOnDisk(
        _ disk: DiskIndex,
        choose: ([DiskIndex.Row]) -> DiskIndex.Row?,
        reread: () -> [DiskIndex.Row]
    ) -> (CachedEntry, CachedBody)? {
        var missing: DiskIndex.Row?
        for _ in 0..<2 {
            guard let row = choose(reread()) else { return nil }
            if let handle = FileHandle(forReadingAtPath: disk.url(of: row).path) {
                // A body cut short (bodies are not synced to disk; a power loss, a hand) is not
                // served as if whole: as good as missing.
                var info = stat()
                guard fstat(handle.fileDescriptor, &info) == 0, Int(info.st_size) == row.entry.bodySize else {
                    try? handle.close()
                    missing = row
                    continue
                }
                disk.touch(row.key)
                return (row.entry, .file(handle, size: row.entry.bodySize))
            }
            missing = row
        }
        if let missing { disk.removeRow(missing.key, ifItNames: missing.file, of: missing.entry.bodySize) }
        return nil
    }

    /// Every stored entry (each variant), most recently used first.
    public var entries: [CachedEntry] {
        state.withLock { state in
            let memory = state.memory.values.flatMap(\.values).sorted { $0.lastAccess > $1.lastAccess }.map(\.entry)
            let known = Set(memory.map(\.key))
            return memory + (state.disk?.allEntries().filter { !known.contains($0.key) }.map(\.entry) ?? [])
        }
    }

    /// The disk index's schema (nil without a disk tier), for the golden-schema test.
    package func schemaDump() throws -> String? { try state.withLock { try $0.disk?.schemaDump() } }

    public var memoryUsage: Int { state.withLock { $0.memoryUsage } }
    public var diskUsage: Int { state.withLock { $0.disk?.totalSize() ?? 0 } }

    // MARK: Leftovers

    /// Removes what killed processes left in the disk tier: body files no row names (partial
    /// or complete) whose writer's lock is free, and rows whose body file is gone. Runs after
    /// every open, on a utility queue; callable directly (tests). Each file is checked under
    /// its own `flock(LOCK_EX | LOCK_NB)`: a held lock is a live writer (in any process), and
    /// the kernel releases a killed writer's lock, so no grace period is needed. Once the lock
    /// is taken the index is asked again, since the writer may have committed the row naming
    /// the file just before letting go. The directory is listed before the rows are read, so a
    /// file indexed meanwhile is only a candidate that this check turns down.
    package func collectLeftovers() {
        guard let bodies = state.withLock({ $0.disk?.bodies }) else { return }
        let present = (try? FileManager.default.contentsOfDirectory(atPath: bodies.path)) ?? []
        guard let leftovers = state.withLock({ $0.disk?.leftoverCandidates(present: present) }) else { return }
        for file in leftovers.unnamedFiles {
            let path = bodies.appendingPathComponent(file).path
            let descriptor = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
            guard descriptor >= 0 else { continue }
            defer { close(descriptor) }
            guard DiskIndex.tryLock(descriptor), DiskIndex.isSameFile(descriptor, path) else { continue }
            let named = state.withLock { $0.disk?.names(file) ?? true }
            if !named { unlink(path) }
        }
        for row in leftovers.rowsWithoutFile {
            state.withLock { $0.disk?.removeRow(row.key, ifItNames: row.file, of: nil) }
        }
    }

    // MARK: Removing

    /// Removes every stored variant of `url`.
    public func remove(_ url: URL) {
        let urlKey = CachedEntry.key(for: url)
        state.withLock { state in
            if let old = state.memory.removeValue(forKey: urlKey) {
                state.memoryUsage -= old.values.reduce(0) { $0 + $1.body.count }
            }
            state.disk?.remove(urlKey: urlKey)
        }
    }

    /// Removes the stored variant `entry` (as a lookup gave it), leaving the URL's others.
    public func remove(variantOf entry: CachedEntry) {
        let urlKey = CachedEntry.key(for: entry.url)
        state.withLock { state in
            if let old = state.memory[urlKey]?.removeValue(forKey: entry.key) {
                state.memoryUsage -= old.body.count
                if state.memory[urlKey]?.isEmpty == true { state.memory[urlKey] = nil }
            }
            state.disk?.remove(key: entry.key)
        }
    }

    public func removeAll() {
        state.withLock { state in
            state.memory.removeAll()
            state.memoryUsage = 0
            state.disk?.removeAll()
        }
    }

    /// Removes the entries stored at or after `date`.
    public func removeEntries(since date: Date) {
        state.withLock { state in
            for (urlKey, variants) in state.memory {
                for (key, value) in variants where value.entry.created >= date {
                    state.memory[urlKey]?[key] = nil
                    state.memoryUsage -= value.body.count
                }
                if state.memory[urlKey]?.isEmpty == true { state.memory[urlKey] = nil }
            }
            state.disk?.removeEntries(since: date)
        }
    }
}

/// Why the cache could not be opened.
public struct ResponseCacheError: Error, Sendable, CustomStringConvertible {
    public var description: String

    init(_ description: String) { self.description = description }
}
