import Crypto
import Foundation
import FoundationNetworking
import KeyjarLocks
import KeyjarTestSupport
import Testing

@testable import KeyjarLoader

/// Downloads against Debian's lighttpd (byte ranges, If-Range, Content-Disposition, an access
/// log that shows what each request asked for and got).
@Suite(.timeLimit(hangLimit), .servicesStopCleanly)
final class DownloadTests {
    let server: DownloadServer
    let directory: String

    init() async throws {
        server = try await DownloadServer(slowKilobytesPerSecond: 256)
        directory = NSTemporaryDirectory() + "keyjar-download-test-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(atPath: directory) }

    func contents() -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []).sorted()
    }

    func download(
        _ url: URL,
        _ delegate: DownloadRecorder = DownloadRecorder(),
        loader: URLLoader = ephemeralLoader()
    ) async -> DownloadRecorder {
        _ = loader.download(with: URLRequest(url: url), delegate: delegate, directory: directory)
        #expect(await delegate.wait())
        return delegate
    }

    /// Puts `entity` at /files/NAME, downloads it from /slow/NAME until `bytes` arrived and stops
    /// there, keeping the partial data; returns what continues it.
    func interruptedDownload(
        of entity: Data,
        as name: String,
        after bytes: Int,
        with loader: URLLoader
    ) async throws -> Data {
        try server.put(entity, as: name)
        let interrupted = DownloadRecorder(stopAfter: bytes)
        _ = loader.download(
            with: URLRequest(url: server.url("/slow/" + name)),
            delegate: interrupted,
            directory: directory
        )
        #expect(await interrupted.wait())
        return try #require(interrupted.resumeData)
    }

    func resume(_ resumeData: Data, with loader: URLLoader) async throws -> DownloadRecorder {
        let resumed = DownloadRecorder()
        _ = try loader.download(resumeData: resumeData, delegate: resumed)
        #expect(await resumed.wait())
        return resumed
    }

    @Test func namesComeFromTheServerAndNeverReplaceAFile() async throws {
        let first = await download(server.url("/disposition/quoted"))
        #expect(first.events.first == "begin")
        #expect(first.events.contains("response 200"))
        #expect(first.suggested == ["report.pdf"])
        #expect(first.created == [directory + "/report.pdf"])
        #expect(first.events.last == "finish")
        let second = await download(server.url("/disposition/quoted"))
        #expect(second.created == [directory + "/report-1.pdf"])
        #expect(
            FileManager.default.contents(atPath: directory + "/report-1.pdf") == Data("the disposition file\n".utf8)
        )

        #expect(await download(server.url("/disposition/extended")).created == [directory + "/résumé.pdf"])
        // A name that tries to leave the directory is cut to its last component.
        #expect(await download(server.url("/disposition/traversal")).created == [directory + "/passwd"])
        // No file name in the field: the URL's last path component.
        #expect(await download(server.url("/disposition/inline")).created == [directory + "/inline"])
        #expect(contents() == ["inline", "passwd", "report-1.pdf", "report.pdf", "résumé.pdf"])

        // Two downloads of one name at once get two names and never share a partial file.
        let together = (0..<2).map { _ in DownloadRecorder() }
        for recorder in together {
            _ = ephemeralLoader().download(
                with: URLRequest(url: server.url("/disposition/inline")),
                delegate: recorder,
                directory: directory
            )
        }
        for download in together { #expect(await download.wait() && download.events.last == "finish") }
        #expect(Set(together.flatMap(\.created)) == [directory + "/inline-1", directory + "/inline-2"])
        for name in ["inline-1", "inline-2"] {
            #expect(FileManager.default.contents(atPath: directory + "/" + name) == Data("the disposition file\n".utf8))
        }
        for name in ["inline-1", "inline-2"] { try FileManager.default.removeItem(atPath: directory + "/" + name) }

        // Overwriting, when allowed, replaces the file in place.
        let overwriting = DownloadRecorder(destination: (directory + "/report.pdf", true))
        #expect(await download(server.url("/disposition/extended"), overwriting).created == [directory + "/report.pdf"])
        #expect(contents().count == 5)
    }

    @Test func aMissingFileFailsAsFileDoesNotExistAndSavesNothing() async throws {
        // lighttpd's error page for a file it does not have
        let url = server.url("/files/absent.pdf")
        let missing = await download(url)
        #expect(missing.error?.code == .fileDoesNotExist)
        #expect(missing.error?.failingURL == url)
        #expect(missing.error?.localizedDescription.contains("HTTP 404") == true)
        // The response is shown to the delegate; no name is asked for and nothing is created.
        #expect(missing.events == ["begin", "response 404", "fail \(URLError.Code.fileDoesNotExist.rawValue)"])
        #expect(missing.suggested.isEmpty && missing.created.isEmpty)

        // A server error with a page of its own, to a destination chosen beforehand
        let loaderServer = try await LoaderTestServer()
        let failing = DownloadRecorder()
        let download = ephemeralLoader().download(
            with: URLRequest(url: loaderServer.url("/status?code=500&body=oops")),
            delegate: failing,
            startImmediately: false
        )
        download.setDestination(directory + "/page.html", allowOverwrite: false)
        download.start()
        #expect(await failing.wait())
        #expect(failing.error?.code == .fileDoesNotExist)
        #expect(failing.error?.localizedDescription.contains("HTTP 500") == true)
        #expect(failing.created.isEmpty)
        #expect(contents().isEmpty)
    }

    @Test func anErrorPageIsSavedWhenTheDownloadIsToldTo() async throws {
        let recorder = DownloadRecorder()
        let download = ephemeralLoader().download(
            with: URLRequest(url: server.url("/files/absent.html")),
            delegate: recorder,
            directory: directory,
            startImmediately: false
        )
        #expect(!download.savesErrorResponses)
        download.savesErrorResponses = true
        download.start()
        #expect(await recorder.wait())
        #expect(recorder.events == ["begin", "response 404", "finish"])
        #expect(contents() == ["absent.html"])
        #expect(FileManager.default.contents(atPath: directory + "/absent.html")?.isEmpty == false)
    }

    @Test func onlyTheFirstDestinationIsTaken() async throws {
        try server.put(Data("the first one counts\n".utf8), as: "once.txt")
        // The delegate sets two: the second is ignored, even though it would overwrite.
        let twice = DownloadRecorder(destinations: [
            (directory + "/first.txt", false), (directory + "/second.txt", true),
        ])
        let decided = await download(server.url("/files/once.txt"), twice)
        #expect(decided.created == [directory + "/first.txt"])
        #expect(decided.events.last == "finish")
        #expect(contents() == ["first.txt"])

        // The caller sets one before the start: a later one and the delegate's are not taken,
        // and the delegate is not asked for a name.
        let caller = DownloadRecorder(destinations: [(directory + "/delegate.txt", true)])
        let download = ephemeralLoader().download(
            with: URLRequest(url: server.url("/files/once.txt")),
            delegate: caller,
            startImmediately: false
        )
        download.setDestination(directory + "/caller.txt", allowOverwrite: false)
        download.setDestination(directory + "/later.txt", allowOverwrite: true)
        #expect(download.destinationPath == directory + "/caller.txt")
        download.start()
        #expect(await caller.wait())
        #expect(caller.suggested.isEmpty)
        #expect(caller.created == [directory + "/caller.txt"])
        #expect(contents() == ["caller.txt", "first.txt"])
        #expect(FileManager.default.contents(atPath: directory + "/caller.txt") == Data("the first one counts\n".utf8))
    }

    @Test func anInterruptedDownloadAsksOnlyForTheRemainingBytes() async throws {
        let entity = randomBytes(1 << 20)
        let loader = ephemeralLoader()
        let resumeData = try await interruptedDownload(of: entity, as: "data.bin", after: 128 * 1024, with: loader)
        let partial = directory + "/data.bin.keyjar-part"
        let kept = try #require(try FileManager.default.attributesOfItem(atPath: partial)[.size] as? Int)
        #expect(kept >= 128 * 1024 && kept < entity.count)
        #expect(contents() == ["data.bin.keyjar-part", "data.bin.keyjar-resume"])
        let mode = try FileManager.default.attributesOfItem(atPath: directory + "/data.bin.keyjar-resume")[
            .posixPermissions
        ]
        #expect(mode as? Int == 0o600)

        let resumed = try await resume(resumeData, with: loader)
        #expect(resumed.events.contains("resume \(kept)"))
        #expect(!resumed.events.contains("response 200"))
        #expect(resumed.receivedLength == entity.count - kept)
        #expect(contents() == ["data.bin"])
        #expect(sha256(directory + "/data.bin") == sha256(entity))

        let requests = await server.requests(for: "/slow/data.bin", atLeast: 2)
        #expect(requests.count == 2)
        let second = try #require(requests.first { $0.range != nil })
        #expect(second.range == "bytes=\(kept)-")
        #expect(second.ifRange?.hasPrefix("\"") == true)
        #expect(second.status == 206)
        #expect(second.bodyBytes == entity.count - kept)
    }

    @Test func aChangedEntityIsDownloadedWholeAgain() async throws {
        let loader = ephemeralLoader()
        let resumeData = try await interruptedDownload(
            of: randomBytes(1 << 20),
            as: "changing.bin",
            after: 64 * 1024,
            with: loader
        )

        let changed = randomBytes(300_000)
        try server.put(changed, as: "changing.bin")
        let resumed = try await resume(resumeData, with: loader)
        #expect(resumed.events.contains("response 200"))
        #expect(!resumed.events.contains { $0.hasPrefix("resume") })
        #expect(sha256(directory + "/changing.bin") == sha256(changed))
        #expect(contents() == ["changing.bin"])
        // The interrupted request may be logged after the second: lighttpd logs at a connection's end.
        let logged = await server.requests(for: "/slow/changing.bin", atLeast: 2)
        let second = try #require(logged.first { $0.range != nil })
        #expect(second.ifRange != nil && second.status == 200 && second.bodyBytes == changed.count)
    }

    @Test func aPartialFileThatIsAlreadyWholeIsSavedWithoutItsBytesAgain() async throws {
        let entity = randomBytes(1 << 20)
        let loader = ephemeralLoader()
        let resumeData = try await interruptedDownload(of: entity, as: "whole.bin", after: 64 * 1024, with: loader)
        // The rest arrived by other means: the partial file holds the whole entity.
        try entity.write(to: URL(fileURLWithPath: directory + "/whole.bin.keyjar-part"))
        let resumed = try await resume(resumeData, with: loader)
        #expect(resumed.events == ["begin", "resume \(entity.count)", "finish"])
        #expect(FileManager.default.contents(atPath: directory + "/whole.bin") == entity)
        #expect(contents() == ["whole.bin"])
        #expect(await server.requests(for: "/slow/whole.bin", atLeast: 2).contains { $0.status == 416 })
    }

    @Test func anErrorAnsweringAResumeKeepsThePartialData() async throws {
        let loader = ephemeralLoader()
        let resumeData = try await interruptedDownload(
            of: randomBytes(1 << 20),
            as: "gone.bin",
            after: 64 * 1024,
            with: loader
        )
        let kept = try #require(FileManager.default.contents(atPath: directory + "/gone.bin.keyjar-part"))
        try FileManager.default.removeItem(atPath: server.directory + "/www/files/gone.bin")

        let resumed = try await resume(resumeData, with: loader)
        // The file is gone: the same error as for a new download of it, and the data so far stays.
        #expect(resumed.error?.code == .fileDoesNotExist)
        #expect(resumed.error?.localizedDescription.contains("HTTP 404") == true)
        #expect(resumed.error?.userInfo["NSURLSessionDownloadTaskResumeData"] as? Data == resumeData)
        #expect(FileManager.default.contents(atPath: directory + "/gone.bin.keyjar-part") == kept)
        #expect(contents() == ["gone.bin.keyjar-part", "gone.bin.keyjar-resume"])
    }

    @Test func cancellingWhenTheResponseArrivesLeavesNothing() async throws {
        try server.put(randomBytes(100_000), as: "early.bin")
        let delegate = DownloadRecorder(cancelOnResponse: true)
        let download = ephemeralLoader().download(
            with: URLRequest(url: server.url("/files/early.bin")),
            delegate: delegate,
            startImmediately: false
        )
        download.setDestination(directory + "/early.bin", allowOverwrite: false)
        download.start()
        #expect(await delegate.cancelled.wait())
        // A window in which nothing more may happen: a busy machine can only delay a wrong
        // late event past it (the test then passes this once), never make one up.
        try await Task.sleep(for: .milliseconds(300))
        #expect(contents().isEmpty)
        #expect(delegate.events == ["begin", "response 200", "cancelled"])
    }

    @Test func cancellingLeavesNothing() async throws {
        try server.put(randomBytes(1 << 20), as: "cancelled.bin")
        let delegate = DownloadRecorder(cancelAfter: 64 * 1024)
        _ = ephemeralLoader().download(
            with: URLRequest(url: server.url("/slow/cancelled.bin")),
            delegate: delegate,
            directory: directory
        )
        #expect(await delegate.cancelled.wait())
        #expect(contents().isEmpty)
        // Nothing after cancel: neither finish nor failure.
        // A window in which nothing more may happen: a busy machine can only delay a wrong
        // late event past it (the test then passes this once), never make one up.
        try await Task.sleep(for: .milliseconds(300))
        #expect(!delegate.events.contains("finish") && !delegate.events.contains { $0.hasPrefix("fail") })
    }

    @Test func gzipFilesAreDecodedOnRequest() async throws {
        let text = Data(String(repeating: "line of text\n", count: 5000).utf8)
        let compressed = try await runCommand(
            "/bin/sh",
            ["-c", "printf '%s' \"$0\" | gzip -c | base64 -w0", String(decoding: text, as: UTF8.self)]
        )
        try server.put(try #require(Data(base64Encoded: compressed.output)), as: "notes.txt.gz")

        let decoding = await download(server.url("/files/notes.txt.gz"), DownloadRecorder(decode: true))
        #expect(decoding.asked == ["application/gzip"])
        #expect(decoding.created == [directory + "/notes.txt"])
        #expect(FileManager.default.contents(atPath: directory + "/notes.txt") == text)

        let raw = await download(server.url("/files/notes.txt.gz"))
        #expect(raw.created == [directory + "/notes.txt.gz"])
        #expect(FileManager.default.contents(atPath: directory + "/notes.txt.gz")?.starts(with: [0x1F, 0x8B]) == true)

        #expect(contents() == ["notes.txt", "notes.txt.gz"])

        // A file that claims to be gzip and is not fails, and leaves no file behind.
        // A member that ends exactly where zlib's output buffer does (1 MiB decoded).
        let exact = Data(repeating: UInt8(ascii: "k"), count: 1 << 20)
        try server.put(exact, as: "exact.txt")
        let files = server.directory + "/www/files"
        #expect(
            try await runCommand("/bin/sh", ["-c", "gzip -c \(files)/exact.txt > \(files)/exact.txt.gz"]).status == 0
        )
        let whole = await download(server.url("/files/exact.txt.gz"), DownloadRecorder(decode: true))
        #expect(whole.error == nil)
        #expect(FileManager.default.contents(atPath: directory + "/exact.txt") == exact)
        try FileManager.default.removeItem(atPath: directory + "/exact.txt")

        try server.put(Data("not gzip at all".utf8), as: "fake.gz")
        let corrupt = await download(server.url("/files/fake.gz"), DownloadRecorder(decode: true))
        #expect(corrupt.error?.code == .cannotDecodeContentData)
        #expect(contents() == ["notes.txt", "notes.txt.gz"])
    }

    @Test func redirectsAndChallengesGoThroughTheConnectionsRules() async throws {
        let loaderServer = try await LoaderTestServer()
        let redirected = await download(loaderServer.url("/redirect?status=307&to=/hello"), DownloadRecorder())
        #expect(redirected.events.contains("redirect 307"))
        #expect(redirected.created == [directory + "/hello"])
        #expect(FileManager.default.contents(atPath: directory + "/hello") == Data("hello world".utf8))

        // A challenge reaches the download's delegate, which answers it.
        let answering = DownloadRecorder(
            credential: URLCredential(user: "alice", password: "wonderland", persistence: .none)
        )
        let challenged = await download(loaderServer.url("/basic/page"), answering)
        #expect(challenged.events.contains("challenge"))
        #expect(challenged.events.last == "finish")
        #expect(challenged.error == nil)
        #expect(FileManager.default.contents(atPath: directory + "/page") == Data("welcome alice".utf8))
    }

    @Test func theFirstRequestIsOfferedToTheDelegate() async throws {
        let loaderServer = try await LoaderTestServer()
        // The delegate sees the request as it will be sent, and what it returns is sent.
        let changing = DownloadRecorder(
            destination: (directory + "/echo.json", false),
            firstRequestHeader: ("X-Seed", "from the delegate")
        )
        let changed = await download(loaderServer.url("/echo"), changing)
        #expect(changed.sent.map(\.url) == [loaderServer.url("/echo")])
        #expect(changed.sent.first?.value(forHTTPHeaderField: "Accept-Encoding") == "identity")
        #expect(changed.events.last == "finish")
        let echoed = try #require(FileManager.default.contents(atPath: directory + "/echo.json"))
        let headers = try #require(
            (try JSONSerialization.jsonObject(with: echoed) as? [String: Any])?["headers"] as? [String: String]
        )
        #expect(headers["x-seed"] == "from the delegate")
        // Redirects still come as redirects, after the first request.
        let redirected = await download(loaderServer.url("/redirect?status=302&to=/hello"), DownloadRecorder())
        #expect(redirected.sent.map(\.url) == [loaderServer.url("/redirect?status=302&to=/hello")])
        #expect(redirected.events.contains("redirect 302"))

        // Refusing it fails the download as cancelled before anything is sent.
        let refusing = DownloadRecorder(refuseFirstRequest: true)
        _ = ephemeralLoader().download(
            with: URLRequest(url: loaderServer.url("/hello?key=refused")),
            delegate: refusing,
            directory: directory
        )
        #expect(await refusing.refused.wait())
        #expect(await refusing.done.wait())
        #expect(refusing.events == ["begin", "fail \(URLError.Code.cancelled.rawValue)"])
        let (count, _) = try await ephemeralLoader().data(for: URLRequest(url: loaderServer.url("/count?key=refused")))
        #expect(String(decoding: count, as: UTF8.self) == "0")
        #expect(contents() == ["echo.json", "hello"])
    }

    @Test func challengesComeAsTheGuideNamesThem() async throws {
        let loaderServer = try await LoaderTestServer()
        // A seed-era delegate answers in download(_:didReceive:) and never heard of willSendRequestFor.
        let seedEra = SeedEraDownloadDelegate(
            credential: URLCredential(user: "alice", password: "wonderland", persistence: .none)
        )
        _ = ephemeralLoader().download(
            with: URLRequest(url: loaderServer.url("/basic/seed")),
            delegate: seedEra,
            directory: directory
        )
        #expect(await seedEra.done.wait())
        #expect(seedEra.challenges.withLock { $0 } == 1)
        #expect(seedEra.finished.withLock { $0 })
        #expect(FileManager.default.contents(atPath: directory + "/seed") == Data("welcome alice".utf8))

        // Cancelling a challenge through its sender: the delegate hears it cancelled, then the failure.
        let cancelling = await download(
            loaderServer.url("/basic/cancelled"),
            DownloadRecorder(challengeAnswer: .cancel)
        )
        #expect(
            cancelling.events == [
                "begin", "challenge", "challenge cancelled",
                "fail \(URLError.Code.userCancelledAuthentication.rawValue)",
            ]
        )
        #expect(!contents().contains("cancelled"))

        // Cancelling the download while the delegate holds a challenge: it is told the challenge
        // is void, and nothing else.
        let holding = DownloadRecorder(challengeAnswer: .hold)
        let download = ephemeralLoader().download(
            with: URLRequest(url: loaderServer.url("/basic/held")),
            delegate: holding,
            directory: directory
        )
        #expect(await holding.challenged.wait())
        download.cancel()
        #expect(await holding.challengeCancelled.wait())
        #expect(holding.events == ["begin", "challenge", "challenge cancelled"])
        // Answering it now changes nothing.
        let held = try #require(holding.heldChallenge)
        try #require(held.sender).use(
            URLCredential(user: "alice", password: "wonderland", persistence: .none),
            for: held
        )
        try await Task.sleep(for: .milliseconds(300))
        #expect(holding.events == ["begin", "challenge", "challenge cancelled"])
        #expect(contents() == ["seed"])
    }

    @Test func resumeDataIsCheckedBeforeUse() throws {
        #expect(throws: DownloadResumeDataError.self) { try DownloadResumeData(Data("{}".utf8)) }
        #expect(throws: DownloadResumeDataError.self) { try DownloadResumeData(Data("not json".utf8)) }
        let record = DownloadResumeData(
            url: server.url("/files/x"),
            validator: "\"1\"",
            destinationPath: directory + "/x",
            allowOverwrite: false,
            expectedLength: 10
        )
        #expect(try DownloadResumeData(record.encoded()) == record)
        var future = try #require(JSONSerialization.jsonObject(with: record.encoded()) as? [String: Any])
        future["version"] = 99
        let error = #expect(throws: DownloadResumeDataError.self) {
            try DownloadResumeData(JSONSerialization.data(withJSONObject: future))
        }
        #expect(error?.description.contains("version 99") == true)
    }
}

