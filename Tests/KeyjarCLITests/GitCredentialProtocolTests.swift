import Foundation
import Keyjar
import KeyjarCore
import KeyjarTestSupport
import Testing

/// `keyjar git-credential` driven with git 2.46's credential-helper protocol directly (the git
/// here is older and cannot send the newer attributes), against a real keyjard.
@Suite(.timeLimit(hangLimit), .servicesStopCleanly)
struct GitCredentialProtocolTests {
    /// `keyjar credential show --reveal`'s password for one exact space, nil when none is stored.
    static func storedPassword(
        _ keyjar: KeyjarCLI,
        _ url: String,
        user: String,
        realm: String? = nil,
        method: String = "default"
    ) async throws -> String? {
        var arguments = [
            "credential", "show", "--url", url, "--user", user, "--method", method, "--reveal", "--force", "--json",
        ]
        if let realm { arguments += ["--realm", realm] }
        let result = try await keyjar.run(arguments)
        guard result.status == 0 else { return nil }
        let object = try JSONSerialization.jsonObject(with: Data(result.output.utf8)) as? [String: Any]
        guard object?["realm"] as? String == realm else { return nil }
        return object?["password"] as? String
    }

    /// Keyjar's `state[]` value for an https space (values already percent-encoded).
    static func state(host: String, port: Int, realm: String? = nil, method: String, user: String) -> String {
        "keyjar:1?protocol=https&host=\(host)&port=\(port)" + (realm.map { "&realm=\($0)" } ?? "")
            + "&method=\(method)&proxy=none&user=\(user)"
    }

    /// A `.netrc` `default` login answers git for every server; git's confirmation stores no
    /// copy of it, a new password for one server stays that server's (in the wildcard it would
    /// go to every server), and one server refusing it does not erase it for all.
    @Test func aNetrcLoginIsNeitherOverwrittenNorErasedForOneServer() async throws {
        let daemon = try await DaemonProcess()
        let keyjar = KeyjarCLI(daemon: daemon)
        let host = uniqueHost("git-netrc")
        // Unique: the Secret Service is shared with tests running at the same time.
        let user = "u\(UUID().uuidString.prefix(8).lowercased())"
        let directory = try TemporaryDirectory()
        let netrc = directory.path("netrc")
        try "default login \(user) password every-server\n".write(toFile: netrc, atomically: true, encoding: .utf8)
        try await keyjar.ok(["credential", "import", "--from", "netrc", netrc, "--include-default"])
        func get(_ server: String) async throws -> String {
            try await keyjar.ok(["git-credential", "get"], input: "protocol=https\nhost=\(server)\n\n")
        }
        let named = "protocol=https\nhost=\(host)\nusername=\(user)\n"
        #expect(try await get(host).contains("password=every-server\n"))
        try await keyjar.ok(["git-credential", "store"], input: named + "password=every-server\n\n")
        #expect(try await keyjar.ok(["credential", "list"]).split(separator: "\n").count == 1, "no copy stored")
        try await keyjar.ok(["git-credential", "store"], input: named + "password=just-this-one\n\n")
        #expect(try await get(host).contains("password=just-this-one\n"))
        #expect(try await get("other.\(host)").contains("password=every-server\n"))
        // A third server refuses the default login (git without the state capability)
        try await keyjar.ok(
            ["git-credential", "erase"],
            input: "protocol=https\nhost=third.\(host)\nusername=\(user)\npassword=every-server\n\n"
        )
        #expect(try await get("other.\(host)").contains("password=every-server\n"))
        #expect(try await keyjar.ok(["credential", "list"]).split(separator: "\n").count == 2)
    }

