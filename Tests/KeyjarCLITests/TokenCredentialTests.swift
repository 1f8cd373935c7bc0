import Foundation
import KeyjarTestSupport
import Testing

/// `keyjar credential add --token-stdin …`, `list` with expiry and revocation, and `keyjar
/// fetch` with stored bearer tokens: against a real keyjard and a real resource server and
/// token endpoint on 127.0.0.1.
@Suite(.timeLimit(hangLimit), .servicesStopCleanly)
struct TokenCredentialTests {
    static let clientID = "keyjar-cli-test"

    /// Stores `issued`'s tokens for the server (under `realm`, when given), expired a minute
    /// ago, refreshable at its endpoint.
    private func storeExpired(
        _ issued: TokenServer.Issued,
        refreshToken: String? = nil,
        server: TokenServer,
        keyjar: KeyjarCLI,
        delay: Double? = nil,
        realm: String? = nil,
        user: String = "alice"
    ) async throws {
        try await keyjar.ok(
            [
                "credential", "add", "--url", server.base, "--user=\(user)", "--token-stdin",
                "--expires", Date(timeIntervalSinceNow: -60).ISO8601Format(),
                "--refresh-token-stdin", "--token-endpoint", server.tokenEndpoint(delay: delay),
                "--client-id", Self.clientID,
            ] + (realm.map { ["--realm=\($0)"] } ?? []),
            input: "\(issued.accessToken)\n\(refreshToken ?? issued.refreshToken)\n"
        )
    }

