import Foundation
public import FoundationNetworking
import Keyjar
import KeyjarCore
import Synchronization
import KeyjarLocks

/// One load of a URL request with NSURLConnection's delegate contract, on libcurl: cookies
/// from the loader's shared jar on every request and redirect hop, every Set-Cookie line kept,
/// redirects and authentication challenges through the delegate, data streamed as it arrives.
///
/// The connection's own decisions run on a private serial queue; the delegate is called on its
/// delegate queue, one message at a time. It keeps its delegate until the load ends.
public final class LoaderConnection: @unchecked Sendable {
    public let originalRequest: URLRequest
    public let loader: URLLoader

    /// The request of the current hop (after redirects and the delegate's changes).
    public var currentRequest: URLRequest { published.withLock { $0.currentRequest } }

    /// The queue the caller chose for the delegate; nil when it chose none.
    let delegateQueue: DispatchQueue?
    /// A serial queue per connection on the shared, width-limited pool, for a connection
    /// without a blocked caller (`executor` makes its own only if work outlives the caller).
    /// A queue made without a target is an "overcommit" queue, for which libdispatch starts a
    /// thread whenever it has work: a thousand loads in flight then ran on some 250 threads.
    private let controlQueue: DispatchQueue?
    /// Set for a load whose caller blocks for the result: the connection's work then runs on
    /// the caller's thread.
    let executor: CallerExecutor?

    /// The protocol of the latest response head: "HTTP/1.1", "HTTP/2", … (Foundation's
    /// HTTPURLResponse does not say).
    public var httpVersion: String? { published.withLock { $0.head?.httpVersion } }

    /// The latest response head as it arrived: the status line, then one `Name: value` line
    /// per field, in order and with repeated fields kept (HTTPURLResponse joins them). For
    /// showing a response (`keyjar fetch -i`); read it in `didReceive(response)`.
    public var responseHeadLines: [String]? { published.withLock { $0.head?.lines } }

    /// How often a slow delegate paused this load's transfers (for tests and diagnostics).
    var backpressurePauses: Int { published.withLock { $0.pauses } }

    /// State other threads read or set.
    private struct Published {
        var pauses = 0
        var currentRequest: URLRequest
        var head: ResponseHead?
        var started = false
        /// Set by `cancel()`; delegate messages check it when they run, so none is delivered
        /// after the call returns.
        var cancelled = false
    }
    private let published: Locked<Published>

    // Everything below belongs to the connection's serial work (`schedule`): `controlQueue`,
    // or the blocked caller's thread through `executor`.
    var delegate: (any LoaderConnectionDelegate)?
    private(set) var ended = false
    private var attempt = 0
    private var transfer: CurlTransfer?
    private var redirectCount = 0
    /// Whether the load is a top-level navigation whose main-document URL follows redirects.
    private var followsMainDocument: Bool
    private var mode = Mode.awaitingHead
    private var uploadedSoFar: Int64 = 0
    private var cacheCandidate: (response: URLResponse, data: Data)?
    /// Set while a multipart/x-mixed-replace body is split into parts.
    private var multipart: (splitter: MultipartReplaceSplitter, head: ResponseHead)?
    var authentication = AuthenticationState()
    var tls = TLSState()
    /// Whether this load reads and writes the credential storage (decided once, in `begin`).
    var usesCredentialStorage = false
    var challengeCounter = 0
    var pendingChallenge: PendingChallenge?

    private enum Mode {
        case awaitingHead
        /// Body bytes go to the delegate.
        case streaming
        /// A redirect or a challenge: its body is kept until we know whether it is delivered.
        case holding(ResponseHead, HTTPURLResponse, Data)
    }

    init(
        request: URLRequest, delegate: (any LoaderConnectionDelegate)?, loader: URLLoader, delegateQueue: DispatchQueue?,
        startImmediately: Bool, executor: CallerExecutor? = nil
    ) {
        // A synchronous load needs no queue of its own: creating and disposing of one cost
        // some 1.5 µs a request, and running each job through it more.
        controlQueue = executor == nil ? Self.makeControlQueue() : nil
        self.executor = executor
        originalRequest = request
        self.loader = loader
        self.delegate = delegate
        self.delegateQueue = delegateQueue
        published = Locked(Published(currentRequest: request))
        followsMainDocument = request.mainDocumentURL == nil || request.mainDocumentURL == request.url
        if startImmediately { start() }
    }

