import Foundation
import FoundationNetworking
import Keyjar
import KeyjarLocks
import KeyjarTestSupport
import Synchronization
import Testing

@testable import KeyjarLoader

/// Protocols an application registers (URLProtocol's shape), end to end through a
/// connection's delegate contract, and the loader's own `data:` protocol.
@Suite(.timeLimit(hangLimit), .servicesStopCleanly)
struct RegisteredProtocolTests {
    @Test func aRegisteredSchemeIsLoadedThroughTheDelegateContract() async throws {
        var configuration = URLLoader.Configuration()
        configuration.registerProtocolClass(NotesProtocol.self)
        let delegate = await load(
            URLRequest(url: URL(string: "notes://SHOPPING/list")!),
            with: URLLoader(configuration: configuration)
        )
        // The canonical form is the protocol's (host lower-cased); two pieces of data, in order.
        #expect(
            delegate.events == [
                .willSend(url: "notes://shopping/list", redirectStatus: nil), .response(status: 0), .data(count: 5),
                .data(count: 6), .finished,
            ]
        )
        #expect(delegate.body == "milk\nbread\n")
        let response = try #require(delegate.state.withLock { $0.responses.first })
        #expect(response.mimeType == "text/plain" && response.textEncodingName == "utf-8")

        // Without the registration the scheme is refused, saying why.
        let unknown = await load(
            URLRequest(url: URL(string: "notes://shopping/list")!),
            with: URLLoader(configuration: .init())
        )
        #expect(unknown.error?.code == .unsupportedURL)
        #expect(unknown.error?.localizedDescription.contains("no registered protocol loads it") == true)
    }

    @Test func theLastRegisteredIsAskedFirstAndTheConfigurationBeforeTheProcess() async throws {
        let url = URL(string: "x-keyjar-order://item")!
        LoaderProtocol.registerClass(FirstOrderProtocol.self)
        LoaderProtocol.registerClass(SecondOrderProtocol.self)
        defer {
            LoaderProtocol.unregisterClass(FirstOrderProtocol.self)
            LoaderProtocol.unregisterClass(SecondOrderProtocol.self)
        }
        #expect(await load(URLRequest(url: url), with: URLLoader(configuration: .init())).body == "second")
        LoaderProtocol.unregisterClass(SecondOrderProtocol.self)
        #expect(await load(URLRequest(url: url), with: URLLoader(configuration: .init())).body == "first")
        LoaderProtocol.registerClass(SecondOrderProtocol.self)
        // A loader's own classes come before the process's.
        let configured = URLLoader(configuration: .init(protocolClasses: [FirstOrderProtocol.self]))
        #expect(await load(URLRequest(url: url), with: configured).body == "first")
    }

    @Test func redirectsChallengesFailuresAndCancellationReachTheProtocol() async throws {
        let server = try await LoaderTestServer()
        var configuration = URLLoader.Configuration(cookieStorage: .ephemeral())
        configuration.registerProtocolClass(ScriptedProtocol.self)
        let loader = URLLoader(configuration: configuration)

        // A redirect to http: the delegate decides, and libcurl loads the target.
        let target = server.url("/hello").absoluteString.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
        let redirected = await load(URLRequest(url: URL(string: "x-scripted://redirect?to=\(target)")!), with: loader)
        #expect(redirected.events.contains(.willSend(url: server.url("/hello").absoluteString, redirectStatus: 302)))
        #expect(redirected.body == "hello world")

        // A challenge with the protocol's own sender, answered by the delegate.
        let answering = ChallengeDelegate { _ in .use(user: "alice", password: "wonderland", persistence: .none) }
        _ = loader.connection(with: URLRequest(url: URL(string: "x-scripted://challenge")!), delegate: answering)
        #expect(await answering.recorder.wait())
        #expect(answering.challenges.map(\.realm) == ["scripted"])
        #expect(answering.recorder.body == "hello alice")

        let failing = await load(URLRequest(url: URL(string: "x-scripted://fail")!), with: loader)
        #expect(failing.error?.code == .cannotConnectToHost)

        // Cancelling stops the protocol, and the delegate hears nothing more.
        let holding = RecordingDelegate()
        let connection = loader.connection(with: URLRequest(url: URL(string: "x-scripted://hold")!), delegate: holding)
        #expect(await ScriptedProtocol.started.wait())
        connection.cancel()
        #expect(await ScriptedProtocol.stopped.wait())
        #expect(holding.events == [.willSend(url: "x-scripted://hold", redirectStatus: nil)])
    }

    /// URLProtocol's request properties: they tag a request through copies (Foundation on Linux
    /// loses its own on copy), `canInit` sees them, and they are never sent.
    @Test func propertiesTagARequestThroughCopiesAndAreNeverSent() async throws {
        let server = try await LoaderTestServer()
        var request = URLRequest(url: server.url("/echo"))
        #expect(LoaderProtocol.property(forKey: "handled", in: request) == nil)
        #expect(LoaderProtocol.setProperty(true, forKey: "handled", in: &request))
        #expect(LoaderProtocol.setProperty(Date(timeIntervalSince1970: 5), forKey: "when", in: &request))
        var copy = request
        copy.timeoutInterval = 9
        #expect(LoaderProtocol.property(forKey: "handled", in: copy) as? Bool == true)
        #expect(LoaderProtocol.property(forKey: "when", in: copy) as? Date == Date(timeIntervalSince1970: 5))
        // Not a property list: refused, and nothing else changes.
        #expect(!LoaderProtocol.setProperty(NSObject(), forKey: "object", in: &request))
        #expect(LoaderProtocol.property(forKey: "handled", in: request) as? Bool == true)
        LoaderProtocol.removeProperty(forKey: "when", in: &request)
        #expect(LoaderProtocol.property(forKey: "when", in: request) == nil)
        let mutable = NSMutableURLRequest(url: server.url("/echo"))
        #expect(LoaderProtocol.setProperty("yes", forKey: "tag", in: mutable))
        #expect(LoaderProtocol.property(forKey: "tag", in: mutable as URLRequest) as? String == "yes")
        LoaderProtocol.removeProperty(forKey: "tag", in: mutable)
        #expect(LoaderProtocol.property(forKey: "tag", in: mutable as URLRequest) == nil)

        // A protocol that lets through the requests it tagged.
        let loader = URLLoader(configuration: .init(protocolClasses: [TaggingProtocol.self]))
        #expect(loader.protocolClass(for: URLRequest(url: server.url("/echo"))) == TaggingProtocol.self)
        #expect(loader.protocolClass(for: request) == nil)
        // The tagged request goes to the server without the field that carries the tag.
        let echoed = await load(request, with: loader)
        let echo = try decodeEcho(echoed.body)
        #expect(echo.path == "/echo")
        #expect(echo.headers[LoaderProtocol.propertiesField.lowercased()] == nil, "\(echo.headers)")
    }

    /// URLProtocol's caching: a response its storage policy allows is offered to the delegate
    /// and stored; the protocol is given it back as `cachedResponse` (user info included).
    @Test func aProtocolsResponseIsCachedByItsPolicyAndGivenBackToIt() async throws {
        let cache = try ResponseCache(configuration: .init())
        let loader = URLLoader(configuration: .init(responseCache: cache, protocolClasses: [RememberingProtocol.self]))
        let offered = Atomic<Int>(0)
        func delegate() -> RecordingDelegate {
            RecordingDelegate(willCache: { proposed in
                offered.add(1, ordering: .relaxed)
                return CachedURLResponse(
                    response: proposed.response,
                    data: proposed.data,
                    userInfo: ["stored": Date(timeIntervalSince1970: 7)],
                    storagePolicy: proposed.storagePolicy
                )
            })
        }
        let allowed = try #require(URL(string: "x-remembering://allowed/item"))
        let first = await load(URLRequest(url: allowed), with: loader, delegate: delegate())
        #expect(first.body == "fresh")
        #expect(offered.load(ordering: .relaxed) == 1)
        #expect(cache.lookup(allowed) != nil)
        let second = await load(URLRequest(url: allowed), with: loader, delegate: delegate())
        #expect(second.body == "remembered fresh from 1970-01-01T00:00:07Z")
        #expect(offered.load(ordering: .relaxed) == 2)

        // Not allowed: not offered, not stored.
        let refused = try #require(URL(string: "x-remembering://refused/item"))
        #expect(await load(URLRequest(url: refused), with: loader, delegate: delegate()).body == "fresh")
        #expect(offered.load(ordering: .relaxed) == 2)
        #expect(cache.lookup(refused) == nil)

        // The cache is keyed by URL alone: a POST's response is not stored, or a later GET
        // would be answered with it.
        let posted = try #require(URL(string: "x-remembering://allowed/posted"))
        var post = URLRequest(url: posted)
        post.httpMethod = "POST"
        #expect(await load(post, with: loader, delegate: delegate()).body == "fresh")
        #expect(offered.load(ordering: .relaxed) == 2)
        #expect(cache.lookup(posted) == nil)
    }

    @Test func dataURLsAreLoadedThroughTheSameMechanism() async throws {
        let loader = URLLoader(configuration: .init())
        let text = await load(URLRequest(url: URL(string: "data:,A%20brief%20note")!), with: loader)
        #expect(text.body == "A brief note")
        let plain = try #require(text.state.withLock { $0.responses.first })
        #expect(
            plain.mimeType == "text/plain" && plain.textEncodingName == "US-ASCII" && plain.expectedContentLength == 12
        )

        let encoded = await load(
            URLRequest(url: URL(string: "data:text/html;charset=utf-8;base64,PGI+aGk8L2I+")!),
            with: loader
        )
        #expect(encoded.body == "<b>hi</b>")
        let html = try #require(encoded.state.withLock { $0.responses.first })
        #expect(html.mimeType == "text/html" && html.textEncodingName == "utf-8")

        let broken = await load(URLRequest(url: URL(string: "data:;base64,@@@@")!), with: loader)
        #expect(broken.error?.code == .badURL)
        #expect(broken.error?.localizedDescription == "The data: URL cannot be read: its data is not valid base64.")
    }

    @Test(arguments: [
        ("data:,", "text/plain", "US-ASCII", ""),
        ("DATA:text/plain;charset=iso-8859-1,caf%E9", "text/plain", "iso-8859-1", "caf\u{E9}"),
        ("data:image/gif;base64,R0lG ODlh", "image/gif", nil, "GIF89a"),
        ("data:application/json;base64,eyJhIjoxfQ", "application/json", nil, "{\"a\":1}"),
        ("data:not a type;charset=utf-8,x", "text/plain", "US-ASCII", "x"),
        ("data:;charset=utf-8,%zz", "text/plain", "utf-8", "%zz"),
    ])
    func dataURLsFollowRFC2397(_ text: String, _ type: String, _ charset: String?, _ body: String) throws {
        let parsed = try DataURL(text)
        #expect(parsed.mimeType == type)
        #expect(parsed.textEncodingName == charset)
        #expect(parsed.data == Data(body.unicodeScalars.map { UInt8(truncatingIfNeeded: $0.value) }))
    }

    /// Mutated URLs (seeded, so a failure repeats): each parses or is a DataURLError, and a
    /// parse's media type is always `type/subtype`.
    @Test func mutatedDataURLsNeverCrashTheParser() {
        let seeds = ["data:text/html;charset=utf-8;base64,PGI+aGk8L2I+", "data:,A%20brief%20note", "data:;base64,QUJD"]
        var generator = SplitMix64(state: 2397)
        let alphabet = Array("data:;,=%/+ base64abcXYZ09\"\u{0}\u{FF}é".unicodeScalars)
        var parsed = 0
        for round in 0..<9_000 {
            var scalars = Array(seeds[round % seeds.count].unicodeScalars)
            for _ in 0..<Int.random(in: 1...6, using: &generator) {
                let position = Int.random(in: 0...scalars.count, using: &generator)
                switch Int.random(in: 0..<3, using: &generator) {
                case 0: scalars.insert(alphabet.randomElement(using: &generator)!, at: position)
                case 1 where position < scalars.count: scalars.remove(at: position)
                default: if position < scalars.count { scalars[position] = alphabet.randomElement(using: &generator)! }
                }
            }
            var text = String.UnicodeScalarView()
            text.append(contentsOf: scalars)
            if let url = try? DataURL(String(text)) {
                parsed += 1
                #expect(DataURL.isMediaType(url.mimeType), "\(String(text))")
            }
        }
        #expect(parsed > 1_000 && parsed < 9_000)
    }

    @Test func malformedDataURLsAreClearErrors() {
        for (text, reason) in [
            ("data:text/plain", "it has no comma before its data"), ("http:,x", "it does not begin with data:"),
            ("data:;base64,!!!!", "its data is not valid base64"),
        ] {
            #expect(throws: DataURLError(reason: reason)) { try DataURL(text) }
        }
    }
}

