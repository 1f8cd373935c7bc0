import Foundation

/// A download's lifecycle as a value: which connection is the current one, whether the partial
/// file takes the body, and how the download ended. ``LoaderDownload`` feeds it what happened
/// and does what it answers (file I/O, delegate messages, cancelling a connection); it does no
/// I/O itself, so every state × event is tested without a server or a file
/// (`DownloadStateMachineTests`).
///
/// Generic over the connection and the files only so that tests can stand in tokens for them:
/// the machine compares connections by identity and hands files back, nothing more.
///
/// ```
/// idle ─start─▶ connecting ─connectionMade─▶ awaitingResponse
/// awaitingResponse ─startOver─▶ connecting           (the server cannot continue: whole again)
/// awaitingResponse ─verdict: missing, then fail─▶ failed (an error page is not the file)
/// awaitingResponse ─resumeAccepted / filesReady─▶ receiving
/// awaitingResponse ─entityAlreadyComplete─▶ alreadyComplete
/// awaitingResponse, receiving, alreadyComplete ─connectionFinished─▶ committing ─committed─▶ finished
/// every state but the three ends ─fail─▶ failed, ─cancel─▶ cancelled
/// ```
struct DownloadStateMachine<Connection: AnyObject, Files: AnyObject> {
    enum State {
        /// Made, not started.
        case idle
        /// Started; the request is being prepared (first, or again from the first byte after
        /// the server could not continue the partial data). No connection is current.
        case connecting
        /// A connection loads; its response has not been accepted yet.
        case awaitingResponse(Connection)
        /// The response was accepted and the partial file is open: the body goes into it.
        case receiving(Connection)
        /// A resumed download's partial data turned out to be the whole entity (a 416): the
        /// body the server sends with it is not saved.
        case alreadyComplete(Connection)
        /// Everything arrived; the partial file is being synced (and decoded) outside the lock,
        /// then moved into place. The files are the shell's meanwhile.
        case committing(Connection)
        /// Saved under its destination.
        case finished
        /// Ended with an error (the delegate was told).
        case failed
        /// Ended by `cancel()`: the delegate hears nothing more, but that a challenge it held
        /// on the connection that was loading (if any) is cancelled too.
        case cancelled(Connection?)
    }

    /// What the request to send needs (`connect`).
    enum Preparation {
        /// The whole entity is asked for.
        case whole
        /// The partial data of the download being continued is opened (the files if already
        /// made, else new ones for `destination`); report it with ``partialOpened(_:length:)``.
        case continuing(Files?, destination: (path: String, allowOverwrite: Bool))
    }

    /// Where the body of an accepted response goes.
    enum FileChoice {
        /// The partial data that was to be continued is emptied: the entity comes whole.
        case restart(Files)
        /// New files are made for the destination.
        case create(destination: (path: String, allowOverwrite: Bool))
        /// The delegate chose no destination: the download fails.
        case noDestination
    }

    /// What a response to the request for the whole entity means.
    enum ResponseVerdict: Equatable {
        /// It is the entity: it is saved.
        case save
        /// An HTTP status of 400 or more: the server has no such file, and its error page is
        /// not saved in its place; the download fails.
        case missing(statusCode: Int)
    }

    /// What ending with an error does with the partial data.
    struct Failure {
        /// The files to keep (with `resumeData`) or to remove.
        var files: Files?
        /// Whether `files` are kept for `resumeData`.
        var keepsFiles: Bool
        /// Hands over what continues the download; nil when nothing is kept.
        var resumeData: Data?
    }

    /// What `cancel()` stops and cleans up.
    struct Cancellation {
        var connection: Connection?
        var files: Files?
        /// What continues the download, for `cancelProducingResumeData()`.
        var record: DownloadResumeData?
    }

    private(set) var state = State.idle
    /// The download this one continues, if any.
    let resuming: DownloadResumeData?
    /// Where the data is saved, once decided (by a resumed download, the delegate or the
    /// caller): the first choice stands (``setDestination(_:allowOverwrite:)``).
    private(set) var destination: (path: String, allowOverwrite: Bool)?
    /// Whether a failed download removes its partial data instead of keeping it to continue.
    private(set) var deletesFileUponFailure = false
    /// Whether an error page (HTTP 400 or more) is saved as the file instead of failing the
    /// download: Keyjar's own, for a curl-like tool; NSURLDownload has no such choice.
    private(set) var savesErrorResponses = false
    /// How an encoded file type is decoded once complete (the delegate's choice).
    private(set) var decoding: SourceDecoding?
    /// The partial data, once opened; nil again once taken to be committed or when the
    /// download ended.
    private(set) var files: Files?
    /// Set while the entity can be resumed: written beside the destination.
    private(set) var record: DownloadResumeData?
    /// The first byte asked for with `Range`: 0 for the whole entity, -1 once the server could
    /// not continue (the entity is then asked for whole, and never continued again).
    private(set) var offset: Int64 = 0
    /// After a failure, what continues the download.
    private(set) var resumeData: Data?

