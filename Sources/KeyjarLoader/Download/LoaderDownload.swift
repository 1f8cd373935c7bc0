public import Foundation
public import FoundationNetworking
import Glibc
import KeyjarLocks

/// A download straight to a file with NSURLDownload's delegate contract, on a
/// ``LoaderConnection``: the loader's cookies, credentials, redirects and challenges apply
/// exactly as to any load.
///
/// The data goes to `NAME.keyjar-part` beside the destination and is renamed to the
/// destination once complete, so a failed, cancelled or killed download never leaves a
/// truncated file under the wanted name. When the server names a validator (a strong ETag, or
/// Last-Modified when it sends no ETag), a record beside it (`NAME.keyjar-resume`) lets a later download, in this
/// process or another, continue with `Range` and `If-Range`: only the remaining bytes are
/// asked for, and a changed entity comes whole instead.
///
/// ```swift
/// let download = loader.download(with: URLRequest(url: url), delegate: self, directory: "/home/me/Downloads")
/// // … the delegate hears didCreateDestination("/home/me/Downloads/report.pdf"), then downloadDidFinish.
/// ```
public final class LoaderDownload: @unchecked Sendable {
    public let request: URLRequest
    public let loader: URLLoader
    /// Where the default `decideDestination` puts the file.
    public let directory: String
    let delegateQueue: DispatchQueue?
    /// The download this one continues, if any.
    let resuming: DownloadResumeData?

    struct State {
        var delegate: (any LoaderDownloadDelegate)?
        var started = false
        var ended = false
        var destination: (path: String, allowOverwrite: Bool)?
        var files: DownloadFiles?
        var decoding: SourceDecoding?
        /// Set while the entity can be resumed: written beside the destination.
        var record: DownloadResumeData?
        var deletesFileUponFailure = false
        var connection: LoaderConnection?
        /// The first byte asked for with `Range` (0: the whole entity).
        var offset: Int64 = 0
        var resumeData: Data?
        /// A resumed download whose partial data turned out to be the whole entity (a 416).
        var alreadyComplete = false
    }
    let state: Locked<State>

    init(
        request: URLRequest,
        loader: URLLoader,
        delegate: (any LoaderDownloadDelegate)?,
        delegateQueue: DispatchQueue?,
        directory: String,
        resuming: DownloadResumeData?
    ) {
        self.request = request
        self.loader = loader
        self.delegateQueue = delegateQueue
        self.directory = directory
        self.resuming = resuming
        var initial = State(delegate: delegate)
        if let resuming { initial.destination = (resuming.destinationPath, resuming.allowOverwrite) }
        state = Locked(initial)
    }

    /// Where the data is saved: call it from `decideDestination` (or before `start()`). Without
    /// `allowOverwrite`, an existing file is kept and a unique name is made beside it.
    public func setDestination(_ path: String, allowOverwrite: Bool) {
        let absolute =
            path.hasPrefix("/")
            ? path : (FileManager.default.currentDirectoryPath as NSString).appendingPathComponent(path)
        state.withLock { $0.destination = (absolute, allowOverwrite) }
    }

    /// The latest response head as it arrived (status line, then `Name: value` lines), for
    /// showing it; read it in `didReceive(response)` or `willResumeWith`.
    public var responseHeadLines: [String]? { state.withLock { $0.connection }?.responseHeadLines }

    /// The path the data is being saved for, once decided.
    public var destinationPath: String? { state.withLock { $0.files?.destination ?? $0.destination?.path } }

    /// Whether a failed download removes its partial data (true) or keeps it for `resumeData`
    /// (false, the default). Set it before `start()`.
    public var deletesFileUponFailure: Bool {
        get { state.withLock { $0.deletesFileUponFailure } }
        set { state.withLock { $0.deletesFileUponFailure = newValue } }
    }

    /// After a failure, what continues the download (`URLLoader.download(resumeData:…)`); nil
    /// when the server gave no validator or the partial data was removed.
    public var resumeData: Data? { state.withLock { $0.resumeData } }

