import Foundation
import FoundationNetworking
import Keyjar
import KeyjarCore
import KeyjarLocks
import KeyjarResponseCache
import KeyjarTestSupport
import Synchronization
import Testing

@testable import KeyjarLoader
@testable import KeyjarTransfer

@Suite("LoaderConnection: the delegate contract against a real loopback server")
struct LoaderConnectionTests {
    let server: LoaderTestServer
    init() async throws { server = try await LoaderTestServer() }

    @Test func simpleLoadTellsTheDelegateInOrder() async throws {
        let delegate = await load(URLRequest(url: server.url("/hello")), with: ephemeralLoader())
        let events = delegate.events
        #expect(events.first == .willSend(url: server.url("/hello").absoluteString, redirectStatus: nil))
        #expect(events.dropFirst().first == .response(status: 200))
        #expect(events.last == .finished)
        #expect(delegate.body == "hello world")
        #expect(delegate.lastResponse?.value(forHTTPHeaderField: "content-type") == "text/plain")
    }

    @Test func dataIsDeliveredAsItArrives() async throws {
        let delegate = await load(URLRequest(url: server.url("/stream?chunks=5&delay=0.1")), with: ephemeralLoader())
        let dataEvents = delegate.events.filter { if case .data = $0 { true } else { false } }
        #expect(dataEvents.count >= 3, "\(delegate.events)")
        #expect(delegate.body == (0..<5).map { "chunk \($0)\n" }.joined())
    }

    @Test func aSlowDelegatePausesTheTransferInsteadOfBufferingTheBody() async throws {
        // 24 MB to a delegate that dawdles: libcurl is paused while 4 MB wait for delivery,
        // and every byte still arrives, in order.
        let size = 24_000_000
        let delegate = RecordingDelegate(onData: { _, _ in usleep(200) })
        let connection = ephemeralLoader().connection(
            with: URLRequest(url: server.url("/big?size=\(size)")),
            delegate: delegate
        )
        #expect(await delegate.wait())
        #expect(delegate.state.withLock { $0.body.count } == size)
        #expect(delegate.state.withLock { $0.body.allSatisfy { $0 == UInt8(ascii: "x") } })
        #expect(connection.backpressurePauses > 0)
    }

    @Test func eachPartOfAMixedReplaceBodyIsANewResponse() async throws {
        let delegate = await load(URLRequest(url: server.url("/mixed-replace")), with: ephemeralLoader())
        let responses = delegate.state.withLock { $0.responses.map { $0.mimeType ?? "" } }
        #expect(responses == ["text/x-part1", "text/x-part2", "text/x-part3"])
        // The body after the last response is the last part only.
        #expect(delegate.body == "part 3")
        #expect(delegate.events.last == .finished)
    }

    @Test(arguments: [301, 302, 303, 307, 308])
    func redirectsFollowTheMethodRules(status: Int) async throws {
        var request = URLRequest(url: server.url("/redirect?status=\(status)&to=/echo"))
        request.httpMethod = "POST"
        request.httpBody = Data("payload".utf8)
        request.setValue("text/plain", forHTTPHeaderField: "Content-Type")
        let delegate = await load(request, with: ephemeralLoader())
        #expect(delegate.events.contains(.willSend(url: server.url("/echo").absoluteString, redirectStatus: status)))
        let echo = try decodeEcho(delegate.body)
        if status == 307 || status == 308 {
            #expect(echo.method == "POST")
            #expect(echo.body == "payload")
        } else {
            #expect(echo.method == "GET")
            #expect(echo.body == "")
            #expect(echo.headers["content-type"] == nil)
        }
    }

    @Test func refusingARedirectDeliversTheRedirectResponse() async throws {
        let delegate = RecordingDelegate(willSend: { request, redirect in redirect == nil ? request : nil })
        _ = await load(
            URLRequest(url: server.url("/redirect?status=302&to=/echo")),
            with: ephemeralLoader(),
            delegate: delegate
        )
        #expect(delegate.events.suffix(3) == [.response(status: 302), .data(count: 13), .finished])
        #expect(delegate.body == "redirect body")
    }

