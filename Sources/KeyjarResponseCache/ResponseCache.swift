public import Foundation
import Glibc
import KeyjarFiles
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
    private func lookupPiece(key: String, urlKey: String) -> (entry: CachedEntry, body: CachedBody)? {
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

    // MARK: Writing

    /// Starts storing a response; its body is appended as it arrives and the entry replaces
    /// the old one only at ``ResponseCacheWriter/finish()``.
    public func makeWriter(for entry: CachedEntry) -> ResponseCacheWriter {
        makeWriter(for: entry, combiningPieces: true)
    }

    /// With `combiningPieces` false, a piece replaces the variant's stored piece as it is (a
    /// combination's result, which must not be combined again).
    private func makeWriter(for entry: CachedEntry, combiningPieces: Bool) -> ResponseCacheWriter {
        let onDisk =
            entry.storagePolicy == .allowed && configuration.directory != nil
            && (entry.url.scheme?.lowercased() != "https" || configuration.storesSecureResponsesOnDisk)
        // Created outside the cache's lock: file creation is I/O, and a collector of this
        // process may hold the new file's lock while it waits for the cache's.
        let bodies = onDisk ? state.withLock { $0.disk?.bodies } : nil
        let file = bodies.flatMap { DiskIndex.BodyFile.create(in: $0) }
        return ResponseCacheWriter(cache: self, entry: entry, file: file, combiningPieces: combiningPieces)
    }

    /// Stores a whole response at once.
    public func store(_ entry: CachedEntry, body: Data) {
        let writer = makeWriter(for: entry)
        writer.append(body)
        writer.finish()
    }

    /// The stored variant whose URL is `url` and whose Vary values are `response`'s, after a
    /// validation (a 304): its fields and times change, the body stays.
    public func update(_ url: URL, response: StoredResponse) {
        let key = CachedEntry.key(for: url, varyValues: response.varyValues)
        update(key: key, urlKey: CachedEntry.key(for: url), response: response, ifStored: nil)
    }

    /// The stored variant `entry` (as a lookup gave it) after a validation: its fields and
    /// times become `response`'s (its Vary values stay the variant's), the body stays. Only
    /// while it is still that response: one stored since (another process's load, with a body
    /// of its own) is left as it is.
    public func update(_ entry: CachedEntry, response: StoredResponse) {
        var response = response
        response.varyValues = entry.response.varyValues
        update(
            key: entry.key,
            urlKey: CachedEntry.key(for: entry.url),
            response: response,
            ifStored: entry.response.headers
        )
    }

    private func update(key: String, urlKey: String, response: StoredResponse, ifStored stored: HTTPHeaderFields?) {
        state.withLock { state in
            if var hit = state.memory[urlKey]?[key], stored == nil || hit.entry.response.headers == stored {
                hit.entry.response = response
                state.memory[urlKey]?[key] = hit
            }
            state.disk?.update(key, response: response, ifStored: stored)
        }
    }

    func commit(_ entry: CachedEntry, memoryBody: Data?, diskFile: DiskIndex.BodyFile?) {
        guard entry.storagePolicy != .notAllowed else {
            diskFile?.discard()
            return
        }
        let key = entry.key
        let urlKey = CachedEntry.key(for: entry.url)
        state.withLock { state in
            state.clock += 1
            if let old = state.memory[urlKey]?.removeValue(forKey: key) { state.memoryUsage -= old.body.count }
            // A complete response makes the variant's piece useless (RFC 9111 §3.4 would only
            // rebuild what is stored now): it goes, whatever its validator.
            if !entry.isPiece {
                let pieceKey = CachedEntry.pieceKey(for: entry.url, varyValues: entry.response.varyValues)
                if let piece = state.memory[urlKey]?.removeValue(forKey: pieceKey) {
                    state.memoryUsage -= piece.body.count
                }
                state.disk?.remove(key: pieceKey)
            }
            if let memoryBody, memoryBody.count <= configuration.memoryCapacity / 8 {
                state.memory[urlKey, default: [:]][key] = MemoryEntry(
                    entry: entry,
                    body: memoryBody,
                    lastAccess: state.clock
                )
                state.memoryUsage += memoryBody.count
                evictMemory(&state)
            }
            if state.memory[urlKey]?.isEmpty == true { state.memory[urlKey] = nil }
            if let diskFile, let disk = state.disk {
                disk.insert(entry, body: diskFile)
                disk.evict(toFit: configuration.diskCapacity)
            } else {
                diskFile?.discard()
                // Not stored on disk this time: an older disk copy must not answer either.
                state.disk?.remove(key: key)
            }
        }
    }

    /// A piece (a 206) at the end of its load (RFC 9111 §3.3, §3.4). When the variant has a
    /// piece of the same representation (same strong ETag, same complete length) that it
    /// touches or overlaps, the two are combined (``ByteRanges/combine(_:)``): their bytes,
    /// the newest where they overlap, go into a new body file under the new piece's fields, or,
    /// when they cover the representation, the variant's complete response (a 200), and the
    /// piece goes. Otherwise the new piece replaces the one there was. Stored bodies are only
    /// read (through a descriptor opened first: another process replacing them meanwhile does
    /// not change what is read), never changed; two processes combining at once each store a
    /// whole, consistent result, the last one's staying.
    func commitPiece(_ entry: CachedEntry, memoryBody: Data?, diskFile: DiskIndex.BodyFile?) {
        // A body that is not the range its Content-Range names is no piece of it.
        guard let piece = StoredPiece(entry.response), piece.range.count == entry.bodySize else {
            diskFile?.discard()
            return
        }
        guard entry.storagePolicy != .notAllowed,
            let old = lookupPiece(key: entry.key, urlKey: CachedEntry.key(for: entry.url)),
            let oldPiece = StoredPiece(old.entry.response)
        else { return commit(entry, memoryBody: memoryBody, diskFile: diskFile) }
        var combined = entry
        let segments: [PieceSegment]
        switch ByteRanges.combine([oldPiece, piece]) {
        case .complete(let headers, let found):
            combined.response.statusCode = 200
            combined.response.headers = headers
            segments = found
        case .piece(_, let headers, let found):
            combined.response.headers = headers
            segments = found
        case .partial, .mismatch:
            Self.closeBody(old.body)
            return commit(entry, memoryBody: memoryBody, diskFile: diskFile)
        }
        let newBody: CachedBody? =
            memoryBody.map { .data($0) }
            ?? diskFile.flatMap { FileHandle(forReadingAtPath: $0.finalURL.path) }.map {
                .file($0, size: entry.bodySize)
            }
        guard let newBody else {
            Self.closeBody(old.body)
            return commit(entry, memoryBody: memoryBody, diskFile: diskFile)
        }
        let bodies = [old.body, newBody]
        let writer = makeWriter(for: combined, combiningPieces: false)
        let copied = segments.allSatisfy { Self.copy($0, from: bodies[$0.piece], to: writer) }
        bodies.forEach(Self.closeBody)
        if copied {
            diskFile?.discard()
            writer.finish()
        } else {
            // A stored body shorter than its row says: the new piece alone is still whole.
            writer.cancel()
            commit(entry, memoryBody: memoryBody, diskFile: diskFile)
        }
    }

    /// Appends a segment's bytes (`segment.offset` on in `body`) to `writer`; false when the
    /// body is too short.
    private static func copy(_ segment: PieceSegment, from body: CachedBody, to writer: ResponseCacheWriter) -> Bool {
        switch body {
        case .data(let data):
            let start = data.startIndex + segment.offset
            guard start + segment.range.count <= data.endIndex else { return false }
            writer.append(data[start..<(start + segment.range.count)])
            return true
        case .file(let handle, _):
            do {
                try handle.seek(toOffset: UInt64(segment.offset))
                var left = segment.range.count
                while left > 0 {
                    guard let chunk = try handle.read(upToCount: min(left, 256 << 10)), !chunk.isEmpty else {
                        return false
                    }
                    writer.append(chunk)
                    left -= chunk.count
                }
                return true
            } catch {
                return false
            }
        }
    }

    private static func closeBody(_ body: CachedBody) {
        if case .file(let handle, _) = body { try? handle.close() }
    }

    private func evictMemory(_ state: inout State) {
        while state.memoryUsage > configuration.memoryCapacity {
            var oldest: (urlKey: String, key: String, entry: MemoryEntry)?
            for (urlKey, variants) in state.memory {
                for (key, entry) in variants where oldest.map({ entry.lastAccess < $0.entry.lastAccess }) ?? true {
                    oldest = (urlKey, key, entry)
                }
            }
            guard let oldest else { return }
            state.memory[oldest.urlKey]?[oldest.key] = nil
            if state.memory[oldest.urlKey]?.isEmpty == true { state.memory[oldest.urlKey] = nil }
            state.memoryUsage -= oldest.entry.body.count
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
    /// Whether a piece is combined with the stored one at ``finish()``.
    private let combiningPieces: Bool

    init(cache: ResponseCache, entry: CachedEntry, file: DiskIndex.BodyFile?, combiningPieces: Bool) {
        self.cache = cache
        self.entry = entry
        self.file = file
        self.combiningPieces = combiningPieces
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

    /// Makes the response the stored one for its URL and Vary values (a piece: combined with
    /// the stored piece, ``ResponseCache/commitPiece(_:memoryBody:diskFile:)``).
    public func finish() {
        guard !failed else { return }
        entry.bodySize = size
        if let file, !file.complete() { self.file = nil }
        if entry.isPiece, combiningPieces {
            cache.commitPiece(entry, memoryBody: memoryBody, diskFile: file)
        } else {
            cache.commit(entry, memoryBody: memoryBody, diskFile: file)
        }
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