    public func start() {
        let first = state.withLock { state -> Bool in
            defer { state.started = true }
            return !state.started && !state.ended
        }
        guard first else { return }
        onDelegateQueue {
            self.tellDelegate { $0.downloadDidBegin(self) }
            self.connect()
        }
    }

    /// Stops the download and removes everything it wrote. The delegate hears nothing more.
    public func cancel() {
        guard let (connection, files) = endForCancel() else { return }
        connection?.cancel()
        files?.discard()
    }

    /// Stops the download, keeping its partial data, and hands over what continues it (nil when
    /// it cannot be continued: then nothing is kept).
    public func cancelProducingResumeData() -> Data? {
        guard let (connection, files) = endForCancel() else { return nil }
        connection?.cancel()
        let record = state.withLock { $0.record }
        guard let record, let files else {
            files?.discard()
            return nil
        }
        files.keep()
        return record.encoded()
    }

    private func endForCancel() -> (LoaderConnection?, DownloadFiles?)? {
        state.withLock { state in
            guard !state.ended else { return nil }
            state.ended = true
            state.delegate = nil
            defer { state.files = nil }
            return (state.connection, state.files)
        }
    }

    // MARK: Talking to the delegate

    private func onDelegateQueue(_ work: @escaping @Sendable () -> Void) {
        if let delegateQueue { delegateQueue.async(execute: work) } else { work() }
    }

    /// Calls the delegate unless the download ended; never under the state's lock, so that the
    /// delegate may call back (`cancel()`, `setDestination`).
    func tellDelegate<Answer>(_ message: (any LoaderDownloadDelegate) -> Answer) -> Answer? {
        guard let delegate = state.withLock({ $0.ended ? nil : $0.delegate }) else { return nil }
        return message(delegate)
    }

    // MARK: The connection

    func connect() {
        var request = self.request
        // The bytes saved are the entity's own: a Content-Encoding decoded on the way would make
        // byte ranges meaningless.
        if request.value(forHTTPHeaderField: "Accept-Encoding") == nil {
            request.setValue("identity", forHTTPHeaderField: "Accept-Encoding")
        }
        let prepared: Result<Int64, DownloadFileError>? = state.withLock { state in
            guard !state.ended else { return nil }
            guard let resuming, state.offset >= 0, let destination = state.destination else { return .success(0) }
            let files =
                state.files ?? DownloadFiles(destination: destination.path, allowOverwrite: destination.allowOverwrite)
            do throws(DownloadFileError) {
                try files.open(continuing: true)
            } catch {
                return .failure(error)
            }
            state.files = files
            state.record = resuming
            state.offset = files.length
            return .success(files.length)
        }
        switch prepared {
        case nil:
            return
        case .failure(let error):
            fail(error, url: request.url)
            return
        case .success(let offset) where offset > 0:
            request.setValue("bytes=\(offset)-", forHTTPHeaderField: "Range")
            request.setValue(resuming?.validator, forHTTPHeaderField: "If-Range")
            request.cachePolicy = .reloadIgnoringLocalCacheData
        case .success:
            break
        }
        let connection = loader.connection(
            with: request,
            delegate: DownloadConnectionDelegate(download: self),
            delegateQueue: delegateQueue,
            startImmediately: false
        )
        let current = state.withLock { state -> Bool in
            guard !state.ended else { return false }
            state.connection = connection
            return true
        }
        if current { connection.start() }
    }

    /// The server cannot continue from the partial data's end: the whole entity is asked for.
    func startOver(after connection: LoaderConnection) {
        let again = state.withLock { state -> Bool in
            guard !state.ended, state.connection === connection else { return false }
            state.offset = -1
            state.connection = nil
            return true
        }
        guard again else { return }
        connection.cancel()
        connect()
    }

    func isCurrent(_ connection: LoaderConnection) -> Bool {
        state.withLock { !$0.ended && $0.connection === connection }
    }

