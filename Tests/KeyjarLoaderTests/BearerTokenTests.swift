import Foundation
import FoundationNetworking
import Keyjar
import KeyjarCore
import KeyjarLoader
import KeyjarTestSupport
import Testing

/// Bearer tokens (RFC 6750) stored in keyjard answer challenges, and expired or refused ones
/// are refreshed at the token endpoint (RFC 6749 §6): against a real resource server and
/// token endpoint on 127.0.0.1 and a real keyjard with the Secret Service.
@Suite(.timeLimit(hangLimit), .servicesStopCleanly)
struct BearerTokenTests {
    let server: TokenServer
    init() async throws { server = try await TokenServer(clientID: "keyjar-test") }

    private var space: ProtectionSpace {
        ProtectionSpace(host: "127.0.0.1", port: server.port, protocol: "http", authenticationMethod: .httpBearer)
    }

    private func storage(_ daemon: some KeyjarService) throws -> SharedCredentialStorage {
        try SharedCredentialStorage(configuration: .init(socketPath: daemon.socketPath, autoStart: false))
    }

    private func loader(_ storage: SharedCredentialStorage) -> URLLoader {
        URLLoader(configuration: .init(cookieStorage: .ephemeral(), credentialStorage: storage))
    }

    private var now: Double { Date().timeIntervalSince1970 }

    private func record(_ storage: SharedCredentialStorage, user: String = "alice") throws -> CredentialRecord {
        try #require(try storage.client.credentialRecords().first { $0.space == space && $0.user == user })
    }

    /// A stored token answers the Bearer challenge; once it worked, the loader sends it at
    /// once to the same directory, as it does Basic.
    @Test func aStoredTokenAnswersTheChallengeThenGoesPreemptively() async throws {
        let daemon = try await InProcessServer.withSecretService()
        let storage = try storage(daemon)
        let issued = try await server.issue(lifetime: 3600)
        try storage.client.setCredential(user: "alice", password: issued.accessToken, for: space)
        let loader = loader(storage)

        let first = await load(URLRequest(url: server.url("/api/one")), with: loader)
        #expect(first.events.last == .finished)
        #expect(first.body == "hello alice")
        #expect(try await server.stats().unauthenticated == 1)

        let second = await load(URLRequest(url: server.url("/api/two")), with: loader)
        #expect(second.body == "hello alice")
        let stats = try await server.stats()
        #expect(stats.unauthenticated == 1, "the second load sent the token without waiting for a 401")
        #expect(stats.served == 2 && stats.refreshes == 0)
    }

    /// An expired token is refreshed once, the new token and the rotated refresh token stored;
    /// when the server later refuses the new token (invalid_token), the rotated refresh token
    /// refreshes it again.
    @Test func anExpiredTokenIsRefreshedAndTheRotatedRefreshTokenWorksNextTime() async throws {
        let daemon = try await InProcessServer.withSecretService()
        let storage = try storage(daemon)
        let issued = try await server.issue(lifetime: -60, nextLifetime: 3600)
        try storage.client.setCredential(
            user: "alice",
            password: issued.accessToken,
            for: space,
            expires: now - 60,
            refreshToken: issued.refreshToken,
            tokenRefresh: TokenRefresh(endpoint: server.tokenEndpoint(), clientID: "keyjar-test")
        )
        let loader = loader(storage)

        let first = await load(URLRequest(url: server.url("/api/a")), with: loader)
        #expect(first.events.last == .finished, "\(first.error.map { "\($0)" } ?? "")")
        #expect(first.body == "hello alice")
        var stats = try await server.stats()
        #expect(stats.refreshes == 1 && stats.lastClientID == "keyjar-test")
        let refreshed = try record(storage)
        #expect(refreshed.expires.map { $0 > now + 3000 } == true)
        #expect(!refreshed.isRevoked && refreshed.hasRefreshToken)
        let rotated = try #require(try storage.client.refreshToken(user: "alice", for: space))
        #expect(rotated != issued.refreshToken)
        #expect(try storage.client.password(user: "alice", for: space) != issued.accessToken)

        // The server now refuses every token it issued; the stored one has not expired as far
        // as Keyjar knows. The loader sends it (pre-emptively), hears invalid_token, refreshes
        // with the rotated refresh token and retries.
        try await server.expireAccessTokens()
        let second = await load(URLRequest(url: server.url("/api/b")), with: loader)
        #expect(second.body == "hello alice", "\(second.error.map { "\($0)" } ?? "")")
        stats = try await server.stats()
        #expect(stats.refreshes == 2 && stats.refusedGrants == 0)
        #expect(try storage.client.refreshToken(user: "alice", for: space) != rotated)
    }

    /// invalid_grant: the load fails with an error that says to log in again (and shows no
    /// token), keyjard marks the credential revoked, and no later load tries it again.
    @Test func aRefusedRefreshTokenRevokesTheCredential() async throws {
        let daemon = try await InProcessServer.withSecretService()
        let storage = try storage(daemon)
        let issued = try await server.issue(lifetime: -60)
        let deadRefreshToken = "rt-never-issued-by-the-server"
        try storage.client.setCredential(
            user: "alice",
            password: issued.accessToken,
            for: space,
            expires: now - 60,
            refreshToken: deadRefreshToken,
            tokenRefresh: TokenRefresh(endpoint: server.tokenEndpoint(), clientID: "keyjar-test")
        )
        let loader = loader(storage)

        let failed = await load(URLRequest(url: server.url("/api/a")), with: loader)
        let error = try #require(failed.error)
        #expect(error.code == .userAuthenticationRequired)
        let message = error.localizedDescription
        #expect(message.contains("invalid_grant") && message.contains("keyjar credential add"), "\(message)")
        #expect(!message.contains(deadRefreshToken) && !message.contains(issued.accessToken))
        #expect(try record(storage).isRevoked)
        #expect(try await server.stats().refusedGrants == 1)

        // Revoked: not offered, not refreshed; the 401 is the answer.
        let again = await load(URLRequest(url: server.url("/api/b")), with: loader)
        #expect(again.lastResponse?.statusCode == 401)
        #expect(try await server.stats().refusedGrants == 1)
    }

