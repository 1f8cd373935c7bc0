import Foundation
import FoundationNetworking
import Keyjar
import KeyjarCore
import KeyjarLoader
import KeyjarLocks
import KeyjarResponseCache
import KeyjarTestSupport
import KeyjarTransfer
import Testing

/// URLSession programs through `KeyjarURLProtocol` (`configuration.useKeyjar(loader)`): real
/// data, upload and download tasks of a real URLSession against the loopback server
/// (Servers/loader_server.py), with cookies and credentials in a real keyjard.
@Suite(.timeLimit(hangLimit), .servicesStopCleanly)
struct URLProtocolTests {
    let server: LoaderTestServer

    init() async throws { server = try await LoaderTestServer() }

    /// A session whose requests go through `loader`.
    func session(_ loader: URLLoader, delegate: (any URLSessionDelegate)? = nil) -> URLSession {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.useKeyjar(loader)
        return URLSession(configuration: configuration, delegate: delegate, delegateQueue: nil)
    }

    func keyjard() async throws -> (InProcessServer, KeyjarClient.Configuration) {
        let daemon = try await InProcessServer()
        return (daemon, KeyjarClient.Configuration(socketPath: daemon.socketPath, autoStart: false))
    }

    @Test func cookiesSetByOneRequestAreInTheSharedJarAndSentOnTheNext() async throws {
        let (_, client) = try await keyjard()
        let cookies = try await SharedCookieStorage.connect(configuration: client)
        let session = session(URLLoader(configuration: .init(cookieStorage: cookies)))
        defer { session.finishTasksAndInvalidate() }

        // A data task with a completion handler.
        let set = await completion(of: session, server.url("/set-cookies"))
        #expect(set.error == nil)
        #expect(set.status == 200 && set.body == "ok")
        // In keyjard: another client sees them, and Foundation kept no copy. Each Set-Cookie
        // line is one cookie, as sent ("b=2, c=3" too), not as HTTPURLResponse joins them.
        let other = try await SharedCookieStorage.connect(configuration: client)
        #expect(Set(other.cookies(for: server.url("/")).map(\.name)) == ["a", "b", "d"])
        #expect(other.cookies(for: server.url("/")).first { $0.name == "b" }?.value == "2, c=3")
        #expect(HTTPCookieStorage.shared.cookies(for: server.url("/")) ?? [] == [])

        // A cookie another client stores goes out too, with async `data(for:)`.
        try await other.storeCookies(fromResponseHeaders: ["e=5; Path=/"], for: server.url("/"), mainDocumentURL: nil)
        let (data, response) = try await session.data(for: URLRequest(url: server.url("/echo")))
        #expect((response as? HTTPURLResponse)?.statusCode == 200)
        let sent = try decodeEcho(String(decoding: data, as: UTF8.self)).headers["cookie"] ?? ""
        #expect(Set(sent.components(separatedBy: "; ")) == ["a=1", "b=2, c=3", "d=4", "e=5"])

        // A request that opts out of cookies sends none and keeps none.
        var optOut = URLRequest(url: server.url("/redirect?status=200&cookie=f%3D6"))
        optOut.httpShouldHandleCookies = false
        _ = try await session.data(for: optOut)
        #expect(!other.cookies(for: server.url("/")).contains { $0.name == "f" })
    }

    @Test func uploadTasksSendTheirBodies() async throws {
        let session = session(ephemeralLoader())
        defer { session.finishTasksAndInvalidate() }
        var request = URLRequest(url: server.url("/echo"))
        request.httpMethod = "POST"

        // uploadTask(with:from:) keeps the body beside the request, not in it.
        let fromData = await uploadCompletion(of: session, request, body: Data("from data".utf8))
        #expect(fromData.error == nil)
        let echoed = try decodeEcho(fromData.body)
        #expect(echoed.method == "POST" && echoed.body == "from data")

        let (asyncData, _) = try await session.upload(for: request, from: Data("async upload".utf8))
        #expect(try decodeEcho(String(decoding: asyncData, as: UTF8.self)).body == "async upload")

        let directory = try TemporaryDirectory()
        let file = URL(fileURLWithPath: directory.path("body.txt"))
        try Data(String(repeating: "file body ", count: 10_000).utf8).write(to: file)
        let (fileData, _) = try await session.upload(for: request, fromFile: file)
        let fromFile = try decodeEcho(String(decoding: fileData, as: UTF8.self))
        #expect(fromFile.body == String(repeating: "file body ", count: 10_000))
        #expect(fromFile.headers["content-length"] == "100000")

        // A data task's own body, in the request.
        var withBody = request
        withBody.httpBody = Data("in the request".utf8)
        let (dataTaskData, _) = try await session.data(for: withBody)
        #expect(try decodeEcho(String(decoding: dataTaskData, as: UTF8.self)).body == "in the request")
    }

