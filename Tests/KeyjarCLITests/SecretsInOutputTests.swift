import Foundation
import KeyjarTestSupport
import Testing

/// A password given to `keyjar` never comes back in any command's output or errors, nor in
/// keyjard's log or database, unless asked for (`show --reveal`, and git's helper protocol,
/// whose answer is the password).
@Suite(.timeLimit(hangLimit), .servicesStopCleanly)
struct SecretsInOutputTests {
    /// KEYJAR_LOADER_TRACE shows what libcurl does, never a credential, a cookie or a body:
    /// the fields that carry them are shown `[redacted]`.
    @Test func theLoadersTraceShowsNoSecret() async throws {
        let daemon = try await DaemonProcess()
        let keyjar = KeyjarCLI(daemon: daemon)
        let server = try await LocalHTTPServer(script: FetchCommandTests.server)
        try await keyjar.ok("cookie", "set", "--url", server.base + "/", "sid=cookie-secret-1; Max-Age=86400")
        let traced = try await keyjar.run(
            [
                "fetch", "-s", "-H", "Authorization: Bearer bearer-secret-2", "-d", "body-secret-3",
                server.base + "/redirect",
            ],
            environment: ["KEYJAR_LOADER_TRACE": "1"]
        )
        #expect(traced.status == 0, "\(traced.error)")
        #expect(traced.error.contains("> Authorization: [redacted]"), "\(traced.error)")
        #expect(traced.error.contains("> Cookie: [redacted]") && traced.error.contains("< Set-Cookie: [redacted]"))
        #expect(traced.error.contains("> POST /redirect HTTP/1.1"), "the trace still traces")
        for secret in ["cookie-secret-1", "bearer-secret-2", "body-secret-3", "hop=2"] {
            #expect(!traced.error.contains(secret), "\(secret) in the trace")
        }
    }

    @Test func noCommandEchoesAPasswordUnlessAskedTo() async throws {
        let daemon = try await DaemonProcess()
        let keyjar = KeyjarCLI(daemon: daemon)
        let password = "pw-\(UInt64.random(in: 100_000_000...999_999_999))"
        let host = uniqueHost("secret")
        let url = "https://\(host)"
        var outputs: [(command: String, text: String)] = []
        func run(_ arguments: [String], input: String? = nil) async throws -> KeyjarCLI.Result {
            let result = try await keyjar.run(arguments, input: input)
            // The command line itself is left out of the search: two of them hold the password.
            outputs.append((arguments.prefix(2).joined(separator: " "), result.output + result.error))
            return result
        }

        #expect(
            try await run(["credential", "add", "--url", url, "--user", "alice", "--password-stdin"], input: password)
                .status
                == 0
        )
        for arguments in [
            ["credential", "list"], ["credential", "list", "--json"], ["credential", "show", "--url", url],
            ["credential", "show", "--url", url, "--json"], ["credential", "default", "--url", url, "--user", "alice"],
            ["status"], ["status", "--json"],
        ] {
            #expect(try await run(arguments).status == 0, "\(arguments)")
        }
        // Errors, including ones about the very credential and a refused password argument.
        _ = try await run(["credential", "show", "--url", url, "--reveal"])  // not a terminal: refused
        _ = try await run(["credential", "add", "--url", "https://alice:\(password)@\(host)", "--user", "alice"])
        _ = try await run(["fetch", "--user", "alice", "--password-stdin", "http://127.0.0.1:9/"], input: password)
        _ = try await run(["fetch", "https://alice:\(password)@\(host)/"])
        #expect(outputs.count == 12)
        for output in outputs {
            #expect(!output.text.contains(password), "keyjar \(output.command): \(output.text)")
        }
        // Asked for: there it is.
        let revealed = try await keyjar.run(["credential", "show", "--url", url, "--reveal", "--force"])
        #expect(revealed.output.contains("password: \(password)"))

        #expect(await daemon.stop() == 0)
        #expect(!daemon.log.contains(password))
        for suffix in ["", "-wal"] {
            let data = (try? Data(contentsOf: URL(fileURLWithPath: daemon.databasePath + suffix))) ?? Data()
            #expect(data.range(of: Data(password.utf8)) == nil, "the database\(suffix)")
        }
    }
}
