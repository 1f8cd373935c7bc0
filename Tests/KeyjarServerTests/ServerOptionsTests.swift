import Foundation
import Glibc
import Keyjar
import KeyjarCore
import KeyjarProtocol
import KeyjarTestSupport
import Testing

@testable import KeyjarServer

/// keyjard's options and behaviours the other suites leave out: the file secrets backend, the
/// cookie limits, SIGINT and the expiry sweep.
@Suite(.timeLimit(hangLimit), .servicesStopCleanly)
struct ServerOptionsTests {
    /// A credential's last use is recorded to the minute: the first use at once, another within
    /// the minute after it not again, so that a client answering challenges in a loop does not
    /// make keyjard commit for each.
    @Test func aCredentialsLastUseIsRecordedToTheMinute() async throws {
        let daemon = try await DaemonProcess(arguments: ["--secrets", "file"])
        let client = try TestClient(socketPath: daemon.socketPath)
        let space = ProtectionSpace(host: "used.example", protocol: "https")
        _ = try client.call(.setCredential(space: space, user: "alice", password: "pw", makeDefault: false))
        // Read after the password's reply, so after the commit keyjard queued before sending it.
        func lastUse() throws -> Double? {
            let reply = try client.call(.allCredentials)
            guard case .credentials(let records) = reply else { throw UnexpectedReply(reply) }
            return try #require(records.first { $0.user == "alice" }).lastUsed
        }
        #expect(try lastUse() == nil)
        #expect(try client.call(.password(space: space, user: "alice")) == .password(password: "pw"))
        let first = try #require(try lastUse())
        #expect(try client.call(.password(space: space, user: "alice")) == .password(password: "pw"))
        #expect(try lastUse() == first)
    }

    @Test func aUseIsWrittenFirstThenOnceAMinuteOrWhenTheClockWentBack() {
        #expect(StoreService.isWorthRecording(use: 1_000, after: nil))
        #expect(!StoreService.isWorthRecording(use: 1_000, after: 1_000))
        #expect(!StoreService.isWorthRecording(use: 1_059.9, after: 1_000))
        #expect(StoreService.isWorthRecording(use: 1_060, after: 1_000))
        #expect(StoreService.isWorthRecording(use: 999, after: 1_000))
    }

    @Test func theFileBackendKeepsPasswordsInAPrivateFileBesideTheDatabase() async throws {
        let daemon = try await DaemonProcess(arguments: ["--secrets", "file"])
        let client = try TestClient(socketPath: daemon.socketPath)
        let space = ProtectionSpace(host: "file-secrets.example", protocol: "https")
        let password = "pw-\(UInt64.random(in: 1_000_000...9_999_999))"
        _ = try client.call(.setCredential(space: space, user: "alice", password: password, makeDefault: false))
        #expect(try client.call(.password(space: space, user: "alice")) == .password(password: password))

        let file = (daemon.databasePath as NSString).deletingLastPathComponent + "/secrets.json"
        let attributes = try FileManager.default.attributesOfItem(atPath: file)
        #expect(attributes[.posixPermissions] as? Int == 0o600)
        #expect(try String(contentsOfFile: file, encoding: .utf8).contains(password))
        let database = (try? Data(contentsOf: URL(fileURLWithPath: daemon.databasePath + "-wal"))) ?? Data()
        #expect(database.range(of: Data(password.utf8)) == nil)
        let reply = try client.call(.status)
        guard case .status(let status) = reply else {
            Issue.record("expected a status reply, got \(reply)")
            return
        }
        #expect(status.secretsBackend == "file:\(file)" && status.secretsHealthy, "\(status.secretsBackend)")
    }

    @Test func theCookieLimitsComeFromTheOptions() async throws {
        let daemon = try await DaemonProcess(arguments: ["--max-cookies", "10", "--max-cookies-per-site", "4"])
        let client = try TestClient(socketPath: daemon.socketPath)
        // Six on one site: past 4, the site is purged to 5/6 of it (3).
        try client.setCookies((0..<6).map { "s\($0)=1; Max-Age=3600" }, from: "https://one.example/")
        #expect(try client.snapshot().cookies.count <= 4)
        // Three on each of six more sites: past 10 in all, 1 (10%) goes each time.
        for site in 0..<6 {
            try client.setCookies((0..<3).map { "t\($0)=1; Max-Age=3600" }, from: "https://s\(site).example/")
        }
        let all = try client.snapshot().cookies
        #expect(all.count <= 10 && all.count >= 9)
    }

    @Test func sigintStopsCleanlyAsSIGTERMDoes() async throws {
        let daemon = try await DaemonProcess()
        try TestClient(socketPath: daemon.socketPath).setCookies(
            ["session=1", "kept=1; Max-Age=3600"],
            from: "https://example.com/"
        )
        kill(daemon.pid, SIGINT)
        #expect(await daemon.exit() == 0)
        #expect(!daemon.isRunning)
        #expect(await daemon.stop() == 0)
        #expect(!FileManager.default.fileExists(atPath: daemon.socketPath))
        // A clean stop ended the session: the session cookie is gone, the other kept.
        let restarted = try await daemon.restarted()
        #expect(try TestClient(socketPath: restarted.socketPath).snapshot().cookies.map(\.name) == ["kept"])
    }

    @Test func expiredCookiesAreSweptAndEveryoneIsTold() async throws {
        let daemon = try await DaemonProcess(arguments: ["--expiry-interval", "1"])
        let watcher = try TestClient(socketPath: daemon.socketPath)
        _ = try watcher.call(.subscribe(after: nil))
        try TestClient(socketPath: daemon.socketPath).setCookies(
            ["brief=1; Max-Age=1", "long=1; Max-Age=3600"],
            from: "https://example.com/"
        )
        var removed: [String] = []
        while removed.isEmpty, let message = try watcher.nextPushed(timeout: hangSeconds) {
            guard case .event(let event) = message, case .cookies(let changes) = event.event else { continue }
            for case .removed(let cookie, cause: .expired) in changes { removed.append(cookie.name) }
        }
        #expect(removed == ["brief"])
        #expect(try watcher.snapshot().cookies.map(\.name) == ["long"])
    }
}

private struct UnexpectedReply: Error, CustomStringConvertible {
    let description: String
    init(_ reply: Response) { description = "unexpected reply: \(reply)" }
}