    @Test func aStreamedUploadTakesItsBodyFromTheDelegate() async throws {
        let delegate = SessionRecorder(bodyStream: { InputStream(data: Data("streamed body".utf8)) })
        let session = session(ephemeralLoader(), delegate: delegate)
        defer { session.finishTasksAndInvalidate() }
        var request = URLRequest(url: server.url("/echo"))
        request.httpMethod = "PUT"
        request.setValue("13", forHTTPHeaderField: "Content-Length")
        session.uploadTask(withStreamedRequest: request).resume()
        #expect(await delegate.completed.wait())
        #expect(delegate.error == nil)
        #expect(try decodeEcho(delegate.body).body == "streamed body")
        #expect(delegate.sent.last == 13)
    }

    /// No stream from the delegate fails the task: the request never goes out without its body.
    @Test func aStreamedUploadWithoutAStreamFails() async throws {
        let delegate = SessionRecorder(bodyStream: { nil })
        let session = session(ephemeralLoader(), delegate: delegate)
        defer { session.finishTasksAndInvalidate() }
        var request = URLRequest(url: server.url("/echo?key=nostream"))
        request.httpMethod = "PUT"
        session.uploadTask(withStreamedRequest: request).resume()
        #expect(await delegate.completed.wait())
        #expect((delegate.error as? URLError)?.code == .requestBodyStreamExhausted)
        #expect(try server.count("nostream") == 0)
    }

    /// Foundation completes a download task only with a file its own protocols made: through
    /// Keyjar the task fails saying so, before any request, instead of crashing the process.
    @Test func aDownloadTaskFailsSayingWhyInsteadOfCrashing() async throws {
        let session = session(ephemeralLoader())
        defer { session.finishTasksAndInvalidate() }
        let url = server.url("/hello?key=download")
        let error = await #expect(throws: URLError.self) { _ = try await session.download(for: URLRequest(url: url)) }
        #expect(error?.code == .unsupportedURL)
        #expect(error?.localizedDescription.contains("LoaderDownload") == true)

        let handler = await withCheckedContinuation { continuation in
            session.downloadTask(with: url) { location, _, error in
                continuation.resume(returning: (location == nil, (error as? URLError)?.code))
            }.resume()
        }
        #expect(handler == (true, URLError.Code.unsupportedURL))
        #expect(try server.count("download") == 0)
    }

    @Test func aStoredCredentialAnswersA401() async throws {
        let (_, client) = try await keyjard()
        let credentials = try await SharedCredentialStorage.connect(configuration: client)
        try await credentials.store(
            URLCredential(user: "alice", password: "wonderland", persistence: .permanent),
            for: wholeServer()
        )
        let session = session(URLLoader(configuration: .init(credentialStorage: credentials)))
        defer { session.finishTasksAndInvalidate() }
        let (data, response) = try await session.data(for: URLRequest(url: server.url("/basic/a?key=stored")))
        #expect((response as? HTTPURLResponse)?.statusCode == 200)
        #expect(String(decoding: data, as: UTF8.self) == "welcome alice")
        #expect(try server.count("401:stored") == 1)
    }