    @Test func aDelegateCanReplaceARedirectedRequest() async throws {
        let replacement = server.url("/echo?replaced=1")
        let delegate = RecordingDelegate(willSend: { request, redirect in
            redirect == nil ? request : URLRequest(url: replacement)
        })
        _ = await load(URLRequest(url: server.url("/redirect?to=/hello")), with: ephemeralLoader(), delegate: delegate)
        #expect(try decodeEcho(delegate.body).path == "/echo?replaced=1")
    }

    @Test func aChainOfRedirectsIsFollowedAndALoopFails() async throws {
        let chain = await load(URLRequest(url: server.url("/chain?n=5")), with: ephemeralLoader())
        #expect(chain.body == "hello world")
        #expect(chain.events.filter { if case .willSend(_, .some) = $0 { true } else { false } }.count == 5)

        let loop = await load(URLRequest(url: server.url("/loop")), with: ephemeralLoader())
        #expect(loop.error?.code == .httpTooManyRedirects)
        #expect(loop.error?.failingURL?.path == "/loop")
        #expect(loop.events.last == .failed(code: URLError.httpTooManyRedirects.rawValue))
    }

    @Test func authorizationIsDroppedOnACrossOriginRedirect() async throws {
        let crossOrigin = server.url("/echo", host: "localhost").absoluteString
        for (target, keeps) in [("/echo", true), (crossOrigin, false)] {
            var request = URLRequest(url: server.url("/redirect?status=307&to=\(target)"))
            request.setValue("Bearer secret-token", forHTTPHeaderField: "Authorization")
            let delegate = await load(request, with: ephemeralLoader())
            let echo = try decodeEcho(delegate.body)
            #expect((echo.headers["authorization"] != nil) == keeps, "redirect to \(target)")
        }
    }

    @Test func cookiesSetOnARedirectAreSentOnTheNextHop() async throws {
        let loader = ephemeralLoader()
        let delegate = await load(
            URLRequest(url: server.url("/redirect?to=/echo&cookie=hop%3D1%3B%20Path%3D%2F")),
            with: loader
        )
        #expect(try decodeEcho(delegate.body).headers["cookie"] == "hop=1")
        // And on a later load.
        let later = await load(URLRequest(url: server.url("/echo")), with: loader)
        #expect(try decodeEcho(later.body).headers["cookie"] == "hop=1")
    }

    @Test func everySetCookieLineIsStoredOnItsOwn() async throws {
        let loader = ephemeralLoader()
        _ = await load(URLRequest(url: server.url("/set-cookies")), with: loader)
        let cookies = try #require(loader.configuration.cookieStorage).cookies.sorted { $0.name < $1.name }
        #expect(cookies.map(\.name) == ["a", "b", "d"])
        #expect(cookies.first { $0.name == "b" }?.value == "2, c=3")
        #expect(cookies.first { $0.name == "d" }?.expires != nil)
    }

    /// A request that is its own main document (or has none) is same-site and gets
    /// SameSite=Strict cookies; one from another site's document does not.
    @Test func sameSiteCookiesFollowTheMainDocument() async throws {
        let loader = ephemeralLoader()
        let storage = try #require(loader.configuration.cookieStorage)
        let url = server.url("/echo")
        try await storage.storeCookies(
            fromResponseHeaders: ["strict=1; SameSite=Strict; Path=/", "lax=2; Path=/"],
            for: url,
            mainDocumentURL: url
        )
        func cookieHeader(mainDocument: URL?) async throws -> String? {
            var request = URLRequest(url: url)
            request.mainDocumentURL = mainDocument
            return try await decodeEcho(load(request, with: loader).body).headers["cookie"]
        }
        #expect(try await cookieHeader(mainDocument: nil) == "strict=1; lax=2")
        #expect(try await cookieHeader(mainDocument: url) == "strict=1; lax=2")
        #expect(try await !(cookieHeader(mainDocument: server.url("/", host: "localhost")) ?? "").contains("strict"))
    }

