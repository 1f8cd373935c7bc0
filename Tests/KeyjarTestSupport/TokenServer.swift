public import Foundation
import Glibc

/// An OAuth 2 resource server and token endpoint on 127.0.0.1 (Python, a process of its own),
/// for the bearer-token and refresh tests.
///
/// - `/api/…` answers 200 `hello USER` to `Authorization: Bearer TOKEN` with a token it issued
///   that has not expired; 401 `WWW-Authenticate: Bearer realm="keyjar-tokens"` without a
///   token, and with `error="invalid_token"` for an expired or unknown one (RFC 6750 §3).
///   `/scoped/…` answers 403 `insufficient_scope` even to a good token.
/// - `/token` is the token endpoint (RFC 6749 §6): `grant_type=refresh_token` with a refresh
///   token it issued, each one valid once (a reused or unknown one gets 400 `invalid_grant`);
///   it answers a new access token and a new (rotated) refresh token. With a client id set,
///   `client_id` must be it (`invalid_client`). `/token?delay=S` answers after S seconds, so
///   that racing clients overlap the refresh.
/// - The test issues tokens, expires them and reads the counters through
///   ``issue(lifetime:user:nextLifetime:)``, ``expireAccessTokens()`` and ``stats()`` (`/control/…`, read with curl: a client independent of Keyjar's).
public final class TokenServer: Sendable {
    public let port: Int
    private let pid: Int32

    public static let realm = "keyjar-tokens"

    /// - Parameter clientID: the client id the token endpoint requires; nil: none required.
    public init(clientID: String? = nil) async throws {
        let process = ChildProcess()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-c", Self.script] + (clientID.map { [$0] } ?? [])
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        pid = process.processIdentifier
        guard let line = await DaemonProcess.readLine(from: output.fileHandleForReading), let port = Int(line) else {
            kill(process.processIdentifier, SIGKILL)
            throw TestSupportError("the token server did not start")
        }
        self.port = port
    }

    deinit {
        // SIGKILL: nothing of it needs a clean end.
        kill(pid, SIGKILL)
    }

    public var base: String { "http://127.0.0.1:\(port)" }

    public func url(_ path: String) -> URL { URL(string: base + path)! }

    /// The token endpoint's URL, answering after `delay` seconds when given.
    public func tokenEndpoint(delay: Double? = nil) -> String {
        base + "/token" + (delay.map { "?delay=\($0)" } ?? "")
    }

    /// A token pair the server issued.
    public struct Issued: Decodable, Sendable {
        public var accessToken: String
        public var refreshToken: String
        /// Seconds since 1970.
        public var expiresAt: Double

        enum CodingKeys: String, CodingKey {
            case accessToken = "access_token"
            case refreshToken = "refresh_token"
            case expiresAt = "expires_at"
        }
    }

    /// What the server counted.
    public struct Stats: Decodable, Sendable, Equatable {
        /// Refreshes answered with a new token.
        public var refreshes: Int
        /// Refresh tokens refused (reused or unknown): `invalid_grant`.
        public var refusedGrants: Int
        /// Resource requests answered 200.
        public var served: Int
        /// Resource requests refused with `invalid_token`.
        public var rejected: Int
        /// Resource requests without a token.
        public var unauthenticated: Int
        /// The `client_id` of the last refresh.
        public var lastClientID: String?

        enum CodingKeys: String, CodingKey {
            case refreshes
            case refusedGrants = "refused_grants"
            case served
            case rejected
            case unauthenticated
            case lastClientID = "last_client_id"
        }
    }

    /// Issues an access token living `lifetime` seconds (negative: already expired) for `user`,
    /// and a refresh token whose refreshes issue access tokens living `nextLifetime` seconds.
    public func issue(lifetime: Double, user: String = "alice", nextLifetime: Double = 3600) async throws -> Issued {
        try JSONDecoder().decode(
            Issued.self,
            from: Data(try await control("/control/issue?lifetime=\(lifetime)&user=\(user)&next=\(nextLifetime)").utf8)
        )
    }

    /// Every access token issued so far expires now (the refresh tokens stay good): the
    /// server refuses tokens whose stored expiry is still ahead.
    public func expireAccessTokens() async throws {
        _ = try await control("/control/expire-all")
    }

    public func stats() async throws -> Stats {
        try JSONDecoder().decode(Stats.self, from: Data(try await control("/control/stats").utf8))
    }

    private func control(_ path: String) async throws -> String {
        let result = try await runCommand("/usr/bin/curl", ["-sS", "--fail", base + path])
        guard result.status == 0 else { throw TestSupportError("token server control \(path): \(result.error)") }
        return result.output
    }

    static let script = #"""
        import http.server, json, secrets, sys, threading, time, urllib.parse