    /// URLSession's order: the session delegate first (proposed the stored credential), the
    /// stored credential when it performs default handling; what it gives and works is kept.
    @Test func theSessionDelegateIsAskedFirst() async throws {
        let (_, client) = try await keyjard()
        let credentials = try await SharedCredentialStorage.connect(configuration: client)
        try await credentials.store(
            URLCredential(user: "alice", password: "wonderland", persistence: .permanent),
            for: wholeServer()
        )
        let loader = URLLoader(configuration: .init(credentialStorage: credentials))

        let answering = SessionRecorder(challenge: { _ in
            (.useCredential, URLCredential(user: "bob", password: "builder", persistence: .permanent))
        })
        let bobs = session(loader, delegate: answering)
        defer { bobs.finishTasksAndInvalidate() }
        let (bob, _) = try await bobs.data(
            for: URLRequest(url: server.url("/basic/b?user=bob&password=builder&realm=bobs"))
        )
        #expect(String(decoding: bob, as: UTF8.self) == "welcome bob")
        #expect(answering.challenges == [.init(user: "alice", failures: 0, realm: "bobs")])
        // Bob's permanent credential got past the challenge: it is in keyjard now.
        let other = try await SharedCredentialStorage.connect(configuration: client)
        #expect(other.credentials(for: basicSpace(realm: "bobs"))?["bob"] != nil)

        let deferring = SessionRecorder(challenge: { _ in (.performDefaultHandling, nil) })
        let defaults = session(loader, delegate: deferring)
        defer { defaults.finishTasksAndInvalidate() }
        let (alice, _) = try await defaults.data(for: URLRequest(url: server.url("/basic/c?key=deferred")))
        #expect(String(decoding: alice, as: UTF8.self) == "welcome alice")
        #expect(deferring.challenges.count == 1)
    }