/// `notes://NAME/…`: two lines in two pieces; its canonical form lower-cases the host.
final class NotesProtocol: LoaderProtocol, @unchecked Sendable {
    override class func canInit(with request: URLRequest) -> Bool { request.url?.scheme == "notes" }

    override class func canonicalRequest(for request: URLRequest) -> URLRequest {
        var canonical = request
        var components = request.url.flatMap { URLComponents(url: $0, resolvingAgainstBaseURL: false) }
        let host = components?.host?.lowercased()
        components?.host = host
        canonical.url = components?.url ?? request.url
        return canonical
    }

    override func startLoading() {
        let response = URLResponse(
            url: request.url!,
            mimeType: "text/plain",
            expectedContentLength: 11,
            textEncodingName: "utf-8"
        )
        client.urlProtocol(self, didReceive: response, cacheStoragePolicy: .notAllowed)
        client.urlProtocol(self, didLoad: Data("milk\n".utf8))
        client.urlProtocol(self, didLoad: Data("bread\n".utf8))
        client.urlProtocolDidFinishLoading(self)
    }
}

extension LoaderProtocol {
    /// Answers with `text` as a whole text/plain response.
    func respond(_ text: String) {
        let body = Data(text.utf8)
        client.urlProtocol(
            self,
            didReceive: URLResponse(
                url: request.url!,
                mimeType: "text/plain",
                expectedContentLength: body.count,
                textEncodingName: nil
            ),
            cacheStoragePolicy: .notAllowed
        )
        client.urlProtocol(self, didLoad: body)
        client.urlProtocolDidFinishLoading(self)
    }
}

