import Foundation
import Keyjar
import KeyjarCore
import KeyjarProtocol
import KeyjarServer
import KeyjarStore
import KeyjarTestSupport
import Testing

/// Token credentials through keyjard and the Secret Service: stored with their refresh token
/// all or none, refreshed once for every process, and never shown to a client of a protocol
/// version that cannot read them.
@Suite(.timeLimit(hangLimit), .servicesStopCleanly)
struct ServerTokenTests {
    /// Tests run at once against one Secret Service: each has its own host, so that none sees
    /// another's secrets.
    let api = ProtectionSpace(
        host: "api-\(UUID().uuidString.prefix(8).lowercased()).example",
        protocol: "https",
        authenticationMethod: .httpBearer
    )
    static let refresh = TokenRefresh(endpoint: "https://auth.example/token", clientID: "cli")

    static func client(_ server: InProcessServer, version: Int = ProtocolVersion.current) throws -> TestClient {
        let client = try TestClient(socketPath: server.socketPath, hello: false)
        guard case .hello(let answered, _, _) = try client.call(.hello(version: version, client: "v\(version)")) else {
            throw ConnectionError("no hello")
        }
        #expect(answered == version)
        return client
    }

    static func records(_ client: TestClient) throws -> [CredentialRecord] {
        let response = try client.call(.allCredentials)
        guard case .credentials(let records) = response else { throw ConnectionError("unexpected \(response)") }
        return records
    }

    static func secret(_ request: Request, on client: TestClient) throws -> String? {
        switch try client.call(request) {
        case .password(let password): return password
        case .refreshToken(let token): return token
        case let other: throw ConnectionError("unexpected \(other)")
        }
    }

    static func step(_ response: Response) throws -> TokenRefreshStep {
        guard case .tokenRefresh(let step) = response else { throw ConnectionError("unexpected \(response)") }
        return step
    }

    func saveToken(
        _ client: TestClient,
        token: String = "t0",
        refreshToken: String? = "r1",
        expires: Double? = nil
    )
        throws
    {
        _ = try client.call(
            .saveCredentials(writes: [
                CredentialWrite(
                    space: api,
                    user: "",
                    password: token,
                    expires: expires,
                    refreshToken: refreshToken,
                    tokenRefresh: refreshToken == nil ? nil : Self.refresh
                )
            ])
        )
    }

    @Test func aTokenIsStoredWithItsRefreshTokenAndANewPasswordDropsIt() async throws {
        let server = try await InProcessServer.withSecretService()
        let client = try Self.client(server)
        try saveToken(client, expires: 4_000_000_000)
        let record = try #require(try Self.records(client).first)
        #expect(record.expires == 4_000_000_000 && record.hasRefreshToken && record.tokenRefresh == Self.refresh)
        #expect(!record.isRevoked && record.isDefault)
        #expect(try Self.secret(.password(space: api, user: ""), on: client) == "t0")
        #expect(try Self.secret(.refreshToken(space: api, user: ""), on: client) == "r1")
        // A plain password stored over it belongs to no refresh token: the old one goes.
        _ = try client.call(.setCredential(space: api, user: "", password: "t1", makeDefault: false))
        let replaced = try #require(try Self.records(client).first)
        #expect(replaced.expires == nil && !replaced.hasRefreshToken && replaced.tokenRefresh == nil)
        #expect(try Self.secret(.refreshToken(space: api, user: ""), on: client) == nil)
        #expect(try Self.secret(.password(space: api, user: ""), on: client) == "t1")
    }

    @Test func aBatchThatCannotBeStoredWholeStoresNothing() async throws {
        let server = try await InProcessServer.withSecretService()
        let client = try Self.client(server)
        let basic = ProtectionSpace(host: api.host, protocol: "https")
        _ = try client.call(.setCredential(space: basic, user: "alice", password: "old", makeDefault: false))
        // Given a batch whose second password the Secret Service refuses (a NUL)
        let writes = [
            CredentialWrite(space: basic, user: "alice", password: "new"),
            CredentialWrite(space: api, user: "", password: "t\u{0}0", refreshToken: "r1", tokenRefresh: Self.refresh),
        ]
        #expect(throws: WireError.self) { try client.call(.saveCredentials(writes: writes)) }
        // Then nothing of it is stored: the first password is back as it was, no token record
        #expect(try Self.records(client).map(\.user) == ["alice"])
        #expect(try Self.secret(.password(space: basic, user: "alice"), on: client) == "old")
        #expect(try Self.secret(.refreshToken(space: api, user: ""), on: client) == nil)
        // ...and a batch naming one credential twice, or an endpoint without a refresh token, is refused
        for bad in [
            [writes[0], writes[0]],
            [CredentialWrite(space: api, user: "", password: "t", tokenRefresh: Self.refresh)],
            // An endpoint is metadata, listed everywhere: no secret in it.
            [
                CredentialWrite(
                    space: api,
                    user: "",
                    password: "t",
                    refreshToken: "r",
                    tokenRefresh: TokenRefresh(endpoint: "https://id:secret@auth.example/token")
                )
            ],
        ] {
            #expect(throws: WireError.self) { try client.call(.saveCredentials(writes: bad)) }
        }
        #expect(try Self.records(client).count == 1)
    }