    init(resuming: DownloadResumeData?) {
        self.resuming = resuming
        if let resuming { destination = (resuming.destinationPath, resuming.allowOverwrite) }
    }

    /// The caller's choice: a failed download removes its partial data (true) or keeps it.
    mutating func deleteFileUponFailure(_ deletes: Bool) { deletesFileUponFailure = deletes }

    /// The caller's choice: an error page is saved as the file (true) or fails the download.
    mutating func saveErrorResponses(_ saves: Bool) { savesErrorResponses = saves }

    /// The delegate's choice of how the complete file is decoded (nil: as it came).
    mutating func decode(with decoding: SourceDecoding?) { self.decoding = decoding }

    /// Whether the download ended: the delegate hears nothing more.
    var isEnded: Bool {
        switch state {
        case .finished, .failed, .cancelled: true
        case .idle, .connecting, .awaitingResponse, .receiving, .alreadyComplete, .committing: false
        }
    }

    /// The connection whose messages count, if any.
    var connection: Connection? {
        switch state {
        case .awaitingResponse(let connection), .receiving(let connection), .alreadyComplete(let connection),
            .committing(let connection):
            connection
        case .idle, .connecting, .finished, .failed, .cancelled:
            nil
        }
    }

    /// Whether the delegate hears that a challenge it held on `connection` was cancelled: while
    /// `connection` is the current one, and after `cancel()` stopped it (the one message that
    /// may follow `cancel()`, as for a connection, so that a delegate can close its prompt).
    func hearsChallengeCancellation(on connection: Connection) -> Bool {
        if case .cancelled(let cancelled) = state { return cancelled === connection }
        return isCurrent(connection)
    }

    /// Whether `connection` is the one loading and the download has not ended.
    func isCurrent(_ connection: Connection) -> Bool {
        switch state {
        case .awaitingResponse(let current), .receiving(let current), .alreadyComplete(let current):
            current === connection
        case .idle, .connecting, .committing, .finished, .failed, .cancelled:
            false
        }
    }

    /// `setDestination(_:allowOverwrite:)`: NSURLDownload takes the first and ignores every
    /// later one; a resumed download's destination is its record's. False when ignored (also
    /// once the download ended).
    mutating func setDestination(_ path: String, allowOverwrite: Bool) -> Bool {
        guard destination == nil, !isEnded else { return false }
        destination = (path, allowOverwrite)
        return true
    }

    // MARK: Starting and connecting

    /// `start()`: true the first time, before any cancel (the shell then tells the delegate and
    /// connects).
    mutating func start() -> Bool {
        guard case .idle = state else { return false }
        state = .connecting
        return true
    }

    /// The request is about to be made; nil once the download ended (or before it started).
    func prepareRequest() -> Preparation? {
        guard case .connecting = state else { return nil }
        guard resuming != nil, offset >= 0, let destination else { return .whole }
        return .continuing(files, destination: destination)
    }

    /// The partial data to continue was opened: its length is where the request starts.
    mutating func partialOpened(_ files: Files, length: Int64) {
        guard case .connecting = state else { return }
        self.files = files
        record = resuming
        offset = length
    }

    /// The connection for the request was made; false when the download ended meanwhile (the
    /// connection is then not started).
    mutating func connectionMade(_ connection: Connection) -> Bool {
        guard case .connecting = state else { return false }
        state = .awaitingResponse(connection)
        return true
    }

    /// The server cannot continue from the partial data's end: true when `connection` is to be
    /// cancelled and the whole entity asked for.
    mutating func startOver(after connection: Connection) -> Bool {
        guard case .awaitingResponse(let current) = state, current === connection else { return false }
        state = .connecting
        offset = -1
        return true
    }

    // MARK: The response

