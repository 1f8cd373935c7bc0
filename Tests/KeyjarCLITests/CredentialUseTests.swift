import Foundation
import Glibc
import KeyjarTestSupport
import Testing

/// Credentials stored the way people store them, then used by `keyjar fetch`: per server,
/// server-trust decisions and client certificates, against lighttpd and a Python server.
@Suite(.timeLimit(hangLimit), .servicesStopCleanly)
struct CredentialUseTests {
    /// Basic on the realm "Team Area", which the stored credential never names.
    static let teamArea = """
        import base64, http.server
        good = "Basic " + base64.b64encode(b"alice:pw1").decode()
        class H(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                if self.headers.get("Authorization") == good:
                    body, status, extra = b"team page", 200, []
                else:
                    body, status, extra = b"who are you?", 401, [("WWW-Authenticate", 'Basic realm="Team Area"')]
                self.send_response(status)
                for key, value in extra: self.send_header(key, value)
                self.send_header("Content-Length", str(len(body))); self.end_headers(); self.wfile.write(body)
            def log_message(self, *args): pass
        s = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
        print(s.server_address[1], flush=True)
        s.serve_forever()
        """

    @Test func aCredentialAddedForAServerAnswersItsChallenge() async throws {
        let daemon = try await DaemonProcess()
        let keyjar = KeyjarCLI(daemon: daemon)
        let server = try await LocalHTTPServer(script: Self.teamArea)

        // As a new user does: per server, no realm, no method.
        try await keyjar.ok(
            "credential",
            "add",
            "--url",
            "\(server.base)/",
            "--user",
            "alice",
            "--password-stdin",
            input: "pw1"
        )
        let fetched = try await keyjar.run(["fetch", "\(server.base)/x"])
        #expect(fetched.status == 0, "\(fetched.error)")
        #expect(fetched.output == "team page")
        #expect(fetched.error.isEmpty)

        // A wrong stored password: the page goes out, the status says it did not get through.
        try await keyjar.ok(
            "credential",
            "add",
            "--url",
            "\(server.base)/",
            "--user",
            "alice",
            "--password-stdin",
            input: "stale"
        )
        let refused = try await keyjar.run(["fetch", "\(server.base)/x"])
        #expect(refused.status == 1 && refused.output == "who are you?")
        #expect(
            refused.error.contains("refused the stored password for alice (realm \"Team Area\")"),
            "\(refused.error)"
        )
        #expect(!refused.error.contains("stale"))
    }

    @Test func anUntrustedCertificateIsShownAndCanBePinnedKeptListedAndRemoved() async throws {
        let daemon = try await DaemonProcess()
        let keyjar = KeyjarCLI(daemon: daemon)
        let server = try await LighttpdServer(tls: true)
        let url = server.url("/plain/index.txt").absoluteString
        let fingerprint =
            try await runCommand(
                "/usr/bin/openssl",
                ["x509", "-in", "\(server.directory)/cert.pem", "-noout", "-fingerprint", "-sha256"]
            ).output.split(separator: "=").last.map { $0.trimmingCharacters(in: .whitespacesAndNewlines) } ?? ""
        #expect(fingerprint.count == 95)

        // Refused, with the certificate and its fingerprint shown.
        let refused = try await keyjar.run(["fetch", url])
        #expect(refused.status == 1 && refused.output.isEmpty)
        #expect(refused.error.contains("SHA-256: \(fingerprint)"), "\(refused.error)")
        #expect(refused.error.contains("subject: CN=127.0.0.1"))
        #expect(refused.error.contains("--pinned-sha256"))

        // Another fingerprint does not open it; the right one does, this run only.
        let wrong = String(repeating: "AB", count: 32)
        let other = try await keyjar.run(["fetch", "--pinned-sha256", wrong, url])
        #expect(other.status == 1)
        // A pinned host that presents another certificate says so, not only "not trusted".
        #expect(other.error.contains("It is not the certificate --pinned-sha256 names"), "\(other.error)")
        let pinned = try await keyjar.run(["fetch", "--pinned-sha256", fingerprint.lowercased(), url])
        #expect(pinned.status == 0 && pinned.output == "secret page\n", "\(pinned.error)")
        #expect(try await keyjar.run(["fetch", url]).status == 1)

        // Kept permanently: later loads (any program's) trust it; listed, then removed.
        let kept = try await keyjar.run(["fetch", "--pinned-sha256", fingerprint, "--persistence", "permanent", url])
        #expect(kept.status == 0, "\(kept.error)")
        #expect(try await keyjar.run(["fetch", url]).output == "secret page\n")
        let listed = try await keyjar.ok("credential", "list", "--method", "server-trust")
        #expect(listed == "https://127.0.0.1:\(server.port) method server-trust certificate \(fingerprint) (default)\n")
        try await keyjar.ok(
            "credential",
            "remove",
            "--url",
            "https://127.0.0.1:\(server.port)",
            "--method",
            "server-trust"
        )
        #expect(try await keyjar.ok("credential", "list").isEmpty)
        #expect(try await keyjar.run(["fetch", url]).status == 1)
    }

    @Test func aClientCertificateAddedFromPKCS12AnswersAServerThatRequiresOne() async throws {
        let daemon = try await DaemonProcess()
        let keyjar = KeyjarCLI(daemon: daemon)
        let identities = try await TestIdentities()
        defer { identities.remove() }
        let server = try await LighttpdServer(tls: true, clientCA: identities.caPath)
        let url = server.url("/plain/index.txt").absoluteString
        let origin = "https://127.0.0.1:\(server.port)"
        // The server's own certificate is self-signed: trusted by pin for every load.
        let fingerprint =
            try await runCommand(
                "/usr/bin/openssl",
                ["x509", "-in", "\(server.directory)/cert.pem", "-noout", "-fingerprint", "-sha256"]
            ).output.split(separator: "=").last.map { $0.trimmingCharacters(in: .whitespacesAndNewlines) } ?? ""
        let trusting = try await keyjar.run([
            "fetch", "--pinned-sha256", fingerprint, "--persistence", "permanent", url,
        ])
        #expect(trusting.status == 1, "the pin is kept although the load then needs a client certificate")
        #expect(try await keyjar.ok("credential", "list", "--method", "server-trust").contains(fingerprint))

        // Without an identity: refused, saying so.
        let missing = try await keyjar.run(["fetch", url])
        #expect(missing.status == 1)
        #expect(missing.error.contains("requires a client certificate"), "\(missing.error)")

        // A wrong passphrase is a clear error and stores nothing.
        let badPassphrase = try await keyjar.run(
            ["credential", "add", "--url", origin, "--identity", identities.aliceP12, "--password-stdin"],
            input: "nope"
        )
        #expect(badPassphrase.status == 1 && badPassphrase.error.contains("alice.p12"))
        #expect(!badPassphrase.error.contains("nope"))

        // Added from the PKCS#12 bundle: listed by subject, then used.
        try await keyjar.ok(
            "credential",
            "add",
            "--url",
            origin,
            "--identity",
            identities.aliceP12,
            "--password-stdin",
            input: TestIdentities.p12Passphrase
        )
        #expect(
            try await keyjar.ok("credential", "list", "--method", "client-certificate")
                == "\(origin) method client-certificate identity CN=alice (default)\n"
        )
        let fetched = try await keyjar.run(["fetch", url])
        #expect(fetched.status == 0 && fetched.output == "secret page\n", "\(fetched.error)")

        // A certificate the server does not trust: refused, saying so.
        try await keyjar.ok("credential", "remove", "--url", origin, "--method", "client-certificate")
        try await keyjar.ok("credential", "add", "--url", origin, "--identity", identities.malloryPEM)
        let wrong = try await keyjar.run(["fetch", url])
        #expect(wrong.status == 1)
        #expect(wrong.error.contains("refused the client certificate"), "\(wrong.error)")
    }
}