    @Test func tokensAreListedWithTheirExpiryNeverShown() async throws {
        let daemon = try await DaemonProcess()
        let keyjar = KeyjarCLI(daemon: daemon)
        let host = uniqueHost("tokens")
        try await keyjar.ok(
            [
                "credential", "add", "--url", "https://\(host)", "--token-stdin", "--expires-in", "3600",
                "--refresh-token-stdin", "--token-endpoint", "https://login.\(host)/token", "--client-id", "cli",
            ],
            input: "access-1\r\nrefresh-1\r\n"
        )
        try await keyjar.ok(
            [
                "credential", "add", "--url", "https://\(host):8443", "--user", "ci", "--token-stdin", "--expires",
                "2001-02-03",
            ],
            input: "access-2"
        )
        let listed = try await keyjar.ok("credential", "list")
        let lines = listed.split(separator: "\n").map(String.init)
        #expect(lines.count == 2, "\(listed)")
        let fresh = try #require(lines.first { $0.hasPrefix("https://\(host):443 ") })
        #expect(fresh.contains("method bearer user token (default) (expires "), "\(fresh)")
        #expect(fresh.hasSuffix("(refreshable)"), "\(fresh)")
        let old = try #require(lines.first { $0.hasPrefix("https://\(host):8443 ") })
        #expect(old.hasSuffix("user ci (default) (expired 2001-02-03T00:00:00Z)"), "\(old)")
        for secret in ["access-1", "refresh-1", "access-2"] { #expect(!listed.contains(secret)) }

        let json = try #require(try await keyjar.json("credential", "list", "--json") as? [[String: Any]])
        let expired = try #require(json.first { ($0["port"] as? Int) == 8443 })
        #expect(expired["expired"] as? Bool == true && expired["revoked"] as? Bool == false)
        #expect(expired["expires"] as? String == "2001-02-03T00:00:00Z")
        let refreshable = try #require(json.first { ($0["port"] as? Int) == 443 })
        #expect(refreshable["refreshToken"] as? Bool == true)
        #expect(refreshable["tokenEndpoint"] as? String == "https://login.\(host)/token")
        #expect(refreshable["method"] as? String == "bearer")
    }

    @Test func badTokenInputIsRefusedWithAReason() async throws {
        let daemon = try await DaemonProcess()
        let keyjar = KeyjarCLI(daemon: daemon)
        let url = "https://\(uniqueHost("bad-tokens"))"
        let cases: [([String], String, String)] = [
            (["--refresh-token-stdin"], "a\nb\n", "--refresh-token-stdin comes with --token-stdin"),
            (["--token-stdin", "--refresh-token-stdin"], "only-one\n", "two lines"),
            (["--token-stdin"], "one\ntwo\n", "one line"),
            (["--token-stdin"], "has space\n", "a bearer token cannot hold"),
            (["--token-stdin", "--expires", "tomorrow"], "t\n", "ISO 8601"),
            (["--token-stdin", "--expires-in", "60", "--expires", "2030-01-01"], "t\n", "not both"),
            (["--token-stdin", "--token-endpoint", "https://login.example/token"], "t\n", "--refresh-token-stdin"),
            (["--token-stdin", "--method", "basic"], "t\n", "bearer"),
            (["--token-stdin", "--password-stdin"], "t\n", "not both"),
            (
                ["--token-stdin", "--refresh-token-stdin", "--token-endpoint", "http://login.example/token"],
                "t\nr\n", "http only to this machine"
            ),
            // A DNS name is not this machine because it starts like a loopback address.
            (
                ["--token-stdin", "--refresh-token-stdin", "--token-endpoint", "http://127.attacker.example/token"],
                "t\nr\n", "http only to this machine"
            ),
        ]
        for (options, input, reason) in cases {
            let result = try await keyjar.run(["credential", "add", "--url", url] + options, input: input)
            #expect(result.status == 2, "\(options): \(result.error)")
            #expect(result.error.contains(reason), "\(options): \(result.error)")
        }
        #expect(try await keyjar.ok("credential", "list", "--url", url).isEmpty)
    }

    /// `keyjar fetch` with an expired token: refreshed, the page fetched; a second fetch uses
    /// the stored new token without another refresh.
    @Test func fetchRefreshesAnExpiredToken() async throws {
        let daemon = try await DaemonProcess()
        let keyjar = KeyjarCLI(daemon: daemon)
        let server = try await TokenServer(clientID: Self.clientID)
        let issued = try await server.issue(lifetime: -60)
        try await storeExpired(issued, server: server, keyjar: keyjar)
        let fetched = try await keyjar.run(["fetch", "\(server.base)/api/page"])
        #expect(fetched.status == 0, "\(fetched.error)")
        #expect(fetched.output == "hello alice")
        let again = try await keyjar.run(["fetch", "\(server.base)/api/other"])
        #expect(again.output == "hello alice", "\(again.error)")
        let stats = try await server.stats()
        #expect(stats.refreshes == 1 && stats.lastClientID == Self.clientID)
        let listed = try await keyjar.ok("credential", "list")
        #expect(listed.contains("(expires ") && !listed.contains("expired"), "\(listed)")
        for secret in [issued.accessToken, issued.refreshToken] {
            #expect(!fetched.error.contains(secret) && !listed.contains(secret))
        }
    }

    /// git asking for an expired token Keyjar can refresh: the helper refreshes it (once, for
    /// every process) and answers with the new one, rather than leave git to ask its user.
    @Test func gitCredentialGetRefreshesAnExpiredToken() async throws {
        let daemon = try await DaemonProcess()
        let keyjar = KeyjarCLI(daemon: daemon)
        let server = try await TokenServer(clientID: Self.clientID)
        let issued = try await server.issue(lifetime: -60)
        try await storeExpired(issued, server: server, keyjar: keyjar)
        let address = String(server.base.dropFirst("http://".count))
        let request = "capability[]=authtype\nprotocol=http\nhost=\(address)\n\n"
        let answer = try await keyjar.run(["git-credential", "get"], input: request)
        #expect(answer.status == 0, "\(answer.error)")
        let lines = answer.output.split(separator: "\n").map(String.init)
        let token = try #require(lines.first { $0.hasPrefix("credential=") }).dropFirst("credential=".count)
        #expect(lines.contains("authtype=Bearer") && !token.isEmpty && token != issued.accessToken[...])
        let expiry = try #require(
            lines.first { $0.hasPrefix("password_expiry_utc=") }.flatMap { Double($0.dropFirst(20)) }
        )
        #expect(expiry > Date().timeIntervalSince1970)
        #expect(try await server.stats().refreshes == 1)
        // Asked again, the stored new token answers: no second refresh
        let again = try await keyjar.run(["git-credential", "get"], input: request)
        #expect(again.output.contains("credential=\(token)\n"))
        #expect(try await server.stats().refreshes == 1)
        #expect(!answer.output.contains(issued.refreshToken) && !answer.error.contains(issued.refreshToken))
        // The refresh token Keyjar refreshes with stays with Keyjar: git hands whatever a
        // helper answers to the other helpers, and never asked for it.
        for output in [answer.output, again.output] {
            #expect(!output.contains("oauth_refresh_token"), "\(output)")
        }
    }