func randomBytes(_ count: Int) -> Data {
    var generator = SystemRandomNumberGenerator()
    return Data((0..<count).map { _ in UInt8.random(in: 0...255, using: &generator) })
}

func sha256(_ data: Data) -> String { SHA256.hash(data: data).map { String(format: "%02x", $0) }.joined() }
func sha256(_ path: String) -> String? { FileManager.default.contents(atPath: path).map(sha256) }

/// A delegate as the URL Loading System guide writes one: it answers challenges in
/// `download(_:didReceive:)`.
final class SeedEraDownloadDelegate: LoaderDownloadDelegate, @unchecked Sendable {
    let credential: URLCredential
    let challenges = Locked(0)
    let finished = Locked(false)
    let done = TestSemaphore()

    init(credential: URLCredential) { self.credential = credential }

    func download(_ download: LoaderDownload, didReceive challenge: URLAuthenticationChallenge) {
        challenges.withLock { $0 += 1 }
        if challenge.previousFailureCount == 0 {
            challenge.sender?.use(credential, for: challenge)
        } else {
            challenge.sender?.cancel(challenge)
        }
    }

    func downloadDidFinish(_ download: LoaderDownload) {
        finished.withLock { $0 = true }
        done.signal()
    }

    func download(_ download: LoaderDownload, didFailWithError error: any Error) { done.signal() }
}

