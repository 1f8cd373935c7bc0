public import Foundation
public import KeyjarHTTPCache
import KeyjarLocks

extension ResponseCache {
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
            old.body.close()
            return commit(entry, memoryBody: memoryBody, diskFile: diskFile)
        }
        let newBody: CachedBody? =
            memoryBody.map { .data($0) }
            ?? diskFile.flatMap { FileHandle(forReadingAtPath: $0.finalURL.path) }.map {
                .file($0, size: entry.bodySize)
            }
        guard let newBody else {
            old.body.close()
            return commit(entry, memoryBody: memoryBody, diskFile: diskFile)
        }
        let bodies = [old.body, newBody]
        let writer = makeWriter(for: combined, combiningPieces: false)
        let copied = segments.allSatisfy { Self.copy($0, from: bodies[$0.piece], to: writer) }
        for body in bodies { body.close() }
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
}