    /// The response `connection` received to the request for the whole entity (a 200 to a
    /// resume included): nil when `connection` is no longer current. `statusCode` is nil for a
    /// scheme without one (`file:`, `ftp:`, `data:`; their missing files fail the load itself).
    func verdict(onStatus statusCode: Int?, on connection: Connection) -> ResponseVerdict? {
        guard case .awaitingResponse(let current) = state, current === connection else { return nil }
        guard let statusCode, statusCode >= 400, !savesErrorResponses else { return .save }
        return .missing(statusCode: statusCode)
    }

    /// A resumed request was answered with a 200: the entity is saved from its first byte.
    mutating func entityComesWhole(on connection: Connection) {
        guard case .awaitingResponse(let current) = state, current === connection else { return }
        offset = 0
    }

    /// A 206 from the right byte of the same entity: the body continues the partial data.
    /// False when `connection` is no longer current.
    mutating func resumeAccepted(on connection: Connection) -> Bool {
        guard case .awaitingResponse(let current) = state, current === connection, files != nil else {
            return false
        }
        state = .receiving(connection)
        return true
    }

    /// A 416 says the partial data is the whole entity: what follows is not saved.
    mutating func entityAlreadyComplete(on connection: Connection) {
        guard case .awaitingResponse(let current) = state, current === connection else { return }
        state = .alreadyComplete(connection)
    }

    /// Where the body of the accepted response goes; nil when `connection` is no longer current
    /// (the delegate cancelled meanwhile).
    func chooseFiles(for connection: Connection) -> FileChoice? {
        guard case .awaitingResponse(let current) = state, current === connection else { return nil }
        if let files { return .restart(files) }
        guard let destination else { return .noDestination }
        return .create(destination: destination)
    }

    /// The files of ``chooseFiles(for:)`` are ready: the body goes into them.
    mutating func filesReady(_ files: Files, on connection: Connection) {
        guard case .awaitingResponse(let current) = state, current === connection else { return }
        self.files = files
        state = .receiving(connection)
    }

    /// The files whose resume record `connection`'s response decides; nil when it is no longer
    /// current.
    func recordedFiles(on connection: Connection) -> Files? {
        guard case .receiving(let current) = state, current === connection else { return nil }
        return files
    }

    /// The record that lets the download be continued (nil: it cannot be).
    mutating func setRecord(_ record: DownloadResumeData?) {
        guard !isEnded else { return }
        self.record = record
    }

    // MARK: The body and the end

    /// Body bytes arrived: the files to append them to, or nil when they are not saved (not the
    /// current connection, already complete, ended).
    func dataArrived(on connection: Connection) -> Files? {
        guard case .receiving(let current) = state, current === connection else { return nil }
        return files
    }

    /// The connection finished: the files (nil when no response was accepted) and decoding to
    /// commit outside the lock; nil when `connection` is not current.
    mutating func connectionFinished(_ connection: Connection) -> (files: Files?, decoding: SourceDecoding?)? {
        guard isCurrent(connection) else { return nil }
        defer { files = nil }
        state = .committing(connection)
        return (files, decoding)
    }

    /// The data is synced and decoded: true when it is to be moved into place, false when the
    /// download was cancelled meanwhile (the shell removes the data).
    func commitMayFinish() -> Bool {
        guard case .committing = state else { return false }
        return true
    }

    /// The data is in place.
    mutating func committed() {
        guard case .committing = state else { return }
        state = .finished
        record = nil
    }

    /// The data could not be moved into place (or decoded): the files are back for the failure
    /// to keep or remove; data that cannot be decoded is not worth continuing.
    mutating func commitFailed(_ files: Files, undecodable: Bool) {
        guard case .committing = state else { return }
        if undecodable { record = nil }
        self.files = files
    }

    /// Ends the download with an error: nil when it had ended already.
    mutating func fail() -> Failure? {
        guard !isEnded else { return nil }
        var failure = Failure(files: files, keepsFiles: false, resumeData: nil)
        if files != nil, let record, !deletesFileUponFailure {
            failure.keepsFiles = true
            failure.resumeData = record.encoded()
            resumeData = failure.resumeData
        }
        state = .failed
        files = nil
        return failure
    }

    /// `cancel()`: what to stop and clean up; nil when the download had ended already.
    mutating func cancel() -> Cancellation? {
        guard !isEnded else { return nil }
        defer { files = nil }
        let cancellation = Cancellation(connection: connection, files: files, record: record)
        state = .cancelled(cancellation.connection)
        return cancellation
    }
}
