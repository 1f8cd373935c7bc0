import Foundation
import FoundationNetworking
import Glibc
import Keyjar
import KeyjarLocks
import KeyjarResponseCache
import KeyjarTestSupport
import Synchronization

@testable import KeyjarLoader
@testable import KeyjarTransfer

/// The Python HTTP server in Servers/loader_server.py, on an ephemeral loopback port.
final class LoaderTestServer: Sendable {
    let port: Int
    let tlsPort: Int
    private let pid: Int32

    init() async throws {
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent(
            "Servers/loader_server.py"
        ).path
        let process = ChildProcess()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", script]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        pid = process.processIdentifier
        let words = await DaemonProcess.readLine(from: output.fileHandleForReading)?.split(separator: " ") ?? []
        guard words.count == 3, words[0] == "ready", let port = Int(words[1]), let tlsPort = Int(words[2]) else {
            kill(pid, SIGKILL)
            throw TestSupportError("the loader test server did not start")
        }
        self.port = port
        self.tlsPort = tlsPort
    }

    deinit {
        // SIGKILL: nothing of it needs a clean end.
        kill(pid, SIGKILL)
    }

    func url(_ path: String, host: String = "127.0.0.1") -> URL {
        URL(string: "http://\(host):\(port)\(path)")!
    }

    func tlsURL(_ path: String) -> URL {
        URL(string: "https://127.0.0.1:\(tlsPort)\(path)")!
    }

    /// A counter the server keeps (requests per key, 401s as "401:KEY", "407", "stale", …).
    func count(_ key: String) throws -> Int {
        let query = key.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? key
        let (data, _) = try URLLoader(configuration: .init()).sendSynchronousRequest(
            URLRequest(url: url("/count?key=\(query)"))
        )
        return Int(String(decoding: data, as: UTF8.self)) ?? -1
    }
}

/// What a delegate heard, in order.
enum HeardEvent: Equatable, CustomStringConvertible {
    case willSend(url: String, redirectStatus: Int?)
    case response(status: Int)
    case data(count: Int)
    case sent(bytes: Int, total: Int, expected: Int)
    case finished
    case failed(code: Int)
    /// A challenge put to the delegate: its method (short), failures so far, the proposed user.
    case challenge(method: String, failures: Int, proposed: String?)
    case challengeCancelled
    case shouldUseCredentialStorage

    var description: String {
        switch self {
        case .willSend(let url, let status): return "willSend(\(url), \(status.map(String.init) ?? "nil"))"
        case .response(let status): return "response(\(status))"
        case .data(let count): return "data(\(count))"
        case .sent(let bytes, let total, let expected): return "sent(\(bytes), \(total), \(expected))"
        case .finished: return "finished"
        case .failed(let code): return "failed(\(code))"
        case .challenge(let method, let failures, let proposed):
            return "challenge(\(method), \(failures), \(proposed ?? "nil"))"
        case .challengeCancelled: return "challengeCancelled"
        case .shouldUseCredentialStorage: return "shouldUseCredentialStorage"
        }
    }
}

/// A delegate that records every message; `willSendHandler` can steer redirects.
class RecordingDelegate: LoaderConnectionDelegate, @unchecked Sendable {
    // @unchecked: all state is behind `state`.
    struct State {
        var events: [HeardEvent] = []
        var body = Data()
        var responses: [URLResponse] = []
        var error: URLError?
        var afterEnd: [HeardEvent] = []
        var ended = false
    }
    let state = Locked(State())
    let done = TestSemaphore()
    let willSendHandler: (@Sendable (URLRequest, URLResponse?) -> URLRequest?)?
    let onData: (@Sendable (LoaderConnection, Int) -> Void)?
    let willCache: (@Sendable (CachedURLResponse) -> CachedURLResponse?)?

    init(
        willSend: (@Sendable (URLRequest, URLResponse?) -> URLRequest?)? = nil,
        onData: (@Sendable (LoaderConnection, Int) -> Void)? = nil,
        willCache: (@Sendable (CachedURLResponse) -> CachedURLResponse?)? = nil
    ) {
        willSendHandler = willSend
        self.onData = onData
        self.willCache = willCache
    }

    func connection(
        _ connection: LoaderConnection,
        willCacheResponse cachedResponse: CachedURLResponse
    ) -> CachedURLResponse? {
        willCache.map { $0(cachedResponse) } ?? cachedResponse
    }

