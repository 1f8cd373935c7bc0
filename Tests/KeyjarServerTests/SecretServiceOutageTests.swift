import Foundation
import Glibc
import Keyjar
import KeyjarCore
import KeyjarProtocol
import KeyjarStore
import KeyjarTestSupport
import Testing

@testable import KeyjarServer

/// The Secret Service goes away and comes back under a running keyjard (a real
/// gnome-keyring-daemon on a private bus, SIGKILLed and started again), and credentials that
/// are half written (a crash between the password and its record) are found and repaired.
@Suite(.timeLimit(hangLimit), .servicesStopCleanly)
struct SecretServiceOutageTests {
    private static let space = ProtectionSpace(host: "intranet.example", protocol: "https", realm: "Team")

    private static func setCredential(_ client: TestClient, _ user: String, space: ProtectionSpace = space) throws {
        let reply = try client.call(
            .setCredential(space: space, user: user, password: "pw-\(user)", makeDefault: false)
        )
        guard case .committed(let sequence?) = reply else { throw TestSupportError("set \(user): \(reply)") }
        #expect(sequence > 0)
    }

    private static func password(_ client: TestClient, _ user: String, space: ProtectionSpace = space) throws -> String?
    {
        let reply = try client.call(.password(space: space, user: user))
        guard case .password(let password) = reply else { throw TestSupportError("password of \(user): \(reply)") }
        return password
    }

    private static func status(_ client: TestClient) throws -> ServiceStatus {
        let reply = try client.call(.status)
        guard case .status(let status) = reply else { throw TestSupportError("status: \(reply)") }
        return status
    }

    /// The error a request gets while the Secret Service is away; it must be the typed one.
    private static func outageError(_ request: Request, on client: TestClient) -> WireError? {
        do {
            let reply = try client.call(request)
            Issue.record("\(request) succeeded without a Secret Service: \(reply)")
            return nil
        } catch let error as WireError {
            return error
        } catch {
            Issue.record("\(request) failed with \(error), not a WireError")
            return nil
        }
    }

    /// A Secret Service with no collection (a keyring daemon outside a desktop login): libsecret
    /// only says an object path does not exist; the error says what is missing and what to do.
    @Test func aSecretServiceWithoutACollectionIsExplained() async throws {
        let service = try await PrivateSecretService(loginKeyring: false)
        // Asked for: left to choose, keyjard would take the encrypted file here.
        let daemon = try await DaemonProcess(
            arguments: ["--secrets", "secret-service"],
            environment: service.environment
        )
        let client = try TestClient(socketPath: daemon.socketPath)
        let error = Self.outageError(
            .setCredential(space: Self.space, user: "alice", password: "pw-alice", makeDefault: false),
            on: client
        )
        #expect(error?.code == WireError.secretsUnavailable)
        #expect(error?.message.contains("has no default collection") == true, "\(error?.message ?? "")")
        #expect(error?.message.contains("--secrets file") == true)
        #expect(error?.message.contains("pw-") == false)
        #expect(try Self.status(client).secretsHealthy == false)
    }

    @Test func credentialsFailClearlyWhileTheSecretServiceIsAwayAndWorkWhenItIsBack() async throws {
        let service = try await PrivateSecretService()
        let daemon = try await DaemonProcess(environment: service.environment)
        let client = try TestClient(socketPath: daemon.socketPath)
        try Self.setCredential(client, "alice")

        try await service.killKeyring()
        for request: Request in [
            .setCredential(space: Self.space, user: "bob", password: "pw-bob", makeDefault: false),
            .password(space: Self.space, user: "alice"),
            .removeCredential(space: Self.space, user: "alice"),
            .repairCredentials(removeUnpaired: false),
        ] {
            let error = Self.outageError(request, on: client)
            #expect(error?.code == WireError.secretsUnavailable, "\(request)")
            #expect(error?.message.contains("No Secret Service") == true, "\(error?.message ?? "")")
            #expect(error?.message.contains("pw-") == false)
        }
        // Nothing was half done: alice is still there, bob never was.
        guard case .credentials(let records) = try client.call(.allCredentials) else {
            throw TestSupportError("no credential listing")
        }
        #expect(records.map(\.user) == ["alice"])
        let away = try Self.status(client)
        #expect(!away.secretsHealthy)
        #expect(away.credentialMismatches == nil)
        // Cookies do not need the Secret Service.
        #expect(try client.setCookies(["still=works"], from: "https://intranet.example/") == [nil])

        try await service.startKeyring()
        // The same keyjard, without a restart, reaches the new daemon and its stored password.
        #expect(try Self.password(client, "alice") == "pw-alice")
        try Self.setCredential(client, "bob")
        #expect(try Self.password(client, "bob") == "pw-bob")
        let back = try Self.status(client)
        #expect(back.secretsHealthy)
        #expect(back.credentialMismatches == [])
    }

