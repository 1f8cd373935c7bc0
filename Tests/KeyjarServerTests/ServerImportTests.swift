import Foundation
import Keyjar
import KeyjarCodec
import KeyjarCore
import KeyjarProtocol
import KeyjarTestSupport
import Testing

@testable import KeyjarServer

/// A cookie file imported in batches and planned as one import (`ImportSession`): what
/// subscribers get is the net change of the whole file.
@Suite(.timeLimit(hangLimit), .servicesStopCleanly)
struct ServerImportTests {
    /// Small limits, so that a few thousand lines overflow them many times over.
    static let limits = CookieJar.Limits(perSite: 50, perSitePurgedTo: 40, total: 400, totalPurge: 40)

    /// cookies.txt lines, `perSite` cookies a site, valid for a day.
    private static func lines(_ count: Int, prefix: String, perSite: Int = 40, value: String = "v") -> [String] {
        let expiry = Int(Date().timeIntervalSince1970) + 86_400
        return (0..<count).map { index in
            ".\(prefix)\(index / perSite).example\tTRUE\t/\tFALSE\t\(expiry)\tn\(index % perSite)\t\(value)-\(index)\n"
        }
    }

    /// Imports `lines` in batches of `size` as one import; returns the batches' replies and the end's.
    private static func importInBatches(
        _ lines: [String],
        size: Int,
        with client: TestClient,
        beforeTheEnd: () throws -> Void = {}
    ) throws -> (batches: [Response], end: Response) {
        _ = try client.call(.beginImport, timeout: hangSeconds)
        var replies: [Response] = []
        for start in stride(from: 0, to: lines.count, by: size) {
            let text = lines[start..<min(lines.count, start + size)].joined()
            replies.append(
                try client.call(
                    .importCookies(format: .netscape, text: text, firstLine: start + 1),
                    timeout: hangSeconds
                )
            )
        }
        try beforeTheEnd()
        let end = try client.call(.finishImport, timeout: hangSeconds)
        return (replies, end)
    }

    @Test func numberedBatchesGoIntoAnOpenImportAndEverythingElseIsAnImportOfItsOwn() {
        typealias Step = ImportSession.Step
        #expect(Step(firstLine: 7_501, hasOpenImport: true) == .batch)
        #expect(Step(firstLine: 1, hasOpenImport: true) == .batch)
        #expect(Step(firstLine: 7_501, hasOpenImport: false) == .whole)
        #expect(Step(firstLine: nil, hasOpenImport: true) == .whole)
        #expect(Step(firstLine: nil, hasOpenImport: false) == .whole)
    }

