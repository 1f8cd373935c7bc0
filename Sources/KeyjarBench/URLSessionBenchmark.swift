import Foundation
import FoundationNetworking
import Keyjar
import KeyjarLoader
import NIOCore
import NIOHTTP1
import NIOPosix

/// A URLSession request through `KeyjarURLProtocol` (`configuration.useKeyjar(loader)`)
/// against plain URLSession, and against the same loader called directly, on one keep-alive
/// loopback server in this process (SwiftNIO, on its own thread), in alternating blocks.
/// Plain URLSession takes the same Cookie header on each request that the loader's jar adds;
/// neither side has a cache. Each request is timed from the task's creation to its completion
/// handler (the loader's: to `sendSynchronousRequest`'s return).
func runURLSessionBenchmark() throws {
    let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
    defer { try? group.syncShutdownGracefully() }
    let channel = try ServerBootstrap(group: group)
        .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
        .childChannelInitializer { channel in
            channel.eventLoop.makeCompletedFuture {
                try channel.pipeline.syncOperations.configureHTTPServerPipeline()
                try channel.pipeline.syncOperations.addHandler(CookieCheckingHandler())
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

    let plainConfiguration = URLSessionConfiguration.ephemeral
    plainConfiguration.urlCache = nil
    let plain = URLSession(configuration: plainConfiguration)
    defer { plain.finishTasksAndInvalidate() }
    var plainRequest = URLRequest(url: url)
    plainRequest.setValue(CookieCheckingHandler.cookie, forHTTPHeaderField: "Cookie")

    let keyjarConfiguration = URLSessionConfiguration.ephemeral
    keyjarConfiguration.useKeyjar(loader)
    let keyjar = URLSession(configuration: keyjarConfiguration)
    defer { keyjar.finishTasksAndInvalidate() }
    let keyjarRequest = URLRequest(url: url)

    func plainSession() throws { try sessionRequest(plain, plainRequest) }
    func throughKeyjar() throws { try sessionRequest(keyjar, keyjarRequest) }
    func loaderAlone() throws {
        let (data, _) = try loader.sendSynchronousRequest(keyjarRequest)
        guard data == Data("ok".utf8) else { throw BenchmarkError("the loader's request lacked the jar's cookies") }
    }

    let blocks = 20
    let perBlock = 250
    for warmUp in [plainSession, throughKeyjar, loaderAlone] { _ = try timedRequests(count: perBlock, warmUp) }
    var plainSamples: [UInt64] = []
    var keyjarSamples: [UInt64] = []
    var loaderSamples: [UInt64] = []
    for _ in 0..<blocks {
        plainSamples += try timedRequests(count: perBlock, plainSession)
        keyjarSamples += try timedRequests(count: perBlock, throughKeyjar)
        loaderSamples += try timedRequests(count: perBlock, loaderAlone)
    }
    report("urlsession_plain_request", samples: plainSamples)
    report("urlsession_keyjar_protocol_request", samples: keyjarSamples)
    report("urlsession_loader_request", samples: loaderSamples)
    let plainMedian = Double(percentile(plainSamples.sorted(), 0.5))
    let keyjarMedian = Double(max(1, percentile(keyjarSamples.sorted(), 0.5)))
    let loaderMedian = Double(max(1, percentile(loaderSamples.sorted(), 0.5)))
    print("urlsession_plain_to_keyjar_protocol_ratio: \(String(format: "%.1f", plainMedian / keyjarMedian))")
    print("urlsession_plain_to_loader_ratio: \(String(format: "%.1f", plainMedian / loaderMedian))")
    print(
        "urlsession_keyjar_protocol_overhead_over_loader_median: \(Int64(keyjarMedian) - Int64(loaderMedian)) ns"
    )
}

/// One data task with a completion handler, waited for on this (the benchmark's) thread.
private func sessionRequest(_ session: URLSession, _ request: URLRequest) throws {
    let done = DispatchSemaphore(value: 0)
    let outcome = RequestOutcome()
    session.dataTask(with: request) { data, _, error in
        outcome.set(data, error)
        done.signal()
    }.resume()
    done.wait()
    guard let (data, error) = outcome.value, error == nil, data == Data("ok".utf8) else {
        throw BenchmarkError(
            "a URLSession request failed or lacked the jar's cookies: \(String(describing: outcome.value))"
        )
    }
}

private func timedRequests(count: Int, _ request: () throws -> Void) throws -> [UInt64] {
    var samples: [UInt64] = []
    samples.reserveCapacity(count)
    for _ in 0..<count {
        let start = nanoseconds()
        try request()
        samples.append(nanoseconds() - start)
    }
    return samples
}

private final class RequestOutcome: @unchecked Sendable {
    // @unchecked: written once by the completion handler before the semaphore is signalled.
    private(set) var value: (Data?, (any Error)?)?
    func set(_ data: Data?, _ error: (any Error)?) { value = (data, error) }
}

/// Answers "ok" to a request that carries the jar's two cookies, "no" to any other (both two
/// bytes, so that a request without them costs the same and is caught).
private final class CookieCheckingHandler: ChannelInboundHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart
    static let cookie = "session=0123456789abcdef; theme=dark"
    private var hasCookies = false

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head): hasCookies = head.headers["Cookie"].first == Self.cookie
        case .body: break
        case .end:
            let headers = HTTPHeaders([("Content-Length", "2")])
            context.write(
                wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: .ok, headers: headers))),
                promise: nil
            )
            let body = context.channel.allocator.buffer(string: hasCookies ? "ok" : "no")
            context.write(wrapOutboundOut(.body(.byteBuffer(body))), promise: nil)
            context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
        }
    }
}
