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
/// A URL the server has no file for fails: an HTTP status of 400 or more (404, 410, 500…) ends the
/// download with `URLError.fileDoesNotExist` (NSURLErrorFileDoesNotExist, -1100) after the
/// delegate saw the response, and its error page is not saved. That code because it is the URL
/// Loading System's for "the requested file does not exist", the one a `file:` or `ftp:`
/// download of a missing file fails with too, so one check covers every scheme; the status is
/// in the error's description and in the response the delegate received. A tool that saves
/// whatever the server sends sets ``savesErrorResponses``.
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

    typealias Machine = DownloadStateMachine<LoaderConnection, DownloadFiles>

    struct State {
        var delegate: (any LoaderDownloadDelegate)?
        var machine: Machine
    }
    /// The machine decides under this lock; the file operations it asks for run under it too,
    /// so that a `cancel()` from another thread either precedes one or follows it.
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
        state = Locked(State(delegate: delegate, machine: Machine(resuming: resuming)))
    }

    /// Where the data is saved: call it from `decideDestination` (or before `start()`). Without
    /// `allowOverwrite`, an existing file is kept and a unique name is made beside it.
    ///
    /// As NSURLDownload's, it may be called once: the first call decides and later ones are
    /// ignored (a resumed download's destination is its record's, so every call is). Read
    /// ``destinationPath`` to see which one holds.
    public func setDestination(_ path: String, allowOverwrite: Bool) {
        let absolute =
            path.hasPrefix("/")
            ? path : (FileManager.default.currentDirectoryPath as NSString).appendingPathComponent(path)
        state.withLock { _ = $0.machine.setDestination(absolute, allowOverwrite: allowOverwrite) }
    }

    /// Whether an error page (an HTTP status of 400 or more) is saved as the file. False by
    /// default, NSURLDownload's behaviour: such a download fails with `URLError.fileDoesNotExist`
    /// and nothing is saved. True is for a tool that keeps whatever the server sent, as curl
    /// does without `--fail`. Set it before `start()`.
    public var savesErrorResponses: Bool {
        get { state.withLock { $0.machine.savesErrorResponses } }
        set { state.withLock { $0.machine.saveErrorResponses(newValue) } }
    }

    /// The latest response head as it arrived (status line, then `Name: value` lines), for
    /// showing it; read it in `didReceive(response)` or `willResumeWith`.
    public var responseHeadLines: [String]? { state.withLock { $0.machine.connection }?.responseHeadLines }

    /// The path the data is being saved for, once decided.
    public var destinationPath: String? {
        state.withLock { $0.machine.files?.destination ?? $0.machine.destination?.path }
    }

    /// Whether a failed download removes its partial data (true) or keeps it for `resumeData`
    /// (false, the default). Set it before `start()`.
    public var deletesFileUponFailure: Bool {
        get { state.withLock { $0.machine.deletesFileUponFailure } }
        set { state.withLock { $0.machine.deleteFileUponFailure(newValue) } }
    }

    /// After a failure, what continues the download (`URLLoader.download(resumeData:…)`); nil
    /// when the server gave no validator or the partial data was removed.
    public var resumeData: Data? { state.withLock { $0.machine.resumeData } }

    public func start() {
        guard state.withLock({ $0.machine.start() }) else { return }
        onDelegateQueue {
            self.tellDelegate { $0.downloadDidBegin(self) }
            self.connect()
        }
    }

    /// Stops the download and removes everything it wrote. The delegate hears nothing more.
    public func cancel() {
        guard let cancellation = endForCancel() else { return }
        cancellation.connection?.cancel()
        cancellation.files?.discard()
    }

    func endForCancel() -> Machine.Cancellation? {
        state.withLock { state in
            guard let cancellation = state.machine.cancel() else { return nil }
            state.delegate = nil
            return cancellation
        }
    }

    // MARK: Talking to the delegate

    private func onDelegateQueue(_ work: @escaping @Sendable () -> Void) {
        if let delegateQueue { delegateQueue.async(execute: work) } else { work() }
    }

    /// Calls the delegate unless the download ended; never under the state's lock, so that the
    /// delegate may call back (`cancel()`, `setDestination`).
    func tellDelegate<Answer>(_ message: (any LoaderDownloadDelegate) -> Answer) -> Answer? {
        guard let delegate = state.withLock({ $0.machine.isEnded ? nil : $0.delegate }) else { return nil }
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
        switch preparePartialData() {
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
            delegate: DownloadConnectionDelegate(download: self, delegate: state.withLock { $0.delegate }),
            delegateQueue: delegateQueue,
            startImmediately: false
        )
        if state.withLock({ $0.machine.connectionMade(connection) }) { connection.start() }
    }

    func isCurrent(_ connection: LoaderConnection) -> Bool {
        state.withLock { $0.machine.isCurrent(connection) }
    }

    func received(_ response: URLResponse, on connection: LoaderConnection) {
        guard isCurrent(connection) else { return }
        let http = response as? HTTPURLResponse
        let offset = state.withLock { $0.machine.offset }
        if offset > 0, let http {
            guard continueResuming(http, from: offset, on: connection) else { return }
            if http.statusCode != 200 { return }
            // A 200: the entity changed (If-Range failed) or ranges are not supported; it is
            // saved from its first byte.
            state.withLock { $0.machine.entityComesWhole(on: connection) }
        }
        tellDelegate { $0.download(self, didReceive: response) }
        switch state.withLock({ $0.machine.verdict(onStatus: http?.statusCode, on: connection) }) {
        case nil:
            // The delegate cancelled meanwhile.
            return
        case .missing(let statusCode):
            connection.cancel()
            let url = response.url ?? connection.currentRequest.url
            fail(Self.missingFile(statusCode: statusCode, url: url), url: url)
            return
        case .save:
            break
        }
        decideDecoding(response)
        let needsName = state.withLock { $0.machine.files == nil && $0.machine.destination == nil }
        if needsName {
            let suggested = SuggestedFilename.name(
                contentDisposition: http?.value(forHTTPHeaderField: "Content-Disposition"),
                url: response.url ?? request.url
            )
            let decoding = state.withLock { $0.machine.decoding }
            // Without its coding's extension the name may end like one of Keyjar's own files.
            let name = SuggestedFilename.avoidingKeyjarFiles(decoding?.decodedName(suggested) ?? suggested)
            tellDelegate { $0.download(self, decideDestinationWithSuggestedFilename: name) }
        }
        let created: Result<String?, DownloadFileError>? = state.withLock { state in
            do throws(DownloadFileError) {
                // The delegate may have cancelled meanwhile: then nothing is created.
                switch state.machine.chooseFiles(for: connection) {
                case nil:
                    return nil
                case .restart(let files):
                    try files.restart()
                    state.machine.filesReady(files, on: connection)
                    return .success(nil)
                case .noDestination:
                    return .failure(
                        DownloadFileError(message: "the delegate chose no destination", code: .cannotCreateFile)
                    )
                case .create(let destination):
                    let files = try Self.createFiles(for: destination)
                    state.machine.filesReady(files, on: connection)
                    return .success(files.destination)
                }
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

    /// The error of a download the server has no file for (``LoaderDownload``: why this code).
    static func missingFile(statusCode: Int, url: URL?) -> URLError {
        let shown = url.map { LoaderConnection.urlWithoutPassword($0).absoluteString } ?? "the URL"
        let reason = HTTPURLResponse.localizedString(forStatusCode: statusCode)
        return LoaderError.make(
            .fileDoesNotExist,
            "The server has no file to download at \(shown): it answered HTTP \(statusCode) (\(reason)); nothing was saved",
            url: url
        )
    }

    /// Asks the delegate whether to decode a file of an encoding a download decodes: under the
    /// response's type, then under each other name of the format (``SourceDecoding``), until it
    /// says yes.
    func decideDecoding(_ response: URLResponse) {
        var chosen: SourceDecoding?
        if let type = response.mimeType?.lowercased() {
            for name in SourceDecoding.questions(forMIMEType: type) {
                if tellDelegate({ $0.download(self, shouldDecodeSourceDataOfMIMEType: name) }) == true {
                    chosen = SourceDecoding(mimeType: type)
                    break
                }
            }
        }
        state.withLock { $0.machine.decode(with: chosen) }
    }

    func received(_ data: Data, on connection: LoaderConnection) {
        let written: Result<Int, DownloadFileError>? = state.withLock { state -> Result<Int, DownloadFileError>? in
            guard let files = state.machine.dataArrived(on: connection) else { return nil }
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
        guard let taken = state.withLock({ $0.machine.connectionFinished(connection) }) else { return }
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
            guard state.machine.commitMayFinish() else {
                // Cancelled while the data was being synced or decoded.
                files.discard()
                return nil
            }
            do throws(DownloadFileError) {
                let path = try files.finishCommit(prepared.get())
                state.machine.committed()
                defer { state.delegate = nil }
                return .success((path, state.delegate ?? NoDownloadDelegate()))
            } catch {
                state.machine.commitFailed(files, undecodable: error.code == .cannotDecodeContentData)
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

    func fail(_ error: DownloadFileError, url: URL?) {
        fail(LoaderError.make(error.code, "The download could not be saved: \(error.message)", url: url), url: url)
    }

    /// Ends the download with `error`: the partial data is kept when it can be continued.
    func fail(_ error: URLError, url: URL?) {
        let ending: (Data?, any LoaderDownloadDelegate)? = state.withLock { state in
            guard let failure = state.machine.fail() else { return nil }
            if let files = failure.files {
                if failure.keepsFiles { files.keep() } else { files.discard() }
            }
            defer { state.delegate = nil }
            return (failure.resumeData, state.delegate ?? NoDownloadDelegate())
        }
        guard let (resumeData, delegate) = ending else { return }
        var info = error.userInfo
        // Where Foundation's download tasks put it.
        if let resumeData { info["NSURLSessionDownloadTaskResumeData"] = resumeData }
        delegate.download(self, didFailWithError: URLError(error.code, userInfo: info))
    }

    /// The connection's `willSend`, for the first request and each redirect. The delegate's nil
    /// to the first request fails the connection as cancelled, and so the download
    /// (``fail(_:url:)``: what a resume needs is kept), as for a connection's delegate: a
    /// download never ends without a word.
    func willSend(_ request: URLRequest, redirectResponse: URLResponse?) -> URLRequest? {
        guard let answer = tellDelegate({ $0.download(self, willSend: request, redirectResponse: redirectResponse) })
        else { return request }
        return answer
    }

    func challenge(_ challenge: URLAuthenticationChallenge) {
        if tellDelegate({ $0.download(self, willSendRequestFor: challenge) }) == nil {
            challenge.sender?.performDefaultHandling(for: challenge)
        }
    }

    /// A challenge the delegate was given was cancelled on `connection`: told to `delegate` (the
    /// one the download had when the connection was made) while the connection loads, and once
    /// after `cancel()`.
    func challengeCancelled(
        _ challenge: URLAuthenticationChallenge,
        on connection: LoaderConnection,
        delegate: (any LoaderDownloadDelegate)?
    ) {
        guard let delegate, state.withLock({ $0.machine.hearsChallengeCancellation(on: connection) }) else { return }
        delegate.download(self, didCancel: challenge)
    }

    // MARK: Helpers

    /// `path`, or the first unique name beside it that neither a file nor another download's
    /// partial data holds (nor one of `excluded`).
    static func unused(_ path: String, excluding excluded: Set<String> = []) -> String {
        let directory = (path as NSString).deletingLastPathComponent
        let name = SuggestedFilename.unique((path as NSString).lastPathComponent) { candidate in
            let full = (directory as NSString).appendingPathComponent(candidate)
            return excluded.contains(full) || DownloadFiles.isTaken(full)
        }
        return (directory as NSString).appendingPathComponent(name)
    }
}

/// The delegate of a download made without one: it ends silently.
private final class NoDownloadDelegate: LoaderDownloadDelegate {}