    func received(_ response: URLResponse, on connection: LoaderConnection) {
        guard isCurrent(connection) else { return }
        let http = response as? HTTPURLResponse
        let offset = state.withLock { $0.offset }
        if offset > 0, let http {
            guard continueResuming(http, from: offset, on: connection) else { return }
            if http.statusCode != 200 { return }
            // A 200: the entity changed (If-Range failed) or ranges are not supported; it is
            // saved from its first byte.
            state.withLock { $0.offset = 0 }
        }
        tellDelegate { $0.download(self, didReceive: response) }
        guard decideDecoding(response, url: connection.currentRequest.url) else { return }
        let needsName = state.withLock { $0.files == nil && $0.destination == nil }
        if needsName {
            let suggested = SuggestedFilename.name(
                contentDisposition: http?.value(forHTTPHeaderField: "Content-Disposition"),
                url: response.url ?? request.url
            )
            let decoding = state.withLock { $0.decoding }
            let name = decoding?.decodedName(suggested) ?? suggested
            tellDelegate { $0.download(self, decideDestinationWithSuggestedFilename: name) }
        }
        let created: Result<String?, DownloadFileError>? = state.withLock { state in
            // The delegate may have cancelled meanwhile: then nothing is created.
            guard !state.ended, state.connection === connection else { return nil }
            do throws(DownloadFileError) {
                if let files = state.files {
                    try files.restart()
                    return .success(nil)
                }
                guard let destination = state.destination else {
                    return .failure(
                        DownloadFileError(message: "the delegate chose no destination", code: .cannotCreateFile)
                    )
                }
                let files = try Self.createFiles(for: destination)
                state.files = files
                return .success(files.destination)
            } catch {
                return .failure(error)
            }
        }
        switch created {
        case nil:
            return
        case .failure(let error):
            connection.cancel()
            fail(error, url: response.url)
            return
        case .success(let path):
            if let path { tellDelegate { $0.download(self, didCreateDestination: path) } }
        }
        if let error = keepRecord(of: response, on: connection) {
            connection.cancel()
            fail(error, url: response.url)
        }
    }

    /// A response to a request that continues partial data: whether the load goes on (a 206
    /// from the right byte of the same entity, or a 200 to save whole); otherwise this handles it.
    private func continueResuming(
        _ response: HTTPURLResponse,
        from offset: Int64,
        on connection: LoaderConnection
    ) -> Bool {
        let (validator, expectedLength) = state.withLock { ($0.record?.validator, $0.record?.expectedLength) }
        switch response.statusCode {
        case 206:
            let tag = response.value(forHTTPHeaderField: "ETag")
            let sameEntity = tag == nil || validator?.hasPrefix("\"") != true || tag == validator
            guard Self.contentRange(response)?.first == offset, sameEntity else {
                startOver(after: connection)
                return false
            }
            guard decideDecoding(response, url: connection.currentRequest.url) else { return false }
            tellDelegate { $0.download(self, willResumeWith: response, fromByte: offset) }
            return true
        case 416 where (Self.contentRange(response)?.length ?? expectedLength) == offset:
            // Everything had arrived already: what the server sends with its 416 is not saved.
            // (A 416 means If-Range matched: a changed entity would have come whole. Without
            // the `bytes */LENGTH` RFC 9110 asks for, as lighttpd sends it, the recorded length
            // tells.)
            state.withLock { $0.alreadyComplete = true }
            guard decideDecoding(response, url: connection.currentRequest.url) else { return false }
            tellDelegate { $0.download(self, willResumeWith: response, fromByte: offset) }
            return false
        case 416:
            startOver(after: connection)
            return false
        case 200:
            return true
        default:
            // An error page is not the entity: the partial data stays for another try.
            connection.cancel()
            fail(
                LoaderError.make(
                    .badServerResponse,
                    "The server answered HTTP \(response.statusCode) to the request to continue the download; the data so far is kept",
                    url: response.url
                ),
                url: response.url
            )
            return false
        }
    }