class OrderProtocol: LoaderProtocol, @unchecked Sendable {
    class var name: String { "" }
    override class func canInit(with request: URLRequest) -> Bool { request.url?.scheme == "x-keyjar-order" }
    override func startLoading() { respond(Self.name) }
}
final class FirstOrderProtocol: OrderProtocol, @unchecked Sendable {
    override class var name: String { "first" }
}
final class SecondOrderProtocol: OrderProtocol, @unchecked Sendable {
    override class var name: String { "second" }
}

/// `x-scripted://redirect?to=URL`, `challenge`, `fail`, `hold` (never answers until stopped).
final class ScriptedProtocol: LoaderProtocol, @unchecked Sendable {
    static let started = TestSemaphore()
    static let stopped = TestSemaphore()

    override class func canInit(with request: URLRequest) -> Bool { request.url?.scheme == "x-scripted" }

    override func startLoading() {
        let url = request.url!
        switch url.host {
        case "redirect":
            let target = URLComponents(url: url, resolvingAgainstBaseURL: false)?.queryItems?.first?.value ?? ""
            let response = HTTPURLResponse(
                url: url,
                statusCode: 302,
                httpVersion: "HTTP/1.1",
                headerFields: ["Location": target]
            )!
            client.urlProtocol(self, wasRedirectedTo: URLRequest(url: URL(string: target)!), redirectResponse: response)
        case "challenge":
            let space = URLProtectionSpace(
                host: "scripted",
                port: 0,
                protocol: "x-scripted",
                realm: "scripted",
                authenticationMethod: NSURLAuthenticationMethodDefault
            )
            let challenge = URLAuthenticationChallenge(
                protectionSpace: space,
                proposedCredential: nil,
                previousFailureCount: 0,
                failureResponse: nil,
                error: nil,
                sender: ScriptedSender(self)
            )
            client.urlProtocol(self, didReceive: challenge)
        case "fail":
            client.urlProtocol(self, didFailWithError: URLError(.cannotConnectToHost))
        default:
            Self.started.signal()
        }
    }