    static func makeControlQueue() -> DispatchQueue {
        DispatchQueue(label: "keyjar.loader.connection", target: .global())
    }

    /// Starts the load (once; later calls do nothing).
    public func start() {
        let first = published.withLock { state -> Bool in
            defer { state.started = true }
            return !state.started && !state.cancelled
        }
        guard first else { return }
        schedule { self.begin() }
    }

    /// Stops the load. The delegate hears nothing more once this returns, not even a failure.
    public func cancel() {
        published.withLock { $0.cancelled = true }
        schedule {
            if let transfer = self.transfer { CurlEngine.shared.cancel(transfer) }
            self.cancelPendingChallenge()
            self.end()
        }
    }

    var isCancelled: Bool { published.withLock { $0.cancelled } }

    /// Runs `work` serially with the connection's other work: on the blocked caller's thread
    /// when there is one, else on the control queue.
    func schedule(_ work: @escaping @Sendable () -> Void) {
        if let executor {
            executor.post(work)
        } else {
            controlQueue?.async(execute: work)
        }
    }

    // MARK: Talking to the delegate

    /// Queues a message for the delegate; it is dropped if the connection is cancelled first.
    /// Without a queue of the caller's, the delegate is called right here on the control queue,
    /// which is serial too: a hop to another queue costs a thread wake-up per message (tens of
    /// microseconds here), the largest part of a request's overhead over plain libcurl.
    func deliver(_ message: @escaping @Sendable (any LoaderConnectionDelegate) -> Void) {
        guard let delegate, !ended else { return }
        guard let delegateQueue else {
            if !isCancelled { message(delegate) }
            return
        }
        delegateQueue.async {
            guard !self.isCancelled else { return }
            message(delegate)
        }
    }

    /// Asks the delegate and waits for its answer (willSend, needNewBodyStream, willCache).
    func ask<Answer: Sendable>(
        _ question: @escaping @Sendable (any LoaderConnectionDelegate) -> Answer, ifNoDelegate fallback: Answer
    ) -> Answer {
        guard let delegate, !ended else { return fallback }
        guard let delegateQueue else { return isCancelled ? fallback : question(delegate) }
        return delegateQueue.sync { isCancelled ? fallback : question(delegate) }
    }

    private func finish() {
        deliver { $0.connectionDidFinishLoading(self) }
        end()
    }

    func fail(_ error: URLError) {
        deliver { $0.connection(self, didFailWithError: error) }
        end()
    }

    /// The load is over: no more events are handled and the delegate is released (after the
    /// messages already queued for it).
    func end() {
        guard !ended else { return }
        ended = true
        transfer = nil
        delegate = nil
    }

    // MARK: The load

    private func begin() {
        guard !ended, !isCancelled else { return }
        let canonical = canonicalRequest(originalRequest)
        guard let request = ask({ $0.connection(self, willSend: canonical, redirectResponse: nil) }, ifNoDelegate: canonical) else {
            end()
            return
        }
        setCurrentRequest(request)
        usesCredentialStorage = decideCredentialStorage()
        startAttempt()
    }

    /// Apple's rule: a delegate that answers challenges itself (`willSendRequestFor`) is not
    /// asked and the storage is used; any other is asked once, before the load.
    private func decideCredentialStorage() -> Bool {
        guard loader.configuration.credentialStorage != nil else { return false }
        if delegate is any LoaderConnectionAuthenticationDelegate { return true }
        return ask({ $0.connectionShouldUseCredentialStorage(self) }, ifNoDelegate: true)
    }

    private func canonicalRequest(_ request: URLRequest) -> URLRequest {
        var request = request
        if request.httpMethod == nil { request.httpMethod = "GET" }
        // The scheme first and the path undecoded: `path` percent-decodes into a new string.
        if let url = request.url, url.scheme == "http" || url.scheme == "https", url.path(percentEncoded: true).isEmpty,
            var components = URLComponents(url: url, resolvingAgainstBaseURL: true)
        {
            components.path = "/"
            request.url = components.url ?? url
        }
        return request
    }