    /// A client of another language may send a space Keyjar's own would never make (an upper-case
    /// host, port 0 for https, a trailing dot, an empty realm, a wildcard with a realm): its
    /// password would be kept under the canonical space and read back as another credential's.
    /// keyjard refuses it, storing nothing; the canonical space is stored.
    @Test func aSpaceNotInCanonicalFormIsRefused() async throws {
        let server = try await InProcessServer.withSecretService()
        let client = try Self.client(server)
        func space(_ host: String, _ port: Int, _ scheme: String, realm: String? = nil) -> ProtectionSpace {
            ProtectionSpace(
                verbatimHost: host,
                port: port,
                protocol: scheme,
                realm: realm,
                authenticationMethod: .default,
                proxyType: .none
            )
        }
        for bad in [
            space("Example.com", 443, "https"), space("example.com", 0, "https"), space("example.com.", 443, "https"),
            space("example.com", 443, "HTTPS"), space("example.com", 443, "https", realm: ""),
            space("example.com", 0, "*", realm: "r"),
        ] {
            #expect(throws: WireError.self, "\(bad)") {
                try client.call(.setCredential(space: bad, user: "alice", password: "pw", makeDefault: false))
            }
            #expect(bad.canonical != bad)
        }
        #expect(try Self.records(client).isEmpty)
        let good = space("example.com", 443, "https")
        #expect(good.canonical == good)
        #expect(
            ProtectionSpace(anySchemeAndPortOf: "example.com").canonical
                == ProtectionSpace(anySchemeAndPortOf: "example.com")
        )
        #expect(ProtectionSpace.anyServer.canonical == ProtectionSpace.anyServer)
        _ = try client.call(.setCredential(space: good, user: "alice", password: "pw", makeDefault: false))
        #expect(try Self.records(client).map(\.user) == ["alice"])
    }

    @Test func processesRacingOneExpiredTokenRefreshItOnce() async throws {
        let server = try await InProcessServer.withSecretService()
        let first = try Self.client(server)
        let second = try Self.client(server)
        try saveToken(first, expires: 1_000)
        // Given two processes that both find the token expired
        let leased = try Self.step(try first.call(.beginTokenRefresh(space: api, user: "", rejected: "t0")))
        #expect(leased == .refresh(refreshToken: "r1", refresh: Self.refresh))
        let waiting = try second.send(.beginTokenRefresh(space: api, user: "", rejected: "t0"))
        // When the first reports the token it got (and the rotated refresh token)
        _ = try first.call(
            .finishTokenRefresh(
                space: api,
                user: "",
                outcome: .refreshed(accessToken: "t1", refreshToken: "r2", expires: 4_000_000_000)
            )
        )
        // Then the second is given that token, not the refresh token: one refresh for both
        guard case .reply(waiting, let response)? = try second.receive() else {
            Issue.record("the waiting process got no reply")
            return
        }
        #expect(try Self.step(response) == .current(accessToken: "t1", expires: 4_000_000_000))
        #expect(try Self.secret(.refreshToken(space: api, user: ""), on: second) == "r2")
        #expect(try Self.records(second).first?.expires == 4_000_000_000)
        // ...and once t1 is refused too, the next refresh uses the rotated refresh token
        #expect(
            try Self.step(try second.call(.beginTokenRefresh(space: api, user: "", rejected: "t1")))
                == .refresh(refreshToken: "r2", refresh: Self.refresh)
        )
    }

    /// keyjard keeps a token endpoint only where a refresh token may go: https, or http to this
    /// machine (one rule, `Host.isThisMachine`), whichever client asks; and a record stored
    /// before that rule never hands its refresh token out for a post in clear.
    @Test func aTokenEndpointInClearToAnotherHostIsNeitherKeptNorUsed() async throws {
        let server = try await InProcessServer.withSecretService()
        let client = try Self.client(server)
        func write(_ endpoint: String) -> CredentialWrite {
            CredentialWrite(
                space: api,
                user: "",
                password: "t",
                refreshToken: "r1",
                tokenRefresh: TokenRefresh(endpoint: endpoint)
            )
        }
        for endpoint in ["http://127.attacker.example/token", "http://auth.example/token", "http://127.0.0.1.nip.io/t"]
        {
            do {
                _ = try client.call(.saveCredentials(writes: [write(endpoint)]))
                Issue.record("keyjard kept \(endpoint)")
            } catch let error as WireError {
                #expect(
                    error.code == WireError.invalidArgument && error.message.contains("not this machine"),
                    "\(error)"
                )
            }
        }
        #expect(try Self.records(client).isEmpty)
        for endpoint in ["http://127.0.0.1:9/token", "http://[::1]:9/token", "http://localhost:9/token"] {
            _ = try client.call(.saveCredentials(writes: [write(endpoint)]))
            #expect(try Self.records(client).first?.tokenRefresh?.endpoint == endpoint)
        }

        // A record written before the rule (here: by hand into the database)
        #expect(await server.stop())
        let database = server.databasePath
        let edited = try await runCommand(
            "/usr/bin/sqlite3",
            [database, "UPDATE credential SET token_endpoint = 'http://127.attacker.example/token';"]
        )
        #expect(edited.status == 0, "\(edited.error)")
        let restarted = try await InProcessServer.withSecretService(database: database)
        let again = try Self.client(restarted)
        #expect(try Self.records(again).first?.tokenRefresh?.endpoint == "http://127.attacker.example/token")
        do {
            _ = try again.call(.beginTokenRefresh(space: api, user: "", rejected: "t"))
            Issue.record("keyjard handed out a refresh token for an endpoint in clear")
        } catch let error as WireError {
            #expect(error.code == WireError.loginRequired && error.message.contains("not this machine"), "\(error)")
            #expect(!error.message.contains("r1"))
        }
    }

    @Test func aRefusedRefreshTokenRevokesTheCredentialUntilItIsStoredAgain() async throws {
        let server = try await InProcessServer.withSecretService()
        let client = try Self.client(server)
        try saveToken(client, expires: 1_000)
        _ = try client.call(.beginTokenRefresh(space: api, user: "", rejected: nil))
        _ = try client.call(.finishTokenRefresh(space: api, user: "", outcome: .failed(revoke: true)))
        #expect(try Self.records(client).first?.isRevoked == true)
        let choice = try client.call(.credentialChoice(space: api))
        #expect(choice == .credentialChoice(candidates: [], preferred: nil), "a revoked token is offered nowhere")
        do {
            _ = try client.call(.beginTokenRefresh(space: api, user: "", rejected: nil))
            Issue.record("a revoked credential was refreshed")
        } catch let error as WireError {
            #expect(error.code == WireError.loginRequired)
            #expect(error.message.contains("log in again") && !error.message.contains("r1"))
        }
        // Storing a new token (logging in again) makes it usable
        try saveToken(client, token: "fresh", refreshToken: "r9", expires: 4_000_000_000)
        #expect(try Self.records(client).first?.isRevoked == false)
        guard case .credentialChoice(let candidates, _) = try client.call(.credentialChoice(space: api)) else {
            Issue.record("no choice")
            return
        }
        #expect(candidates.count == 1)
    }

    @Test func aLeaseEndsWithItsHoldersConnection() async throws {
        let server = try await InProcessServer.withSecretService()
        let setup = try Self.client(server)
        try saveToken(setup, expires: 1_000)
        var holder: TestClient? = try Self.client(server)
        _ = try holder?.call(.beginTokenRefresh(space: api, user: "", rejected: "t0"))
        let next = try Self.client(server)
        let waiting = try next.send(.beginTokenRefresh(space: api, user: "", rejected: "t0"))
        // The holder dies without reporting: the next one is given the lease (and the refresh token)
        holder = nil
        guard case .reply(waiting, let response)? = try next.receive() else {
            Issue.record("the waiting process got no reply")
            return
        }
        #expect(try Self.step(response) == .refresh(refreshToken: "r1", refresh: Self.refresh))
        // ...and a report from a connection that holds no lease is refused
        #expect(throws: WireError.self) {
            try setup.call(.finishTokenRefresh(space: api, user: "", outcome: .failed(revoke: true)))
        }
        #expect(try Self.records(setup).first?.isRevoked == false)
    }

    @Test func aClientCatchingUpPastABearerChangeGetsItAsAnEvent() async throws {
        let server = try await InProcessServer.withSecretService()
        let current = try Self.client(server)
        let basic = ProtectionSpace(host: api.host, protocol: "https")
        _ = try current.call(.setCredential(space: basic, user: "alice", password: "pw", makeDefault: false))
        try saveToken(current, expires: 4_000_000_000)
        // A client that missed both changes, catching up from the kept events, gets both
        let catchingUp = try Self.client(server)
        _ = try catchingUp.call(.subscribe(after: 0))
        guard case .event(let password)? = try catchingUp.nextPushed(),
            case .event(let token)? = try catchingUp.nextPushed()
        else {
            Issue.record("expected two events")
            return
        }
        #expect(password.sequence == 1 && token.sequence == 2)
        guard case .credentials(let changes) = token.event else {
            Issue.record("expected a credential event, got \(token.event)")
            return
        }
        #expect(!changes.isEmpty && changes.allSatisfy { $0.space.authenticationMethod == .httpBearer })
    }

    @Test func aWaiterThatWentAwayIsNotGivenTheLease() async throws {
        let server = try await InProcessServer.withSecretService()
        let holder = try Self.client(server)
        try saveToken(holder, expires: 1_000)
        _ = try holder.call(.beginTokenRefresh(space: api, user: "", rejected: "t0"))
        var gone: TestClient? = try Self.client(server)
        _ = try gone?.send(.beginTokenRefresh(space: api, user: "", rejected: "t0"))
        // Once the connection closed, keyjard no longer counts it among its clients
        gone = nil
        let watcher = try Self.client(server)
        while case .status(let status) = try watcher.call(.status), status.connectedClients > 2 {}
        // The holder's refresh fails without revoking: the lease is free again, not the
        // departed waiter's (which nobody would end)
        _ = try holder.call(.finishTokenRefresh(space: api, user: "", outcome: .failed(revoke: false)))
        let next = try Self.client(server)
        #expect(
            try Self.step(try next.call(.beginTokenRefresh(space: api, user: "", rejected: "t0")))
                == .refresh(refreshToken: "r1", refresh: Self.refresh)
        )
    }

    @Test func aRefreshReportedAfterTheCredentialWasRemovedStoresNothing() async throws {
        let server = try await InProcessServer.withSecretService()
        let holder = try Self.client(server)
        try saveToken(holder, expires: 1_000)
        _ = try holder.call(.beginTokenRefresh(space: api, user: "", rejected: "t0"))
        // The user removes the (leaked) token while it is being refreshed
        _ = try Self.client(server).call(.removeCredential(space: api, user: ""))
        #expect(throws: WireError.self) {
            try holder.call(
                .finishTokenRefresh(
                    space: api,
                    user: "",
                    outcome: .refreshed(accessToken: "t1", refreshToken: "r2", expires: 4_000_000_000)
                )
            )
        }
        // Neither the new token nor the rotated refresh token reached the Secret Service
        let secrets = LibSecretStore()
        #expect(try secrets.password(for: api, user: "") == nil)
        #expect(try secrets.secret(.refreshToken, for: api, user: "") == nil)
        #expect(try Self.records(holder).isEmpty)
    }

    @Test func aBearerCredentialWithoutItsTokenIsAMismatchInStatus() async throws {
        let server = try await InProcessServer.withSecretService()
        let current = try Self.client(server)
        try saveToken(current, expires: 4_000_000_000)
        // A crash took its password (as between a credential's two writes)
        try LibSecretStore().removePassword(for: api, user: "")
        // (The listing is absent when the Secret Service could not be read just then, as under
        // other tests' writes: asked again.)
        var full: ServiceStatus?
        while full?.credentialMismatches == nil {
            guard case .status(let status) = try current.call(.status) else {
                Issue.record("no status")
                return
            }
            full = status
        }
        #expect(full?.credentialMismatches?.contains { $0.space == api } == true)
    }
}
