import Foundation
import KeyjarTestSupport
import Testing

/// A password or token the user gives `keyjar fetch` answers only the origin it was given for
/// (scheme, host and port), as curl has sent `-u` since CVE-2018-1000007: a hostile server that
/// redirects elsewhere and asks there gets nothing, unless the user opts in with
/// `--location-trusted`; and a proxy's credential goes to that proxy only. The real `keyjar`
/// against a hostile server on 127.0.0.1 (Servers/hostile_server.py).
@Suite(.timeLimit(hangLimit), .servicesStopCleanly)
struct CredentialOriginTests {
    static let basic = "Basic " + Data("alice:wonderland".utf8).base64EncodedString()

    struct Fixture {
        let keyjar: KeyjarCLI
        let home: HostileServer
        let other: HostileServer

        init() async throws {
            keyjar = KeyjarCLI(daemon: try await DaemonProcess())
            home = try await HostileServer()
            other = try await HostileServer()
        }
    }

    /// Every way a password reaches a server it was not given for, each tried on today's code
    /// first: another port, another host name, and https to http on the same host and port.
    @Test func aTypedPasswordGoesOnlyToTheOriginItWasGivenFor() async throws {
        let fixture = try await Fixture()
        let home = fixture.home
        let targets = [
            ("another port", "http://127.0.0.1:\(fixture.other.port)/hostile", fixture.other),
            ("another host", "http://localhost:\(home.port)/hostile", home),
        ]
        for (what, target, receiver) in targets {
            let result = try await fixture.keyjar.run(
                [
                    "fetch", "--user", "alice", "--password-stdin", "--persistence", "permanent",
                    home.login(then: target),
                ],
                input: "wonderland\n"
            )
            #expect(result.status == 1, "\(what): \(result.error)")
            #expect(result.error.contains("goes only to http://127.0.0.1:\(home.port)"), "\(what): \(result.error)")
            let asked = try await receiver.authorizations(at: "/hostile")
            #expect(!asked.isEmpty && asked.allSatisfy { $0 == "-" }, "\(what): \(asked)")
        }
        // Accepted at home before each redirect: kept for home only.
        #expect(
            try await fixture.keyjar.ok("credential", "list")
                == "http://127.0.0.1:\(home.port) realm \"home\" method basic user alice (default)\n"
        )

        // From https to http on the same host and port, and a user named in the URL
        let downgrade = try await fixture.keyjar.run(
            [
                "fetch", "-k", "--password-stdin",
                "https://alice@127.0.0.1:\(home.port)/login?to=http://127.0.0.1:\(home.port)/hostile",
            ],
            input: "wonderland\n"
        )
        #expect(downgrade.status == 1, "\(downgrade.error)")
        #expect(downgrade.error.contains("goes only to https://127.0.0.1:\(home.port)"), "\(downgrade.error)")
        let downgraded = try await home.authorizations(at: "/hostile")
        #expect(downgraded.count == 2 && downgraded.allSatisfy { $0 == "-" }, "\(downgraded)")
        #expect(try await home.authorizations(at: "/login").contains(Self.basic), "the origin itself got it")

        // -H Authorization, which the loader's redirect rule drops at another origin
        let header = try await fixture.keyjar.run([
            "fetch", "-H", "Authorization: \(Self.basic)", home.redirect(to: fixture.other.url("/hostile")),
        ])
        #expect(header.status == 1)
        let redirected = try await fixture.other.authorizations(at: "/hostile")
        #expect(redirected.count == 2 && redirected.allSatisfy { $0 == "-" }, "\(redirected)")
    }

    /// `--location-trusted` sends the password and -H Authorization on, as curl's does; even
    /// then `--persistence permanent` keeps a password only for the URL given.
    @Test func locationTrustedSendsItOnButNeverStoresItElsewhere() async throws {
        let fixture = try await Fixture()
        let target = fixture.other.url("/accept-any")
        let trusted = try await fixture.keyjar.run(
            [
                "fetch", "--location-trusted", "--user", "alice", "--password-stdin", "--persistence", "permanent",
                fixture.home.redirect(to: target),
            ],
            input: "wonderland\n"
        )
        #expect(trusted.status == 0 && trusted.output == "taken", "\(trusted.error)")
        #expect(try await fixture.other.authorizations(at: "/accept-any").contains(Self.basic))
        #expect(trusted.error.contains("not stored"), "\(trusted.error)")
        #expect(try await fixture.keyjar.ok("credential", "list").isEmpty)

        let header = try await fixture.keyjar.run([
            "fetch", "--location-trusted", "-H", "Authorization: Bearer abc", fixture.home.redirect(to: target),
        ])
        #expect(header.status == 0 && header.output == "taken", "\(header.error)")
        #expect(try await fixture.other.authorizations(at: "/accept-any").contains("Bearer abc"))
    }

    /// A stored proxy credential answers its proxy; a redirect whose URL goes through another
    /// proxy (https_proxy beside http_proxy) does not take it there.
    @Test func aProxysCredentialDoesNotFollowARedirectToAnotherProxy() async throws {
        let fixture = try await Fixture()
        let first = fixture.home
        let second = fixture.other
        try await fixture.keyjar.ok(
            [
                "credential", "add", "--proxy", "http", "--url", "http://127.0.0.1:\(first.port)", "--user", "bob",
                "--password-stdin",
            ],
            input: "proxy-secret"
        )
        let result = try await fixture.keyjar.run(
            ["fetch", "http://site.invalid/start?to=https://site.invalid/next"],
            environment: [
                "http_proxy": "http://127.0.0.1:\(first.port)", "https_proxy": "http://127.0.0.1:\(second.port)",
                "no_proxy": "", "NO_PROXY": "", "HTTP_PROXY": "", "HTTPS_PROXY": "",
            ]
        )
        #expect(result.status != 0, "the second proxy refuses the tunnel")
        let proxyBob = "Basic " + Data("bob:proxy-secret".utf8).base64EncodedString()
        #expect(try await first.seen().contains { $0.proxyAuthorization == proxyBob }, "the first proxy was answered")
        let tunnels = try await second.seen()
        #expect(!tunnels.isEmpty, "the redirect went through the second proxy")
        #expect(tunnels.allSatisfy { $0.proxyAuthorization == "-" }, "\(tunnels)")
    }
}

/// Servers/hostile_server.py on a free loopback port (http and https on the same one).
final class HostileServer {
    private let server: LocalHTTPServer
    var port: Int { server.port }

    init() async throws {
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("Servers/hostile_server.py")
        server = try await LocalHTTPServer(script: try String(contentsOf: script, encoding: .utf8))
    }

    func url(_ path: String) -> String { "http://127.0.0.1:\(port)\(path)" }

    /// Asks for alice's password, then redirects to `target`.
    func login(then target: String) -> String { url("/login?to=\(target)") }
    func redirect(to target: String) -> String { url("/redirect?to=\(target)") }

    struct Seen: Decodable, CustomStringConvertible {
        var path: String
        var authorization: String
        var proxyAuthorization: String
        var description: String { "\(path): \(authorization) / \(proxyAuthorization)" }
    }

    /// Every request it had, oldest first.
    func seen() async throws -> [Seen] {
        let result = try await runCommand("/usr/bin/curl", ["-s", "--noproxy", "*", url("/seen")])
        return try JSONDecoder().decode([Seen].self, from: Data(result.output.utf8))
    }

    /// The Authorization field of each request to `path` ("-" for none).
    func authorizations(at path: String) async throws -> [String] {
        try await seen().filter { $0.path.hasPrefix(path) }.map(\.authorization)
    }
}