    @Test func statusListsHalfCredentialsAndRepairKeepsEveryPassword() async throws {
        let service = try await PrivateSecretService()
        let daemon = try await DaemonProcess(environment: service.environment)
        let client = try TestClient(socketPath: daemon.socketPath)
        for user in ["alice", "bob"] { try Self.setCredential(client, user) }
        // bob's password disappears (removed behind keyjard's back, or a crash after the
        // password of a removal), and a password nobody recorded appears (a database restored
        // from before it was stored, or a crash after the password of a store).
        let bob = PrivateSecretService.keyjarAttributes(
            host: "intranet.example",
            port: 443,
            protocol: "https",
            realm: "Team",
            user: "bob"
        )
        #expect(try await service.secretTool(["clear"] + bob).status == 0)
        let carol = PrivateSecretService.keyjarAttributes(
            host: "orphan.example",
            port: 8080,
            protocol: "http",
            user: "carol"
        )
        #expect(try await service.secretTool(["store", "--label=orphan"] + carol, input: "pw-carol").status == 0)
        let carolsSpace = ProtectionSpace(host: "orphan.example", port: 8080, protocol: "http")

        let expected = [
            CredentialMismatch(kind: .passwordMissing, space: Self.space, user: "bob"),
            CredentialMismatch(kind: .credentialMissing, space: carolsSpace, user: "carol"),
        ]
        let found = try #require(try Self.status(client).credentialMismatches)
        #expect(found.map(\.withoutTime) == expected)
        // When keyjard first found bob's password gone, kept with his record.
        #expect(found.map { $0.noticed != nil } == [true, false])

        let watcher = try TestClient(socketPath: daemon.socketPath)
        guard case .subscribed = try watcher.call(.subscribe(after: nil)) else {
            throw TestSupportError("not subscribed")
        }
        let repair = try client.call(.repairCredentials(removeUnpaired: false))
        guard case .credentialsRepaired(let repaired, let sequence?) = repair else {
            throw TestSupportError("no repair report: \(repair)")
        }
        #expect(repaired == expected)
        // carol's password is adopted back as a credential, an ordinary, notified change.
        guard case .event(let event)? = try watcher.nextPushed() else {
            throw TestSupportError("the repair was not notified")
        }
        #expect(event.sequence == sequence)
        #expect("\(event)".contains("carol") && !"\(event)".contains("pw-carol"))
        guard case .credentials(let records) = try client.call(.allCredentials) else {
            throw TestSupportError("no listing")
        }
        #expect(records.map(\.user).sorted() == ["alice", "bob", "carol"])
        #expect(records.first { $0.user == "carol" }?.persistence == .permanent)
        #expect(try client.call(.password(space: carolsSpace, user: "carol")) == .password(password: "pw-carol"))
        #expect(try Self.password(client, "alice") == "pw-alice")
        // bob's record is kept: the user may still know the password, and storing it mends it.
        #expect(
            try Self.status(client).credentialMismatches?.map(\.withoutTime) == [
                CredentialMismatch(kind: .passwordMissing, space: Self.space, user: "bob")
            ]
        )