/// Records a download's messages; can stop it midway (keeping resume data), cancel it, decode,
/// choose a destination or answer a challenge.
final class DownloadRecorder: LoaderDownloadDelegate, @unchecked Sendable {
    struct State {
        var events: [String] = []
        var suggested: [String] = []
        var created: [String] = []
        var asked: [String] = []
        var received = 0
        var error: URLError?
        var resumeData: Data?
        /// The first requests offered (`willSend` without a redirect response).
        var sent: [URLRequest] = []
        var heldChallenge: URLAuthenticationChallenge?
    }
    /// What the recorder does with a challenge it is given (after `credential`, if any, failed).
    enum ChallengeAnswer {
        case defaultHandling
        /// Tells its sender to cancel it.
        case cancel
        /// Keeps it unanswered (signalling `challenged`).
        case hold
    }
    let state = Locked(State())
    let done = TestSemaphore()
    let cancelled = TestSemaphore()
    let challenged = TestSemaphore()
    let challengeCancelled = TestSemaphore()
    /// Signalled when the recorder refused the first request.
    let refused = TestSemaphore()
    let stopAfter: Int?
    let cancelAfter: Int?
    let cancelOnResponse: Bool
    /// The MIME types answered yes to (all of them with `decode: true`).
    let decodeTypes: Set<String>?
    /// Each is set in turn when the destination is to be decided (the default name without).
    let destinations: [(String, Bool)]
    let credential: URLCredential?
    let challengeAnswer: ChallengeAnswer
    /// Sets this header on the first request; with `refuseFirstRequest` it is refused instead.
    let firstRequestHeader: (String, String)?
    let refuseFirstRequest: Bool