    /// Nobody answers: the 401 is the response, delivered once, and Foundation's own
    /// authentication (which would wait forever without a delegate) does not start.
    @Test func aChallengeNobodyAnswersEndsWithThe401() async throws {
        let plain = session(ephemeralLoader())
        defer { plain.finishTasksAndInvalidate() }
        let (data, response) = try await plain.data(for: URLRequest(url: server.url("/basic/n?key=nobody")))
        let http = try #require(response as? HTTPURLResponse)
        #expect(http.statusCode == 401 && String(decoding: data, as: UTF8.self) == "who are you")
        let field = http.value(forHTTPHeaderField: "WWW-Authenticate")?.trimmingCharacters(in: .whitespaces)
        #expect(field == "Basic realm=\"keyjar-test\"")

        let deferring = SessionRecorder(challenge: { _ in (.performDefaultHandling, nil) })
        let delegated = session(ephemeralLoader(), delegate: deferring)
        defer { delegated.finishTasksAndInvalidate() }
        let (_, second) = try await delegated.data(for: URLRequest(url: server.url("/basic/n?key=nobody2")))
        #expect((second as? HTTPURLResponse)?.statusCode == 401)
        #expect(deferring.challenges.count == 1)
        #expect(try server.count("401:nobody2") == 1)

        let cancelling = SessionRecorder(challenge: { _ in (.cancelAuthenticationChallenge, nil) })
        let cancelled = session(ephemeralLoader(), delegate: cancelling)
        defer { cancelled.finishTasksAndInvalidate() }
        await #expect(throws: URLError.self) {
            _ = try await cancelled.data(for: URLRequest(url: server.url("/basic/n?key=cancel")))
        }
    }

    @Test func redirectsAskTheSessionDelegate() async throws {
        let cookies = SharedCookieStorage.ephemeral()
        let loader = URLLoader(configuration: .init(cookieStorage: cookies))
        let refusing = SessionRecorder(redirect: { _ in nil })
        let refused = session(loader, delegate: refusing)
        defer { refused.finishTasksAndInvalidate() }
        let (body, response) = try await refused.data(for: URLRequest(url: server.url("/redirect?to=/hello")))
        #expect((response as? HTTPURLResponse)?.statusCode == 302)
        #expect(String(decoding: body, as: UTF8.self) == "redirect body")
        #expect(refusing.redirects == [.init(status: 302, to: server.url("/hello").absoluteString)])

        let following = SessionRecorder(redirect: { $0 })
        let followed = session(loader, delegate: following)
        defer { followed.finishTasksAndInvalidate() }
        let (hello, final) = try await followed.data(
            for: URLRequest(url: server.url("/redirect?to=/hello&cookie=hop%3D1%3B%20Path%3D%2F"))
        )
        #expect(String(decoding: hello, as: UTF8.self) == "hello world")
        #expect(final.url == server.url("/hello"))
        #expect(following.redirects.count == 1)
        // The redirect's own Set-Cookie went to the jar.
        #expect(cookies.cookies(for: server.url("/")).map(\.name) == ["hop"])
    }

    @Test func aCachedResponseIsServedFromTheCache() async throws {
        let cache = try ResponseCache(configuration: .init())
        let loader = URLLoader(configuration: .init(cookieStorage: .ephemeral(), responseCache: cache))
        let session = session(loader)
        defer { session.finishTasksAndInvalidate() }
        let url = server.url("/cache?key=session-cache&cc=max-age%3D600")
        let (first, _) = try await session.data(for: URLRequest(url: url))
        let (second, response) = try await session.data(for: URLRequest(url: url))
        #expect(String(decoding: first, as: UTF8.self) == "cached #1")
        #expect(String(decoding: second, as: UTF8.self) == "cached #1")
        #expect((response as? HTTPURLResponse)?.value(forHTTPHeaderField: "Age") != nil)
        #expect(try server.count("session-cache") == 1)

        // The data delegate's willCacheResponse decides, as with URLSession's own cache.
        let refusing = SessionRecorder(cache: { _ in nil })
        let refused = self.session(loader, delegate: refusing)
        defer { refused.finishTasksAndInvalidate() }
        let uncached = server.url("/cache?key=refused-cache&cc=max-age%3D600")
        _ = try await refused.data(for: URLRequest(url: uncached))
        let (again, _) = try await refused.data(for: URLRequest(url: uncached))
        #expect(String(decoding: again, as: UTF8.self) == "cached #2")
        #expect(refusing.cacheOffers == 2)
    }

    /// A body that arrives in pieces reaches a completion handler whole (Foundation keeps only
    /// the last piece a protocol delivers for it); a delegate without completion handlers hears
    /// the response, the whole body and the end.
    @Test func theWholeBodyReachesCompletionHandlersAndDelegates() async throws {
        let pieces = server.url("/stream?chunks=4&delay=0.01")
        let handling = session(ephemeralLoader())
        defer { handling.finishTasksAndInvalidate() }
        let handled = await completion(of: handling, pieces)
        #expect(handled.body == (0..<4).map { "chunk \($0)\n" }.joined())

        let delegate = SessionRecorder()
        let session = session(ephemeralLoader(), delegate: delegate)
        defer { session.finishTasksAndInvalidate() }
        session.dataTask(with: pieces).resume()
        #expect(await delegate.completed.wait())
        #expect(delegate.error == nil)
        #expect(delegate.responses == [200])
        #expect(delegate.body == (0..<4).map { "chunk \($0)\n" }.joined())

        // An upload reports its progress to the delegate.
        var request = URLRequest(url: server.url("/echo"))
        request.httpMethod = "POST"
        let uploading = SessionRecorder()
        let uploads = self.session(ephemeralLoader(), delegate: uploading)
        defer { uploads.finishTasksAndInvalidate() }
        uploads.uploadTask(with: request, from: Data(count: 200_000)).resume()
        #expect(await uploading.completed.wait())
        #expect(uploading.sent.last == 200_000)
    }

    @Test func theConfigurationsHeadersAreSentButNotTheLoadersName() async throws {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.httpAdditionalHeaders = ["X-Extra": "from the configuration", "X-Both": "configuration"]
        configuration.useKeyjar(ephemeralLoader())
        let session = URLSession(configuration: configuration)
        defer { session.finishTasksAndInvalidate() }
        var request = URLRequest(url: server.url("/echo"))
        request.setValue("request", forHTTPHeaderField: "X-Both")
        let (data, _) = try await session.data(for: request)
        let headers = try decodeEcho(String(decoding: data, as: UTF8.self)).headers
        #expect(headers["x-extra"] == "from the configuration")
        #expect(headers["x-both"] == "request")
        #expect(headers.keys.allSatisfy { !$0.contains("keyjar") })
        #expect(configuration.httpCookieStorage == nil && configuration.urlCache == nil)
        #expect(
            configuration.protocolClasses?.first.map(ObjectIdentifier.init) == ObjectIdentifier(KeyjarURLProtocol.self)
        )
    }

    /// The configuration's idle timeout applies to a request that sets none of its own: 1 s
    /// without a byte ends a load that the request's default (60 s) would let finish after the
    /// server's 3 s pause.
    @Test func theConfigurationsTimeoutApplies() async throws {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = 1
        configuration.useKeyjar(ephemeralLoader())
        let session = URLSession(configuration: configuration)
        defer { session.finishTasksAndInvalidate() }
        let error = await #expect(throws: URLError.self) {
            _ = try await session.data(for: URLRequest(url: server.url("/slow?key=idle&delay=3")))
        }
        #expect(error?.code == .timedOut)
    }

    @Test func aCancelledTaskEndsAsCancelled() async throws {
        let session = session(ephemeralLoader())
        defer { session.finishTasksAndInvalidate() }
        let outcome = Locked<(any Error)?>(nil)
        let finished = TestLatch()
        // The body's second half comes after an hour: on a machine busy enough to take a minute
        // between the request's arrival and the cancel, the load still cannot finish first.
        // Nor can the request's own timeout (60 s unless set) end it first.
        var request = URLRequest(url: server.url("/slow?key=cancelled&delay=3600"))
        request.timeoutInterval = 3600
        let task = session.dataTask(with: request) { _, _, error in
            outcome.withLock { $0 = error }
            finished.open()
        }
        task.resume()
        try await waitUntil("the server got the request") { try server.count("cancelled") == 1 }
        task.cancel()
        #expect(await finished.wait())
        // Foundation on Linux ends a cancelled task with its own NSError (NSURLErrorDomain,
        // NSURLErrorCancelled) when it gets there before the protocol's URLError, and that one
        // does not cast to URLError: the domain and code are the contract.
        let error = outcome.withLock { $0 }.map { $0 as NSError }
        #expect(error?.domain == NSURLErrorDomain && error?.code == NSURLErrorCancelled, "\(String(describing: error))")
    }

    // MARK: - Helpers

    /// A credential space for the whole test server, as people store them.
    func wholeServer() -> URLProtectionSpace {
        URLProtectionSpace(
            host: "127.0.0.1",
            port: server.port,
            protocol: "http",
            realm: nil,
            authenticationMethod: NSURLAuthenticationMethodDefault
        )
    }

    /// The space of a Basic challenge of the test server.
    func basicSpace(realm: String) -> URLProtectionSpace {
        URLProtectionSpace(
            host: "127.0.0.1",
            port: server.port,
            protocol: "http",
            realm: realm,
            authenticationMethod: NSURLAuthenticationMethodHTTPBasic
        )
    }

    struct Completed: Sendable {
        var status: Int?
        var body: String
        var error: URLError?
    }

    func completion(of session: URLSession, _ url: URL) async -> Completed {
        await withCheckedContinuation { continuation in
            session.dataTask(with: url) { data, response, error in
                continuation.resume(returning: Self.completed(data, response, error))
            }.resume()
        }
    }

    func uploadCompletion(of session: URLSession, _ request: URLRequest, body: Data) async -> Completed {
        await withCheckedContinuation { continuation in
            session.uploadTask(with: request, from: body) { data, response, error in
                continuation.resume(returning: Self.completed(data, response, error))
            }.resume()
        }
    }

    static func completed(_ data: Data?, _ response: URLResponse?, _ error: (any Error)?) -> Completed {
        Completed(
            status: (response as? HTTPURLResponse)?.statusCode,
            body: String(decoding: data ?? Data(), as: UTF8.self),
            error: error as? URLError
        )
    }
}