    @Test func aRequestCanOptOutOfCookies() async throws {
        let loader = ephemeralLoader()
        _ = await load(URLRequest(url: server.url("/set-cookies")), with: loader)
        var request = URLRequest(url: server.url("/echo"))
        request.httpShouldHandleCookies = false
        #expect(try await decodeEcho(load(request, with: loader).body).headers["cookie"] == nil)
        #expect(
            try await decodeEcho(load(URLRequest(url: server.url("/echo")), with: loader).body).headers["cookie"] != nil
        )
    }

    @Test(arguments: ["/gzip", "/deflate", "/br", "/zstd"])
    func compressedBodiesAreDecoded(path: String) async throws {
        let delegate = await load(URLRequest(url: server.url(path)), with: ephemeralLoader())
        #expect(delegate.lastResponse?.statusCode == 200)
        #expect(delegate.body == String(repeating: "decoded by libcurl ", count: 50), "\(path)")
    }

    /// `maximumRedirects` redirects are followed; one more fails the load.
    @Test func theRedirectLimitHoldsAtItsBoundary() async throws {
        let loader = URLLoader(configuration: .init(cookieStorage: .ephemeral(), maximumRedirects: 3))
        let within = await load(URLRequest(url: server.url("/chain?n=3")), with: loader)
        #expect(within.body == "hello world")
        #expect(
            within.events.filter { if case .willSend(_, let status?) = $0 { status == 302 } else { false } }.count == 3
        )
        let beyond = await load(URLRequest(url: server.url("/chain?n=4")), with: loader)
        #expect(beyond.error?.code == .httpTooManyRedirects)
        let none = await load(
            URLRequest(url: server.url("/chain?n=1")),
            with: URLLoader(configuration: .init(maximumRedirects: 0))
        )
        #expect(none.error?.code == .httpTooManyRedirects)
    }

    @Test func uploadsReportProgressAndArrive() async throws {
        var request = URLRequest(url: server.url("/echo"))
        request.httpMethod = "PUT"
        let payload = String(repeating: "k", count: 300_000)
        request.httpBody = Data(payload.utf8)
        let delegate = await load(request, with: ephemeralLoader())
        let sent = delegate.events.compactMap {
            if case .sent(let bytes, let total, let expected) = $0 { (bytes, total, expected) } else { nil }
        }
        #expect(sent.last?.1 == 300_000)
        #expect(sent.allSatisfy { $0.2 == 300_000 })
        #expect(sent.map(\.0).reduce(0, +) == 300_000)
        let echo = try decodeEcho(delegate.body)
        #expect(echo.method == "PUT")
        #expect(echo.body.count == 300_000)
    }

    private static let streamedPayload = String(repeating: "streamed body ", count: 20_000)

    private func streamed(_ path: String) -> URLRequest {
        var request = URLRequest(url: server.url(path))
        request.httpMethod = "POST"
        request.httpBodyStream = InputStream(data: Data(Self.streamedPayload.utf8))
        request.setValue(String(Self.streamedPayload.utf8.count), forHTTPHeaderField: "Content-Length")
        return request
    }

    @Test func aStreamedBodyIsSpooledSoThatA307OrAChallengeSendsItAgain() async throws {
        let payload = Self.streamedPayload
        // A delegate without needNewBodyStream: the copy made while sending is sent again.
        let redirected = SpoolWatchingDelegate()
        _ = await load(streamed("/redirect?status=307&to=/echo"), with: ephemeralLoader(), delegate: redirected)
        #expect(redirected.error == nil)
        let echo = try decodeEcho(redirected.body)
        #expect(echo.method == "POST" && echo.body == payload)
        #expect(redirected.spooledAtRedirects.withLock { $0 } == [true])

        // An authentication retry sends it again too.
        let answering = ChallengeDelegate { _ in .use(user: "alice", password: "wonderland", persistence: .none) }
        _ = ephemeralLoader().connection(with: streamed("/basic/spool?echo=1"), delegate: answering)
        #expect(await answering.recorder.wait())
        #expect(answering.challenges.count == 1)
        #expect(answering.recorder.body == "welcome alice " + payload)

    }

    /// Apple's `needNewBodyStream`: implementing it opts out of spooling, the delegate's stream is
    /// sent again, and nil fails the load.
    @Test func aDelegateThatSuppliesBodyStreamsIsAskedAndNothingIsSpooled() async throws {
        let length = Self.streamedPayload.utf8.count
        let resending = StreamSupplyingDelegate {
            InputStream(data: Data(String(repeating: "x", count: length).utf8))
        }
        _ = await load(streamed("/redirect?status=307&to=/echo"), with: ephemeralLoader(), delegate: resending)
        #expect(try decodeEcho(resending.body).body == String(repeating: "x", count: length))
        #expect(resending.asked.load(ordering: .relaxed) == 1)
        #expect(resending.spooledAtRedirects.withLock { $0 } == [false], "no copy of the stream is kept")

        let refusing = StreamSupplyingDelegate { nil }
        _ = await load(
            streamed("/redirect?status=307&to=/echo%3Fkey%3Drefused"),
            with: ephemeralLoader(),
            delegate: refusing
        )
        #expect(refusing.asked.load(ordering: .relaxed) == 1)
        #expect(refusing.spooledAtRedirects.withLock { $0 } == [false])
        #expect(refusing.error?.code == .requestBodyStreamExhausted)
        #expect(refusing.error?.localizedDescription.contains("needNewBodyStream returned nil") == true)
        #expect(refusing.events.last == .failed(code: URLError.requestBodyStreamExhausted.rawValue))
        #expect(try server.count("refused") == 0, "the body was not sent again")
    }

    /// Apple's connection fails a load whose canonical request the delegate refuses.
    @Test func refusingTheCanonicalRequestFailsTheLoadAsCancelled() async throws {
        let delegate = RecordingDelegate(willSend: { _, _ in nil })
        let url = server.url("/hello?key=refused-first")
        _ = await load(URLRequest(url: url), with: ephemeralLoader(), delegate: delegate)
        #expect(
            delegate.events == [
                .willSend(url: url.absoluteString, redirectStatus: nil), .failed(code: URLError.cancelled.rawValue),
            ]
        )
        #expect(delegate.error?.failingURL == url)
        #expect(try server.count("refused-first") == 0)
    }

    @Test func theCanonicalRequestHasAPath() async throws {
        let bare = try #require(URL(string: "http://127.0.0.1:\(server.port)"))
        let delegate = await load(URLRequest(url: bare), with: ephemeralLoader())
        #expect(delegate.events.first == .willSend(url: "http://127.0.0.1:\(server.port)/", redirectStatus: nil))
        // The server was asked for "/" (it has no such path).
        #expect(delegate.lastResponse?.statusCode == 404)
        #expect(try server.count("/") == 1)
    }

    /// NSURLConnection's `canHandle(_:)`, and a request nothing loads failing before the
    /// delegate hears anything else.
    @Test func anUnsupportedSchemeFailsBeforeTheDelegateIsAsked() async throws {
        #expect(LoaderConnection.canHandle(URLRequest(url: server.url("/hello"))))
        #expect(LoaderConnection.canHandle(URLRequest(url: URL(string: "data:,x")!)))
        #expect(LoaderConnection.canHandle(URLRequest(url: URL(fileURLWithPath: "/tmp"))))
        #expect(!LoaderConnection.canHandle(URLRequest(url: URL(string: "gopher://example.com/")!)))
        #expect(!ephemeralLoader().canHandle(URLRequest(url: URL(string: "gopher://example.com/")!)))

        let delegate = LegacyDelegate(canAuthenticate: true)
        let url = URL(string: "gopher://example.com/menu")!
        _ = ephemeralLoader().connection(with: URLRequest(url: url), delegate: delegate)
        #expect(await delegate.recorder.wait())
        #expect(delegate.recorder.events == [.failed(code: URLError.unsupportedURL.rawValue)])
        #expect(delegate.recorder.error?.failingURL == url)
    }

    /// Apple's `suggestedFilename`: Content-Disposition, else the URL's last path component, else
    /// its host (Foundation on Linux says "Unknown").
    @Test func aResponseSuggestsAFileNameFromItsURL() async throws {
        let hello = await load(URLRequest(url: server.url("/hello")), with: ephemeralLoader())
        #expect(hello.lastResponse?.suggestedFilename == "hello")
        let named = await load(URLRequest(url: server.url("/files/q3%20report.pdf")), with: ephemeralLoader())
        #expect(named.lastResponse?.suggestedFilename == "q3 report.pdf")
        let root = await load(URLRequest(url: server.url("/")), with: ephemeralLoader())
        #expect(root.lastResponse?.suggestedFilename == "127.0.0.1")
        let url = try #require(URL(string: "https://example.com/files/report.pdf"))
        let disposition = try #require(
            HeadForTests.response(url, fields: ["Content-Disposition": "attachment; filename=\"given.pdf\""])
        )
        #expect(disposition.suggestedFilename == "given.pdf")
        #expect(try #require(HeadForTests.response(url, fields: [:])).suggestedFilename == "report.pdf")
    }

    /// The copy of a streamed body is open, private and nameless from the moment it exists.
    @Test func aSpooledBodyHasNoName() throws {
        let spool = try #require(BodySpool(source: InputStreamBody(InputStream(data: Data("body".utf8)))))
        let targets = try FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").compactMap {
            try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/" + $0)
        }
        let copies = targets.filter { $0.contains("keyjar-body-") }
        #expect(copies.count >= 1)
        #expect(copies.allSatisfy { $0.hasSuffix(" (deleted)") }, "\(copies)")
        withExtendedLifetime(spool) {}
    }

    @Test func serverFailuresBecomeURLErrors() async throws {
        let cases: [(String, URLError.Code)] = [
            ("/garbage", .badServerResponse), ("/truncated", .networkConnectionLost),
            ("/endless-headers", .badServerResponse),
        ]
        for (path, code) in cases {
            let delegate = await load(URLRequest(url: server.url(path)), with: ephemeralLoader())
            #expect(delegate.error?.code == code, "\(path): \(delegate.error.map { "\($0)" } ?? "no error")")
            #expect(delegate.error?.failingURL == server.url(path))
            #expect(delegate.events.last == .failed(code: code.rawValue))
        }
        // Nothing listens on port 1.
        let refused = await load(URLRequest(url: URL(string: "http://127.0.0.1:1/")!), with: ephemeralLoader())
        #expect(refused.error?.code == .cannotConnectToHost)
        let unsupported = await load(URLRequest(url: URL(string: "gopher://127.0.0.1/")!), with: ephemeralLoader())
        #expect(unsupported.error?.code == .unsupportedURL)
    }

    /// The server sends the head and half the body, then nothing for 600 s. Whether the second
    /// of silence comes before the head (a busy machine) or after it, the load ends timed out:
    /// asserting the head arrived first would test how fast the machine is.
    @Test func anIdleTimeoutFires() async throws {
        var request = URLRequest(url: server.url("/slow?delay=600"))
        request.timeoutInterval = 1
        let delegate = await load(request, with: ephemeralLoader())
        #expect(delegate.error?.code == .timedOut)
        #expect(delegate.events.last == .failed(code: URLError.Code.timedOut.rawValue))
        #expect(delegate.body.count < 10, "the stalled half arrived")
    }

    @Test func cancelStopsEveryMessage() async throws {
        // Cancel after the first chunk: nothing is heard after cancel() returns.
        let cancelledAt = Locked<Int?>(nil)
        let delegate = RecordingDelegate(onData: { connection, _ in
            connection.cancel()
            cancelledAt.withLock { $0 = $0 ?? 1 }
        })
        let connection = ephemeralLoader().connection(
            with: URLRequest(url: server.url("/stream?chunks=5&delay=0.1")),
            delegate: delegate
        )
        #expect(await !delegate.wait(within: .seconds(2)), "a cancelled load must not finish or fail")
        let events = delegate.events
        #expect(events.filter { if case .data = $0 { true } else { false } }.count == 1, "\(events)")
        #expect(!events.contains(.finished))
        connection.cancel()

        // Cancelled before it starts: the delegate hears nothing at all.
        let silent = RecordingDelegate()
        let never = ephemeralLoader().connection(
            with: URLRequest(url: server.url("/hello")),
            delegate: silent,
            startImmediately: false
        )
        never.cancel()
        never.start()
        #expect(await !silent.wait(within: .seconds(1)))
        #expect(silent.events.isEmpty)

        // Cancelled while the delegate decides on a redirect: no response, no finish.
        let holder = Locked<LoaderConnection?>(nil)
        let inRedirect = RecordingDelegate(willSend: { request, redirect in
            if redirect != nil { holder.withLock { $0 }?.cancel() }
            return request
        })
        let redirecting = ephemeralLoader().connection(
            with: URLRequest(url: server.url("/redirect?to=/hello")),
            delegate: inRedirect,
            startImmediately: false
        )
        holder.withLock { $0 = redirecting }
        redirecting.start()
        #expect(await !inRedirect.wait(within: .seconds(1)))
        #expect(inRedirect.events.count == 2, "\(inRedirect.events)")
        #expect(!inRedirect.events.contains(.response(status: 200)))
    }

    @Test func theAsyncAndSynchronousCallsReturnBodyAndResponse() async throws {
        let loader = ephemeralLoader()
        let (data, response) = try await loader.data(for: URLRequest(url: server.url("/chain?n=2")))
        #expect(String(decoding: data, as: UTF8.self) == "hello world")
        #expect((response as? HTTPURLResponse)?.statusCode == 200)
        #expect(response.url == server.url("/hello"))

        let (syncData, syncResponse) = try loader.sendSynchronousRequest(
            URLRequest(url: server.url("/status?code=404&body=gone"))
        )
        #expect(String(decoding: syncData, as: UTF8.self) == "gone")
        #expect((syncResponse as? HTTPURLResponse)?.statusCode == 404)

        await #expect(throws: URLError.self) { try await loader.data(for: URLRequest(url: server.url("/garbage"))) }

        let task = Task { try await loader.data(for: URLRequest(url: server.url("/slow?delay=10"))) }
        try await Task.sleep(for: .milliseconds(200))
        task.cancel()
        do {
            _ = try await task.value
            Issue.record("a cancelled task returned data")
        } catch let error as URLError {
            #expect(error.code == .cancelled)
        }
    }

    /// libcurl handles are kept for later transfers: nothing of a PUT with a body and its own
    /// field may reach the GET that takes the handle next (over the same kept-alive connection).
    @Test func aReusedTransferCarriesNothingOfTheLoadBefore() throws {
        let loader = ephemeralLoader()
        var put = URLRequest(url: server.url("/echo"))
        put.httpMethod = "PUT"
        put.httpBody = Data("payload".utf8)
        put.setValue("1", forHTTPHeaderField: "X-Once")
        let (putData, _) = try loader.sendSynchronousRequest(put)
        let first = try decodeEcho(String(decoding: putData, as: UTF8.self))
        #expect(first.method == "PUT" && first.body == "payload" && first.headers["x-once"] == "1")

        let (getData, _) = try loader.sendSynchronousRequest(URLRequest(url: server.url("/echo")))
        let second = try decodeEcho(String(decoding: getData, as: UTF8.self))
        #expect(second.method == "GET" && second.body.isEmpty && second.headers["x-once"] == nil)
        #expect(second.headers["content-length"] == nil)
        #expect(second.peer == first.peer)
    }

    /// A blocked synchronous caller drives the one multi handle itself while the engine thread
    /// has nothing to do. Callers on several threads must all get their answers (redirects
    /// included, which add a transfer from the driving thread).
    @Test func synchronousCallersOnSeveralThreadsAllGetTheirAnswers() throws {
        let loader = ephemeralLoader()
        let failures = Locked<[String]>([])
        DispatchQueue.concurrentPerform(iterations: 4) { _ in
            for _ in 0..<10 {
                do {
                    let (data, response) = try loader.sendSynchronousRequest(URLRequest(url: server.url("/chain?n=2")))
                    let body = String(decoding: data, as: UTF8.self)
                    if body != "hello world" || response.url != server.url("/hello") {
                        failures.withLock { $0.append("\(body) from \(response.url?.absoluteString ?? "nowhere")") }
                    }
                } catch {
                    failures.withLock { $0.append("\(error)") }
                }
            }
        }
        #expect(failures.withLock { $0 }.isEmpty)
    }

    /// A delegate load that starts while a synchronous caller drives the multi handle is still
    /// driven to its end after that caller has returned (the engine thread takes over).
    @Test func aLoadStartedWhileASynchronousCallerDrivesOutlivesIt() async throws {
        let loader = ephemeralLoader()
        let synchronous = Locked<String?>(nil)
        let returned = TestSemaphore()
        Thread.detachNewThread {
            let body = (try? loader.sendSynchronousRequest(URLRequest(url: server.url("/slow?delay=0.4&key=driving"))))
                .map {
                    String(decoding: $0.0, as: UTF8.self)
                }
            synchronous.withLock { $0 = body }
            returned.signal()
        }
        // The synchronous caller is driving: its request has reached the server.
        try await waitUntil("the synchronous request reaching the server") { try server.count("driving") == 1 }
        let delegate = RecordingDelegate()
        _ = loader.connection(with: URLRequest(url: server.url("/slow?delay=1.2")), delegate: delegate)
        #expect(await returned.wait())
        #expect(synchronous.withLock { $0 } == "1234567890")
        #expect(await delegate.wait())
        #expect(delegate.body == "1234567890")
        #expect(delegate.events.last == .finished)
    }

    @Test func fileURLsLoadAndMissingFilesFail() async throws {
        let path = NSTemporaryDirectory() + "keyjar-loader-\(UUID().uuidString).txt"
        try Data("from a file".utf8).write(to: URL(fileURLWithPath: path))
        defer { try? FileManager.default.removeItem(atPath: path) }
        let delegate = await load(URLRequest(url: URL(fileURLWithPath: path)), with: ephemeralLoader())
        #expect(delegate.body == "from a file")
        #expect(delegate.events.last == .finished)
        let missing = await load(URLRequest(url: URL(fileURLWithPath: path + ".missing")), with: ephemeralLoader())
        #expect(missing.error?.code == .fileDoesNotExist)
    }

    @Test func theCacheHookCanKeepChangeOrRefuse() async throws {
        enum Mode { case keep, change, refuse }
        for mode in [Mode.keep, .change, .refuse] {
            let cache = try ResponseCache(configuration: .init())
            let loader = ephemeralLoader(responseCache: cache)
            let request = URLRequest(url: server.url("/cacheable"))
            let offered = Atomic<Int>(0)
            let delegate = RecordingDelegate(willCache: { proposed in
                offered.add(1, ordering: .relaxed)
                switch mode {
                case .keep: return proposed
                case .change: return CachedURLResponse(response: proposed.response, data: Data("changed".utf8))
                case .refuse: return nil
                }
            })
            _ = await load(request, with: loader, delegate: delegate)
            #expect(offered.load(ordering: .relaxed) == 1)
            let stored = try cache.lookup(try #require(request.url)).map {
                String(decoding: try $0.body.load(), as: UTF8.self)
            }
            switch mode {
            case .keep: #expect(stored == "cache me")
            case .change: #expect(stored == "changed")
            case .refuse: #expect(stored == nil)
            }
            let offeredNoStore = Atomic<Int>(0)
            let noStore = RecordingDelegate(willCache: { proposed in
                offeredNoStore.add(1, ordering: .relaxed)
                return proposed
            })
            _ = await load(URLRequest(url: server.url("/no-store")), with: loader, delegate: noStore)
            #expect(offeredNoStore.load(ordering: .relaxed) == 0)
        }
    }
}

/// Responses made the way the loader makes them.
enum HeadForTests {
    static func response(_ url: URL, fields: [String: String]) -> HTTPURLResponse? {
        ResponseHead(
            statusCode: 200,
            httpVersion: "HTTP/1.1",
            fields: fields.map { (name: $0.key, value: $0.value) }
        ).httpResponse(for: url)
    }
}
