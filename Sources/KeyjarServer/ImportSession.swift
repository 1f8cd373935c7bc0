import KeyjarCore
import KeyjarProtocol

/// A cookie file imported over one connection in batches and planned as one import
/// (``CookieImportPlan``): subscribers and the change log get the net change of the whole file,
/// committed when the importer says the file has ended, never what one batch adds and a later
/// one evicts.
///
/// `beginImport` opens it, every `importCookies` batch with a `firstLine` after that goes into
/// the plan, and `finishImport` commits it. A keyjard that predates this refuses `beginImport`
/// as a malformed message; the importer then sends its batches as imports of their own.
///
/// Nothing of the file is committed before its end: a batch's reply tells what the batch held
/// and carries no sequence number. A connection that closes before the end (the importer
/// interrupted) leaves the store as it was.
enum ImportSession {
    /// Waiting for the next batch or the end, with the plan so far and the jar generation it
    /// was begun at (``StoreService/State/jarGeneration``).
    case open(plan: CookieImportPlan, generation: UInt64)
    /// A batch is being tried off the event loop; the plan is with it.
    case trying(generation: UInt64)

    /// The most imports planned at once: each holds a trial jar, as large as the jar's limits.
    static let maximumOpen = 16

    /// What an `importCookies` request asks for.
    enum Step: Equatable {
        /// A whole file or a batch of its own, committed before its reply.
        case whole
        /// The next batch of the import open on the connection.
        case batch

        init(firstLine: Int?, hasOpenImport: Bool) {
            self = hasOpenImport && firstLine != nil ? .batch : .whole
        }
    }
}

/// The imports open on keyjard's connections, one at most per connection: which request each
/// is ready for, and what a request it is not ready for is told. The service keeps one and
/// changes it only through these methods, on its event loop; `ImportSessionsTests` drives it
/// without a socket.
struct ImportSessions {
    /// Why a request about an import is refused.
    enum Refusal: Error, Equatable {
        /// ``ImportSession/maximumOpen`` imports are open on other connections.
        case tooMany
        /// A batch arrived while the previous one is still being tried.
        case batchStillBeingRead
        /// The end arrived while the last batch is still being tried.
        case lastBatchStillBeingRead
        /// The end arrived on a connection with no import open.
        case notBegun

        /// What the client is answered.
        var wireError: WireError {
            switch self {
            case .tooMany: WireError(code: WireError.overloaded, message: "too many cookie imports are under way")
            case .batchStillBeingRead:
                WireError(code: WireError.invalidArgument, message: "the import's previous batch is still being read")
            case .lastBatchStillBeingRead:
                WireError(code: WireError.invalidArgument, message: "the import's last batch is still being read")
            case .notBegun:
                WireError(code: WireError.invalidArgument, message: "no import was begun on this connection")
            }
        }
    }

    private var sessions: [UInt64: ImportSession] = [:]

    /// How many imports are open.
    var count: Int { sessions.count }

    /// What an `importCookies` request on connection `id` asks for.
    func step(firstLine: Int?, on id: UInt64) -> ImportSession.Step {
        ImportSession.Step(firstLine: firstLine, hasOpenImport: sessions[id] != nil)
    }

    /// Opens an import on `id` with the plan `plan()` makes, begun at the jar's `generation`,
    /// dropping one left open there.
    mutating func begin(on id: UInt64, generation: UInt64, _ plan: () -> CookieImportPlan) throws(Refusal) {
        guard sessions[id] != nil || sessions.count < ImportSession.maximumOpen else { throw .tooMany }
        sessions[id] = .open(plan: plan(), generation: generation)
    }

    /// The plan of `id`'s import, for its next batch to be tried on; the import holds no other
    /// reference to it until ``batchTried(on:plan:generation:)`` (so that its trial jar is
    /// changed in place rather than copied on write).
    mutating func takeForBatch(on id: UInt64) throws(Refusal) -> (plan: CookieImportPlan, generation: UInt64) {
        guard case .open(let plan, let generation) = sessions[id] else { throw .batchStillBeingRead }
        sessions[id] = .trying(generation: generation)
        return (plan, generation)
    }

    /// A batch was tried: the import is open again with `plan`, unless it ended meanwhile
    /// (its connection closed).
    mutating func batchTried(on id: UInt64, plan: CookieImportPlan, generation: UInt64) {
        guard case .trying? = sessions[id] else { return }
        sessions[id] = .open(plan: plan, generation: generation)
    }

    /// The import's end: its plan, to be committed. The import is closed either way: an end
    /// that comes while the last batch is still being tried drops it.
    mutating func finish(on id: UInt64) throws(Refusal) -> (plan: CookieImportPlan, generation: UInt64) {
        switch sessions.removeValue(forKey: id) {
        case .open(let plan, let generation)?: return (plan, generation)
        case .trying?: throw .lastBatchStillBeingRead
        case nil: throw .notBegun
        }
    }

    /// Drops `id`'s import (its connection closed, or a batch failed): none of it was committed.
    mutating func end(on id: UInt64) {
        sessions[id] = nil
    }

    mutating func endAll() {
        sessions.removeAll()
    }
}