/// A session delegate that records what it hears and answers as told.
final class SessionRecorder: NSObject, URLSessionDataDelegate, @unchecked Sendable {
    // @unchecked: the answers are immutable, the rest is behind `state`.
    struct Challenge: Equatable {
        var user: String?
        var failures: Int
        var realm: String?
    }
    struct Redirect: Equatable {
        var status: Int
        var to: String
    }
    struct State {
        var challenges: [Challenge] = []
        var redirects: [Redirect] = []
        var responses: [Int] = []
        var body = Data()
        var sent: [Int64] = []
        var cacheOffers = 0
        var error: (any Error)?
    }
    typealias ChallengeAnswer = (URLSession.AuthChallengeDisposition, URLCredential?)

    private let state = Locked(State())
    let completed = TestLatch()
    private let challengeAnswer: (@Sendable (URLAuthenticationChallenge) -> ChallengeAnswer)?
    private let redirectAnswer: (@Sendable (URLRequest) -> URLRequest?)?
    private let cacheAnswer: (@Sendable (CachedURLResponse) -> CachedURLResponse?)?
    private let bodyStream: (@Sendable () -> InputStream?)?

    init(
        challenge: (@Sendable (URLAuthenticationChallenge) -> ChallengeAnswer)? = nil,
        redirect: (@Sendable (URLRequest) -> URLRequest?)? = nil,
        cache: (@Sendable (CachedURLResponse) -> CachedURLResponse?)? = nil,
        bodyStream: (@Sendable () -> InputStream?)? = nil
    ) {
        challengeAnswer = challenge
        redirectAnswer = redirect
        cacheAnswer = cache
        self.bodyStream = bodyStream
    }

