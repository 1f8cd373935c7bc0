import Foundation
import KeyjarTestSupport
import Testing

/// Netscape cookies.txt both ways with the real curl.
@Suite(.timeLimit(hangLimit), .servicesStopCleanly)
struct CurlInteroperabilityTests {
    /// `/set` sets three cookies (persistent, session, HttpOnly); `/echo` answers with the
    /// Cookie header it received.
    static let server = """
        import http.server
        class H(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                body = b""
                self.send_response(200)
                if self.path == "/set":
                    self.send_header("Set-Cookie", "persistent=p1; Max-Age=3600; Path=/")
                    self.send_header("Set-Cookie", "session=s1; Path=/")
                    self.send_header("Set-Cookie", "hidden=h1; HttpOnly; Max-Age=3600")
                else:
                    body = (self.headers.get("Cookie") or "").encode()
                self.send_header("Content-Length", str(len(body))); self.end_headers(); self.wfile.write(body)
            def log_message(self, *args): pass
        s = http.server.HTTPServer(("127.0.0.1", 0), H)
        print(s.server_address[1], flush=True)
        s.serve_forever()
        """

    @Test func aJarWrittenByCurlImportsAndAnExportIsAcceptedByCurl() async throws {
        let daemon = try await DaemonProcess()
        let keyjar = KeyjarCLI(daemon: daemon)
        let server = try await LocalHTTPServer(script: Self.server)

        // Given a cookie jar written by curl itself
        let curlJar = daemon.directory.path("curl-jar.txt")
        let curl = try await runCommand("/usr/bin/curl", ["-s", "-c", curlJar, "\(server.base)/set"])
        #expect(curl.status == 0)

        // When keyjar imports it, all three cookies are in the shared store
        #expect(
            try await keyjar.ok("cookie", "import", curlJar)
                == "read 3 cookies: 3 kept (3 new, 0 replacing stored ones)\n"
        )
        let header = try await keyjar.ok("cookie", "get", "\(server.base)/")
        #expect(
            Set(header.trimmingCharacters(in: .newlines).components(separatedBy: "; ")) == [
                "persistent=p1", "session=s1", "hidden=h1",
            ]
        )
        #expect(try await keyjar("cookie", "list", "--session").lines.count == 1)

        // And a cookie stored through keyjar, exported, is sent by curl -b
        try await keyjar.ok("cookie", "set", "--url", "\(server.base)/", "added=k1; Max-Age=600")
        let export = daemon.directory.path("export.txt")
        try await keyjar.ok("cookie", "export", "-o", export)
        let echoed = try await runCommand("/usr/bin/curl", ["-s", "-b", export, "\(server.base)/echo"])
        #expect(echoed.status == 0)
        #expect(
            Set(echoed.output.components(separatedBy: "; ")) == [
                "persistent=p1", "session=s1", "hidden=h1", "added=k1",
            ]
        )

        // And so is the export on standard output
        let stdoutExport = try await keyjar.ok("cookie", "export")
        let piped = try await runCommand(
            "/usr/bin/curl",
            ["-s", "-b", "-", "\(server.base)/echo"],
            input: stdoutExport
        )
        #expect(Set(piped.output.components(separatedBy: "; ")).contains("added=k1"))
    }
}