    /// invalid_grant: `keyjar fetch` fails saying to log in again, and `list` shows the
    /// credential revoked.
    @Test func fetchWithARefusedRefreshTokenSaysToLogInAgain() async throws {
        let daemon = try await DaemonProcess()
        let keyjar = KeyjarCLI(daemon: daemon)
        let server = try await TokenServer(clientID: Self.clientID)
        let issued = try await server.issue(lifetime: -60)
        try await storeExpired(issued, refreshToken: "rt-unknown-to-the-server", server: server, keyjar: keyjar)
        let fetched = try await keyjar.run(["fetch", "\(server.base)/api/page"])
        #expect(fetched.status != 0)
        #expect(fetched.error.contains("invalid_grant"), "\(fetched.error)")
        #expect(fetched.error.contains("keyjar credential add --url \(server.base)"), "\(fetched.error)")
        #expect(fetched.error.contains("--token-stdin"), "\(fetched.error)")
        #expect(!fetched.error.contains("rt-unknown-to-the-server") && !fetched.error.contains(issued.accessToken))
        let listed = try await keyjar.ok("credential", "list")
        #expect(listed.contains("(revoked: log in again)"), "\(listed)")
        #expect(try await server.stats().refusedGrants == 1)
    }

    /// Five `keyjar fetch` processes find the same token expired at once: keyjard lets one of
    /// them refresh, the others wait for its token; the token endpoint counts one refresh and
    /// every fetch gets the page.
    @Test func racingFetchesRefreshOnce() async throws {
        let daemon = try await DaemonProcess()
        let keyjar = KeyjarCLI(daemon: daemon)
        let server = try await TokenServer(clientID: Self.clientID)
        let issued = try await server.issue(lifetime: -60)
        // The endpoint answers after half a second, so that the processes overlap the refresh.
        try await storeExpired(issued, server: server, keyjar: keyjar, delay: 0.5)
        let results = try await withThrowingTaskGroup(of: KeyjarCLI.Result.self) { group in
            for index in 0..<5 {
                group.addTask { try await keyjar.run(["fetch", "\(server.base)/api/race-\(index)"]) }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(results.count == 5)
        for result in results {
            #expect(result.status == 0 && result.output == "hello alice", "\(result.status): \(result.error)")
        }
        let stats = try await server.stats()
        #expect(stats.refreshes == 1, "\(stats)")
        #expect(stats.refusedGrants == 0 && stats.served == 5)
    }

    /// `keyjar credential refresh`: an expired token is refreshed, a valid one left alone
    /// unless --force; never a token in what it prints; one without an endpoint is refused.
    @Test func credentialRefreshRefreshesWhatNeedsIt() async throws {
        let daemon = try await DaemonProcess()
        let keyjar = KeyjarCLI(daemon: daemon)
        let server = try await TokenServer(clientID: Self.clientID)
        let issued = try await server.issue(lifetime: -60)
        try await storeExpired(issued, server: server, keyjar: keyjar)
        let first = try await keyjar.run(["credential", "refresh", "--url", server.base])
        #expect(first.status == 0, "\(first.error)")
        #expect(first.output.hasPrefix("alice at \(server.base): refreshed, expires "), "\(first.output)")
        #expect(try await server.stats().refreshes == 1)
        let valid = try await keyjar.ok("credential", "refresh", "--url", server.base, "--user", "alice")
        #expect(valid.contains(": still valid, expires "), "\(valid)")
        #expect(try await server.stats().refreshes == 1)
        let token = { () async throws -> String in
            try await keyjar.ok("credential", "show", "--url", server.base, "--reveal", "--force")
        }
        let before = try await token()
        let forced = try await keyjar.ok("credential", "refresh", "--url", server.base, "--force")
        #expect(forced.contains(": refreshed, expires "), "\(forced)")
        #expect(try await server.stats().refreshes == 2)
        #expect(try await token() != before)
        for output in [first.output, first.error, valid, forced] {
            #expect(!output.contains(issued.accessToken) && !output.contains(issued.refreshToken))
        }

        let plainURL = "https://\(uniqueHost("plain"))"
        try await keyjar.ok(
            ["credential", "add", "--url", plainURL, "--user", "bob", "--password-stdin"],
            input: "pw\n"
        )
        let plain = try await keyjar.run(["credential", "refresh", "--url", plainURL])
        #expect(plain.status == 1 && plain.error.contains("cannot be refreshed"), "\(plain)")
        let unknown = try await keyjar.run(["credential", "refresh", "--url", "https://\(uniqueHost("none"))"])
        #expect(unknown.status == 1 && unknown.error.hasPrefix("keyjar: no stored credential"), "\(unknown)")
    }

    /// Five git processes ask for the same expired token at once through the front, which has
    /// keyjar-full refresh it: one refresh between them, and every one answers with its token.
    @Test func racingGitCredentialGetsRefreshOnce() async throws {
        let daemon = try await DaemonProcess()
        let keyjar = KeyjarCLI(daemon: daemon)
        let server = try await TokenServer(clientID: Self.clientID)
        let issued = try await server.issue(lifetime: -60)
        try await storeExpired(issued, server: server, keyjar: keyjar, delay: 0.5)
        let address = String(server.base.dropFirst("http://".count))
        let request = "protocol=http\nhost=\(address)\n\n"
        let results = try await withThrowingTaskGroup(of: KeyjarCLI.Result.self) { group in
            for _ in 0..<5 { group.addTask { try await keyjar.run(["git-credential", "get"], input: request) } }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        let answers = Set(results.map(\.output))
        #expect(results.allSatisfy { $0.status == 0 && $0.error.isEmpty }, "\(results)")
        #expect(answers.count == 1 && answers.first?.contains("password=") == true, "\(answers)")
        #expect(answers.first?.contains(issued.accessToken) == false)
        #expect(try await server.stats().refreshes == 1)
    }

    /// A refresh the endpoint refuses fails git's helper with one line that says to log in
    /// again, and nothing on standard output for git to read.
    @Test func gitCredentialGetWithARefusedRefreshTokenFailsInOneLine() async throws {
        let daemon = try await DaemonProcess()
        let keyjar = KeyjarCLI(daemon: daemon)
        let server = try await TokenServer(clientID: Self.clientID)
        let issued = try await server.issue(lifetime: -60)
        try await storeExpired(issued, refreshToken: "rt-unknown-to-the-server", server: server, keyjar: keyjar)
        let address = String(server.base.dropFirst("http://".count))
        let answer = try await keyjar.run(["git-credential", "get"], input: "protocol=http\nhost=\(address)\n\n")
        #expect(answer.status == 1 && answer.output.isEmpty, "\(answer)")
        #expect(answer.error.hasPrefix("keyjar: ") && answer.error.contains("invalid_grant"), "\(answer.error)")
        #expect(answer.error.split(separator: "\n").count == 1, "\(answer.error)")
        #expect(!answer.error.contains("rt-unknown-to-the-server") && !answer.error.contains(issued.accessToken))
    }

    /// The front names the credential to keyjar-full by its space and user: a realm and a user
    /// that start with a dash are values, not options.
    @Test func gitCredentialGetRefreshesATokenWhoseRealmAndUserStartWithADash() async throws {
        let daemon = try await DaemonProcess()
        let keyjar = KeyjarCLI(daemon: daemon)
        let server = try await TokenServer(clientID: Self.clientID)
        let issued = try await server.issue(lifetime: -60)
        try await storeExpired(issued, server: server, keyjar: keyjar, realm: "-weird realm", user: "-dash")
        let address = String(server.base.dropFirst("http://".count))
        let request =
            "capability[]=authtype\nprotocol=http\nhost=\(address)\nwwwauth[]=Bearer realm=\"-weird realm\"\n\n"
        let answer = try await keyjar.run(["git-credential", "get"], input: request)
        #expect(answer.status == 0 && answer.error.isEmpty, "\(answer)")
        #expect(answer.output.contains("authtype=Bearer\n") && answer.output.contains("username=-dash\n"))
        #expect(!answer.output.contains(issued.accessToken))
        #expect(try await server.stats().refreshes == 1)
    }

    /// Two expired tokens of one user on one server, one under a realm: the front names the one
    /// git's request found to keyjar-full exactly (no realm is no realm, not any), and only it
    /// is refreshed.
    @Test func gitCredentialGetRefreshesExactlyTheTokenItFound() async throws {
        let daemon = try await DaemonProcess()
        let keyjar = KeyjarCLI(daemon: daemon)
        let server = try await TokenServer(clientID: Self.clientID)
        let plain = try await server.issue(lifetime: -60)
        let realmed = try await server.issue(lifetime: -60)
        try await storeExpired(plain, server: server, keyjar: keyjar)
        try await storeExpired(realmed, server: server, keyjar: keyjar, realm: "api")
        let address = String(server.base.dropFirst("http://".count))
        // A Bearer challenge without a realm: the token stored without one answers it.
        let request = "protocol=http\nhost=\(address)\nwwwauth[]=Bearer\n\n"
        let answer = try await keyjar.run(["git-credential", "get"], input: request)
        #expect(answer.status == 0 && answer.error.isEmpty, "\(answer)")
        #expect(answer.output.contains("password=") && !answer.output.contains(plain.accessToken), "\(answer.output)")
        #expect(try await server.stats().refreshes == 1)
        let listed = try await keyjar.ok("credential", "list")
        let lines = listed.split(separator: "\n")
        #expect(lines.filter { $0.contains("(expired ") }.count == 1, "\(listed)")
        #expect(lines.contains { $0.contains("realm \"api\"") && $0.contains("(expired ") }, "\(listed)")
    }
}