    @Test func finishingWithoutABeginningIsAClearError() async throws {
        let server = try await InProcessServer()
        let client = try TestClient(socketPath: server.socketPath)
        #expect(throws: WireError(code: WireError.invalidArgument, message: "no import was begun on this connection")) {
            try client.call(.finishImport, timeout: hangSeconds)
        }
        // An unnumbered import is still committed at once, with or without an open one.
        _ = try client.call(.beginImport, timeout: hangSeconds)
        let reply = try client.call(.importCookies(format: .netscape, text: Self.lines(1, prefix: "now").joined()))
        guard case .importReport(1, 0, [], let sequence?, _, _, _) = reply else {
            Issue.record("expected a committed import, got \(reply)")
            return
        }
        #expect(sequence > 0)
    }

    @Test func aWatcherOfAnImportThatOverflowsTheJarGetsOnlyWhatItLeaves() async throws {
        // Given a full jar of older cookies, a watcher with a replica, and an importer
        let server = try await InProcessServer { $0.limits = Self.limits }
        let importer = try TestClient(socketPath: server.socketPath)
        _ = try importer.call(.importCookies(format: .netscape, text: Self.lines(400, prefix: "old").joined()))
        let watcher = try TestClient(socketPath: server.socketPath)
        let before = try watcher.snapshot()
        #expect(before.cookies.count > 300)
        guard case .subscribed(let start) = try watcher.call(.subscribe(after: before.sequence)) else {
            Issue.record("subscribe failed")
            return
        }
        #expect(start == before.sequence)

        // When 4,000 newer cookies (100 sites, ten times the jar) come in 20 batches as one import
        let file = Self.lines(4_000, prefix: "new")
        let (batches, end) = try Self.importInBatches(file, size: 200, with: importer) {
            // (nothing is committed before the end)
            guard case .status(let status) = try watcher.call(.status) else {
                Issue.record("expected a status")
                return
            }
            #expect(status.sequence == start, "the import committed before its end")
        }
        for reply in batches {
            guard case .importReport(let imported, 0, let problems, nil, 0, 0, 0) = reply else {
                Issue.record("expected a batch's report without a sequence, got \(reply)")
                continue
            }
            #expect(imported == 200 && problems.isEmpty)
        }
        guard case .importReport(0, 0, [], let last?, let added?, 0, let evicted?) = end else {
            Issue.record("expected the import's report with a sequence, got \(end)")
            return
        }

        // Then the watcher gets each cookie at most once, only those the import left...
        var replica = Dictionary(uniqueKeysWithValues: before.cookies.map { ($0.identity, $0) })
        var seen = Set<Cookie.Identity>()
        var sequence = start
        var addedSeen = 0
        var evictedSeen = 0
        while sequence < last {
            let message = try #require(try watcher.nextPushed(timeout: hangSeconds), "no event up to \(last)")
            guard case .event(let event) = message, case .cookies(let changes) = event.event else {
                Issue.record("expected a cookie event, got \(message)")
                return
            }
            #expect(event.sequence > sequence)
            sequence = event.sequence
            for change in changes {
                #expect(seen.insert(change.cookie.identity).inserted, "\(change.cookie.identity) travelled twice")
                switch change {
                case .added(let cookie), .replaced(_, let cookie):
                    addedSeen += 1
                    replica[cookie.identity] = cookie
                case .removed(let cookie, let cause):
                    #expect(cookie.domain.hasPrefix("old"), "a cookie of the file was removed: \(cookie.domain)")
                    if cause == .evicted { evictedSeen += 1 }
                    replica[cookie.identity] = nil
                }
            }
        }
        #expect(sequence == last)
        #expect(addedSeen == added && evictedSeen == evicted)
        // ...and its replica is keyjard's jar, which kept its limits.
        let after = try watcher.snapshot()
        #expect(after.sequence == last)
        #expect(after.cookies.count <= Self.limits.total)
        #expect(Set(replica.values) == Set(after.cookies))
        #expect(Set(after.cookies.map(\.identity)).isSubset(of: seen.union(before.cookies.map(\.identity))))
        #expect(added == after.cookies.filter { $0.domain.hasPrefix("new") }.count)
        #expect(addedSeen < 4_000 / 2, "most of the file never fit, so never travelled")
    }

    @Test func anImportLargerThanAnEventCanBeSendsAResynchroniseMarker() async throws {
        // Given a watcher, and cookies of about 4 KB: the import's first chunk, of
        // `importChunkSizes.first` changes, is over the largest event keyjard pushes
        let server = try await InProcessServer {
            $0.limits = CookieJar.Limits(perSite: 50, perSitePurgedTo: 40, total: 1_000, totalPurge: 50)
        }
        let watcher = try TestClient(socketPath: server.socketPath)
        guard case .subscribed(let start) = try watcher.call(.subscribe(after: nil)) else {
            Issue.record("subscribe failed")
            return
        }
        let value = String(repeating: "x", count: 4_000)
        let cookieBytes = 4_000 + 100
        #expect(StoreService.importChunkSizes.first * cookieBytes > ProtocolLimits.largestPushedEvent)

        // When 2,000 of them are imported in batches as one import
        let importer = try TestClient(socketPath: server.socketPath)
        let (_, end) = try Self.importInBatches(
            Self.lines(2_000, prefix: "big", value: value),
            size: 250,
            with: importer
        )
        guard case .importReport(_, _, _, let last?, let added?, _, _) = end else {
            Issue.record("expected the import's report with a sequence, got \(end)")
            return
        }
        #expect(added <= 1_000)

        // Then no message the watcher gets is over the bound, and at least one is a marker
        var sequence = start
        var markers = 0
        while sequence < last {
            let payload = try #require(try watcher.receiveRaw(timeout: hangSeconds), "nothing up to \(last)")
            #expect(payload.count <= ProtocolLimits.largestPushedEvent + 1_024)
            switch try MessageCoding.decode(ServerMessage.self, from: payload) {
            case .event(let event): sequence = event.sequence
            case .resynchronise(let at):
                markers += 1
                sequence = at
            case let other: Issue.record("unexpected \(other)")
            }
        }
        #expect(markers > 0)
        #expect(try watcher.snapshot().cookies.count == added)
    }

    @Test func anImportWhoseEndNeverCameLeavesTheStoreAsItWas() async throws {
        // Given a store with one cookie
        let server = try await InProcessServer { $0.limits = Self.limits }
        let reader = try TestClient(socketPath: server.socketPath)
        try reader.setCookies(["kept=1"], from: "https://kept.example/")
        let before = try reader.snapshot()

        // When an importer sends batches of an import and goes away before its end
        do {
            let importer = try TestClient(socketPath: server.socketPath)
            _ = try importer.call(.beginImport)
            let reply = try importer.call(
                .importCookies(format: .netscape, text: Self.lines(100, prefix: "gone").joined(), firstLine: 1)
            )
            guard case .importReport(100, 0, [], nil, _, _, _) = reply else {
                Issue.record("expected a batch's report, got \(reply)")
                return
            }
        }

        // Then nothing of it was committed
        let after = try reader.snapshot()
        #expect(after.sequence == before.sequence)
        #expect(after.cookies == before.cookies)
    }
}