        // Removed only when asked, and said so.
        let removal = try client.call(.repairCredentials(removeUnpaired: true))
        guard case .credentialsRepaired(let removed, _?) = removal else {
            throw TestSupportError("no removal report: \(removal)")
        }
        #expect(removed == [CredentialMismatch(kind: .passwordMissing, space: Self.space, user: "bob")])
        guard case .credentials(let left) = try client.call(.allCredentials) else {
            throw TestSupportError("no listing")
        }
        #expect(left.map(\.user).sorted() == ["alice", "carol"])
        #expect(try Self.status(client).credentialMismatches == [])
        guard case .credentialsRepaired(let again, nil) = try client.call(.repairCredentials(removeUnpaired: true))
        else {
            throw TestSupportError("no second repair report")
        }
        #expect(again.isEmpty)
    }

    /// keyjard journals a credential's secret-store write before it begins it; after a crash
    /// between the two writes, it undoes a store whose record was never committed (the write
    /// was never acknowledged) and finishes a removal, at its next start, by itself.
    @Test func aCrashBetweenACredentialsTwoWritesIsSettledByKeyjardAtStart() async throws {
        let service = try await PrivateSecretService()
        let daemon = try await DaemonProcess(environment: service.environment)
        for user in ["alice", "bob"] { try Self.setCredential(TestClient(socketPath: daemon.socketPath), user) }
        #expect(await daemon.stop() == 0)

        // As a crash leaves them: carol's password stored, her record never committed; alice's
        // password removed, her record not yet; and dave's password with no record and no
        // journal (a restored database), which is the user's to adopt.
        let orphan = ProtectionSpace(host: "orphan.example", port: 8080, protocol: "http")
        for (user, host, port, scheme) in [
            ("carol", "orphan.example", 8080, "http"), ("dave", "restored.example", 443, "https"),
        ] {
            let attributes = PrivateSecretService.keyjarAttributes(host: host, port: port, protocol: scheme, user: user)
            #expect(
                try await service.secretTool(["store", "--label=half"] + attributes, input: "pw-\(user)").status == 0
            )
        }
        let alice = PrivateSecretService.keyjarAttributes(
            host: "intranet.example",
            port: 443,
            protocol: "https",
            realm: "Team",
            user: "alice"
        )
        #expect(try await service.secretTool(["clear"] + alice).status == 0)
        do {
            let database = try StoreDatabase(path: daemon.databasePath)
            try database.commit([
                .beginSecretWrites([
                    .init(.store, SecretStoreKey(space: orphan, user: "carol")),
                    .init(.remove, SecretStoreKey(space: Self.space, user: "alice")),
                ])
            ])
            #expect(try database.pendingSecretWrites().count == 2)
        }

        let restarted = try await daemon.restarted()
        let client = try TestClient(socketPath: restarted.socketPath)
        // status runs in the credential lane, after the settling keyjard queued at start.
        #expect(
            try Self.status(client).credentialMismatches == [
                CredentialMismatch(
                    kind: .credentialMissing,
                    space: ProtectionSpace(host: "restored.example", protocol: "https"),
                    user: "dave"
                )
            ]
        )
        #expect(
            try await service.secretTool(
                ["lookup"]
                    + PrivateSecretService.keyjarAttributes(
                        host: "orphan.example",
                        port: 8080,
                        protocol: "http",
                        user: "carol"
                    )
            ).output.isEmpty
        )
        guard case .credentials(let records) = try client.call(.allCredentials) else {
            throw TestSupportError("no listing")
        }
        #expect(records.map(\.user) == ["bob"])
        #expect(try Self.password(client, "bob") == "pw-bob")
        #expect(restarted.log.contains("settled credential writes a crash cut short"))
        #expect(await restarted.stop() == 0)
        #expect(try StoreDatabase(path: daemon.databasePath).pendingSecretWrites().isEmpty)
    }

    @Test func theAuditComparesKeysNotSpellings() {
        let withEmptyRealm = ProtectionSpace(host: "a.example", protocol: "https", realm: "")
        let trust = ProtectionSpace(host: "a.example", protocol: "https", authenticationMethod: .serverTrust)
        let records = [
            CredentialRecord(space: withEmptyRealm, user: "u", persistence: .permanent, isDefault: true, created: 0),
            // A trust decision has no secret, so no password is missing for it.
            CredentialRecord(space: trust, user: "ab:cd", persistence: .permanent, isDefault: true, created: 0),
            CredentialRecord(space: Self.space, user: "v", persistence: .permanent, isDefault: true, created: 0),
        ]
        let secrets = [
            SecretStoreKey(space: ProtectionSpace(host: "a.example", protocol: "https"), user: "u"),
            SecretStoreKey(space: Self.space, user: "w"),
        ]
        #expect(
            CredentialAudit.mismatches(records: records, secrets: secrets) == [
                CredentialMismatch(kind: .passwordMissing, space: Self.space, user: "v"),
                CredentialMismatch(kind: .credentialMissing, space: Self.space, user: "w"),
            ]
        )
    }
}

extension CredentialMismatch {
    /// The mismatch without when keyjard noticed it, which a test cannot know in advance.
    fileprivate var withoutTime: CredentialMismatch { CredentialMismatch(kind: kind, space: space, user: user) }
}
