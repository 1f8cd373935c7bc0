public import Foundation
import Glibc
public import KeyjarHTTPCache
import KeyjarLocks
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
/// A disk entry is written body first (to `bodies/NAME.partial`, renamed when complete), then
/// indexed in one transaction: a crash leaves at most a body nobody indexed, which the next
/// open deletes; the index never names a partial body. Sizes are kept under the capacities by
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
            let base =
                environment["XDG_CACHE_HOME"].flatMap { $0.isEmpty ? nil : $0 }
                ?? ((environment["HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? NSHomeDirectory()) + "/.cache")
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
        var memory: [String: MemoryEntry] = [:]
        var memoryUsage = 0
        var clock: UInt64 = 0
    }

    public let configuration: Configuration
    let state: Locked<State>

    /// Opens (or creates) the cache; with a directory, removes what a crash left half written.
    /// - Throws: ``ResponseCacheError`` when the directory or its index cannot be used.
    public init(configuration: Configuration) throws(ResponseCacheError) {
        self.configuration = configuration
        let disk = try configuration.directory.map { directory throws(ResponseCacheError) in
            try DiskIndex(directory: directory, now: configuration.now)
        }
        state = Locked(State(disk: disk))
    }

    // MARK: Reading

    /// The entry stored for `url`, and its body; nil when there is none. (Whether it may
    /// answer a request, Vary included, is ``HTTPCacheRules``' decision.)
    public func lookup(_ url: URL) -> (entry: CachedEntry, body: CachedBody)? {
        let key = CachedEntry.key(for: url)
        return state.withLock { state -> (CachedEntry, CachedBody)? in
            state.clock += 1
            if var hit = state.memory[key] {
                hit.lastAccess = state.clock
                state.memory[key] = hit
                return (hit.entry, .data(hit.body))
            }
            guard let disk = state.disk, let (entry, file) = disk.entry(key) else { return nil }
            guard let handle = FileHandle(forReadingAtPath: file.path) else {
                // A body that went away (removed by hand): the entry goes too.
                disk.remove([key])
                return nil
            }
            disk.touch(key)
            return (entry, .file(handle, size: entry.bodySize))
        }
    }

    /// Every stored entry, most recently used first.
    public var entries: [CachedEntry] {
        state.withLock { state in
            let memory = state.memory.values.sorted { $0.lastAccess > $1.lastAccess }.map(\.entry)
            let known = Set(memory.map { CachedEntry.key(for: $0.url) })
            return memory + (state.disk?.allEntries().filter { !known.contains(CachedEntry.key(for: $0.url)) } ?? [])
        }
    }

    /// The disk index's schema (nil without a disk tier), for the golden-schema test.
    package func schemaDump() throws -> String? { try state.withLock { try $0.disk?.schemaDump() } }

    public var memoryUsage: Int { state.withLock { $0.memoryUsage } }
    public var diskUsage: Int { state.withLock { $0.disk?.totalSize() ?? 0 } }

    // MARK: Writing

    /// Starts storing a response; its body is appended as it arrives and the entry replaces
    /// the old one only at ``ResponseCacheWriter/finish()``.
    public func makeWriter(for entry: CachedEntry) -> ResponseCacheWriter {
        let onDisk =
            entry.storagePolicy == .allowed && configuration.directory != nil
            && (entry.url.scheme?.lowercased() != "https" || configuration.storesSecureResponsesOnDisk)
        let file = onDisk ? state.withLock { $0.disk?.newBodyFile() } : nil
        return ResponseCacheWriter(cache: self, entry: entry, file: file)
    }

    /// Stores a whole response at once.
    public func store(_ entry: CachedEntry, body: Data) {
        let writer = makeWriter(for: entry)
        writer.append(body)
        writer.finish()
    }

    /// The stored response after a validation (a 304): its fields and times change, the body
    /// stays.
    public func update(_ url: URL, response: StoredResponse) {
        let key = CachedEntry.key(for: url)
        state.withLock { state in
            if var hit = state.memory[key] {
                hit.entry.response = response
                state.memory[key] = hit
            }
            state.disk?.update(key, response: response)
        }
    }

    func commit(_ entry: CachedEntry, memoryBody: Data?, diskFile: DiskIndex.BodyFile?) {
        guard entry.storagePolicy != .notAllowed else { return }
        let key = CachedEntry.key(for: entry.url)
        state.withLock { state in
            state.clock += 1
            if let old = state.memory.removeValue(forKey: key) { state.memoryUsage -= old.body.count }
            if let memoryBody, memoryBody.count <= configuration.memoryCapacity / 8 {
                state.memory[key] = MemoryEntry(entry: entry, body: memoryBody, lastAccess: state.clock)
                state.memoryUsage += memoryBody.count
                evictMemory(&state)
            }
            if let diskFile, let disk = state.disk {
                disk.insert(key, entry, body: diskFile)
                disk.evict(toFit: configuration.diskCapacity)
            } else {
                // Not stored on disk this time: an older disk copy must not answer either.
                state.disk?.remove([key])
            }
        }
    }

    private func evictMemory(_ state: inout State) {
        while state.memoryUsage > configuration.memoryCapacity,
            let oldest = state.memory.min(by: { $0.value.lastAccess < $1.value.lastAccess })
        {
            state.memory[oldest.key] = nil
            state.memoryUsage -= oldest.value.body.count
        }
    }

    // MARK: Removing

    public func remove(_ url: URL) {
        let key = CachedEntry.key(for: url)
        state.withLock { state in
            if let old = state.memory.removeValue(forKey: key) { state.memoryUsage -= old.body.count }
            state.disk?.remove([key])
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
            for (key, value) in state.memory where value.entry.created >= date {
                state.memory[key] = nil
                state.memoryUsage -= value.body.count
            }
            state.disk?.removeEntries(since: date)
        }
    }
}

/// A response's body on its way into the cache: appended as it arrives, then committed or
/// dropped. Until ``finish()`` nothing of it is visible.
public final class ResponseCacheWriter: @unchecked Sendable {
    // @unchecked: used by one loading connection at a time (its transfer's thread).
    private let cache: ResponseCache
    private var entry: CachedEntry
    private var file: DiskIndex.BodyFile?
    private var memoryBody: Data? = Data()
    private var size = 0
    private var failed = false

    init(cache: ResponseCache, entry: CachedEntry, file: DiskIndex.BodyFile?) {
        self.cache = cache
        self.entry = entry
        self.file = file
    }

    public func append(_ data: Data) {
        guard !failed else { return }
        size += data.count
        // A body too large for the memory tier is not kept there. (Appended in place: a copy
        // taken out of the optional would be copied whole at each append.)
        if size > cache.configuration.memoryCapacity / 8 {
            memoryBody = nil
        } else {
            memoryBody?.append(data)
        }
        if let file, !file.write(data) {
            file.discard()
            self.file = nil
        }
        if memoryBody == nil, file == nil { failed = true }
    }

    /// The body so far, for the application to look at before it is stored: in memory when
    /// small, else the partial file mapped (never read whole into memory).
    public func bodyForInspection() -> Data {
        if let memoryBody { return memoryBody }
        guard let file else { return Data() }
        return (try? Data(contentsOf: file.partial, options: .alwaysMapped)) ?? Data()
    }

    /// Makes the response the stored one for its URL.
    public func finish() {
        guard !failed else { return }
        entry.bodySize = size
        if let file, !file.complete() { self.file = nil }
        cache.commit(entry, memoryBody: memoryBody, diskFile: file)
    }

    /// Drops what was written (a failed or cancelled load).
    public func cancel() {
        failed = true
        file?.discard()
        file = nil
    }
}

/// Why the cache could not be opened.
public struct ResponseCacheError: Error, Sendable, CustomStringConvertible {
    public var description: String

    init(_ description: String) { self.description = description }
}
