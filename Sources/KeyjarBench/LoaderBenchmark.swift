import CCurl
import CoreFoundation  // struct timespec's members resolve there once libcrypto's headers are in the build
import Foundation
import FoundationNetworking
import Glibc
import Keyjar
import KeyjarCore
import KeyjarLoader
import KeyjarProtocol
import NIOCore
import NIOHTTP1
import NIOPosix
import Synchronization

/// KeyjarLoader against a keep-alive loopback server in this process (SwiftNIO, on its own
/// thread): what a request costs over a plain libcurl easy handle, and a thousand concurrent
/// loads on the loader's one thread.
func runLoaderBenchmark() throws {
    let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
    defer { try? group.syncShutdownGracefully() }
    let channel = try ServerBootstrap(group: group)
        .serverChannelOption(.backlog, value: 4096)
        .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
        .childChannelInitializer { channel in
            channel.eventLoop.makeCompletedFuture {
                try channel.pipeline.syncOperations.configureHTTPServerPipeline()
                try channel.pipeline.syncOperations.addHandler(BenchHTTPHandler())
            }
        }
        .bind(host: "127.0.0.1", port: 0).wait()
    defer { try? channel.close().wait() }
    guard let port = channel.localAddress?.port, let url = URL(string: "http://127.0.0.1:\(port)/ok") else {
        throw BenchmarkError("the benchmark server did not bind")
    }

    let storage = SharedCookieStorage.ephemeral()
    try storage.storeCookies(
        fromResponseHeaders: ["session=0123456789abcdef; Path=/", "theme=dark; Path=/"],
        for: url,
        mainDocumentURL: url
    )
    let loader = URLLoader(configuration: .init(cookieStorage: storage))
    let plainCurl = try PlainCurl(url: url)
    func loaderRequest() throws {
        let (data, _) = try loader.sendSynchronousRequest(URLRequest(url: url))
        guard data.count == 2 else { throw BenchmarkError("unexpected body") }
    }
    // The same through the delegate contract: a connection whose delegate hears response,
    // data and finish on the connection's queue (a thread other than the caller's). Timed from
    // the start to the moment the delegate hears the finish; the caller's own wake-up after
    // that (one more thread hop) is left out, as an application's delegate acts on the finish
    // itself.
    let delegate = WaitingDelegate()
    var delegated: [UInt64] = []
    func delegateRequest() throws {
        let start = nanoseconds()
        _ = loader.connection(with: URLRequest(url: url), delegate: delegate)
        guard let (bytes, finished) = delegate.waitForFinish(), bytes == 2 else {
            throw BenchmarkError("unexpected body")
        }
        delegated.append(finished - start)
    }

    // The loader's request as the server sees it (its User-Agent, the jar's cookies,
    // Accept-Encoding) from a plain easy handle: a second baseline that tells how much of the
    // overhead is the larger request on the wire rather than the loader's own work.
    let sameRequest = try PlainCurl(
        url: url,
        headers: ["User-Agent: Keyjar (libcurl)", "Cookie: session=0123456789abcdef; theme=dark", "Expect:"],
        acceptEncoding: true
    )

    // For profiling one side alone (`perf record`): 100,000 requests (or
    // KEYJAR_BENCH_LOADER_COUNT) of that kind, no report.
    if let only = ProcessInfo.processInfo.environment["KEYJAR_BENCH_LOADER_ONLY"] {
        if only == "challenge" { return try challengeAnsweredFromTheStore(port: port) }
        let request =
            only == "plain"
            ? plainCurl.perform
            : only == "plain-same"
                ? sameRequest.perform
                : only == "delegate" ? delegateRequest : loaderRequest
        let count = Int(ProcessInfo.processInfo.environment["KEYJAR_BENCH_LOADER_COUNT"] ?? "") ?? 100_000
        for _ in 0..<count { try request() }
        return
    }

    // Blocks of the two alternate: on a small VM a request's wall time depends mostly on
    // whether the client and the server thread share a CPU (a same-CPU wake-up is several
    // times cheaper), which the scheduler decides anew from time to time. Measured one after
    // the other, the two could see different placements and their difference says more about
    // the scheduler than about the loader.
    let blocks = 20
    let perBlock = 1_000
    _ = try timedBlock(count: perBlock, plainCurl.perform)
    _ = try timedBlock(count: perBlock, sameRequest.perform)
    _ = try timedBlock(count: perBlock, loaderRequest)
    _ = try timedBlock(count: perBlock, delegateRequest)
    var plain: [UInt64] = []
    delegated.removeAll()
    var delegatedCPUTotal: UInt64 = 0
    var same: [UInt64] = []
    var samples: [UInt64] = []
    // CPU of the whole process (the in-process server's included, the same in all): what a
    // request costs beyond wall-clock waits.
    var plainCPUTotal: UInt64 = 0
    var sameCPUTotal: UInt64 = 0
    var loaderCPUTotal: UInt64 = 0
    for _ in 0..<blocks {
        let plainBlock = try timedBlock(count: perBlock, plainCurl.perform)
        plain += plainBlock.samples
        plainCPUTotal += plainBlock.cpu
        let sameBlock = try timedBlock(count: perBlock, sameRequest.perform)
        same += sameBlock.samples
        sameCPUTotal += sameBlock.cpu
        let loaderBlock = try timedBlock(count: perBlock, loaderRequest)
        samples += loaderBlock.samples
        loaderCPUTotal += loaderBlock.cpu
        delegatedCPUTotal += try timedBlock(count: perBlock, delegateRequest).cpu
    }
    let iterations = UInt64(blocks * perBlock)
    let loaderMedian = Int64(percentile(samples.sorted(), 0.5))
    report("loader_plain_curl_request", samples: plain)
    report("loader_plain_curl_same_request", samples: same)
    report("loader_request", samples: samples)
    report("loader_delegate_request", samples: delegated)
    print("loader_overhead_over_plain_curl_median: \(loaderMedian - Int64(percentile(plain.sorted(), 0.5))) ns")
    print(
        "loader_overhead_over_plain_curl_same_request_median: \(loaderMedian - Int64(percentile(same.sorted(), 0.5))) ns"
    )
    print("loader_plain_curl_cpu_per_request: \(plainCPUTotal / iterations) ns")
    print("loader_plain_curl_same_request_cpu_per_request: \(sameCPUTotal / iterations) ns")
    print("loader_cpu_per_request: \(loaderCPUTotal / iterations) ns")
    let delegatedMedian = Int64(percentile(delegated.sorted(), 0.5))
    print(
        "loader_delegate_overhead_over_plain_curl_median: \(delegatedMedian - Int64(percentile(plain.sorted(), 0.5))) ns"
    )
    print("loader_delegate_cpu_per_request: \(delegatedCPUTotal / iterations) ns")

    try concurrentLoads(port: port, loader: loader)
    try challengeAnsweredFromTheStore(port: port)
}

