import Foundation
import KeyjarBrowserCookies
import KeyjarBrowserFixtures
import KeyjarCore
import KeyjarTestSupport
import Testing

@Suite struct BrowserFollowStateTests {
    private let sid = Cookie(name: "sid", value: "1", domain: "example.com", expires: inADay)

    @Test func onlyWhatARequestWouldCarryCountsAsAChange() {
        var state = BrowserFollowState()
        state.record([sid])
        var touched = sid
        touched.lastAccess = now.addingTimeInterval(60)
        #expect(state.apply([touched]).isEmpty)

        var rotated = sid
        rotated.value = "2"
        #expect(state.apply([rotated]).changed == [rotated])
        var secured = rotated
        secured.secure = true
        #expect(state.apply([secured]).changed == [secured])
        // The same identity in a partition is another cookie.
        var partitioned = secured
        partitioned.partitionKey = CookiePartitionKey(scheme: "https", site: "news.example")
        let changes = state.apply([secured, partitioned])
        #expect(changes.changed == [partitioned] && changes.vanished.isEmpty)
    }

    @Test func aCookieTheBrowserDroppedVanishes() {
        var state = BrowserFollowState()
        let other = Cookie(name: "theme", value: "dark", domain: "example.com", expires: inADay)
        state.record([sid, other])
        let changes = state.apply([other])
        #expect(changes.vanished == [sid] && changes.changed.isEmpty)
        // Vanished once: not again.
        #expect(state.apply([other]).isEmpty)
        #expect(state.count == 1)
    }
}

@Suite(.timeLimit(hangLimit))
struct BrowserDatabaseWatcherTests {
    /// A write by another process wakes the watcher; stop() ends a wait.
    @Test func anotherProcesssWriteWakesItAndStopEndsIt() async throws {
        let home = try BrowserHome()
        let directory = try home.chromiumProfile(".config/chromium/Default", [])
        let database = directory + "/Network/Cookies"
        let shell = try SQLiteShell(database: database)
        try await shell.run("PRAGMA journal_mode=WAL;")
        let watcher = try BrowserDatabaseWatcher(database: database)
        let waiting = Task { try await onOwnThread { try watcher.waitForChange() } }
        var cookie = ChromiumFixture(hostKey: ".example.com", name: "sid", value: "1")
        cookie.expires = inADay
        try await shell.run(try BrowserDatabaseFixtures.chromiumInsert(cookie, version: 24))
        #expect(try await waiting.value == true)

        // The rest of that transaction's events (the wait returned at its first), then a write
        // to another file of the directory: not a change (nor, by the same rule, one to the
        // -shm index, which readers write too).
        _ = try watcher.drainEvents()
        try Data("x".utf8).write(to: URL(fileURLWithPath: directory + "/Network/Other"))
        #expect(try watcher.drainEvents() == false)
        cookie.value = "2"
        try await shell.run(try BrowserDatabaseFixtures.chromiumInsert(cookie, version: 24))
        #expect(try watcher.drainEvents() == true)
        let stopped = Task { try await onOwnThread { try watcher.waitForChange() } }
        watcher.stop()
        #expect(try await stopped.value == false)
        try await shell.close()
    }
}

@Suite struct BrowserCookieRowDecoderTests {
    private func row(_ originAttributes: String) -> FirefoxCookieRow {
        FirefoxCookieRow(
            name: "a",
            value: "b",
            host: ".example.com",
            path: "/",
            expiry: 4_102_444_800,
            expiryInMilliseconds: false,
            creationTime: 0,
            lastAccessed: 0,
            isSecure: true,
            isHttpOnly: false,
            sameSite: 0,
            rawSameSite: nil,
            originAttributes: originAttributes
        )
    }

    @Test(arguments: [
        ("^partitionKey=%28https%2Cexample.com%29", "https://example.com"),
        ("^partitionKey=%28http%2Cexample.com%2C8080%29", "http://example.com"),
        ("^partitionKey=%28https%2Cexample.com%2C443%2Cf%29", "https://example.com"),
    ])
    func firefoxPartitionKeysKeepTheirSchemeAndSite(attributes: String, key: String) throws {
        let cookie = try BrowserCookieRowDecoder.cookie(row(attributes), container: 0, now: now).get()
        #expect(cookie.partitionKey?.serialized == key)
    }

    @Test(arguments: [
        ("^partitionKey=example.com", BrowserCookieSkip.badPartitionKey),
        ("^geckoViewSessionContextId=abc", .unknownOriginAttribute),
        ("^somethingNew=1", .unknownOriginAttribute),
        ("^userContextId=3", .otherContainer),
    ])
    func unsendableOriginAttributesAreSkippedWithTheirReason(attributes: String, reason: BrowserCookieSkip) {
        #expect(throws: reason) { try BrowserCookieRowDecoder.cookie(row(attributes), container: 0, now: now).get() }
    }
}