    /// Creates the partial file for a new download: without overwriting, under a name that
    /// neither a file nor another download's partial data has (created exclusively, so two
    /// downloads never share one).
    private static func createFiles(
        for destination: (path: String, allowOverwrite: Bool)
    ) throws(DownloadFileError) -> DownloadFiles {
        guard !destination.allowOverwrite else {
            let files = DownloadFiles(destination: destination.path, allowOverwrite: true)
            try files.open(continuing: false)
            return files
        }
        var excluded: Set<String> = []
        while true {
            let path = unused(destination.path, excluding: excluded)
            let files = DownloadFiles(destination: path, allowOverwrite: false)
            do throws(DownloadFileError) {
                try files.open(continuing: false, exclusive: true)
                return files
            } catch  where error.number == EEXIST && excluded.count < 1_000 {
                excluded.insert(path)
            }
        }
    }

    /// Asks the delegate whether to decode an encoded file type; false when the download failed
    /// because it cannot be.
    private func decideDecoding(_ response: URLResponse, url: URL?) -> Bool {
        guard let type = response.mimeType?.lowercased(), SourceDecoding.isEncodedFileType(type),
            tellDelegate({ $0.download(self, shouldDecodeSourceDataOfMIMEType: type) }) == true
        else {
            state.withLock { $0.decoding = nil }
            return true
        }
        do {
            let decoding = try SourceDecoding.decoding(forMIMEType: type)
            state.withLock { $0.decoding = decoding }
            return true
        } catch {
            let connection = state.withLock { $0.connection }
            connection?.cancel()
            fail(error, url: url)
            return false
        }
    }

    /// Writes (or removes) the record that lets the download be continued: only for a whole
    /// entity (a 200 to a request that asked for no range of its own) with a validator.
    private func keepRecord(of response: URLResponse, on connection: LoaderConnection) -> DownloadFileError? {
        state.withLock { state -> DownloadFileError? in
            guard !state.ended, state.connection === connection, let files = state.files else { return nil }
            guard let http = response as? HTTPURLResponse, http.statusCode == 200,
                (request.httpMethod ?? "GET").uppercased() == "GET",
                request.value(forHTTPHeaderField: "Range") == nil,
                let url = request.url,
                let validator = DownloadResumeData.validator(of: http)
            else {
                state.record = nil
                files.removeRecord()
                return nil
            }
            let record = DownloadResumeData(
                // A password in the URL stays out of the file: the resumed download's challenge
                // is answered as any other (credential storage, delegate).
                url: LoaderConnection.urlWithoutPassword(url),
                validator: validator,
                destinationPath: files.destination,
                allowOverwrite: files.allowOverwrite,
                expectedLength: response.expectedContentLength >= 0 ? response.expectedContentLength : nil
            )
            state.record = record
            do throws(DownloadFileError) {
                try files.writeRecord(record)
                return nil
            } catch {
                return error
            }
        }
    }

    func received(_ data: Data, on connection: LoaderConnection) {
        let written: Result<Int, DownloadFileError>? = state.withLock { state -> Result<Int, DownloadFileError>? in
            guard !state.ended, state.connection === connection, !state.alreadyComplete, let files = state.files
            else { return nil }
            do throws(DownloadFileError) {
                try files.append(data)
                return .success(data.count)
            } catch {
                return .failure(error)
            }
        }
        switch written {
        case .success(let count): tellDelegate { $0.download(self, didReceiveDataOfLength: count) }
        case .failure(let error):
            connection.cancel()
            fail(error, url: connection.currentRequest.url)
        case nil: break
        }
    }

