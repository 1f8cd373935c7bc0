import Foundation
import FoundationNetworking
import KeyjarLocks
import KeyjarResponseCache
import KeyjarTestSupport
import Testing

@testable import KeyjarLoader
@testable import KeyjarTransfer

/// Content and transfer codings against a real loopback server (`/coded` in
/// Servers/loader_server.py): what the loader knows is decoded as it arrives, anything else is
/// delivered as it came, never a failed load.
@Suite(.timeLimit(hangLimit), .servicesStopCleanly)
struct ContentCodingTests {
    let server: LoaderTestServer

    init() async throws { server = try await LoaderTestServer() }

    static let plain = String(repeating: "coded body ", count: 50)

    func coded(_ query: String, fields: [String: String] = [:]) async -> RecordingDelegate {
        var request = URLRequest(url: server.url("/coded?" + query))
        for (name, value) in fields { request.setValue(value, forHTTPHeaderField: name) }
        return await load(request, with: ephemeralLoader())
    }

    /// The bytes the server sent (before any chunked framing), from its X-Sent-Base64.
    func sent(_ delegate: RecordingDelegate) throws -> Data {
        try #require(
            delegate.lastResponse?.value(forHTTPHeaderField: "X-Sent-Base64").flatMap { Data(base64Encoded: $0) }
        )
    }

    func received(_ delegate: RecordingDelegate) -> Data { delegate.state.withLock { $0.body } }

    @Test(arguments: ["foo", "gzip,%20foo", "foo,%20gzip"])
    func anUnknownContentCodingIsDeliveredAsItCame(coding: String) async throws {
        let delegate = await coded("ce=" + coding)
        #expect(delegate.error == nil, "\(delegate.error.map { "\($0)" } ?? "")")
        #expect(delegate.lastResponse?.statusCode == 200)
        #expect(
            delegate.lastResponse?.value(forHTTPHeaderField: "Content-Encoding")
                == coding.removingPercentEncoding
        )
        let sent = try sent(delegate)
        #expect(received(delegate) == sent)
        // "gzip, foo" and "foo, gzip": the gzip bytes, as they came.
        if coding.contains("gzip") { #expect(sent.prefix(2) == Data([0x1f, 0x8b])) }
    }

    /// A transfer coding the request did not ask for (it sends no TE) and the loader does not
    /// know: the content as it came.
    @Test func anUnknownTransferCodingIsDeliveredAsItCame() async throws {
        let delegate = await coded("te=foo")
        #expect(delegate.error == nil, "\(delegate.error.map { "\($0)" } ?? "")")
        #expect(delegate.lastResponse?.value(forHTTPHeaderField: "Transfer-Encoding") == "foo, chunked")
        #expect(delegate.body == Self.plain)
        // Under an unknown transfer coding nothing is undone: the gzip content stays gzip.
        let under = await coded("ce=gzip&te=foo")
        #expect(under.error == nil)
        #expect(received(under) == (try sent(under)))
    }

    /// A known transfer coding is undone (libcurl did so too), and the content coding under it.
    @Test func aKnownTransferCodingIsUndone() async throws {
        #expect(await coded("te=gzip").body == Self.plain)
        #expect(await coded("ce=deflate&te=gzip").body == Self.plain)
        // An unknown content coding under a known transfer coding: the transfer coding undone.
        let under = await coded("ce=foo&te=gzip")
        #expect(under.error == nil)
        #expect(under.body == Self.plain)
    }

    /// Known codings, stacked, are decoded; the delegate sees the head as it came (the coded
    /// length and the codings), as it did when libcurl decoded.
    @Test func knownCodingsAreDecodedAndTheHeadIsAsItCame() async throws {
        let delegate = await coded("ce=gzip,%20deflate")
        #expect(delegate.body == Self.plain)
        #expect(delegate.lastResponse?.value(forHTTPHeaderField: "Content-Encoding") == "gzip, deflate")
        let sent = try sent(delegate)
        #expect(delegate.lastResponse?.value(forHTTPHeaderField: "Content-Length") == String(sent.count))
        #expect(delegate.lastResponse?.expectedContentLength == Int64(sent.count))
    }

    /// Decoding streams: a large body arrives in many pieces, each as it is decoded.
    @Test func aLargeCodedBodyIsDecodedAsItArrives() async throws {
        let delegate = await coded("ce=gzip&repeat=400000")
        #expect(received(delegate).count == 4_400_000)
        let pieces = delegate.events.filter { if case .data = $0 { true } else { false } }.count
        #expect(pieces > 4, "\(pieces) pieces")
        #expect(delegate.events.last == .finished)
    }

    @Test func theLoaderAdvertisesWhatItDecodesUnlessTheRequestSaysOtherwise() async throws {
        let echo = try decodeEcho(await load(URLRequest(url: server.url("/echo")), with: ephemeralLoader()).body)
        #expect(echo.headers["accept-encoding"] == "gzip, deflate, br, zstd")
        // The caller's own Accept-Encoding: the codings are the caller's to undo.
        let own = await coded("ce=gzip", fields: ["Accept-Encoding": "gzip"])
        #expect(received(own) == (try sent(own)))
    }

    /// The cache keeps no Transfer-Encoding (hop-by-hop): a body under a transfer coding the
    /// loader could not undo is not stored, or a hit would serve coded bytes with no field
    /// naming the coding.
    @Test func aBodyUnderAnUnknownTransferCodingIsNotCached() async throws {
        let loader = ephemeralLoader(responseCache: try ResponseCache(configuration: .init()))
        let request = URLRequest(url: server.url("/coded?te=foo&cc=max-age%3D600&key=te-cache"))
        #expect(await load(request, with: loader).body == Self.plain)
        #expect(await load(request, with: loader).body == Self.plain)
        #expect(try server.count("te-cache") == 2)
    }

    /// At most five codings are undone, as curl undoes (CVE-2023-23916): each is a decoder's
    /// state, and a head can name thousands. Five decode; six fail the load, saying why.
    @Test func moreThanFiveCodingsFailTheLoad() async throws {
        // Five content codings and a transfer coding are six.
        let fiveAndOne = await coded(
            "ce=gzip,deflate,gzip,deflate,gzip&te=gzip&repeat=5".replacingOccurrences(of: ",", with: "%2C")
        )
        #expect(
            fiveAndOne.error?.localizedDescription.contains("6 codings") == true,
            "\(fiveAndOne.error.map { "\($0)" } ?? "")"
        )
        let allowed = await coded(
            "ce=gzip,deflate,gzip,deflate,gzip&repeat=5".replacingOccurrences(of: ",", with: "%2C")
        )
        #expect(allowed.body == String(repeating: "coded body ", count: 5), "\(allowed.error.map { "\($0)" } ?? "")")
        let six = await coded("ce=gzip,gzip,gzip,gzip,gzip,gzip&repeat=5".replacingOccurrences(of: ",", with: "%2C"))
        #expect(six.error?.code == .badServerResponse)
        #expect(six.error?.localizedDescription.contains("at most 5 are undone") == true)
    }

    @Test func aCorruptBodyInAKnownCodingFails() async throws {
        let delegate = await coded("ce=gzip&corrupt=1")
        #expect(delegate.error?.code == .badServerResponse)
        #expect(
            delegate.error?.localizedDescription.contains("gzip") == true,
            "\(delegate.error.map { "\($0)" } ?? "")"
        )
    }
}