    init(
        stopAfter: Int? = nil,
        cancelAfter: Int? = nil,
        cancelOnResponse: Bool = false,
        decode: Bool = false,
        decodeTypes: Set<String>? = nil,
        destination: (String, Bool)? = nil,
        destinations: [(String, Bool)] = [],
        credential: URLCredential? = nil,
        challengeAnswer: ChallengeAnswer = .defaultHandling,
        firstRequestHeader: (String, String)? = nil,
        refuseFirstRequest: Bool = false
    ) {
        self.stopAfter = stopAfter
        self.cancelAfter = cancelAfter
        self.cancelOnResponse = cancelOnResponse
        self.decodeTypes = decode ? nil : decodeTypes ?? []
        self.destinations = destination.map { [$0] } ?? destinations
        self.credential = credential
        self.challengeAnswer = challengeAnswer
        self.firstRequestHeader = firstRequestHeader
        self.refuseFirstRequest = refuseFirstRequest
    }

    var events: [String] { state.withLock { $0.events } }
    var suggested: [String] { state.withLock { $0.suggested } }
    var created: [String] { state.withLock { $0.created } }
    var asked: [String] { state.withLock { $0.asked } }
    var receivedLength: Int { state.withLock { $0.received } }
    var error: URLError? { state.withLock { $0.error } }
    var resumeData: Data? { state.withLock { $0.resumeData } }
    var sent: [URLRequest] { state.withLock { $0.sent } }
    var heldChallenge: URLAuthenticationChallenge? { state.withLock { $0.heldChallenge } }
    func wait() async -> Bool { await done.wait() }