/// What a 401 answered from the shared store costs over the same 401 answered by a credential
/// the request carries: at most one keyjard round trip (the password's) is the target. Each
/// load gets a new loader, so no Basic is sent pre-emptively; the three kinds alternate.
private func challengeAnsweredFromTheStore(port: Int) throws {
    guard let url = URL(string: "http://127.0.0.1:\(port)/auth"),
        let withCredential = URL(string: "http://alice:wonderland@127.0.0.1:\(port)/auth")
    else { return }
    let directory = NSTemporaryDirectory() + "keyjar-bench-auth-\(getpid())"
    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let daemon = try BenchDaemon(directory: directory)
    defer { daemon.stop() }
    let storage = try SharedCredentialStorage(configuration: .init(socketPath: daemon.socketPath, autoStart: false))
    let server = URLProtectionSpace(
        host: "127.0.0.1",
        port: port,
        protocol: "http",
        realm: nil,
        authenticationMethod: NSURLAuthenticationMethodDefault
    )
    try storage.store(URLCredential(user: "alice", password: "wonderland", persistence: .permanent), for: server)
    let record = try storage.choice(for: ProtectionSpace(server)).preferred.orThrow(
        "the stored credential is not in the replica"
    )

    func fromStore() throws {
        let loader = URLLoader(configuration: .init(credentialStorage: storage))
        let (data, _) = try loader.sendSynchronousRequest(URLRequest(url: url))
        guard data.count == 2 else { throw BenchmarkError("the stored credential did not answer the 401") }
    }
    func fromRequest() throws {
        let loader = URLLoader(configuration: .init())
        let (data, _) = try loader.sendSynchronousRequest(URLRequest(url: withCredential))
        guard data.count == 2 else { throw BenchmarkError("the URL's credential did not answer the 401") }
    }
    // The password's round trip as a load meets it: right after an HTTP exchange (threads and
    // caches as the load leaves them), only the round trip timed.
    var trips: [UInt64] = []
    func roundTrip() throws {
        try fromRequest()
        let start = nanoseconds()
        let response = try storage.client.call(.password(space: record.space, user: record.user))
        trips.append(nanoseconds() - start)
        guard case .password(let password?) = response, !password.isEmpty else {
            throw BenchmarkError("keyjard did not return the password")
        }
    }
    var store: [UInt64] = []
    var request: [UInt64] = []
    for round in 0..<21 {
        let blocks = [try timedBlock(count: 200, fromStore), try timedBlock(count: 200, fromRequest)]
        if round == 0 { trips.removeAll() }
        _ = try timedBlock(count: 200, roundTrip)
        if round == 0 {
            trips.removeAll()
            continue
        }  // warm-up
        store += blocks[0].samples
        request += blocks[1].samples
    }
    report("loader_401_answered_from_store", samples: store)
    report("loader_401_answered_from_request_url", samples: request)
    report("loader_keyjard_password_round_trip", samples: trips)
    let extra = Int64(percentile(store.sorted(), 0.5)) - Int64(percentile(request.sorted(), 0.5))
    let trip = Int64(percentile(trips.sorted(), 0.5))
    print(
        "loader_401_store_cost_over_401_median: \(extra) ns (\(String(format: "%.2f", Double(extra) / Double(max(trip, 1)))) keyjard round trips; target <= 1)"
    )
}