    override func stopLoading() {
        if request.url?.host == "hold" { Self.stopped.signal() }
    }

    func answered(_ user: String) { respond("hello \(user)") }
    func refused() { client.urlProtocol(self, didFailWithError: URLError(.userCancelledAuthentication)) }
}

/// The scripted protocol's own challenge sender.
final class ScriptedSender: NSObject, URLAuthenticationChallengeSender, @unchecked Sendable {
    let owner: ScriptedProtocol
    init(_ owner: ScriptedProtocol) { self.owner = owner }

    func use(_ credential: URLCredential, for challenge: URLAuthenticationChallenge) {
        owner.answered(credential.user ?? "?")
    }
    func continueWithoutCredential(for challenge: URLAuthenticationChallenge) { owner.answered("stranger") }
    func cancel(_ challenge: URLAuthenticationChallenge) { owner.refused() }
    func performDefaultHandling(for challenge: URLAuthenticationChallenge) { owner.answered("stranger") }
    func rejectProtectionSpaceAndContinue(with challenge: URLAuthenticationChallenge) { owner.answered("stranger") }
}

/// Loads an http request with a tag of its own, the tagged request going to libcurl: the
/// classic URLProtocol pattern a property makes possible.
final class TaggingProtocol: LoaderProtocol, @unchecked Sendable {
    override class func canInit(with request: URLRequest) -> Bool {
        request.url?.scheme == "http" && property(forKey: "handled", in: request) == nil
    }
    override func startLoading() { respond("untagged") }
}

/// `x-remembering://allowed/…` and `…/refused/…`: answers "fresh" with that storage policy,
/// or, when the loader hands it a cached response, what it remembered and when.
final class RememberingProtocol: LoaderProtocol, @unchecked Sendable {
    override class func canInit(with request: URLRequest) -> Bool { request.url?.scheme == "x-remembering" }

    override func startLoading() {
        var body = Data("fresh".utf8)
        if let cachedResponse {
            let when = (cachedResponse.userInfo?["stored"] as? Date).map { $0.formatted(.iso8601) } ?? "?"
            body = Data("remembered \(String(decoding: cachedResponse.data, as: UTF8.self)) from \(when)".utf8)
        }
        let response = URLResponse(
            url: request.url!,
            mimeType: "text/plain",
            expectedContentLength: body.count,
            textEncodingName: "utf-8"
        )
        let policy: URLCache.StoragePolicy = request.url?.host == "allowed" ? .allowed : .notAllowed
        client.urlProtocol(self, didReceive: response, cacheStoragePolicy: policy)
        client.urlProtocol(self, didLoad: body)
        client.urlProtocolDidFinishLoading(self)
    }
}