    var challenges: [Challenge] { state.withLock { $0.challenges } }
    var redirects: [Redirect] { state.withLock { $0.redirects } }
    var responses: [Int] { state.withLock { $0.responses } }
    var body: String { state.withLock { String(decoding: $0.body, as: UTF8.self) } }
    var sent: [Int64] { state.withLock { $0.sent } }
    var cacheOffers: Int { state.withLock { $0.cacheOffers } }
    var error: (any Error)? { state.withLock { $0.error } }

    func urlSession(
        _ session: URLSession,
        task: URLSessionTask,
        didReceive challenge: URLAuthenticationChallenge,
        completionHandler: @escaping @Sendable (URLSession.AuthChallengeDisposition, URLCredential?) -> Void
    ) {
        state.withLock {
            $0.challenges.append(
                Challenge(
                    user: challenge.proposedCredential?.user,
                    failures: challenge.previousFailureCount,
                    realm: challenge.protectionSpace.realm
                )
            )
        }
        let (disposition, credential) = challengeAnswer?(challenge) ?? (.performDefaultHandling, nil)
        completionHandler(disposition, credential)
    }

    func urlSession(
        _ session: URLSession,
        task: URLSessionTask,
        willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest request: URLRequest,
        completionHandler: @escaping @Sendable (URLRequest?) -> Void
    ) {
        state.withLock {
            $0.redirects.append(Redirect(status: response.statusCode, to: request.url?.absoluteString ?? ""))
        }
        completionHandler(redirectAnswer.map { $0(request) } ?? request)
    }

    func urlSession(
        _ session: URLSession,
        task: URLSessionTask,
        needNewBodyStream completionHandler: @escaping @Sendable (InputStream?) -> Void
    ) {
        completionHandler(bodyStream?())
    }

    func urlSession(
        _ session: URLSession,
        task: URLSessionTask,
        didSendBodyData bytesSent: Int64,
        totalBytesSent: Int64,
        totalBytesExpectedToSend: Int64
    ) {
        state.withLock { $0.sent.append(totalBytesSent) }
    }

    func urlSession(
        _ session: URLSession,
        dataTask: URLSessionDataTask,
        didReceive response: URLResponse,
        completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void
    ) {
        state.withLock {
            $0.responses.append((response as? HTTPURLResponse)?.statusCode ?? 0)
            $0.body = Data()
        }
        completionHandler(.allow)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        state.withLock { $0.body.append(data) }
    }

    func urlSession(
        _ session: URLSession,
        dataTask: URLSessionDataTask,
        willCacheResponse proposedResponse: CachedURLResponse,
        completionHandler: @escaping @Sendable (CachedURLResponse?) -> Void
    ) {
        state.withLock { $0.cacheOffers += 1 }
        completionHandler(cacheAnswer.map { $0(proposedResponse) } ?? proposedResponse)
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        state.withLock { $0.error = error }
        completed.open()
    }
}