    private func setCurrentRequest(_ request: URLRequest) {
        published.withLock { $0.currentRequest = request }
    }

    /// The main-document URL cookies are judged against (site for cookies).
    private var mainDocumentURL: URL? {
        let request = currentRequest
        return followsMainDocument ? request.url : (request.mainDocumentURL ?? request.url)
    }

    func startAttempt() {
        guard !ended, !isCancelled else { return }
        let request = currentRequest
        guard let url = request.url, let scheme = url.scheme, Self.isSupported(scheme: scheme) else {
            fail(LoaderError.make(.unsupportedURL, "\(request.url.map { Self.urlWithoutPassword($0).absoluteString } ?? "The request") is not an http, https, ftp or file URL", url: request.url))
            return
        }
        let method = request.httpMethod ?? "GET"
        let fields = request.allHTTPHeaderFields ?? [:]
        let additional = loader.configuration.additionalHeaders
        var lines: [String] = []
        lines.reserveCapacity(fields.count + additional.count + 2)
        // Field names compared without lower-casing copies: most requests set no field of
        // their own, and this runs for every attempt.
        func requestSets(_ name: String) -> Bool { fields.keys.contains { ResponseHead.sameFieldName($0, name) } }
        for (name, value) in additional where !requestSets(name) { lines.append(name + ": " + value) }
        for (name, value) in fields { lines.append(name + ": " + value) }
        if request.httpShouldHandleCookies, !requestSets("Cookie"), let storage = loader.configuration.cookieStorage,
            let header = storage.cookieHeader(
                // A main document that is the request itself is same-site by definition: nil
                // says so without a second URL parse and two site lookups in the jar.
                for: url, mainDocumentURL: followsMainDocument ? nil : (request.mainDocumentURL ?? url),
                isTopLevelNavigation: followsMainDocument, httpMethod: method)
        {
            lines.append("Cookie: " + header)
        }
        var transferRequest = TransferRequest(
            url: Self.urlWithoutUserInfo(url), method: method, headerLines: lines,
            timeout: request.timeoutInterval > 0 ? request.timeoutInterval : 60)
        prepareAuthentication(&transferRequest, requestSetsAuthorization: requestSets("Authorization"))

        if let data = request.httpBody {
            transferRequest.body = .data(data)
        } else if let stream = request.httpBodyStream {
            if attempt == 0 {
                transferRequest.body = .stream(stream, length: Self.declaredLength(request))
            } else {
                // A stream is read once; a second attempt needs a new one from the delegate.
                let copy = request
                guard let fresh = ask({ $0.connection(self, needNewBodyStream: copy).map(UncheckedStream.init) }, ifNoDelegate: nil)
                else {
                    fail(LoaderError.make(.requestBodyStreamExhausted, "The request body stream cannot be sent again and the delegate gave no new one", url: url))
                    return
                }
                transferRequest.body = .stream(fresh.stream, length: Self.declaredLength(request))
            }
        }
        prepareTLS(&transferRequest, url: url)

        attempt += 1
        let number = attempt
        mode = .awaitingHead
        multipart = nil
        uploadedSoFar = 0
        cacheCandidate = nil
        let newTransfer: CurlTransfer
        do {
            // The transfer holds its connection: a load in flight keeps itself alive, as
            // NSURLConnection does, even when the caller keeps no reference.
            newTransfer = try CurlTransfer(transferRequest) { event in
                self.schedule { self.handle(event, attempt: number) }
            }
        } catch {
            fail(LoaderError.make(.unknown, "libcurl could not create a transfer", url: url))
            return
        }
        transfer = newTransfer
        CurlEngine.shared.add(newTransfer)
    }

    private static let loadableSchemes = ["http", "https", "ftp", "ftps", "file"]

    /// Schemes are ASCII and case-insensitive like field names: compared in place, without a
    /// lower-cased copy and an array built for every attempt.
    private static func isSupported(scheme: String) -> Bool {
        loadableSchemes.contains { ResponseHead.sameFieldName($0, scheme) }
    }