        REALM = "keyjar-tokens"
        CLIENT_ID = sys.argv[1] if len(sys.argv) > 1 else None
        lock = threading.Lock()
        access = {}    # access token -> (expires at, user)
        refresh = {}   # refresh token -> (user, lifetime of the access tokens it gets)
        stats = {"refreshes": 0, "refused_grants": 0, "served": 0, "rejected": 0, "unauthenticated": 0,
                 "last_client_id": None}

        def issue(user, lifetime, next_lifetime):
            token, renewal = "at-" + secrets.token_urlsafe(16), "rt-" + secrets.token_urlsafe(16)
            expires = time.time() + lifetime
            access[token] = (expires, user)
            refresh[renewal] = (user, next_lifetime)
            return {"access_token": token, "refresh_token": renewal, "expires_at": expires}

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def reply(self, status, body, headers=()):
                self.send_response(status)
                for name, value in headers:
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(body)

            def json(self, status, value, headers=()):
                self.reply(status, json.dumps(value).encode(),
                           [("Content-Type", "application/json"), ("Cache-Control", "no-store")] + list(headers))

            def handle_any(self):
                url = urllib.parse.urlsplit(self.path)
                query = dict(urllib.parse.parse_qsl(url.query))
                length = int(self.headers.get("Content-Length") or 0)
                payload = self.rfile.read(length) if length else b""
                if url.path == "/control/issue":
                    with lock:
                        issued = issue(query.get("user", "alice"), float(query["lifetime"]), float(query.get("next", "3600")))
                    self.json(200, issued)
                elif url.path == "/control/expire-all":
                    with lock:
                        for token, (expires, user) in list(access.items()):
                            access[token] = (0, user)
                    self.json(200, {})
                elif url.path == "/control/stats":
                    with lock:
                        self.json(200, stats)
                elif url.path == "/token":
                    self.token(query, payload)
                elif url.path.startswith("/api/") or url.path.startswith("/scoped/"):
                    self.resource(url.path)
                else:
                    self.reply(404, b"no such path")

            def resource(self, path):
                header = self.headers.get("Authorization", "")
                scheme, _, token = header.partition(" ")
                if scheme.lower() != "bearer" or not token:
                    with lock:
                        stats["unauthenticated"] += 1
                    return self.reply(401, b"token required", [("WWW-Authenticate", 'Bearer realm="%s"' % REALM)])
                with lock:
                    known = access.get(token.strip())
                    good = known is not None and known[0] > time.time()
                    stats["served" if good else "rejected"] += 1
                if not good:
                    return self.reply(401, b"bad token", [("WWW-Authenticate",
                        'Bearer realm="%s", error="invalid_token", error_description="The access token expired or is unknown"' % REALM)])
                if path.startswith("/scoped/"):
                    return self.reply(403, b"more scope needed", [("WWW-Authenticate",
                        'Bearer realm="%s", error="insufficient_scope", scope="admin"' % REALM)])
                self.reply(200, ("hello %s" % known[1]).encode(), [("Content-Type", "text/plain")])

            def token(self, query, payload):
                if self.command != "POST" or self.headers.get("Content-Type", "").split(";")[0].strip() != "application/x-www-form-urlencoded":
                    return self.json(400, {"error": "invalid_request", "error_description": "POST a form"})
                form = dict(urllib.parse.parse_qsl(payload.decode("utf-8"), keep_blank_values=True))
                if "delay" in query:
                    time.sleep(float(query["delay"]))
                if form.get("grant_type") != "refresh_token":
                    return self.json(400, {"error": "unsupported_grant_type"})
                with lock:
                    stats["last_client_id"] = form.get("client_id")
                    if CLIENT_ID is not None and form.get("client_id") != CLIENT_ID:
                        return self.json(401, {"error": "invalid_client"})
                    known = refresh.pop(form.get("refresh_token", ""), None)
                    if known is None:
                        stats["refused_grants"] += 1
                        return self.json(400, {"error": "invalid_grant",
                                               "error_description": "The refresh token is unknown or was used already"})
                    stats["refreshes"] += 1
                    user, lifetime = known
                    issued = issue(user, lifetime, lifetime)
                self.json(200, {"access_token": issued["access_token"], "token_type": "Bearer",
                                "expires_in": int(lifetime), "refresh_token": issued["refresh_token"]})

            do_GET = do_POST = do_PUT = do_HEAD = do_DELETE = handle_any

        class Server(http.server.ThreadingHTTPServer):
            daemon_threads = True
            request_queue_size = 256

        server = Server(("127.0.0.1", 0), Handler)
        print(server.server_address[1], flush=True)
        server.serve_forever()
        """#
}
