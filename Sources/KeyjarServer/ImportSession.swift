import KeyjarCore

/// A cookie file imported over one connection in batches and planned as one import
/// (``CookieImportPlan``): subscribers and the change log get the net change of the whole file,
/// committed when the importer says the file has ended, never what one batch adds and a later
/// one evicts.
///
/// The protocol has no message for it, so the importer marks it in `importCookies` requests
/// that mean nothing else: an empty text with `firstLine` 0 (there is no line 0) begins it,
/// every batch with a `firstLine` after that goes into the plan, and an empty text with a
/// `firstLine` from 1 on ends it. A keyjard that predates this imports nothing for either mark
/// and each batch as it comes, so an importer using it works with both.
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
        /// Begin a planned import (any open one on the connection is dropped).
        case begin
        /// The next batch of the open import.
        case batch
        /// The end of the open import: commit its plan.
        case finish

        init(textIsEmpty: Bool, firstLine: Int?, hasOpenImport: Bool) {
            switch (textIsEmpty, firstLine) {
            case (true, 0?): self = .begin
            case (_, nil): self = .whole
            case (true, _?): self = hasOpenImport ? .finish : .whole
            case (false, _?): self = hasOpenImport ? .batch : .whole
            }
        }
    }
}
