import KeyjarCore

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
