import Foundation
import FoundationNetworking
import Keyjar
import KeyjarCore
import KeyjarLocks
import KeyjarResponseCache
import KeyjarTransfer
import Synchronization

// The load: one attempt per hop on libcurl, the response head, the body, the end.
extension LoaderConnection {
    func begin() {
        guard !isCancelled, machine.begin() else { return }
        let registered = protocolClass(for: originalRequest)
        // A request nothing here loads fails before the delegate is asked anything.
        guard registered != nil || URLLoader.loadsItself(originalRequest) else {
            return fail(Self.unsupportedURLError(originalRequest))
        }
        let canonical = registered?.canonicalRequest(for: originalRequest) ?? canonicalRequest(originalRequest)
        guard
            let request = channel.ask(
                { $0.connection(self, willSend: canonical, redirectResponse: nil) },
                ifNoDelegate: canonical
            )
        else {
            return fail(
                LoaderError.make(
                    .cancelled,
                    "The delegate refused the request: willSend returned nil for it",
                    url: canonical.url
                )
            )
        }
        setCurrentRequest(request)
        // A registered protocol answers from the cache itself: it is given what the cache
        // holds (`cachedResponse`) and decides.
        if protocolClass(for: request) == nil, consultCache(for: request) { return }
        decideCredentialStorage()
        startAttempt()
    }