extension Optional {
    fileprivate func orThrow(_ message: String) throws -> Wrapped {
        guard let self else { throw BenchmarkError(message) }
        return self
    }
}

/// The baseline: one easy handle, reused (keep-alive), body discarded.
private final class PlainCurl {
    private let easy: UnsafeMutableRawPointer

    private var headers: UnsafeMutablePointer<curl_slist>?

    /// `headers`: extra request fields, so that the server sees the same request as the loader's.
    init(url: URL, headers lines: [String] = [], acceptEncoding: Bool = false) throws {
        guard let easy = curl_easy_init() else { throw BenchmarkError("curl_easy_init failed") }
        self.easy = easy
        _ = keyjar_easy_setopt_string(easy, CURLOPT_URL, url.absoluteString)
        for line in lines { headers = curl_slist_append(headers, line) }
        if headers != nil { _ = keyjar_easy_setopt_list(easy, CURLOPT_HTTPHEADER, headers) }
        if acceptEncoding { _ = keyjar_easy_setopt_string(easy, CURLOPT_ACCEPT_ENCODING, "") }
        _ = keyjar_easy_setopt_long(easy, CURLOPT_NOSIGNAL, 1)
        let discard: curl_write_callback = { _, size, count, _ in size * count }
        _ = keyjar_easy_setopt_write_function(easy, CURLOPT_WRITEFUNCTION, discard)
    }

    deinit {
        curl_easy_cleanup(easy)
        curl_slist_free_all(headers)
    }

    func perform() throws {
        guard curl_easy_perform(easy) == CURLE_OK else { throw BenchmarkError("plain curl request failed") }
    }
}

/// Runs `request` `count` times: each one's wall time, and the process's CPU time for all.
private func timedBlock(count: Int, _ request: () throws -> Void) throws -> (samples: [UInt64], cpu: UInt64) {
    var samples: [UInt64] = []
    samples.reserveCapacity(count)
    let cpu = cpuNanoseconds()
    for _ in 0..<count {
        let start = nanoseconds()
        try request()
        samples.append(nanoseconds() - start)
    }
    return (samples, cpuNanoseconds() - cpu)
}