    private static func declaredLength(_ request: URLRequest) -> Int64? {
        request.value(forHTTPHeaderField: "Content-Length").flatMap { Int64($0) }
    }

    static func urlWithoutUserInfo(_ url: URL) -> URL {
        guard url.user != nil || url.password != nil, var components = URLComponents(url: url, resolvingAgainstBaseURL: true)
        else { return url }
        components.user = nil
        components.password = nil
        return components.url ?? url
    }

    /// The URL without a password in its user information, for messages and errors.
    static func urlWithoutPassword(_ url: URL) -> URL {
        guard url.password != nil, var components = URLComponents(url: url, resolvingAgainstBaseURL: true) else { return url }
        components.password = nil
        return components.url ?? url
    }

    static func hostKey(_ url: URL) -> String {
        let scheme = url.scheme?.lowercased() ?? ""
        return "\(url.host?.lowercased() ?? ""):\(url.port ?? (scheme == "https" ? 443 : 80))"
    }

    private func handle(_ event: TransferEvent, attempt number: Int) {
        guard !ended, number == attempt, let transfer else { return }
        switch event {
        case .head(let head):
            handleHead(head)
        case .nonHTTPResponse(let length):
            let url = currentRequest.url ?? originalRequest.url ?? URL(fileURLWithPath: "/")
            let response = URLResponse(url: url, mimeType: nil, expectedContentLength: Int(length), textEncodingName: nil)
            mode = .streaming
            deliver { $0.connection(self, didReceive: response) }
        case .data(let data):
            switch mode {
            case .holding(let head, let response, var held):
                held.append(data)
                mode = .holding(head, response, held)
                transfer.consumed(data.count)
            case .streaming, .awaitingHead:
                if var split = multipart {
                    let pieces = split.splitter.feed(data)
                    multipart = split
                    transfer.consumed(data.count)
                    deliverParts(pieces, of: split.head)
                    return
                }
                if var candidate = cacheCandidate {
                    candidate.data.append(data)
                    cacheCandidate = candidate.data.count <= Self.maximumCachedBody ? candidate : nil
                }
                let count = data.count
                deliver { delegate in
                    delegate.connection(self, didReceive: data)
                    transfer.consumed(count)
                }
            }
        case .sent(let total, let expected):
            let written = Int(total - uploadedSoFar)
            uploadedSoFar = total
            deliver { $0.connection(self, didSendBodyData: written, totalBytesWritten: Int(total), totalBytesExpectedToWrite: Int(expected)) }
        case .completed(let result):
            let pauses = transfer.pauses.load(ordering: .relaxed)
            published.withLock { $0.pauses += pauses }
            self.transfer = nil
            handleCompletion(result)
        }
    }

    private static let maximumCachedBody = 1 << 20

    private func handleHead(_ head: ResponseHead) {
        let request = currentRequest
        guard let url = request.url, let response = head.httpResponse(for: url) else { return }
        published.withLock { $0.head = head }
        if request.httpShouldHandleCookies, let storage = loader.configuration.cookieStorage {
            let lines = head.values(of: "Set-Cookie")
            if !lines.isEmpty {
                // A cookie the policy refuses is not an error of the load.
                _ = try? storage.storeCookies(
                    fromResponseHeaders: lines, for: url, mainDocumentURL: mainDocumentURL,
                    isTopLevelNavigation: followsMainDocument, httpMethod: request.httpMethod ?? "GET")
            }
        }
        if RedirectRule.isRedirect(head) || isChallengeWeAnswer(head) {
            mode = .holding(head, response, Data())
            return
        }
        mode = .streaming
        if let contentType = head.value(of: "Content-Type"), let splitter = MultipartReplaceSplitter(contentType: contentType) {
            // Each part is delivered as a response of its own when it begins.
            multipart = (splitter, head)
            return
        }
        if isCacheable(request: request, head: head) { cacheCandidate = (response, Data()) }
        deliver { $0.connection(self, didReceive: response) }
    }

