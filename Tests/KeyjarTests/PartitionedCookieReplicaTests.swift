import Foundation
import KeyjarCore
import KeyjarTestSupport
import Testing

@testable import Keyjar

/// A partitioned cookie (CHIPS) reaches every client's replica with its key, and the replica
/// sends it only under that top-level site, as keyjard does.
@Suite(.timeLimit(hangLimit), .servicesStopCleanly)
struct PartitionedCookieReplicaTests {
    @Test func anotherProcessesReplicaSendsAPartitionedCookieUnderItsSiteOnly() async throws {
        let daemon = try await InProcessServer.withSecretService()
        let writer = try storage(for: daemon)
        let reader = try storage(for: daemon)
        let chat = try #require(URL(string: "https://chat.example/widget"))
        let news = try #require(URL(string: "https://news.example/today"))
        let shop = try #require(URL(string: "https://shop.example/"))
        // When a page on news.example embeds chat.example, which sets a partitioned cookie
        let outcomes = try await writer.storeCookies(
            fromResponseHeaders: ["id=1; Secure; SameSite=None; Partitioned"],
            for: chat,
            mainDocumentURL: news
        )
        #expect(outcomes == [.stored])
        // Then the other process's replica has it, with its key
        #expect(await eventually { reader.cookies.contains { $0.name == "id" } })
        #expect(reader.cookies.map(\.partitionKey?.serialized) == ["https://news.example"])
        // ...and sends it under news.example only: not under another site, nor top-level
        #expect(reader.cookieHeader(for: chat, mainDocumentURL: news) == "id=1")
        #expect(reader.cookieHeader(for: chat, mainDocumentURL: shop) == nil)
        #expect(reader.cookieHeader(for: chat) == nil)
        // ...exactly as keyjard answers
        #expect(try reader.client.cookieHeader(for: chat, mainDocumentURL: news) == "id=1")
        #expect(try reader.client.cookieHeader(for: chat, mainDocumentURL: shop) == nil)
    }

    @Test func cookiesAProgramSetsForAnEmbeddedRequestGoToTheTopLevelSitesPartition() async throws {
        let daemon = try await InProcessServer.withSecretService()
        let storage = try storage(for: daemon)
        let chat = try #require(URL(string: "https://chat.example/widget"))
        let news = try #require(URL(string: "https://news.example/today"))
        // Given cookies made from a response's headers (which know no main document: keyed by
        // the URL's own site)
        let made = Cookie.cookies(
            withResponseHeaderFields: ["Set-Cookie": "id=1; Secure; SameSite=None; Partitioned"],
            for: chat
        )
        #expect(made.map(\.partitionKey?.serialized) == ["https://chat.example"])
        // When a program stores them for the embedded request
        let outcomes = try await storage.setCookies(made, for: chat, mainDocumentURL: news)
        #expect(outcomes == [.stored])
        // Then they are kept under the top-level site, not the widget's own
        #expect(storage.cookies.map(\.partitionKey?.serialized) == ["https://news.example"])
        #expect(storage.cookieHeader(for: chat, mainDocumentURL: news) == "id=1")
        #expect(storage.cookieHeader(for: chat) == nil)
    }
}