    func canonicalRequest(_ request: URLRequest) -> URLRequest {
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

    func setCurrentRequest(_ request: URLRequest) {
        published.withLock { $0.currentRequest = request }
    }

    /// The main-document URL cookies are judged against (site for cookies).
    var mainDocumentURL: URL? {
        let request = currentRequest
        return followsMainDocument ? request.url : (request.mainDocumentURL ?? request.url)
    }

    func startAttempt() {
        guard !machine.isEnded, !isCancelled else { return }
        let request = currentRequest
        if let registered = protocolClass(for: request) {
            startProtocol(registered, request: request)
            return
        }
        guard let url = request.url, URLLoader.loadsItself(request) else {
            return fail(Self.unsupportedURLError(request))
        }
        // A delegate that checks every server's certificate is asked before the first byte.
        if needsServerTrustEvaluation(url) { return evaluateServerTrust(url) }
        let method = request.httpMethod ?? "GET"
        let fields = request.allHTTPHeaderFields ?? [:]
        let additional = loader.configuration.additionalHeaders
        var lines: [String] = []
        lines.reserveCapacity(fields.count + additional.count + 2)
        // Field names compared without lower-casing copies: most requests set no field of
        // their own, and this runs for every attempt.
        func requestSets(_ name: String) -> Bool { fields.keys.contains { ResponseHead.sameFieldName($0, name) } }
        for (name, value) in additional where !requestSets(name) { lines.append(name + ": " + value) }
        for (name, value) in fields where !LoaderProtocol.isUnsent(name) {
            lines.append(name + ": " + value)
        }
        if request.httpShouldHandleCookies, !requestSets("Cookie"), let storage = loader.configuration.cookieStorage,
            let header = storage.cookieHeader(
                // A main document that is the request itself is same-site by definition: nil
                // says so without a second URL parse and two site lookups in the jar.
                for: url,
                mainDocumentURL: followsMainDocument ? nil : (request.mainDocumentURL ?? url),
                isTopLevelNavigation: followsMainDocument,
                httpMethod: method
            )
        {
            lines.append("Cookie: " + header)
        }
        var transferRequest = TransferRequest(
            url: Self.urlWithoutUserInfo(url),
            method: method,
            headerLines: lines,
            timeout: request.timeoutInterval > 0 ? request.timeoutInterval : 60
        )
        prepareAuthentication(&transferRequest, requestSetsAuthorization: requestSets("Authorization"))

        if let data = request.httpBody {
            transferRequest.body = .data(data)
        } else if let stream = request.httpBodyStream {
            do {
                transferRequest.body = try streamedBody.sending(
                    stream,
                    length: Self.declaredLength(request),
                    newStream: newBodyStream(for: request)
                )
            } catch {
                return fail(LoaderError.make(.requestBodyStreamExhausted, error.message, url: url))
            }
        }
        prepareTLS(&transferRequest, url: url)

        guard let number = machine.nextAttempt() else { return }
        uploadedSoFar = 0
        caching.attemptStarting(at: Date())
        // The transfer holds its connection: a load in flight keeps itself alive, as
        // NSURLConnection does, even when the caller keeps no reference.
        guard
            let newTransfer = CurlTransfer(
                transferRequest,
                receive: { event in
                    self.schedule { self.handle(event, attempt: number) }
                }
            )
        else {
            fail(LoaderError.make(.unknown, "libcurl could not create a transfer", url: url))
            return
        }
        machine.transferStarted(newTransfer, attempt: number)
        CurlEngine.shared.add(newTransfer)
    }

    static func unsupportedURLError(_ request: URLRequest) -> URLError {
        LoaderError.make(
            .unsupportedURL,
            "\(request.url.map { urlWithoutPassword($0).absoluteString } ?? "The request") is not an http, https, ftp, file or data URL, and no registered protocol loads it",
            url: request.url
        )
    }

    /// How a body stream is had again from a delegate that supplies them (`needNewBodyStream`,
    /// asked on its queue); nil for any other delegate, whose body is copied instead.
    private func newBodyStream(for request: URLRequest) -> (() -> InputStream?)? {
        guard let supplier = channel.bodyStreamSupplier else { return nil }
        return {
            self.channel.ask(
                { _ in supplier.connection(self, needNewBodyStream: request).map(UncheckedStream.init) },
                ifNoDelegate: nil
            )?.stream
        }
    }

    static func declaredLength(_ request: URLRequest) -> Int64? {
        request.value(forHTTPHeaderField: "Content-Length").flatMap { Int64($0) }
    }

    static func urlWithoutUserInfo(_ url: URL) -> URL {
        guard url.user != nil || url.password != nil,
            var components = URLComponents(url: url, resolvingAgainstBaseURL: true)
        else { return url }
        components.user = nil
        components.password = nil
        return components.url ?? url
    }

    /// The URL without a password in its user information, for messages and errors.
    static func urlWithoutPassword(_ url: URL) -> URL {
        guard url.password != nil, var components = URLComponents(url: url, resolvingAgainstBaseURL: true) else {
            return url
        }
        components.password = nil
        return components.url ?? url
    }

    static func hostKey(_ url: URL) -> String {
        let scheme = url.scheme?.lowercased() ?? ""
        return "\(url.host?.lowercased() ?? ""):\(url.port ?? (scheme == "https" ? 443 : 80))"
    }

    func handle(_ event: TransferEvent, attempt number: Int) {
        guard let transfer = machine.transfer(forAttempt: number) else { return }
        switch event {
        case .head(let head):
            handleHead(head)
        case .nonHTTPResponse(let length):
            let url = currentRequest.url ?? originalRequest.url ?? URL(fileURLWithPath: "/")
            let response = URLResponse(
                url: url,
                // A file's type by its name, from the system's shared-mime-info database.
                mimeType: url.isFileURL ? SharedMIMEInfo.system.mimeType(forFileName: url.lastPathComponent) : nil,
                expectedContentLength: Int(length),
                textEncodingName: nil
            )
            machine.bodyIs(.streaming)
            channel.deliver { $0.connection(self, didReceive: response) }
        case .data(let data):
            switch machine.dataArrived(data) {
            case .held:
                transfer.consumed(data.count)
            case .parts(let pieces, let head):
                deliverParts(pieces, of: head)
                // Consumed once delivered, as a streamed body is: a slow delegate pauses it.
                let count = data.count
                channel.deliver { _ in transfer.consumed(count) }
            case .deliver, nil:
                caching.append(data)
                let count = data.count
                channel.deliver { delegate in
                    delegate.connection(self, didReceive: data)
                    transfer.consumed(count)
                }
            }
        case .sent(let total, let expected):
            let written = Int(total - uploadedSoFar)
            uploadedSoFar = total
            channel.deliver {
                $0.connection(
                    self,
                    didSendBodyData: written,
                    totalBytesWritten: Int(total),
                    totalBytesExpectedToWrite: Int(expected)
                )
            }
        case .completed(let result):
            let pauses = transfer.pauses.load(ordering: .relaxed)
            published.withLock { $0.pauses += pauses }
            handleCompletion(result, body: machine.transferCompleted() ?? .awaitingHead)
        }
    }

    func handleHead(_ head: ResponseHead) {
        let request = currentRequest
        guard let url = request.url, let response = head.httpResponse(for: url) else { return }
        published.withLock { $0.head = head }
        if request.httpShouldHandleCookies, let storage = loader.configuration.cookieStorage {
            let lines = head.values(of: "Set-Cookie")
            if !lines.isEmpty {
                // A cookie the policy refuses is not an error of the load.
                _ = try? storage.storeCookies(
                    fromResponseHeaders: lines,
                    for: url,
                    mainDocumentURL: mainDocumentURL,
                    isTopLevelNavigation: followsMainDocument,
                    httpMethod: request.httpMethod ?? "GET"
                )
            }
        }
        if RedirectHop.isRedirect(head) || isChallengeWeAnswer(head) {
            machine.bodyIs(.holding(head, response, Machine.HeldBody()))
            return
        }
        if let contentType = head.value(of: "Content-Type"),
            let splitter = MultipartReplaceSplitter(contentType: contentType)
        {
            // Each part is delivered as a response of its own when it begins.
            machine.bodyIs(.splitting(splitter, head: head))
            return
        }
        machine.bodyIs(.streaming)
        if cacheResponseHead(head, response: response, request: request, url: url) { return }
        channel.deliver { $0.connection(self, didReceive: response) }
    }

    /// Parts of a multipart/x-mixed-replace body: a response (the outer head with the part's
    /// fields) when a part begins, then its bytes.
    func deliverParts(_ pieces: [MultipartReplaceSplitter.Piece], of head: ResponseHead) {
        guard let url = currentRequest.url else { return }
        for piece in pieces {
            switch piece {
            case .part(let fields):
                var partHead = head
                partHead.fields.removeAll { field in
                    fields.keys.contains { $0.caseInsensitiveCompare(field.name) == .orderedSame }
                }
                partHead.fields.removeAll { $0.name.caseInsensitiveCompare("Content-Length") == .orderedSame }
                partHead.fields += fields.map { (name: $0.key, value: $0.value) }
                if let response = partHead.httpResponse(for: url) {
                    channel.deliver { $0.connection(self, didReceive: response) }
                }
            case .data(let data):
                channel.deliver { $0.connection(self, didReceive: data) }
            case .failed(let reason):
                return fail(
                    LoaderError.make(
                        .cannotParseResponse,
                        "The multipart/x-mixed-replace body from \(LoaderConnection.urlWithoutPassword(url).absoluteString) is malformed: \(reason)",
                        url: url
                    )
                )
            }
        }
    }

    func handleCompletion(_ result: CurlResult, body: Machine.Body) {
        guard result.succeeded else {
            let url = currentRequest.url ?? originalRequest.url ?? URL(fileURLWithPath: "/")
            let awaitingHead = if case .awaitingHead = body { true } else { false }
            if handleTLSFailure(result, url: url, awaitingHead: awaitingHead) { return }
            if awaitingHead, serveStaleInsteadOfFailure(url: url) { return }
            fail(LoaderError.make(for: result, url: url))
            return
        }
        switch body {
        case .holding(let head, let response, let held):
            heldBodyDropped = held.dropped
            if RedirectHop.isRedirect(head) {
                followRedirect(head, response: response, body: held.data)
            } else {
                answerChallenge(head, response: response, body: held.data)
            }
        case .streaming, .awaitingHead, .splitting:
            authenticationSucceeded()
            clientIdentitiesSucceeded()
            offerToCache()
            finish()
        }
    }

    /// Delivers a held response (a redirect or challenge we are not following) as the result.
    /// One whose body was cut at ``LoadStateMachine/HeldBody/limit`` fails after what was kept,
    /// rather than pass for whole.
    func deliverFinal(_ response: HTTPURLResponse, body: Data) {
        channel.deliver { delegate in
            delegate.connection(self, didReceive: response)
            if !body.isEmpty { delegate.connection(self, didReceive: body) }
        }
        guard heldBodyDropped == 0 else {
            return fail(
                LoaderError.make(
                    .dataLengthExceedsMaximum,
                    "The body of the \(response.statusCode) response is over \(Machine.HeldBody.limit >> 20) MiB, "
                        + "more than Keyjar keeps of a redirect's or a challenge's body; the rest was dropped",
                    url: response.url
                )
            )
        }
        finish()
    }
}

/// An InputStream handed across queues; it is read by one transfer only.
struct UncheckedStream: @unchecked Sendable {
    let stream: InputStream
}
