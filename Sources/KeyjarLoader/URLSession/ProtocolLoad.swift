import Foundation
import FoundationNetworking
import KeyjarLocks
import KeyjarTransfer

/// One load of a ``KeyjarURLProtocol``: the task's request, made ready as URLSession would
/// send it, goes through a ``LoaderConnection`` whose messages this turns into the protocol
/// client's and the session delegate's.
///
/// `start` and `cancel` come on the task's queue; the connection's messages on the
/// connection's own serial queue (no delegate queue: one hop fewer per message); the session
/// delegate's answers on the session's delegate queue. What more than one of them touches is
/// behind `state`; the body is the connection's queue's alone.
final class ProtocolLoad: LoaderConnectionLegacyAuthenticationDelegate, @unchecked Sendable {
    // @unchecked: `urlProtocol` is only handed to its client (URLProtocol is not Sendable, but
    // Foundation's client takes it from any queue); `body` is touched on the connection's
    // serial queue only; `session` and `loader` are set before the connection starts;
    // everything else is immutable or behind `state`.

    /// Weak: the protocol holds its load, and the task holds the protocol until it completes.
    private weak var urlProtocol: URLProtocol?
    let client: (any URLProtocolClient)?
    private let request: URLRequest
    let task: URLSessionTask?
    /// The task's session, once found; nil for a protocol made without a task.
    private(set) var session: URLSession?
    private(set) var loader: URLLoader?

    struct State {
        var cancelled = false
        var connection: LoaderConnection?
        /// Releases a question waiting for the session delegate's answer (`cancel`).
        var pendingQuestion: (@Sendable () -> Void)?
        var challenges = ChallengeMemory()
    }
    let state = Locked(State())

    private var body = Data()

    init(protocol urlProtocol: URLProtocol) {
        self.urlProtocol = urlProtocol
        client = urlProtocol.client
        task = urlProtocol.task
        request = urlProtocol.request
    }

    /// Hands the protocol's client a message, unless the protocol is gone (its task completed).
    private func tell(_ message: (any URLProtocolClient, URLProtocol) -> Void) {
        guard let client, let urlProtocol else { return }
        message(client, urlProtocol)
    }

    /// The delegate Foundation would ask about `task`: the task's own, else its session's.
    var sessionDelegate: (session: URLSession, task: URLSessionTask, delegate: any URLSessionTaskDelegate)? {
        guard let session, let task, let delegate = task.delegate else { return nil }
        return (session, task, delegate)
    }

    func start() {
        if let task {
            guard !(task is URLSessionDownloadTask) else {
                return report(
                    LoaderError.make(
                        .unsupportedURL,
                        "KeyjarURLProtocol cannot complete a download task: swift-corelibs-foundation takes a download's file only from its own protocols; download with KeyjarLoader's LoaderDownload instead",
                        url: request.url
                    )
                )
            }
            guard let session = TaskInternals.session(of: task) else {
                return report(Self.cannotRead("the task's URLSession", url: request.url))
            }
            self.session = session
        }
        let configuration = session?.configuration
        do {
            loader = try SessionLoaders.loader(
                named: configuration?.httpAdditionalHeaders?[SessionLoaders.headerName] as? String
            )
        } catch {
            return report(error)
        }
        var request = request
        if let configuration { Self.apply(configuration, to: &request) }
        guard let upload = task as? URLSessionUploadTask else { return begin(request) }
        switch TaskInternals.uploadBody(of: upload) {
        case nil:
            report(Self.cannotRead("the upload task's body", url: request.url))
        case .empty?:
            begin(request)
        case .data(let data)?:
            request.httpBody = data
            begin(request)
        case .file(let file)?:
            guard let stream = InputStream(url: file),
                let size = try? FileManager.default.attributesOfItem(atPath: file.path)[.size] as? NSNumber
            else {
                return report(
                    LoaderError.make(
                        .fileDoesNotExist,
                        "The upload's file \(file.path) cannot be read",
                        url: request.url
                    )
                )
            }
            request.httpBodyStream = stream
            if request.value(forHTTPHeaderField: "Content-Length") == nil {
                request.setValue(size.stringValue, forHTTPHeaderField: "Content-Length")
            }
            begin(request)
        case .stream(let stream)?:
            request.httpBodyStream = stream
            begin(request)
        case .askDelegate?:
            askForBodyStream(request)
        }
    }