    /// A refresh token never goes over plain http to another machine: the load fails saying
    /// so, before any connection, and the credential is not revoked (the lease is released).
    @Test func aRefreshTokenIsNotSentOverPlainHTTPToAnotherHost() async throws {
        let daemon = try await InProcessServer.withSecretService()
        let storage = try storage(daemon)
        let issued = try await server.issue(lifetime: -60)
        // keyjard keeps no such endpoint, from any client
        #expect(throws: (any Error).self) {
            try storage.client.setCredential(
                user: "alice",
                password: issued.accessToken,
                for: space,
                expires: now - 60,
                refreshToken: issued.refreshToken,
                tokenRefresh: TokenRefresh(endpoint: "http://127.attacker.example/token")
            )
        }
        // and one stored before that rule (written into the database by hand) is not refreshed
        try storage.client.setCredential(
            user: "alice",
            password: issued.accessToken,
            for: space,
            expires: now - 60,
            refreshToken: issued.refreshToken,
            tokenRefresh: TokenRefresh(endpoint: "https://login.invalid/token")
        )
        #expect(await daemon.stop())
        let database = daemon.databasePath
        let edited = try await runCommand(
            "/usr/bin/sqlite3",
            [database, "UPDATE credential SET token_endpoint = 'http://127.attacker.example/token';"]
        )
        #expect(edited.status == 0, "\(edited.error)")
        let restarted = try await InProcessServer.withSecretService(database: database)
        let after = try self.storage(restarted)
        let failed = await load(URLRequest(url: server.url("/api/a")), with: loader(after))
        let error = try #require(failed.error)
        #expect(error.code == .userAuthenticationRequired)
        #expect(error.localizedDescription.contains("not this machine"), "\(error)")
        #expect(!error.localizedDescription.contains(issued.refreshToken))
        #expect(try !record(after).isRevoked)
        #expect(try await server.stats().refreshes == 0)
    }

    /// A token the server refuses, with nothing to refresh it by, is a failure like a refused
    /// password: the delegate is asked with previousFailureCount 1 and the token's user
    /// proposed, in a space of the Bearer method.
    @Test func aRefusedTokenIsAFailureForTheDelegate() async throws {
        let daemon = try await InProcessServer.withSecretService()
        let storage = try storage(daemon)
        let stale = try await server.issue(lifetime: -60)
        try storage.client.setCredential(user: "alice", password: stale.accessToken, for: space)
        let good = try await server.issue(lifetime: 3600, user: "bob")
        let delegate = ChallengeDelegate { _ in .use(user: "bob", password: good.accessToken, persistence: .none) }
        _ = loader(storage).connection(with: URLRequest(url: server.url("/api/x")), delegate: delegate)
        #expect(await delegate.recorder.wait())
        #expect(delegate.recorder.body == "hello bob")
        let seen = try #require(delegate.challenges.first)
        #expect(delegate.challenges.count == 1)
        #expect(seen.method == ProtectionSpace.AuthenticationMethod.httpBearer.foundation)
        #expect(seen.method == LoaderAuthenticationMethod.httpBearer)
        #expect(seen.realm == TokenServer.realm)
        #expect(seen.previousFailureCount == 1 && seen.proposedUser == "alice" && seen.failureStatus == 401)
        #expect(try await server.stats().refreshes == 0)
    }

    /// Several loaders (as two programs would) find the same token expired at once: the token
    /// endpoint is asked once, and every load gets through with its token.
    @Test func concurrentLoadsRefreshOnce() async throws {
        let daemon = try await InProcessServer.withSecretService()
        let issued = try await server.issue(lifetime: -60)
        let setup = try storage(daemon)
        try setup.client.setCredential(
            user: "alice",
            password: issued.accessToken,
            for: space,
            expires: now - 60,
            refreshToken: issued.refreshToken,
            tokenRefresh: TokenRefresh(endpoint: server.tokenEndpoint(delay: 0.3), clientID: "keyjar-test")
        )
        // Two programs of two loads each: loads of one program share its storage (one
        // connection to keyjard), which must not stop them sharing the refresh too.
        let programs = try (0..<2).map { _ in try storage(daemon) }
        let loads = (0..<4).map { index in loader(programs[index % 2]) }
        let bodies = await withTaskGroup(of: String.self) { group in
            for (index, loader) in loads.enumerated() {
                let url = server.url("/api/\(index)")
                group.addTask { await load(URLRequest(url: url), with: loader).body }
            }
            return await group.reduce(into: []) { $0.append($1) }
        }
        #expect(bodies == Array(repeating: "hello alice", count: 4))
        let stats = try await server.stats()
        #expect(stats.refreshes == 1 && stats.refusedGrants == 0)
    }
}