/// 1,000 loads at once to an endpoint that answers after 300 ms, so all are open together.
private func concurrentLoads(port: Int, loader: URLLoader) throws {
    guard let url = URL(string: "http://127.0.0.1:\(port)/slow") else { return }
    let count = 1_000
    let threadsBefore = threadCount()
    let start = nanoseconds()
    let delegate = CountingDelegate()
    let connections = (0..<count).map { _ in loader.connection(with: URLRequest(url: url), delegate: delegate) }
    var maximumThreads = threadsBefore
    while delegate.finished.load(ordering: .relaxed) + delegate.failed.load(ordering: .relaxed) < count,
        nanoseconds() - start < 60_000_000_000
    {
        maximumThreads = max(maximumThreads, threadCount())
        usleep(10_000)
    }
    _ = connections
    print(
        "loader_concurrent_1000_completed: \(delegate.finished.load(ordering: .relaxed)) of \(count) (failed \(delegate.failed.load(ordering: .relaxed)))"
    )
    print("loader_concurrent_1000_duration: \((nanoseconds() - start) / 1_000_000) ms")
    print("loader_concurrent_1000_threads: \(threadsBefore) before, at most \(maximumThreads) during")
}

private func threadCount() -> Int {
    guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
        let line = status.split(separator: "\n").first(where: { $0.hasPrefix("Threads:") })
    else { return 0 }
    return Int(line.dropFirst(8).trimmingCharacters(in: .whitespaces)) ?? 0
}

private final class CountingDelegate: LoaderConnectionDelegate, Sendable {
    let finished = Atomic<Int>(0)
    let failed = Atomic<Int>(0)
    func connectionDidFinishLoading(_ connection: LoaderConnection) { finished.add(1, ordering: .relaxed) }
    func connection(_ connection: LoaderConnection, didFailWithError error: any Error) {
        failed.add(1, ordering: .relaxed)
    }
}

/// Collects a connection's body on the connection's queue and wakes the caller at its end
/// (the loader and cache benchmarks).
final class WaitingDelegate: LoaderConnectionDelegate, @unchecked Sendable {
    // @unchecked: the fields are touched on the connection's serial queue between the
    // caller's start and `finished.signal()`, and by the caller only after `finished.wait()`.
    private var received = 0
    private var finishedAt: UInt64?
    private let finished = DispatchSemaphore(value: 0)

    func connection(_ connection: LoaderConnection, didReceive data: Data) { received += data.count }
    func connectionDidFinishLoading(_ connection: LoaderConnection) {
        finishedAt = nanoseconds()
        finished.signal()
    }
    func connection(_ connection: LoaderConnection, didFailWithError error: any Error) { finished.signal() }

    /// Body bytes of the load that just ended and when its delegate heard the finish (nil when
    /// it failed); ready for the next load.
    func waitForFinish() -> (bytes: Int, finishedAt: UInt64)? {
        finished.wait()
        defer { (received, finishedAt) = (0, nil) }
        return finishedAt.map { (received, $0) }
    }
}

/// Answers "ok"; `/slow` answers after 300 ms.
private final class BenchHTTPHandler: ChannelInboundHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart
    private var slow = false

    private var unauthorized = false

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            slow = head.uri.hasPrefix("/slow")
            // /auth wants alice:wonderland by Basic.
            unauthorized =
                head.uri.hasPrefix("/auth") && head.headers["Authorization"].first != "Basic YWxpY2U6d29uZGVybGFuZA=="
        case .body: break
        case .end:
            if unauthorized {
                let headers = HTTPHeaders([("Content-Length", "0"), ("WWW-Authenticate", "Basic realm=\"bench\"")])
                context.write(
                    wrapOutboundOut(
                        .head(HTTPResponseHead(version: .http1_1, status: .unauthorized, headers: headers))
                    ),
                    promise: nil
                )
                context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
            } else if slow {
                let loopBound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
                context.eventLoop.scheduleTask(in: .milliseconds(300)) {
                    let (handler, context) = loopBound.value
                    handler.respond(context)
                }
            } else {
                respond(context)
            }
        }
    }

    private func respond(_ context: ChannelHandlerContext) {
        let headers = HTTPHeaders([("Content-Length", "2")])
        context.write(
            wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: .ok, headers: headers))),
            promise: nil
        )
        context.write(wrapOutboundOut(.body(.byteBuffer(context.channel.allocator.buffer(string: "ok")))), promise: nil)
        context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
    }
}

/// User and system CPU time of this process.
private func cpuNanoseconds() -> UInt64 {
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    return UInt64(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) * 1_000_000_000 + UInt64(
        usage.ru_utime.tv_usec + usage.ru_stime.tv_usec
    ) * 1_000
}