    @Test func theCapabilityQueryIsAnsweredInGitsFormat() async throws {
        let daemon = try await DaemonProcess()
        let keyjar = KeyjarCLI(daemon: daemon)
        #expect(
            try await keyjar.ok(["git-credential", "capability"], input: "")
                == "version 0\ncapability authtype\ncapability state\n"
        )
    }

    /// `state[]` names exactly the credential that answered, so that git's `store` and `erase`
    /// act on it, not on whichever credential of the user the bare server would pick.
    @Test func stateNamesTheCredentialThatAnsweredForTheStoreAndEraseThatFollow() async throws {
        let daemon = try await DaemonProcess()
        let keyjar = KeyjarCLI(daemon: daemon)
        let host = uniqueHost("git-state")
        let url = "https://\(host)"
        try await keyjar.ok(
            ["credential", "add", "--url", url, "--user", "alice", "--password-stdin"],
            input: "server-wide\n"
        )
        try await keyjar.ok(
            [
                "credential", "add", "--url", url, "--realm", "Git Area", "--method", "basic", "--user", "alice",
                "--password-stdin",
            ],
            input: "realm-pw\n"
        )

        // git announces state; the challenge picks the realm's credential, and the answer names it
        let challenge = "wwwauth[]=Basic realm=\"Git Area\"\n"
        let answer = try await keyjar.ok(
            ["git-credential", "get"],
            input: "capability[]=state\nprotocol=https\nhost=\(host)\n\(challenge)\n"
        )
        // Written out here rather than by KeyjarAuth's encoder, to pin the format git stores.
        let expectedState = Self.state(host: host, port: 443, realm: "Git%20Area", method: "httpBasic", user: "alice")
        #expect(answer == "capability[]=state\nusername=alice\npassword=realm-pw\nstate[]=\(expectedState)\n")

        // Without the capability: neither the announcement nor the state
        #expect(
            try await keyjar.ok(["git-credential", "get"], input: "protocol=https\nhost=\(host)\n\(challenge)\n")
                == "username=alice\npassword=realm-pw\n"
        )

        // git's store carries no challenge (git drops it once it has an answer): the state alone
        // says the realm's credential answered, and it is the one updated.
        let state = "state[]=other-helper:x\nstate[]=\(expectedState)\n"
        try await keyjar.ok(
            ["git-credential", "store"],
            input: "capability[]=state\nprotocol=https\nhost=\(host)\nusername=alice\npassword=rotated\n\(state)\n"
        )
        #expect(
            try await Self.storedPassword(keyjar, url, user: "alice", realm: "Git Area", method: "basic") == "rotated"
        )
        #expect(try await Self.storedPassword(keyjar, url, user: "alice") == "server-wide")

        // A state that names another user than git's, or another server, is not trusted
        let bobState = Self.state(host: host, port: 443, realm: "Git%20Area", method: "httpBasic", user: "bob")
        let elsewhere = Self.state(host: "elsewhere.example", port: 443, method: "default", user: "alice")
        for foreign in [bobState, elsewhere] {
            try await keyjar.ok(
                ["git-credential", "store"],
                input: "protocol=https\nhost=\(host)\nusername=alice\npassword=plain-store\nstate[]=\(foreign)\n\n"
            )
        }
        #expect(try await Self.storedPassword(keyjar, url, user: "alice") == "plain-store")
        #expect(
            try await Self.storedPassword(keyjar, url, user: "alice", realm: "Git Area", method: "basic") == "rotated"
        )
        #expect(try await keyjar("credential", "list").lines.count == 2)

        // erase with the state removes exactly the credential that failed
        try await keyjar.ok(
            ["git-credential", "erase"],
            input: "capability[]=state\nprotocol=https\nhost=\(host)\nusername=alice\npassword=rotated\n\(state)\n"
        )
        #expect(try await Self.storedPassword(keyjar, url, user: "alice", realm: "Git Area", method: "basic") == nil)
        #expect(try await Self.storedPassword(keyjar, url, user: "alice") == "plain-store")
        #expect(try await keyjar("credential", "list").lines.count == 1)
    }

    /// Keys and capabilities git may add later are ignored; a NUL byte is not git's protocol; a
    /// value with a line break is never written to git.
    @Test func unknownKeysAreIgnoredAndNoLineBreakOrNULPasses() async throws {
        let daemon = try await DaemonProcess()
        let keyjar = KeyjarCLI(daemon: daemon)
        let host = uniqueHost("git-unknown")
        let extra = "capability[]=future\nfuture_key=1\nquit=1\npath=repo.git\n"
        try await keyjar.ok(
            ["git-credential", "store"],
            input: "\(extra)protocol=https\nhost=\(host)\nusername=u\npassword=p\u{2028}q\n\n"
        )
        #expect(
            try await keyjar.ok(["git-credential", "get"], input: "\(extra)protocol=https\nhost=\(host)\n\n")
                == "username=u\npassword=p\u{2028}q\n"
        )
        let nul = try await keyjar.run(
            ["git-credential", "get"],
            input: "protocol=https\nhost=\(host)\npassword=s3\0\n\n"
        )
        #expect(nul.status == 2 && nul.error.contains("NUL") && !nul.error.contains("s3"), "\(nul.error)")

        // A stored password git could not carry back (a carriage return) fails the answer,
        // naming the field and never the password; nothing reaches git cut or split.
        let other = uniqueHost("git-cr")
        try await keyjar.ok(
            ["git-credential", "store"],
            input: "protocol=https\nhost=\(other)\nusername=u\npassword=sec\rret\n\n"
        )
        let refused = try await keyjar.run(["git-credential", "get"], input: "protocol=https\nhost=\(other)\n\n")
        #expect(refused.status == 1 && refused.output.isEmpty, "\(refused.output.debugDescription)")
        #expect(refused.error.contains("password") && !refused.error.contains("sec"), "\(refused.error)")
    }

    /// keyjard's records and one credential's refresh token, read with the client library (the
    /// CLI's listing does not show token metadata), on a thread of their own.
    static func withClient<T: Sendable>(
        _ daemon: DaemonProcess,
        _ body: @escaping @Sendable (KeyjarClient) throws -> T
    ) async throws -> T {
        let socket = daemon.socketPath
        return try await onOwnThread {
            try body(try KeyjarClient(configuration: .init(socketPath: socket, autoStart: false, keepsReplica: false)))
        }
    }

    static func records(_ daemon: DaemonProcess, host: String) async throws -> [CredentialRecord] {
        try await withClient(daemon) { try $0.credentialRecords().filter { $0.space.host == host } }
    }

    static func refreshToken(_ daemon: DaemonProcess, _ record: CredentialRecord) async throws -> String? {
        try await withClient(daemon) { try $0.refreshToken(user: record.user, for: record.space) }
    }

    static var now: Int64 { Int64(Date().timeIntervalSince1970) }

    /// `password_expiry_utc` is stored as the expiry and `oauth_refresh_token` as a secret, and
    /// both come back with `get`; git before 2.40 hands back neither (2.39 here) with its `store`, which then
    /// keeps them; a new password replaces them; an expired or ephemeral one is not stored.
    @Test func expiryAndRefreshTokenAreStoredAndReturned() async throws {
        let daemon = try await DaemonProcess()
        let keyjar = KeyjarCLI(daemon: daemon)
        let host = uniqueHost("git-expiry")
        let expiry = Self.now + 3600
        let server = "protocol=https\nhost=\(host)\n"
        try await keyjar.ok(
            ["git-credential", "store"],
            input: "\(server)username=alice\npassword=access-1\npassword_expiry_utc=\(expiry)\n"
                + "oauth_refresh_token=refresh-1\n\n"
        )
        var stored = try #require(try await Self.records(daemon, host: host).first)
        #expect(stored.expires == Double(expiry) && stored.hasRefreshToken && stored.tokenRefresh == nil)
        #expect(try await Self.refreshToken(daemon, stored) == "refresh-1")
        let answer = "username=alice\npassword=access-1\noauth_refresh_token=refresh-1\npassword_expiry_utc=\(expiry)\n"
        #expect(try await keyjar.ok(["git-credential", "get"], input: "\(server)\n") == answer)

        // git 2.39 confirms the password without the attributes it does not know: kept
        try await keyjar.ok(["git-credential", "store"], input: "\(server)username=alice\npassword=access-1\n\n")
        #expect(try await keyjar.ok(["git-credential", "get"], input: "\(server)\n") == answer)

        // Neither an expired nor an ephemeral credential is stored
        for extra in ["password_expiry_utc=\(Self.now - 10)\n", "capability[]=authtype\nephemeral=1\n"] {
            try await keyjar.ok(
                ["git-credential", "store"],
                input: "\(server)username=alice\npassword=access-2\n\(extra)\n"
            )
        }
        #expect(try await keyjar.ok(["git-credential", "get"], input: "\(server)\n") == answer)

        // A new password from git replaces the token and what came with it
        try await keyjar.ok(["git-credential", "store"], input: "\(server)username=alice\npassword=typed\n\n")
        stored = try #require(try await Self.records(daemon, host: host).first)
        #expect(stored.expires == nil && !stored.hasRefreshToken)
        #expect(
            try await keyjar.ok(["git-credential", "get"], input: "\(server)\n") == "username=alice\npassword=typed\n"
        )
        #expect(try await Self.records(daemon, host: host).count == 1)
    }

    /// keyjard never offers an expired credential, so `get` never returns one; git's `store` of
    /// a new password then replaces it.
    @Test func anExpiredCredentialIsNeverReturned() async throws {
        let daemon = try await DaemonProcess()
        let keyjar = KeyjarCLI(daemon: daemon)
        let host = uniqueHost("git-expired")
        let space = ProtectionSpace(host: host, protocol: "https")
        let past = Double(Self.now - 60)
        try await Self.withClient(daemon) {
            try $0.setCredential(user: "alice", password: "stale", for: space, expires: past, refreshToken: "r")
        }
        let server = "protocol=https\nhost=\(host)\n"
        #expect(try await keyjar.ok(["git-credential", "get"], input: "\(server)\n").isEmpty)
        #expect(try await keyjar.ok(["git-credential", "get"], input: "\(server)username=alice\n\n").isEmpty)

        try await keyjar.ok(["git-credential", "store"], input: "\(server)username=alice\npassword=fresh\n\n")
        #expect(
            try await keyjar.ok(["git-credential", "get"], input: "\(server)\n") == "username=alice\npassword=fresh\n"
        )
        let records = try await Self.records(daemon, host: host)
        #expect(records.count == 1 && records.first?.expires == nil && records.first?.hasRefreshToken == false)
    }

    /// `authtype=Bearer` with `credential` (git 2.46): stored as a token credential (method
    /// bearer, user "token" when git names none), answered the same way to a git that announced
    /// authtype and as user and password to one that did not; it answers a Bearer challenge and
    /// never a Basic one; `store` with the state changes nothing, `erase` removes exactly it.
    @Test func aBearerTokenIsStoredAndAnsweredAsGitCanUseIt() async throws {
        let daemon = try await DaemonProcess()
        let keyjar = KeyjarCLI(daemon: daemon)
        let host = uniqueHost("git-bearer")
        let expiry = Self.now + 600
        let server = "protocol=https\nhost=\(host)\n"
        let capable = "capability[]=authtype\ncapability[]=state\n"
        try await keyjar.ok(
            ["git-credential", "store"],
            input: "\(capable)\(server)authtype=Bearer\ncredential=tok-1\npassword_expiry_utc=\(expiry)\n\n"
        )
        let records = try await Self.records(daemon, host: host)
        let token = try #require(records.first)
        #expect(records.count == 1 && token.user == "token")
        #expect(token.space == ProtectionSpace(host: host, protocol: "https", authenticationMethod: .httpBearer))
        #expect(token.expires == Double(expiry))
        let state = Self.state(host: host, port: 443, method: "httpBearer", user: "token")

        let answer =
            "\(capable)authtype=Bearer\ncredential=tok-1\nusername=token\npassword_expiry_utc=\(expiry)\nstate[]=\(state)\n"
        #expect(try await keyjar.ok(["git-credential", "get"], input: "\(capable)\(server)\n") == answer)
        #expect(
            try await keyjar.ok(["git-credential", "get"], input: "\(server)\n")
                == "username=token\npassword=tok-1\npassword_expiry_utc=\(expiry)\n"
        )
        let bearerChallenge = "wwwauth[]=Bearer realm=\"api\", error=\"invalid_token\"\n"
        #expect(
            try await keyjar.ok(["git-credential", "get"], input: "\(capable)\(server)\(bearerChallenge)\n") == answer
        )

        // A password of the same server answers Basic; the token never does
        try await keyjar.ok(
            ["credential", "add", "--url", "https://\(host)", "--user", "alice", "--password-stdin"],
            input: "alice-pw\n"
        )
        let basic = "wwwauth[]=Basic realm=\"git\"\n"
        #expect(
            try await keyjar.ok(["git-credential", "get"], input: "\(capable)\(server)\(basic)\n")
                .contains("username=alice\npassword=alice-pw\n")
        )
        // …and a server offering both is answered with the stronger that is stored
        #expect(
            try await keyjar.ok(["git-credential", "get"], input: "\(capable)\(server)\(basic)\(bearerChallenge)\n")
                == answer
        )

        // git hands the token back with the state: the same credential, nothing new stored
        try await keyjar.ok(
            ["git-credential", "store"],
            input: "\(capable)\(server)authtype=Bearer\ncredential=tok-1\nstate[]=\(state)\n\n"
        )
        #expect(try await Self.records(daemon, host: host).count == 2)

        // A rejected token other than the stored one erases nothing; the stored one, exactly it
        try await keyjar.ok(
            ["git-credential", "erase"],
            input: "\(capable)\(server)authtype=Bearer\ncredential=tok-0\n\n"
        )
        #expect(try await Self.records(daemon, host: host).count == 2)
        try await keyjar.ok(
            ["git-credential", "erase"],
            input: "\(capable)\(server)authtype=Bearer\ncredential=tok-1\nstate[]=\(state)\n\n"
        )
        #expect(try await Self.records(daemon, host: host).map(\.user) == ["alice"])
    }
}
