import Foundation
import FoundationNetworking
import Keyjar
import KeyjarCore
import KeyjarLocks
import KeyjarTestSupport
import Testing

/// `URLCredentialStorage`'s contract on the shared storage: the Foundation-shaped calls work on
/// exactly the space given, the matching rule stays behind `defaultCredential(for:)`, and a
/// write that fails is never swallowed.
@Suite(.timeLimit(hangLimit), .servicesStopCleanly)
struct CredentialStorageSemanticsTests {
    @Test func credentialsForASpaceAreThatSpacesOwnAndRemoveTakesThemAway() async throws {
        let daemon = try await InProcessServer.withSecretService()
        let storage = try credentialStorage(for: daemon)
        let host = "exact-\(UUID().uuidString.prefix(8).lowercased()).example"
        let server = URLProtectionSpace(
            host: host,
            port: 443,
            protocol: "https",
            realm: nil,
            authenticationMethod: NSURLAuthenticationMethodDefault
        )
        let team = space(host, realm: "Team")
        try await storage.store(URLCredential(user: "alice", password: "a-pw", persistence: .permanent), for: server)
        try await storage.store(URLCredential(user: "carol", password: "c-pw", persistence: .forSession), for: team)

        #expect(storage.credentials(for: team)?.keys.sorted() == ["carol"])
        #expect(storage.credentials(for: space(host, realm: "Team"))?["carol"]?.password == "c-pw")
        #expect(storage.credentials(for: server)?.keys.sorted() == ["alice"])
        // A challenge nobody stored a credential for: no credentials of its own, yet the
        // matching rule answers it with the server-wide one.
        let digest = URLProtectionSpace(
            host: host,
            port: 443,
            protocol: "https",
            realm: "Other",
            authenticationMethod: NSURLAuthenticationMethodHTTPDigest
        )
        #expect(storage.credentials(for: digest) == nil)
        #expect(storage.defaultCredential(for: digest)?.user == "alice")
        #expect(storage.choice(for: ProtectionSpace(team)).candidates.map(\.record.user) == ["carol", "alice"])

        // What credentials(for:) lists for a space, remove(_:for:) removes from it.
        for space in [team, server] {
            for credential in (storage.credentials(for: space) ?? [:]).values { storage.remove(credential, for: space) }
            #expect(storage.credentials(for: space) == nil)
        }
        #expect(storage.choice(for: ProtectionSpace(team)).candidates.isEmpty)
    }

    /// The Secret Service goes away: the overrides report each failed write to the log, post
    /// nothing and change nothing; Keyjar's own calls throw the same failure.
    @Test func aFailedWriteOfAnOverrideIsLoggedAndPostsNothing() async throws {
        let service = try await PrivateSecretService()
        let daemon = try await DaemonProcess(environment: service.environment)
        let logged = Locked<[String]>([])
        let storage = try SharedCredentialStorage(
            configuration: .init(socketPath: daemon.socketPath, autoStart: false),
            failureLog: { line in logged.withLock { $0.append(line) } }
        )
        let server = URLProtectionSpace(
            host: "keyring.example",
            port: 443,
            protocol: "https",
            realm: "Admin",
            authenticationMethod: NSURLAuthenticationMethodHTTPBasic
        )
        let alice = URLCredential(user: "alice", password: "pw-secret-alice", persistence: .permanent)
        storage.set(alice, for: server)
        #expect(storage.credentials(for: server)?.keys.sorted() == ["alice"])
        let posted = LockedCounter()
        let observer = NotificationCenter.default.addObserver(
            forName: .NSURLCredentialStorageChanged,
            object: storage,
            queue: nil
        ) { _ in posted.increment() }
        defer { NotificationCenter.default.removeObserver(observer) }

        try await service.killKeyring()
        let bob = URLCredential(user: "bob", password: "pw-secret-bob", persistence: .permanent)
        storage.set(bob, for: server)
        storage.setDefaultCredential(bob, for: server)
        storage.remove(alice, for: server)
        storage.remove(alice, for: server, options: [:])
        do {
            try await storage.store(bob, for: server)
            Issue.record("stored a permanent credential with no Secret Service")
        } catch {
            #expect(error.message.contains("No Secret Service"), "\(error.message)")
        }

        let lines = logged.withLock { $0 }
        #expect(lines.count == 4, "\(lines)")
        let actions = [
            "store a credential", "store a default credential", "remove a credential", "remove a credential",
        ]
        for (line, action) in zip(lines, actions) {
            #expect(
                line.hasPrefix("keyjar: could not \(action) for https://keyring.example:443 realm \"Admin\": "),
                "\(line)"
            )
            #expect(line.contains("No Secret Service"), "\(line)")
            #expect(!line.contains("pw-secret"))
        }
        #expect(posted.value == 0)
        #expect(storage.permanentCredentials.map(\.user) == ["alice"])
    }
}
