import Foundation
import Glibc
import KeyjarTestSupport
import Testing

/// `keyjar fetch` against a real HTTP server on 127.0.0.1 and the real keyjard.
@Suite(.timeLimit(hangLimit), .servicesStopCleanly)
struct FetchCommandTests {
    /// Routes: /echo (the request as JSON), /hello (repeated header), /redirect (302 setting a
    /// cookie), /status/N, /big (1 MiB), /truncated (promises more than it sends; /cut too, with
    /// an ETag, so that a download of it can be continued), /slow (a
    /// head, then silence), /basic (Basic auth, alice:wonderland, realm "fetch").
    static let server = """
        import base64, http.server, json, sys, time
        good = "Basic " + base64.b64encode(b"alice:wonderland").decode()
        big = bytes(range(256)) * 4096
        counted = [0]
        class H(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            def reply(self, status, body, headers=()):
                self.send_response(status)
                for key, value in headers: self.send_header(key, value)
                self.send_header("Content-Length", str(len(body))); self.end_headers(); self.wfile.write(body)
            def serve(self):
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                if self.path == "/echo":
                    self.reply(200, json.dumps({"method": self.command, "cookie": self.headers.get("Cookie"),
                        "contentType": self.headers.get("Content-Type"), "custom": self.headers.get_all("X-Custom"),
                        "body": body.decode("latin-1")}).encode(), [("Content-Type", "application/json")])
                elif self.path == "/hello":
                    self.reply(200, b"hello\\n", [("X-Test", "one"), ("X-Test", "two")])
                elif self.path == "/redirect":
                    self.reply(302, b"moved", [("Location", "/echo"), ("Set-Cookie", "hop=2; Path=/")])
                elif self.path.startswith("/status/"):
                    self.reply(int(self.path[8:]), b"missing")
                elif self.path == "/big":
                    self.reply(200, big)
                elif self.path == "/truncated":
                    self.send_response(200); self.send_header("Content-Length", "1000"); self.end_headers()
                    self.wfile.write(b"x" * 10); self.wfile.flush(); self.close_connection = True
                elif self.path == "/cut":
                    self.send_response(200); self.send_header("Content-Length", "1000"); self.send_header("ETag", '"v1"')
                    self.end_headers(); self.wfile.write(b"x" * 10); self.wfile.flush(); self.close_connection = True
                elif self.path == "/slow":
                    self.send_response(200); self.send_header("Content-Length", "10"); self.end_headers()
                    self.wfile.flush(); time.sleep(30)
                elif self.path == "/counted":
                    counted[0] += 1
                    self.reply(200, b"fetch %d" % counted[0], [("Cache-Control", "max-age=600")])
                elif self.path == "/basic":
                    if self.headers.get("Authorization") == good:
                        self.reply(200, b"secret page")
                    else:
                        self.reply(401, b"who are you?", [("WWW-Authenticate", 'Basic realm="fetch"')])
                else:
                    self.reply(404, b"no such route")
            do_GET = do_POST = do_PUT = do_DELETE = serve
            def log_message(self, *args): pass
        http.server.ThreadingHTTPServer.daemon_threads = True
        s = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
        print(s.server_address[1], flush=True)
        s.serve_forever()
        """

    struct Fixture {
        let daemon: DaemonProcess
        let keyjar: KeyjarCLI
        let server: LocalHTTPServer

        init() async throws {
            daemon = try await DaemonProcess()
            keyjar = KeyjarCLI(daemon: daemon)
            server = try await LocalHTTPServer(script: FetchCommandTests.server)
        }

        func url(_ path: String) -> String { server.base + path }

        func echo(_ arguments: [String], input: String? = nil) async throws -> [String: Any] {
            let result = try await keyjar.run(["fetch", "-s"] + arguments + [url("/echo")], input: input)
            #expect(result.status == 0, "\(result.error)")
            return try #require(try JSONSerialization.jsonObject(with: Data(result.output.utf8)) as? [String: Any])
        }
    }

