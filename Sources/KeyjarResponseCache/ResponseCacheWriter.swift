public import Foundation

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
