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

    @Test func aVersion2ClientNeverSeesAPartitionedCookie() async throws {
        let server = try await InProcessServer()
        let writer = try Self.client(server, version: ProtocolVersion.current)
        let old = try Self.client(server, version: 2)
        let current = try Self.client(server, version: ProtocolVersion.current)
        for client in [old, current] {
            guard case .subscribed = try client.call(.subscribe(after: nil)) else { throw ConnectionError("subscribe") }
        }
        // When a partitioned cookie is stored
        #expect(
            try writer.setCookies([Self.partitioned], from: Self.chat, mainDocument: "https://news.example/") == [nil]
        )
        // Then a current subscriber gets the event with the key...
        guard case .event(let event) = try #require(try current.nextPushed()),
            case .cookies(let changes) = event.event
        else { throw ConnectionError("expected an event") }
        #expect(changes.map(\.cookie.partitionKey?.serialized) == ["https://news.example"])
        // ...and the version-2 one gets the event without it (same number, nothing in it), and
        // neither its snapshot, a lookup nor a JSON export shows it
        guard case .event(let stripped) = try #require(try old.nextPushed()) else {
            throw ConnectionError("expected an event")
        }
        #expect(stripped.sequence == event.sequence)
        #expect(stripped.event == .cookies(changes: []))
        #expect(try old.snapshot().cookies.isEmpty)
        let context = WireCookieContext(url: Self.chat, mainDocumentURL: "https://news.example/")
        guard case .cookies(let matching) = try old.call(.cookies(context: context)),
            case .cookies(let matchingNow) = try current.call(.cookies(context: context))
        else { throw ConnectionError("cookies") }
        #expect(matching.isEmpty)
        #expect(matchingNow.map(\.name) == ["id"])
        guard
            case .exported(let json, let omitted) = try old.call(.exportCookies(format: .json, includeSameSite: false))
        else { throw ConnectionError("export") }
        #expect(omitted == 1)
        #expect(!json.contains("partitionKey"))
        #expect(try old.snapshot().sequence == event.sequence)
        guard case .cookies(let listed) = try old.call(.listCookies(domain: nil)) else { throw ConnectionError("list") }
        #expect(listed.isEmpty)
        // ...while an unpartitioned cookie reaches it as an ordinary event
        #expect(try writer.setCookies(["plain=1"], from: Self.chat) == [nil])
        guard case .event(let plain) = try #require(try old.nextPushed()) else {
            throw ConnectionError("expected an event")
        }
        #expect(plain.event.cookieChanges.map(\.cookie.name) == ["plain"])
    }

    @Test func aVersion2ClientCatchingUpIsToldToResynchroniseAtAPartitionedEvent() async throws {
        let server = try await InProcessServer()
        let writer = try Self.client(server, version: ProtocolVersion.current)
        guard case .subscribed(let start) = try writer.call(.subscribe(after: nil)) else {
            throw ConnectionError("subscribe")
        }
        #expect(try writer.setCookies(["plain=1"], from: Self.chat) == [nil])
        #expect(
            try writer.setCookies([Self.partitioned], from: Self.chat, mainDocument: "https://news.example/") == [nil]
        )
        // When a version-2 client subscribes after the first of them
        let old = try Self.client(server, version: 2)
        _ = try old.call(.subscribe(after: start))
        // Then it is sent the unpartitioned event, and resynchronise for the partitioned one
        var pushed: [ServerMessage] = []
        while pushed.count < 2, let message = try old.nextPushed() { pushed.append(message) }
        guard pushed.count == 2, case .event(let first) = pushed[0], case .resynchronise(let second) = pushed[1] else {
            throw ConnectionError("expected an event and resynchronise, got \(pushed)")
        }
        #expect(first.sequence == start + 1)
        #expect(second == start + 2)
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