    private func record(_ event: String) { state.withLock { $0.events.append(event) } }

    func downloadDidBegin(_ download: LoaderDownload) { record("begin") }

    func download(
        _ download: LoaderDownload,
        willSend request: URLRequest,
        redirectResponse: URLResponse?
    ) -> URLRequest? {
        guard let redirectResponse else {
            state.withLock { $0.sent.append(request) }
            if refuseFirstRequest {
                refused.signal()
                return nil
            }
            var request = request
            if let (name, value) = firstRequestHeader { request.setValue(value, forHTTPHeaderField: name) }
            return request
        }
        record("redirect \((redirectResponse as? HTTPURLResponse)?.statusCode ?? 0)")
        return request
    }

    func download(_ download: LoaderDownload, willSendRequestFor challenge: URLAuthenticationChallenge) {
        record("challenge")
        if let credential, challenge.previousFailureCount == 0 {
            challenge.sender?.use(credential, for: challenge)
            return
        }
        switch challengeAnswer {
        case .defaultHandling: challenge.sender?.performDefaultHandling(for: challenge)
        case .cancel: challenge.sender?.cancel(challenge)
        case .hold:
            state.withLock { $0.heldChallenge = challenge }
            challenged.signal()
        }
    }

    func download(_ download: LoaderDownload, didCancel challenge: URLAuthenticationChallenge) {
        record("challenge cancelled")
        challengeCancelled.signal()
    }