    /// Stops the load: nothing more reaches the client, and a question waiting for the
    /// session delegate's answer is given up.
    func cancel() {
        let (connection, release) = state.withLock { state in
            state.cancelled = true
            defer { state.pendingQuestion = nil }
            return (state.connection, state.pendingQuestion)
        }
        // The connection first: a question given up answers its fallback, which a connection
        // not yet cancelled would act on (follow the redirect, store the response).
        connection?.cancel()
        release?()
    }

    private var isCancelled: Bool { state.withLock { $0.cancelled } }

    private func begin(_ request: URLRequest) {
        guard let loader else { return }
        let connection = loader.connection(with: request, delegate: self, startImmediately: false)
        let cancelled = state.withLock { state in
            state.connection = connection
            return state.cancelled
        }
        if !cancelled { connection.start() }
    }

    /// `uploadTask(withStreamedRequest:)`: the body is the stream the delegate gives.
    private func askForBodyStream(_ request: URLRequest) {
        // Without a stream the request would go out with no body at all: a failure, as
        // URLSession's own protocol reports it.
        let noStream = LoaderError.make(
            .requestBodyStreamExhausted,
            "The streamed request's body stream was not given (needNewBodyStream)",
            url: request.url
        )
        guard let (session, task, delegate) = sessionDelegate else { return report(noStream) }
        session.delegateQueue.addOperation {
            delegate.urlSession(session, task: task) { stream in
                guard let stream else { return self.report(noStream) }
                var request = request
                request.httpBodyStream = stream
                self.begin(request)
            }
        }
    }

    /// What URLSession's own protocol takes from the configuration, and a protocol is handed
    /// without: the additional header fields (the request's own win), the cache policy and the
    /// timeout.
    static func apply(_ configuration: URLSessionConfiguration, to request: inout URLRequest) {
        for (key, value) in configuration.httpAdditionalHeaders ?? [:] {
            guard let name = key.base as? String, name != SessionLoaders.headerName, let value = value as? String,
                request.value(forHTTPHeaderField: name) == nil
            else { continue }
            request.setValue(value, forHTTPHeaderField: name)
        }
        if request.cachePolicy == .useProtocolCachePolicy {
            request.cachePolicy = configuration.requestCachePolicy
        }
        // Foundation uses the configuration's timeout unless the request set one; whether it
        // did is not public, so the request's default (60 s) stands for "not set".
        if request.timeoutInterval == 60 {
            request.timeoutInterval = configuration.timeoutIntervalForRequest
        }
    }

    private static func cannotRead(_ what: String, url: URL?) -> URLError {
        LoaderError.make(
            .unknown,
            "KeyjarURLProtocol cannot read \(what) from this Foundation (its fields were renamed); the request was not sent",
            url: url
        )
    }

    /// Ends the task with `error` before or instead of a load.
    func report(_ error: any Error) {
        guard !isCancelled else { return }
        tell { $0.urlProtocol($1, didFailWithError: error) }
    }

    // MARK: - LoaderConnectionDelegate

    func connection(
        _ connection: LoaderConnection,
        willSend request: URLRequest,
        redirectResponse: URLResponse?
    ) -> URLRequest? {
        guard let redirect = redirectResponse as? HTTPURLResponse else { return request }
        // A redirect answers the request: a credential the delegate gave got past the challenge.
        keepDelegateCredential()
        guard let (session, task, delegate) = sessionDelegate else { return request }
        return ask(fallback: request) { answer in
            delegate.urlSession(
                session,
                task: task,
                willPerformHTTPRedirection: redirect,
                newRequest: request,
                completionHandler: answer
            )
        }
    }

    func connection(_ connection: LoaderConnection, didReceive response: URLResponse) {
        var response = response
        if let http = response as? HTTPURLResponse {
            if http.statusCode == 401 {
                response = Self.withoutFoundationsChallenge(http, httpVersion: connection.httpVersion)
            } else if http.statusCode != 407 {
                keepDelegateCredential()
            }
        }
        body = Data()
        tell { $0.urlProtocol($1, didReceive: response, cacheStoragePolicy: .notAllowed) }
    }

    func connection(_ connection: LoaderConnection, didReceive data: Data) {
        // The first piece is taken as it is (Data shares its buffer): most bodies come in one.
        if body.isEmpty { body = data } else { body.append(data) }
    }