    /// Parts of a multipart/x-mixed-replace body: a response (the outer head with the part's
    /// fields) when a part begins, then its bytes.
    private func deliverParts(_ pieces: [MultipartReplaceSplitter.Piece], of head: ResponseHead) {
        guard let url = currentRequest.url else { return }
        for piece in pieces {
            switch piece {
            case .part(let fields):
                var partHead = head
                partHead.fields.removeAll { field in fields.keys.contains { $0.caseInsensitiveCompare(field.name) == .orderedSame } }
                partHead.fields.removeAll { $0.name.caseInsensitiveCompare("Content-Length") == .orderedSame }
                partHead.fields += fields.map { (name: $0.key, value: $0.value) }
                if let response = partHead.httpResponse(for: url) { deliver { $0.connection(self, didReceive: response) } }
            case .data(let data):
                deliver { $0.connection(self, didReceive: data) }
            }
        }
    }

    private func handleCompletion(_ result: CurlResult) {
        guard result.succeeded else {
            let url = currentRequest.url ?? originalRequest.url ?? URL(fileURLWithPath: "/")
            let awaitingHead = if case .awaitingHead = mode { true } else { false }
            if handleTLSFailure(result, url: url, awaitingHead: awaitingHead) { return }
            fail(LoaderError.make(for: result, url: url))
            return
        }
        switch mode {
        case .holding(let head, let response, let body):
            if RedirectRule.isRedirect(head) {
                followRedirect(head, response: response, body: body)
            } else {
                answerChallenge(head, response: response, body: body)
            }
        case .streaming, .awaitingHead:
            authenticationSucceeded()
            clientIdentitiesSucceeded()
            offerToCache()
            finish()
        }
    }

    /// Delivers a held response (a redirect or challenge we are not following) as the result.
    func deliverFinal(_ response: HTTPURLResponse, body: Data) {
        deliver { delegate in
            delegate.connection(self, didReceive: response)
            if !body.isEmpty { delegate.connection(self, didReceive: body) }
        }
        finish()
    }

    // MARK: Redirects

    private func followRedirect(_ head: ResponseHead, response: HTTPURLResponse, body: Data) {
        let current = currentRequest
        guard let from = current.url, let location = head.value(of: "Location"),
            let target = URL(string: location, relativeTo: from)?.absoluteURL,
            let scheme = target.scheme?.lowercased(), scheme == "http" || scheme == "https"
        else {
            // Not a redirect we can follow (no or bad Location, another scheme): the 3xx is the answer.
            deliverFinal(response, body: body)
            return
        }
        // A redirect answers the request: any credential sent got past authentication.
        authenticationSucceeded()
        redirectCount += 1
        guard redirectCount <= loader.configuration.maximumRedirects else {
            fail(LoaderError.make(
                .httpTooManyRedirects, "More than \(loader.configuration.maximumRedirects) redirects, the last to \(Self.urlWithoutPassword(target).absoluteString)",
                url: from))
            return
        }
        let proposed = RedirectRule.request(following: current, to: target, status: head.statusCode)
        guard let next = ask({ $0.connection(self, willSend: proposed, redirectResponse: response) }, ifNoDelegate: proposed) else {
            deliverFinal(response, body: body)
            return
        }
        setCurrentRequest(next)
        authentication.redirected()
        startAttempt()
    }

    // MARK: Caching

    private func isCacheable(request: URLRequest, head: ResponseHead) -> Bool {
        guard loader.configuration.urlCache != nil, (request.httpMethod ?? "GET") == "GET",
            [200, 203, 204, 300, 301, 404, 410].contains(head.statusCode)
        else { return false }
        let cacheControl = (head.values(of: "Cache-Control") + [request.value(forHTTPHeaderField: "Cache-Control") ?? ""])
            .joined(separator: ",").lowercased()
        return !cacheControl.contains("no-store")
    }

    private func offerToCache() {
        guard let candidate = cacheCandidate, let cache = loader.configuration.urlCache else { return }
        let request = originalRequest
        let proposed = CachedURLResponse(response: candidate.response, data: candidate.data, userInfo: nil, storagePolicy: .allowed)
        if let accepted = ask({ $0.connection(self, willCacheResponse: proposed) }, ifNoDelegate: proposed) {
            cache.storeCachedResponse(accepted, for: request)
        }
    }
}

/// An InputStream handed across queues; it is read by one transfer only.
struct UncheckedStream: @unchecked Sendable {
    let stream: InputStream
}