    /// `--cache` keeps responses in the user's cache directory and answers from it by
    /// `--cache-policy`; `keyjar cache` lists and clears it.
    @Test func theResponseCacheAnswersByPolicyAndIsListedAndCleared() async throws {
        let fixture = try await Fixture()
        let cacheHome = try TemporaryDirectory()
        let environment = ["XDG_CACHE_HOME": cacheHome.path]
        func run(_ arguments: [String]) async throws -> KeyjarCLI.Result {
            try await fixture.keyjar.run(arguments, environment: environment)
        }
        let counted = fixture.url("/counted")
        #expect(try await run(["fetch", "-s", "--cache", counted]).output == "fetch 1")
        #expect(try await run(["fetch", "-s", "--cache", counted]).output == "fetch 1")
        #expect(try await run(["fetch", "-s", "--cache", "--cache-policy", "reload", counted]).output == "fetch 2")
        #expect(
            try await run(["fetch", "-s", "--cache", "--cache-policy", "return-cache-data-dont-load", counted]).output
                == "fetch 2"
        )
        let listed = try await run(["cache", "list", "--json"])
        let entries = try #require(try JSONSerialization.jsonObject(with: Data(listed.output.utf8)) as? [[String: Any]])
        #expect(
            entries.count == 1 && entries.first?["url"] as? String == counted
                && entries.first?["fresh"] as? Bool == true
        )
        #expect(FileManager.default.fileExists(atPath: cacheHome.path + "/keyjar/keyjar/index.sqlite3"))

        let missing = try await run([
            "fetch", "-s", "--cache", "--cache-policy", "return-cache-data-dont-load", fixture.url("/hello"),
        ])
        #expect(missing.status == 1 && missing.error.contains("not in the cache"), "\(missing.error)")
        let usage = try await run(["fetch", "--cache-policy", "reload", counted])
        #expect(usage.status == 2 && usage.error.contains("--cache-policy only applies with --cache"))

        #expect(try await run(["cache", "clear"]).status == 0)
        #expect(try await run(["cache", "list"]).output.isEmpty)
        #expect(try await run(["fetch", "-s", "--cache", counted]).output == "fetch 3")
    }

    @Test func cookiesOfTheSharedStoreAreSentAndEverySetCookieIsStored() async throws {
        let fixture = try await Fixture()
        let keyjar = fixture.keyjar
        try await keyjar.ok("cookie", "set", "--url", fixture.url("/"), "before=1; Path=/")

        // The redirect's Set-Cookie is stored and already sent on the next hop
        let redirected = try await keyjar.run(["fetch", fixture.url("/redirect")])
        #expect(redirected.status == 0, "\(redirected.error)")
        let echoed = try #require(
            try JSONSerialization.jsonObject(with: Data(redirected.output.utf8)) as? [String: Any]
        )
        let sent = try #require(echoed["cookie"] as? String)
        #expect(Set(sent.components(separatedBy: "; ")) == ["before=1", "hop=2"])
        #expect(try await keyjar.ok("cookie", "get", fixture.url("/")).contains("hop=2"))

        // --no-cookies sends none
        #expect(try await fixture.echo(["--no-cookies"])["cookie"] is NSNull)
    }

    @Test func methodHeadersAndBodyAreSentAsGiven() async throws {
        let fixture = try await Fixture()
        let file = fixture.daemon.directory.path("body.txt")
        try Data("from a file".utf8).write(to: URL(fileURLWithPath: file))

        let form = try await fixture.echo(["-d", "a=1", "-d", "@\(file)", "-H", "X-Custom: one", "-H", "X-Custom:two"])
        #expect(form["method"] as? String == "POST")
        #expect(form["body"] as? String == "a=1&from a file")
        #expect(form["contentType"] as? String == "application/x-www-form-urlencoded")
        // Repeated fields join into one list value, as URLRequest does (RFC 9110 §5.3)
        #expect(form["custom"] as? [String] == ["one,two"])

        let put = try await fixture.echo(
            ["-X", "put", "-H", "Content-Type: application/json", "-d", "@-"],
            input: #"{"k":1}"#
        )
        #expect(put["method"] as? String == "PUT")
        #expect(put["body"] as? String == #"{"k":1}"#)
        #expect(put["contentType"] as? String == "application/json")
    }

    @Test func headIsShownAsItArrivedAndFilesAppearOnlyWhole() async throws {
        let fixture = try await Fixture()
        let keyjar = fixture.keyjar

        let head = try await keyjar.ok("fetch", "-i", fixture.url("/hello"))
        #expect(head.hasPrefix("HTTP/1.1 200 OK\r\n"))
        #expect(head.contains("\r\nX-Test: one\r\nX-Test: two\r\n"))
        #expect(head.hasSuffix("\r\n\r\nhello\n"))

        // Without following, the redirect itself is the response
        let unfollowed = try await keyjar.ok("fetch", "-i", "--no-follow", fixture.url("/redirect"))
        #expect(unfollowed.hasPrefix("HTTP/1.1 302 Found\r\n") && unfollowed.hasSuffix("moved"))

        // -o writes every byte, and nothing to standard output
        let directory = fixture.daemon.directory.path("downloads")
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let big = directory + "/big.bin"
        #expect(try await keyjar.ok("fetch", "-o", big, fixture.url("/big")).isEmpty)
        let expected = Data((0..<4096).flatMap { _ in (0...255).map { UInt8($0) } })
        #expect(FileManager.default.contents(atPath: big) == expected)

        // A load that fails midway leaves neither the file nor a temporary one
        let broken = try await keyjar.run(["fetch", "-o", directory + "/broken.bin", fixture.url("/truncated")])
        #expect(broken.status == 1)
        #expect(broken.error.hasPrefix("keyjar: could not load the URL"), "\(broken.error)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory) == ["big.bin"])

        // file: URLs load too
        let text = directory + "/note.txt"
        try Data("a local file\n".utf8).write(to: URL(fileURLWithPath: text))
        #expect(try await keyjar.ok("fetch", "file://" + text) == "a local file\n")
    }

    @Test func failAndMaxTimeEndTheLoadWithStatusOne() async throws {
        let fixture = try await Fixture()
        let keyjar = fixture.keyjar

        // An HTTP error is a loaded response unless --fail
        let plain = try await keyjar.run(["fetch", fixture.url("/status/404")])
        #expect(plain.status == 0 && plain.output == "missing")
        let failing = try await keyjar.run(["fetch", "-f", fixture.url("/status/404")])
        #expect(failing.status == 1 && failing.output.isEmpty)
        #expect(failing.error == "keyjar: the server answered HTTP 404 for \(fixture.url("/status/404")).\n")

        let slow = try await keyjar.run(["fetch", "--max-time", "0.5", fixture.url("/slow")])
        #expect(slow.status == 1)
        #expect(slow.error == "keyjar: the load took longer than --max-time 0.5 s.\n")

        // With -o, neither the time limit nor an interrupt leaves a partial file, or any
        // temporary one, behind.
        let file = fixture.daemon.directory.path("partial.bin")
        let timed = try await keyjar.run(["fetch", "-o", file, "--max-time", "0.5", fixture.url("/slow")])
        #expect(timed.status == 1)
        var environment = keyjar.environment
        environment["KEYJAR_SOCKET"] = fixture.daemon.socketPath
        let process = ChildProcess()
        process.executableURL = URL(fileURLWithPath: KeyjarCLI.binary)
        process.arguments = ["fetch", "-o", file, fixture.url("/slow")]
        process.environment = childEnvironment(environment)
        let errors = Pipe()
        process.standardError = errors
        try process.run()
        // Interrupted while it loads: once its temporary file exists and it catches SIGINT.
        #expect(
            await eventually {
                (try? FileManager.default.contentsOfDirectory(atPath: fixture.daemon.directory.path)
                    .contains { $0 == "partial.bin.keyjar-part" }) == true
                    && catches(SIGINT, pid: process.processIdentifier)
            }
        )
        kill(process.processIdentifier, SIGINT)
        try await waitForExit(process)
        // As a shell reports a command Ctrl-C ended: 128 + SIGINT.
        #expect(process.terminationStatus == 130)
        #expect(
            String(decoding: DescriptorIO.readToEnd(errors.fileHandleForReading), as: UTF8.self)
                == "keyjar: interrupted.\n"
        )
        let left = try FileManager.default.contentsOfDirectory(atPath: fixture.daemon.directory.path)
        #expect(!left.contains { $0.contains("partial.bin") }, "\(left)")
    }

    @Test func badArgumentsAreUsageErrorsThatNeverEchoAPassword() async throws {
        let fixture = try await Fixture()
        let keyjar = fixture.keyjar
        let cases: [([String], String)] = [
            (["-H", "no colon here", fixture.url("/echo")], "is not 'Name: value'"),
            (["-H", "Bad Name: x", fixture.url("/echo")], "no valid field name"),
            (["not a url"], "is not a URL"),
            (["gopher://example.com/"], "is a gopher: URL"),
            (["http://alice:hunter2@127.0.0.1/"], "contains a password"),
            (["--user", "alice:hunter2", fixture.url("/basic")], "only a user name"),
            (["--persistence", "permanent", fixture.url("/basic")], "only applies with --user"),
            (["--persistence", "forever", "--user", "alice", fixture.url("/basic")], "forever"),
            (["--max-time", "0", fixture.url("/echo")], "--max-time"),
            (["-X", "GET /x", fixture.url("/echo")], "is not an HTTP method"),
        ]
        for (arguments, message) in cases {
            let result = try await keyjar.run(["fetch"] + arguments)
            #expect(result.status == 2, "\(arguments): \(result.error)")
            #expect(result.error.contains(message), "\(arguments): \(result.error)")
            #expect(!result.error.contains("hunter2") && result.output.isEmpty)
        }
        let missing = try await keyjar.run(["fetch", "-d", "@/nonexistent/file", fixture.url("/echo")])
        #expect(missing.status == 1 && missing.error.contains("/nonexistent/file"))

        let unreachable = try await keyjar.run(
            ["fetch", "--no-start", "--socket", fixture.daemon.directory.path("nobody.sock"), fixture.url("/echo")],
            environment: KeyjarCLI.unservedDatabase(in: fixture.daemon.directory)
        )
        #expect(unreachable.status == 3)
    }

    @Test func aSocksProxyFromTheEnvironmentCarriesTheLoad() async throws {
        let fixture = try await Fixture()
        let socks = try await DanteServer()
        // socks5h: the proxy resolves the name.
        let url = "http://localhost:\(fixture.server.port)/hello"
        let proxied = try await fixture.keyjar.run(
            ["fetch", url],
            environment: ["all_proxy": "socks5h://127.0.0.1:\(socks.port)"]
        )
        #expect(proxied.status == 0 && proxied.output == "hello\n", "\(proxied.error)")
        #expect(socks.connections() == ["127.0.0.1.\(fixture.server.port)"])

        // no_proxy is honoured: the same load, straight to the server.
        let bypassed = try await fixture.keyjar.run(
            ["fetch", url],
            environment: ["all_proxy": "socks5h://127.0.0.1:\(socks.port)", "no_proxy": "localhost"]
        )
        #expect(bypassed.status == 0 && bypassed.output == "hello\n", "\(bypassed.error)")
        #expect(socks.connections().count == 1)
    }

    @Test func userPasswordIsStoredOnlyWhenAcceptedAndThenUsedByItself() async throws {
        let fixture = try await Fixture()
        let keyjar = fixture.keyjar
        let basic = fixture.url("/basic")

        // No password: the 401 page goes out as curl does, with a hint, and the status says
        // the load did not get through; -f keeps the page out
        let anonymous = try await keyjar.run(["fetch", basic])
        #expect(anonymous.status == 1 && anonymous.output == "who are you?")
        #expect(
            anonymous.error
                == "keyjar: the server asks for a password (realm \"fetch\") and none is stored for it; pass --user NAME.\n"
        )
        let failing = try await keyjar.run(["fetch", "-f", basic])
        #expect(failing.status == 1 && failing.output.isEmpty)

        // A wrong password fails and is not kept
        let wrong = try await keyjar.run(
            ["fetch", "--user", "alice", "--password-stdin", "--persistence", "permanent", basic],
            input: "wrong-pw\n"
        )
        #expect(wrong.status == 1)
        #expect(wrong.error == "keyjar: the server refused the password for alice (HTTP 401); nothing was stored.\n")
        #expect(try await keyjar.ok("credential", "list").isEmpty)

        // Accepted with persistence none: loaded, not kept
        let once = try await keyjar.run(["fetch", "--user", "alice", "--password-stdin", basic], input: "wonderland\n")
        #expect(once.status == 0 && once.output == "secret page", "\(once.error)")
        #expect(try await keyjar.ok("credential", "list").isEmpty)

        // Accepted with persistence permanent: kept as the space's default…
        let kept = try await keyjar.run(
            ["fetch", "--user", "alice", "--password-stdin", "--persistence", "permanent", basic],
            input: "wonderland\n"
        )
        #expect(kept.status == 0 && kept.output == "secret page", "\(kept.error)")
        let port = fixture.server.port
        #expect(
            try await keyjar.ok("credential", "list")
                == "http://127.0.0.1:\(port) realm \"fetch\" method basic user alice (default)\n"
        )
        #expect(!(kept.output + kept.error).contains("wonderland"))

        // …and answers the next challenge without being asked
        let stored = try await keyjar.run(["fetch", "-f", basic])
        #expect(stored.status == 0 && stored.output == "secret page", "\(stored.error)")
    }

    /// A stored password that fails, entered again: the credential that failed is updated (as
    /// git's `store` does), not doubled by one in the challenge's realm that leaves it wrong.
    @Test func aPasswordEnteredAgainUpdatesTheCredentialThatFailed() async throws {
        let fixture = try await Fixture()
        let keyjar = fixture.keyjar
        let base = fixture.server.base
        try await keyjar.ok(["credential", "add", "--url", base, "--user", "alice", "--password-stdin"], input: "old")
        let failed = try await keyjar.run(["fetch", fixture.url("/basic")])
        #expect(failed.status == 1 && failed.error.contains("refused the stored password for alice"), "\(failed.error)")

        let again = try await keyjar.run(
            ["fetch", "--user", "alice", "--password-stdin", "--persistence", "permanent", fixture.url("/basic")],
            input: "wonderland\n"
        )
        #expect(again.status == 0 && again.output == "secret page", "\(again.error)")
        #expect(
            try await keyjar.ok("credential", "list")
                == "http://127.0.0.1:\(fixture.server.port) method default user alice (default)\n"
        )
        let shown = try await keyjar.ok("credential", "show", "--url", base, "--user", "alice", "--reveal", "--force")
        #expect(shown.contains("password: wonderland\n"))
        #expect(try await keyjar.run(["fetch", "-f", fixture.url("/basic")]).output == "secret page")
    }

    /// Where curl users expect curl: a user in the URL, -H Cookie beside the stored cookies,
    /// -i showing every head of a redirect chain, a cache hit with its reason phrase.
    @Test func fetchBehavesAsCurlUsersExpect() async throws {
        let fixture = try await Fixture()
        let keyjar = fixture.keyjar
        let inURL = try await keyjar.run(
            ["fetch", "--password-stdin", "http://alice@127.0.0.1:\(fixture.server.port)/basic"],
            input: "wonderland\n"
        )
        #expect(inURL.status == 0 && inURL.output == "secret page", "\(inURL.error)")

        try await keyjar.ok("cookie", "set", "--url", fixture.url("/"), "stored=1; Max-Age=86400")
        let merged = try await fixture.echo(["-H", "Cookie: mine=2"])
        #expect(merged["cookie"] as? String == "mine=2; stored=1")
        let overridden = try await fixture.echo(["-H", "Cookie: stored=9"])
        #expect(overridden["cookie"] as? String == "stored=9")

        let chain = try await keyjar.ok("fetch", "-s", "-i", fixture.url("/redirect"))
        let statusLines = chain.split(separator: "\r\n").filter { $0.hasPrefix("HTTP/") }
        #expect(statusLines.count == 2 && statusLines.first?.hasSuffix(" 302 Found") == true, "\(chain)")

        let cacheHome = try TemporaryDirectory()
        let environment = ["XDG_CACHE_HOME": cacheHome.path]
        _ = try await keyjar.run(["fetch", "-s", "--cache", fixture.url("/counted")], environment: environment)
        let hit = try await keyjar.run(
            ["fetch", "-s", "-i", "--cache", fixture.url("/counted")],
            environment: environment
        )
        #expect(hit.output.hasPrefix("HTTP/1.1 200 OK\r\n"), "\(hit.output)")
    }

    @Test func sessionPersistenceKeepsThePasswordForThisRunOnly() async throws {
        let fixture = try await Fixture()
        let basic = fixture.url("/basic")
        let session = try await fixture.keyjar.run(
            ["fetch", "--user", "alice", "--password-stdin", "--persistence", "session", basic],
            input: "wonderland\n"
        )
        #expect(session.status == 0 && session.output == "secret page", "\(session.error)")
        #expect(try await fixture.keyjar.ok("credential", "list").isEmpty)
        // The next run has nothing stored: asked for a password again.
        #expect(try await fixture.keyjar.run(["fetch", basic]).status == 1)
    }

    @Test func insecureAcceptsACertificateThatFailsVerificationForThisRunOnly() async throws {
        let fixture = try await Fixture()
        let server = try await LighttpdServer(tls: true)
        let url = server.url("/plain/index.txt").absoluteString
        let insecure = try await fixture.keyjar.run(["fetch", "-k", url])
        #expect(insecure.status == 0 && insecure.output == "secret page\n", "\(insecure.error)")
        #expect(try await fixture.keyjar.run(["fetch", url]).status == 1)
        #expect(try await fixture.keyjar.ok("credential", "list").isEmpty)
    }
}

/// Whether a process has a handler for a signal (the SigCgt mask in /proc/PID/status).
func catches(_ signal: Int32, pid: pid_t) -> Bool {
    guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
        let line = status.split(separator: "\n").first(where: { $0.hasPrefix("SigCgt:") }),
        let mask = UInt64(line.dropFirst(7).trimmingCharacters(in: .whitespaces), radix: 16)
    else { return false }
    return mask & (1 << UInt64(signal - 1)) != 0
}