    func record(_ event: HeardEvent) {
        state.withLock { state in
            if state.ended { state.afterEnd.append(event) } else { state.events.append(event) }
        }
    }

    var events: [HeardEvent] { state.withLock { $0.events } }
    var body: String { state.withLock { String(decoding: $0.body, as: UTF8.self) } }
    var error: URLError? { state.withLock { $0.error } }
    var lastResponse: HTTPURLResponse? { state.withLock { $0.responses.last as? HTTPURLResponse } }

    func wait(within deadline: Duration = hangDeadline) async -> Bool { await done.wait(within: deadline) }

    func connection(
        _ connection: LoaderConnection,
        willSend request: URLRequest,
        redirectResponse: URLResponse?
    ) -> URLRequest? {
        record(
            .willSend(
                url: request.url?.absoluteString ?? "",
                redirectStatus: (redirectResponse as? HTTPURLResponse)?.statusCode
            )
        )
        return willSendHandler.map { $0(request, redirectResponse) } ?? request
    }

    func connection(_ connection: LoaderConnection, didReceive response: URLResponse) {
        record(.response(status: (response as? HTTPURLResponse)?.statusCode ?? 0))
        state.withLock {
            $0.responses.append(response)
            $0.body = Data()
        }
    }

    func connection(_ connection: LoaderConnection, didReceive data: Data) {
        record(.data(count: data.count))
        state.withLock { $0.body.append(data) }
        onData?(connection, data.count)
    }

    func connection(
        _ connection: LoaderConnection,
        didSendBodyData bytesWritten: Int,
        totalBytesWritten: Int,
        totalBytesExpectedToWrite: Int
    ) {
        record(.sent(bytes: bytesWritten, total: totalBytesWritten, expected: totalBytesExpectedToWrite))
    }

    func connectionDidFinishLoading(_ connection: LoaderConnection) {
        record(.finished)
        state.withLock { $0.ended = true }
        done.signal()
    }

    func connection(_ connection: LoaderConnection, didFailWithError error: any Error) {
        let urlError = error as? URLError
        record(.failed(code: urlError?.errorCode ?? 0))
        state.withLock {
            $0.error = urlError
            $0.ended = true
        }
        done.signal()
    }
}

/// Records, at each redirect, whether the connection keeps a copy of the request's body stream.
class SpoolWatchingDelegate: RecordingDelegate, @unchecked Sendable {
    let spooledAtRedirects = Locked<[Bool]>([])

    override func connection(
        _ connection: LoaderConnection,
        willSend request: URLRequest,
        redirectResponse: URLResponse?
    ) -> URLRequest? {
        // Called on the connection's own queue (no delegate queue): its state may be read here.
        if redirectResponse != nil { spooledAtRedirects.withLock { $0.append(connection.streamedBody.keepsCopy) } }
        return super.connection(connection, willSend: request, redirectResponse: redirectResponse)
    }
}

/// Supplies the body stream sent again (`needNewBodyStream`), counting the questions.
final class StreamSupplyingDelegate: SpoolWatchingDelegate, LoaderConnectionBodyStreamDelegate, @unchecked Sendable {
    let asked = Atomic<Int>(0)
    private let supply: @Sendable () -> InputStream?

    init(supply: @escaping @Sendable () -> InputStream?) {
        self.supply = supply
        super.init()
    }

    func connection(_ connection: LoaderConnection, needNewBodyStream request: URLRequest) -> InputStream? {
        asked.add(1, ordering: .relaxed)
        return supply()
    }
}

/// The JSON /echo answers with.
struct Echo: Decodable {
    var method: String
    var path: String
    var body: String
    var headers: [String: String]
    /// The client's port: the same for two loads that reused a connection.
    var peer: Int
}

func decodeEcho(_ text: String) throws -> Echo {
    try JSONDecoder().decode(Echo.self, from: Data(text.utf8))
}

/// A loader with a private in-memory cookie jar and no credential storage.
func ephemeralLoader(responseCache: ResponseCache? = nil) -> URLLoader {
    URLLoader(configuration: .init(cookieStorage: .ephemeral(), responseCache: responseCache))
}

/// Loads `request` with a recording delegate and waits for the end.
func load(
    _ request: URLRequest,
    with loader: URLLoader,
    delegate: RecordingDelegate = RecordingDelegate()
) async -> RecordingDelegate {
    _ = loader.connection(with: request, delegate: delegate)
    _ = await delegate.wait()
    return delegate
}