    /// Everything arrived: the data is synced (and decoded) outside the lock, which a long
    /// decode would otherwise hold against `cancel()`, then moved into place under it, so that
    /// a cancel either wins (nothing is left) or comes too late (the file is saved).
    func finished(_ connection: LoaderConnection) {
        let taken: (files: DownloadFiles?, decoding: SourceDecoding?)? = state.withLock { state in
            guard !state.ended, state.connection === connection else { return nil }
            defer { state.files = nil }
            return (state.files, state.decoding)
        }
        guard let taken else { return }
        guard let files = taken.files else {
            fail(DownloadFileError(message: "the server sent no response", code: .badServerResponse), url: nil)
            return
        }
        let announced = files.destination
        let prepared: Result<String, DownloadFileError>
        do throws(DownloadFileError) {
            prepared = .success(try files.prepareCommit(decode: taken.decoding.map { decoding in decoding.decode }))
        } catch {
            prepared = .failure(error)
        }
        let outcome: Result<(String, any LoaderDownloadDelegate), DownloadFileError>? = state.withLock { state in
            guard !state.ended else {
                // Cancelled while the data was being synced or decoded.
                files.discard()
                return nil
            }
            do throws(DownloadFileError) {
                let path = try files.finishCommit(prepared.get())
                state.ended = true
                state.connection = nil
                state.record = nil
                defer { state.delegate = nil }
                return .success((path, state.delegate ?? NoDownloadDelegate()))
            } catch {
                // Data that arrived whole but cannot be decoded is not worth continuing.
                if error.code == .cannotDecodeContentData { state.record = nil }
                state.files = files
                return .failure(error)
            }
        }
        switch outcome {
        case .success((let path, let delegate)):
            if path != announced { delegate.download(self, didCreateDestination: path) }
            delegate.downloadDidFinish(self)
        case .failure(let error): fail(error, url: connection.currentRequest.url)
        case nil: break
        }
    }

    func failed(_ error: any Error, on connection: LoaderConnection) {
        guard isCurrent(connection) else { return }
        fail(error as? URLError ?? URLError(.unknown), url: nil)
    }

    private func fail(_ error: DownloadFileError, url: URL?) {
        fail(LoaderError.make(error.code, "The download could not be saved: \(error.message)", url: url), url: url)
    }

    /// Ends the download with `error`: the partial data is kept when it can be continued.
    private func fail(_ error: URLError, url: URL?) {
        let ending: (Data?, any LoaderDownloadDelegate)? = state.withLock { state in
            guard !state.ended else { return nil }
            var resumeData: Data?
            if let files = state.files {
                if let record = state.record, !state.deletesFileUponFailure {
                    files.keep()
                    resumeData = record.encoded()
                    state.resumeData = resumeData
                } else {
                    files.discard()
                }
            }
            state.ended = true
            state.files = nil
            state.connection = nil
            defer { state.delegate = nil }
            return (resumeData, state.delegate ?? NoDownloadDelegate())
        }
        guard let (resumeData, delegate) = ending else { return }
        var info = error.userInfo
        // Where Foundation's download tasks put it.
        if let resumeData { info["NSURLSessionDownloadTaskResumeData"] = resumeData }
        delegate.download(self, didFailWithError: URLError(error.code, userInfo: info))
    }

    func redirect(_ request: URLRequest, response: URLResponse) -> URLRequest? {
        tellDelegate { $0.download(self, willSend: request, redirectResponse: response) } ?? nil
    }

    func challenge(_ challenge: URLAuthenticationChallenge) {
        if tellDelegate({ $0.download(self, willSendRequestFor: challenge) }) == nil {
            challenge.sender?.performDefaultHandling(for: challenge)
        }
    }

    // MARK: Helpers

    /// `path`, or the first unique name beside it that neither a file nor another download's
    /// partial data holds (nor one of `excluded`).
    static func unused(_ path: String, excluding excluded: Set<String> = []) -> String {
        let directory = (path as NSString).deletingLastPathComponent
        let name = SuggestedFilename.unique((path as NSString).lastPathComponent) { candidate in
            let full = (directory as NSString).appendingPathComponent(candidate)
            return excluded.contains(full) || FileManager.default.fileExists(atPath: full)
                || FileManager.default.fileExists(atPath: DownloadResumeData.partialPath(for: full))
        }
        return (directory as NSString).appendingPathComponent(name)
    }

