import Foundation
import Keyjar
import KeyjarCodec
import KeyjarCore
import KeyjarProtocol
import KeyjarServer
import KeyjarTestSupport
import Testing

/// Partitioned cookies (CHIPS) through keyjard: stored and sent under their top-level site, and
/// never shown to a client of a protocol version before 3, which would send them everywhere.
@Suite(.timeLimit(hangLimit), .servicesStopCleanly)
struct ServerPartitionedCookieTests {
    static let chat = "https://chat.example/widget"
    static let partitioned = "id=1; Secure; Path=/; SameSite=None; Partitioned"

    /// A connection that says hello with `version`.
    static func client(_ server: InProcessServer, version: Int) throws -> TestClient {
        let client = try TestClient(socketPath: server.socketPath, hello: false)
        guard case .hello(let answered, _, _) = try client.call(.hello(version: version, client: "v\(version)")) else {
            throw ConnectionError("no hello")
        }
        #expect(answered == version)
        return client
    }

    static func header(_ client: TestClient, _ url: String, under mainDocument: String?) throws -> String? {
        let response = try client.call(
            .cookieHeader(context: WireCookieContext(url: url, mainDocumentURL: mainDocument))
        )
        guard case .cookieHeader(let header) = response else { throw ConnectionError("unexpected \(response)") }
        return header
    }

    @Test func aPartitionedCookieGoesOnlyUnderTheTopLevelSiteItWasSetUnder() async throws {
        let server = try await InProcessServer()
        let client = try Self.client(server, version: ProtocolVersion.current)
        // Given the same embedded service setting a cookie under two top-level sites
        #expect(
            try client.setCookies([Self.partitioned], from: Self.chat, mainDocument: "https://news.example/") == [nil]
        )
        #expect(
            try client.setCookies(
                ["id=2; Secure; Path=/; Partitioned"],
                from: Self.chat,
                mainDocument: "https://www.shop.example/a"
            )
                == [nil]
        )
        // Then each site gets its own, and the service's own pages get neither
        #expect(try Self.header(client, Self.chat, under: "https://news.example/x") == "id=1")
        #expect(try Self.header(client, Self.chat, under: "https://shop.example/") == "id=2")
        #expect(try Self.header(client, Self.chat, under: nil) == nil)
        #expect(
            try Self.header(client, Self.chat, under: "http://news.example/") == nil,
            "another scheme is another site"
        )
        // ...and the snapshot holds both, each with its key
        let keys = try client.snapshot().cookies.compactMap(\.partitionKey?.serialized).sorted()
        #expect(keys == ["https://news.example", "https://shop.example"])
    }

    @Test func partitionedWithoutSecureIsRefusedWithTheReason() async throws {
        let server = try await InProcessServer()
        let client = try Self.client(server, version: ProtocolVersion.current)
        let outcomes = try client.setCookies(
            ["id=1; Partitioned"],
            from: Self.chat,
            mainDocument: "https://news.example/"
        )
        #expect(outcomes.count == 1)
        #expect(outcomes.first??.contains("Secure") == true)
        #expect(try client.snapshot().cookies.isEmpty)
    }

    @Test func aSubscriberGetsAPartitionedCookieWithItsKeyLiveAndWhenCatchingUp() async throws {
        let server = try await InProcessServer()
        let writer = try Self.client(server, version: ProtocolVersion.current)
        let live = try Self.client(server, version: ProtocolVersion.current)
        guard case .subscribed(let start) = try live.call(.subscribe(after: nil)) else {
            throw ConnectionError("subscribe")
        }
        // When an ordinary and a partitioned cookie are stored
        #expect(try writer.setCookies(["plain=1"], from: Self.chat) == [nil])
        #expect(
            try writer.setCookies([Self.partitioned], from: Self.chat, mainDocument: "https://news.example/") == [nil]
        )
        // Then a subscriber gets both events, the second with the key
        var pushed: [SequencedEvent] = []
        while pushed.count < 2, case .event(let event) = try #require(try live.nextPushed()) { pushed.append(event) }
        #expect(pushed.map(\.sequence) == [start + 1, start + 2])
        #expect(pushed.last?.event.cookieChanges.map(\.cookie.partitionKey?.serialized) == ["https://news.example"])
        // ...and so does a client that subscribes after both, catching up from the first
        let late = try Self.client(server, version: ProtocolVersion.current)
        _ = try late.call(.subscribe(after: start))
        var caughtUp: [SequencedEvent] = []
        while caughtUp.count < 2, case .event(let event) = try #require(try late.nextPushed()) {
            caughtUp.append(event)
        }
        #expect(caughtUp == pushed)
    }

    @Test func aHelloOfAnotherProtocolVersionIsRefusedAndTheConnectionClosed() async throws {
        let server = try await InProcessServer()
        for version in [ProtocolVersion.current - 1, ProtocolVersion.current + 1] {
            let client = try TestClient(socketPath: server.socketPath, hello: false)
            #expect {
                try client.call(.hello(version: version, client: "v\(version)"))
            } throws: { error in
                (error as? WireError)?.code == WireError.unsupportedVersion
                    && (error as? WireError)?.message.hasSuffix(
                        "protocol version \(version) is not supported; this keyjard speaks \(ProtocolVersion.current)"
                    ) == true
            }
            #expect(try client.receive(timeout: 5) == nil)
            #expect(client.isClosed)
        }
    }

    @Test func cookiesTxtExportLeavesPartitionedCookiesOutAndSaysHowMany() async throws {
        let server = try await InProcessServer()
        let client = try Self.client(server, version: ProtocolVersion.current)
        #expect(
            try client.setCookies(
                [Self.partitioned, "plain=1"],
                from: Self.chat,
                mainDocument: "https://news.example/"
            ) == [nil, nil]
        )
        guard
            case .exported(let text, let omitted) = try client.call(
                .exportCookies(format: .netscape, includeSameSite: false)
            )
        else { throw ConnectionError("export") }
        #expect(omitted == 1)
        #expect(text.contains("\tplain\t1"))
        #expect(!text.contains("\tid\t1"))
        // ...while the JSON file keeps it, with its key
        guard
            case .exported(let json, let none) = try client.call(.exportCookies(format: .json, includeSameSite: false))
        else { throw ConnectionError("export") }
        #expect(none == 0)
        #expect(
            json.contains(#""partitionKey" : "https:\/\/news.example""#)
                || json.contains(#""partitionKey" : "https://news.example""#)
        )
    }
}
