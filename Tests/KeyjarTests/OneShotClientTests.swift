import Foundation
import Glibc
import Keyjar
import KeyjarCodec
import KeyjarCore
import KeyjarTestSupport
import Testing

/// The light client (`keepsReplica: false`): what `keyjar` and git's credential helper use.
@Suite(.timeLimit(hangLimit), .servicesStopCleanly)
struct OneShotClientTests {
    func oneShot(_ daemon: some KeyjarService, timeout: TimeInterval = 30) throws -> KeyjarClient {
        try KeyjarClient(
            configuration: .init(
                socketPath: daemon.socketPath,
                autoStart: false,
                requestTimeout: timeout,
                keepsReplica: false
            )
        )
    }

    @Test func startsNoThreadAndLoadsNoReplica() async throws {
        // Given a keyjard with a cookie another client stored
        let daemon = try await InProcessServer.withSecretService()
        let writer = try oneShot(daemon)
        try writer.storeCookies(["sid=1"], for: try #require(URL(string: "https://example.com/")))
        // When another process makes a one-shot client, then a replica client
        let lines = try await runPeer(daemon, ["threads", "https://example.com/"]).split(separator: "\n")
        // Then the one-shot client added no thread and holds no replica (sequence 0), yet
        // answered from keyjard; the replica client holds a replica but, not listening, added
        // no thread either; listening added its reader thread
        #expect(lines.first == "one-shot 0 sid=1 sequence 0", "\(lines)")
        #expect(lines.count == 3 && lines[1] == "replica 0 sid=1 sequence 1", "\(lines)")
        let listening = try #require(lines.last?.split(separator: " "))
        #expect(
            listening.count == 3 && listening[0] == "listening" && (Int(listening[1]) ?? 0) >= 1
                && listening[2] == "true",
            "\(lines)"
        )
    }

    @Test func everyTypedRequestIsAnsweredByKeyjard() async throws {
        let daemon = try await InProcessServer.withSecretService()
        let client = try oneShot(daemon)
        let url = try #require(URL(string: "https://www.example.com/a"))

        // Cookies: store, read back, list, export, import, delete, clear
        let outcomes = try client.storeCookies(["a=1; Path=/", "b=2; Domain=com"], for: url)
        #expect(outcomes.first == .stored)
        // A public suffix: rejected, with the reason.
        #expect(outcomes.last == .rejected(reason: "Domain=com is a public suffix"), "\(outcomes)")
        #expect(try client.cookieHeader(for: url) == "a=1")
        #expect(try client.cookies(domain: "example.com").map(\.name) == ["a"])
        let exported = try client.exportCookies(format: .netscape)
        try client.clearCookies()
        #expect(try client.cookies().isEmpty)
        let report = try client.importCookies(exported, format: .netscape)
        #expect(report.imported == 1 && report.problems.isEmpty)
        let bad = try client.importCookies("not a cookie line\n", format: .netscape, firstLine: 7)
        #expect(bad.problems.map(\.line) == [7])
        try client.deleteCookies(try client.cookies().map(\.identity))
        #expect(try client.cookieHeader(for: url) == nil)

        // Policy
        var policy = try client.policy()
        policy.acceptPolicy = .never
        try client.setPolicy(policy)
        #expect(try client.policy().acceptPolicy == .never)
        #expect(try client.status().acceptPolicy == .never)

        // Credentials: the first becomes the default; the rule picks it; the password comes back
        let space = ProtectionSpace(
            host: "git.example.com",
            port: 443,
            protocol: "https",
            realm: "R",
            authenticationMethod: .httpBasic
        )
        try client.setCredential(user: "ann", password: "pw-ann", for: space)
        try client.setCredential(user: "bob", password: "pw-bob", for: space)
        #expect(try client.credentialRecords().filter(\.isDefault).map(\.user) == ["ann"])
        #expect(try client.credentialCandidates(for: space).answer(forUser: nil)?.user == "ann")
        #expect(try client.credentialCandidates(for: space).answer(forUser: "bob")?.user == "bob")
        try client.setDefaultCredential(user: "bob", for: space)
        #expect(try client.credentialCandidates(for: space).answer(forUser: nil)?.user == "bob")
        #expect(try client.password(user: "ann", for: space) == "pw-ann")
        try client.removeCredential(user: "ann", for: space)
        #expect(try client.password(user: "ann", for: space) == nil)
        #expect(try client.status().credentialCount == 1)
    }

    @Test func theNextCallConnectsAgainAfterKeyjardRestarts() async throws {
        // Given a one-shot client whose keyjard crashed
        let daemon = try await DaemonProcess()
        let client = try oneShot(daemon)
        _ = try client.status()
        await daemon.crash()
        // Then a call fails as unreachable, and a call after keyjard is back succeeds
        #expect(throws: KeyjarClientError.self) { try client.status() }
        let restarted = try await daemon.restarted()
        #expect(try client.status().pid == restarted.pid)
    }

    @Test func aCallTimesOutAndTheLateReplyDoesNotAnswerTheNextOne() async throws {
        // Given a one-shot client whose keyjard stops answering (SIGSTOP) during a call
        let daemon = try await DaemonProcess()
        // Running again before the end-of-test check that it stops cleanly.
        defer { kill(daemon.pid, SIGCONT) }
        let client = try oneShot(daemon, timeout: 1)
        try client.storeCookies(["a=1"], for: try #require(URL(string: "https://example.com/")))
        #expect(await stopProcess(daemon.pid))
        do {
            _ = try client.cookies()
            Issue.record("a stopped keyjard answered")
        } catch {
            #expect(error.code == .timedOut, "\(error)")
        }
        kill(daemon.pid, SIGCONT)
        // When the next call is of another kind, it gets its own reply, not the late one
        let exported = CookieJSONFile.parse(Data(try client.exportCookies(format: .json).utf8))
        #expect(exported.cookies.map(\.cookie.name) == ["a"] && exported.problems.isEmpty)
        #expect(try client.cookies().map(\.name) == ["a"])
    }
}