    /// A 206's `Content-Range: bytes FIRST-LAST/LENGTH` (first and length), or a 416's
    /// `bytes */LENGTH` (first nil).
    static func contentRange(_ response: HTTPURLResponse?) -> (first: Int64?, length: Int64?)? {
        guard let value = response?.value(forHTTPHeaderField: "Content-Range") else { return nil }
        let trimmed = value.trimmingCharacters(in: .whitespaces)
        guard trimmed.lowercased().hasPrefix("bytes ") else { return nil }
        let parts = trimmed.dropFirst(6).split(separator: "/", maxSplits: 1)
        guard parts.count == 2 else { return nil }
        let length = Int64(parts[1].trimmingCharacters(in: .whitespaces))
        let first = parts[0].split(separator: "-", maxSplits: 1).first
            .flatMap { Int64($0.trimmingCharacters(in: .whitespaces)) }
        return (first, length)
    }
}

/// The delegate of a download made without one: it ends silently.
private final class NoDownloadDelegate: LoaderDownloadDelegate {}

/// The download's side of its connection: every message goes to the download, which checks
/// that it comes from its current connection (a restart replaces it).
final class DownloadConnectionDelegate: LoaderConnectionAuthenticationDelegate, @unchecked Sendable {
    /// Held until the connection ends and lets its delegate go: a download in flight keeps
    /// itself alive, as a connection does.
    let download: LoaderDownload

    init(download: LoaderDownload) { self.download = download }

    func connection(
        _ connection: LoaderConnection,
        willSend request: URLRequest,
        redirectResponse: URLResponse?
    ) -> URLRequest? {
        guard let redirectResponse else { return request }
        return download.redirect(request, response: redirectResponse)
    }

    func connection(_ connection: LoaderConnection, didReceive response: URLResponse) {
        download.received(response, on: connection)
    }

    func connection(_ connection: LoaderConnection, didReceive data: Data) {
        download.received(data, on: connection)
    }

    func connectionDidFinishLoading(_ connection: LoaderConnection) {
        download.finished(connection)
    }

    func connection(_ connection: LoaderConnection, didFailWithError error: any Error) {
        download.failed(error, on: connection)
    }

    /// A download's bytes go to its file, not into the response cache as well.
    func connection(
        _ connection: LoaderConnection,
        willCacheResponse cachedResponse: CachedURLResponse
    ) -> CachedURLResponse? {
        nil
    }

    func connection(_ connection: LoaderConnection, willSendRequestFor challenge: URLAuthenticationChallenge) {
        download.challenge(challenge)
    }
}

extension URLLoader {
    /// A download of `request` to a file; the delegate decides where (by default the server's
    /// name in `directory`, the current directory unless given). With `resuming`, the download
    /// continues that one's partial data (into its destination) with the request's own fields.
    public func download(
        with request: URLRequest,
        delegate: (any LoaderDownloadDelegate)?,
        delegateQueue: DispatchQueue? = nil,
        directory: String? = nil,
        resuming: DownloadResumeData? = nil,
        startImmediately: Bool = true
    ) -> LoaderDownload {
        let download = LoaderDownload(
            request: request,
            loader: self,
            delegate: delegate,
            delegateQueue: delegateQueue,
            directory: resuming.map { ($0.destinationPath as NSString).deletingLastPathComponent } ?? directory
                ?? FileManager.default.currentDirectoryPath,
            resuming: resuming
        )
        if startImmediately { download.start() }
        return download
    }

    /// A download that continues the one `resumeData` came from (`LoaderDownload.resumeData`,
    /// the error's `NSURLSessionDownloadTaskResumeData`, or `DownloadResumeData.encoded()`).
    public func download(
        resumeData: Data,
        delegate: (any LoaderDownloadDelegate)?,
        delegateQueue: DispatchQueue? = nil,
        startImmediately: Bool = true
    ) throws(DownloadResumeDataError) -> LoaderDownload {
        let resuming = try DownloadResumeData(resumeData)
        return download(
            with: URLRequest(url: resuming.url),
            delegate: delegate,
            delegateQueue: delegateQueue,
            resuming: resuming,
            startImmediately: startImmediately
        )
    }
}