    func connection(
        _ connection: LoaderConnection,
        didSendBodyData bytesWritten: Int,
        totalBytesWritten: Int,
        totalBytesExpectedToWrite: Int
    ) {
        guard let (session, task, delegate) = sessionDelegate else { return }
        session.delegateQueue.addOperation {
            delegate.urlSession(
                session,
                task: task,
                didSendBodyData: Int64(bytesWritten),
                totalBytesSent: Int64(totalBytesWritten),
                totalBytesExpectedToSend: Int64(totalBytesExpectedToWrite)
            )
        }
    }

    func connection(
        _ connection: LoaderConnection,
        willCacheResponse cachedResponse: CachedURLResponse
    ) -> CachedURLResponse? {
        guard let (session, task, delegate) = sessionDelegate, let dataTask = task as? URLSessionDataTask,
            let dataDelegate = delegate as? any URLSessionDataDelegate
        else { return cachedResponse }
        return ask(fallback: cachedResponse) { answer in
            dataDelegate.urlSession(
                session,
                dataTask: dataTask,
                willCacheResponse: cachedResponse,
                completionHandler: answer
            )
        }
    }

    func connectionDidFinishLoading(_ connection: LoaderConnection) {
        let body = body
        self.body = Data()
        tell { client, urlProtocol in
            if !body.isEmpty { client.urlProtocol(urlProtocol, didLoad: body) }
            client.urlProtocolDidFinishLoading(urlProtocol)
        }
    }

    func connection(_ connection: LoaderConnection, didFailWithError error: any Error) {
        tell { $0.urlProtocol($1, didFailWithError: error) }
    }

    /// The loader neither reads nor writes its storage on its own: the session delegate is
    /// asked first, and the storage answers for it (`ProtocolLoad+Challenges`).
    func connectionShouldUseCredentialStorage(_ connection: LoaderConnection) -> Bool { false }

    /// A 401 as delivered to Foundation: each `WWW-Authenticate` value led by a space, which
    /// Foundation's challenge parser does not recognise (so it starts no authentication of its
    /// own) and HTTP reads as the same value.
    static func withoutFoundationsChallenge(_ response: HTTPURLResponse, httpVersion: String?) -> HTTPURLResponse {
        var fields: [String: String] = [:]
        var changed = false
        for (key, value) in response.allHeaderFields {
            guard let name = key.base as? String, let value = value as? String else { continue }
            if name.caseInsensitiveCompare("WWW-Authenticate") == .orderedSame, value.first != " " {
                fields[name] = " " + value
                changed = true
            } else {
                fields[name] = value
            }
        }
        guard changed, let url = response.url,
            let rebuilt = HTTPURLResponse(
                url: url,
                statusCode: response.statusCode,
                httpVersion: httpVersion ?? "HTTP/1.1",
                headerFields: fields
            )
        else { return response }
        return rebuilt
    }

    /// Asks the session delegate on its queue and waits (on the connection's queue, never on
    /// Swift's cooperative pool) for the answer the loader's synchronous question needs;
    /// `fallback` when the load is cancelled meanwhile.
    func ask<Answer>(
        fallback: Answer,
        _ question: @escaping @Sendable (_ answer: @escaping @Sendable (Answer) -> Void) -> Void
    ) -> Answer {
        guard let session else { return fallback }
        let pending = PendingAnswer<Answer>()
        let asked = state.withLock { state in
            guard !state.cancelled else { return false }
            state.pendingQuestion = { pending.giveUp() }
            return true
        }
        guard asked else { return fallback }
        session.delegateQueue.addOperation { question { pending.resolve($0) } }
        let answer = pending.wait()
        state.withLock { $0.pendingQuestion = nil }
        return answer ?? fallback
    }
}

/// One answer, from whichever thread, to a thread waiting for it; nil when given up.
final class PendingAnswer<Answer>: @unchecked Sendable {
    // @unchecked: `answer` is behind `lock`; the semaphore is signalled once.
    private let lock = Locked<(answer: Answer?, done: Bool)>((nil, false))
    private let ready = DispatchSemaphore(value: 0)

    func resolve(_ answer: Answer) { finish(answer) }
    func giveUp() { finish(nil) }

    private func finish(_ answer: Answer?) {
        let first = lock.withLock { state in
            guard !state.done else { return false }
            state = (answer, true)
            return true
        }
        if first { ready.signal() }
    }

    func wait() -> Answer? {
        ready.wait()
        return lock.withLock { $0.answer }
    }
}