    func download(_ download: LoaderDownload, didReceive response: URLResponse) {
        record("response \((response as? HTTPURLResponse)?.statusCode ?? 0)")
        if cancelOnResponse {
            download.cancel()
            record("cancelled")
            cancelled.signal()
        }
    }

    func download(_ download: LoaderDownload, willResumeWith response: URLResponse, fromByte startingByte: Int64) {
        record("resume \(startingByte)")
    }

    func download(_ download: LoaderDownload, shouldDecodeSourceDataOfMIMEType encodingType: String) -> Bool {
        state.withLock { $0.asked.append(encodingType) }
        return decodeTypes?.contains(encodingType) ?? true
    }

    func download(_ download: LoaderDownload, decideDestinationWithSuggestedFilename filename: String) {
        state.withLock { $0.suggested.append(filename) }
        for destination in destinations {
            download.setDestination(destination.0, allowOverwrite: destination.1)
        }
        if destinations.isEmpty {
            download.setDestination(
                (download.directory as NSString).appendingPathComponent(filename),
                allowOverwrite: false
            )
        }
    }

    func download(_ download: LoaderDownload, didCreateDestination path: String) {
        state.withLock { $0.created.append(path) }
    }

    func download(_ download: LoaderDownload, didReceiveDataOfLength length: Int) {
        let total = state.withLock { state -> Int in
            state.received += length
            return state.received
        }
        if let stopAfter, total >= stopAfter {
            let data = download.cancelProducingResumeData()
            state.withLock { $0.resumeData = data }
            record("stopped")
            done.signal()
        }
        if let cancelAfter, total >= cancelAfter {
            download.cancel()
            record("cancelled")
            cancelled.signal()
        }
    }

    func downloadDidFinish(_ download: LoaderDownload) {
        record("finish")
        done.signal()
    }

    func download(_ download: LoaderDownload, didFailWithError error: any Error) {
        record("fail \((error as? URLError)?.errorCode ?? 0)")
        state.withLock { $0.error = error as? URLError }
        done.signal()
    }
}
