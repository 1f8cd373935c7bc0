import Foundation
import Glibc
import Keyjar
import KeyjarCore
import KeyjarTestSupport
import Testing

/// `keyjar git-credential` driven by git itself.
@Suite(.timeLimit(hangLimit), .servicesStopCleanly)
struct GitCredentialTests {
    /// A git environment that never prompts and never reads the user's configuration.
    static func gitEnvironment(_ keyjar: KeyjarCLI, home: String, extraPath: String? = nil) -> [String: String] {
        var environment = keyjar.environment
        environment["GIT_TERMINAL_PROMPT"] = "0"
        environment["GIT_CONFIG_NOSYSTEM"] = "1"
        environment["GIT_CONFIG_GLOBAL"] = "/dev/null"
        environment["GIT_ASKPASS"] = "/bin/false"
        environment.removeValue(forKey: "SSH_ASKPASS")
        environment["HOME"] = home
        if let extraPath { environment["PATH"] = extraPath + ":" + (environment["PATH"] ?? "/usr/bin:/bin") }
        return environment
    }

    static func git(
        _ arguments: [String],
        _ environment: [String: String],
        input: String? = nil
    ) async throws -> (status: Int32, output: String, error: String) {
        try await runCommand("/usr/bin/git", arguments, environment: environment, input: input ?? "")
    }

    @Test func gitsCredentialPlumbingFillsApprovesAndRejects() async throws {
        let daemon = try await DaemonProcess()
        let keyjar = KeyjarCLI(daemon: daemon)
        let environment = Self.gitEnvironment(keyjar, home: daemon.directory.path)
        let helper = ["-c", "credential.helper=", "-c", "credential.helper=\(KeyjarCLI.binary) git-credential"]
        let host = uniqueHost("git-plumbing")

        // approve → store: the credential lands in the shared store as the server's default
        let approve = try await Self.git(
            helper + ["credential", "approve"],
            environment,
            input: "protocol=https\nhost=\(host):8443\nusername=alice\npassword=git-pw\n\n"
        )
        #expect(approve.status == 0, "\(approve.error)")
        #expect(
            try await keyjar.ok("credential", "list") == "https://\(host):8443 method default user alice (default)\n"
        )

        // fill → get: git receives it
        let fill = try await Self.git(
            helper + ["credential", "fill"],
            environment,
            input: "url=https://\(host):8443/repo.git\n\n"
        )
        #expect(fill.status == 0, "\(fill.error)")
        #expect(fill.output.contains("username=alice\npassword=git-pw\n"))

        // A credential added with a realm is found too, and the named user wins
        try await keyjar.ok(
            [
                "credential", "add", "--url", "https://\(host):8443", "--realm", "Git", "--method", "basic", "--user",
                "bob",
                "--password-stdin",
            ],
            input: "bob-pw\n"
        )
        let bob = try await Self.git(
            helper + ["credential", "fill"],
            environment,
            input: "url=https://bob@\(host):8443/\n\n"
        )
        #expect(bob.output.contains("username=bob\npassword=bob-pw\n"), "\(bob.error)")

        // reject → erase: only the credential git names, and only with the password that failed
        _ = try await Self.git(
            helper + ["credential", "reject"],
            environment,
            input: "protocol=https\nhost=\(host):8443\nusername=alice\npassword=stale\n\n"
        )
        #expect(try await keyjar("credential", "list").lines.count == 2)
        _ = try await Self.git(
            helper + ["credential", "reject"],
            environment,
            input: "protocol=https\nhost=\(host):8443\nusername=alice\npassword=git-pw\n\n"
        )
        #expect(try await keyjar("credential", "list").lines.map { $0.hasSuffix("user bob (default)") } == [true])

        // Another port or scheme is another server
        let other = try await Self.git(helper + ["credential", "fill"], environment, input: "url=http://\(host)/\n\n")
        #expect(!other.output.contains("password="))
    }

    /// A Unicode host is stored by its IDNA A-labels, and git's request finds it whether it
    /// names a url= or a host= (the front answers it itself: `Host.asciiName`).
    @Test func aUnicodeHostFindsItsCredential() async throws {
        let daemon = try await DaemonProcess()
        let keyjar = KeyjarCLI(daemon: daemon)
        let host = "b\u{FC}cher-" + uniqueHost("git-idn")
        try await keyjar.ok(
            ["credential", "add", "--url", "https://\(host)", "--user", "alice", "--password-stdin"],
            input: "idn-pw\n"
        )
        #expect(try await keyjar.ok("credential", "list").contains("https://xn--bcher-"))
        #expect(
            try await keyjar.ok(["git-credential", "get"], input: "url=https://\(host)/repo.git\n\n")
                == "username=alice\npassword=idn-pw\n"
        )
        // git's usual form names the host alone.
        #expect(
            try await keyjar.ok(["git-credential", "get"], input: "protocol=https\nhost=\(host)\n\n")
                == "username=alice\npassword=idn-pw\n"
        )
    }

    @Test func theHelperSpeaksTheProtocolDirectly() async throws {
        let daemon = try await DaemonProcess()
        let keyjar = KeyjarCLI(daemon: daemon)
        let host = uniqueHost("git-direct")

        // An empty pattern is refused rather than erasing everything
        try await keyjar.ok(
            ["git-credential", "store"],
            input: "protocol=https\nhost=\(host)\nusername=u\npassword=p\n\n"
        )
        for input in ["", "\n", "username=u\n\n", "protocol=https\n\n"] {
            let erase = try await keyjar.run(["git-credential", "erase"], input: input)
            #expect(erase.status == 1 && erase.error.contains("refusing to erase"), "\(input.debugDescription)")
        }
        #expect(try await keyjar("credential", "list").lines.count == 1)

        // A credential without a user name is not stored; a host with DNS's trailing dot is
        // the same server.
        try await keyjar.ok(
            ["git-credential", "store"],
            input: "protocol=https\nhost=\(host)\nusername=\npassword=p\n\n"
        )
        #expect(try await keyjar("credential", "list").lines.count == 1)
        #expect(
            try await keyjar.ok(["git-credential", "get"], input: "protocol=https\nhost=\(host).\n\n")
                == "username=u\npassword=p\n"
        )

        // get answers nothing for an unknown server, and unknown operations are ignored as git asks
        #expect(
            try await keyjar.run(["git-credential", "get"], input: "protocol=https\nhost=unknown.example\n\n").output
                .isEmpty
        )
        #expect(try await keyjar.run(["git-credential", "frobnicate"], input: "protocol=https\n\n").status == 0)
        let garbage = try await keyjar.run(["git-credential", "get"], input: "this is not git\n\n")
        #expect(garbage.status == 2 && garbage.error.contains("without '='"))

        // The wwwauth[] challenge (newer git) picks the realm's credential
        try await keyjar.ok(
            ["credential", "add", "--url", "https://\(host)", "--realm", "Other", "--user", "v", "--password-stdin"],
            input: "q\n"
        )
        let challenged = try await keyjar.run(
            ["git-credential", "get"],
            input: "protocol=https\nhost=\(host)\nwwwauth[]=Basic realm=\"Other\"\n\n"
        )
        #expect(challenged.output == "username=v\npassword=q\n")
        try await keyjar.ok(["git-credential", "erase"], input: "protocol=https\nhost=\(host)\n\n")
        #expect(try await keyjar.ok("credential", "list").isEmpty)
    }

    /// Basic auth in front of `git http-backend` (CGI): arguments root, user (`*`: any) and
    /// password, by default alice:wonderland. A token host that takes the token as the Basic
    /// password (as git hosts do for git before 2.46, which cannot send Bearer itself) is
    /// `root '*' TOKEN`.
    static let gitServer = """
        import base64, binascii, http.server, os, subprocess, sys
        root = sys.argv[1]
        user = sys.argv[2] if len(sys.argv) > 2 else "alice"
        secret = sys.argv[3] if len(sys.argv) > 3 else "wonderland"
        def allowed(header):
            if not header.startswith("Basic "): return False
            try: name, _, password = base64.b64decode(header[6:]).decode().partition(":")
            except (binascii.Error, UnicodeDecodeError): return False
            return password == secret and user in ("*", name)
        class H(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            def serve(self):
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                if not allowed(self.headers.get("Authorization", "")):
                    self.send_response(401)
                    self.send_header("WWW-Authenticate", 'Basic realm="git"')
                    self.send_header("Content-Length", "0"); self.end_headers(); return
                path, _, query = self.path.partition("?")
                env = dict(os.environ, GIT_PROJECT_ROOT=root, GIT_HTTP_EXPORT_ALL="1", REQUEST_METHOD=self.command,
                           PATH_INFO=path, QUERY_STRING=query, CONTENT_TYPE=self.headers.get("Content-Type", ""),
                           CONTENT_LENGTH=str(len(body)), REMOTE_USER="alice", REMOTE_ADDR="127.0.0.1",
                           HTTP_CONTENT_ENCODING=self.headers.get("Content-Encoding", ""),
                           GIT_PROTOCOL=self.headers.get("Git-Protocol", ""))
                out = subprocess.run(["git", "http-backend"], input=body, env=env, capture_output=True).stdout
                head, _, rest = out.partition(b"\\r\\n\\r\\n")
                status, headers = 200, []
                for line in head.decode().split("\\r\\n"):
                    key, _, value = line.partition(": ")
                    if key.lower() == "status": status = int(value.split()[0])
                    elif key: headers.append((key, value))
                self.send_response(status)
                for key, value in headers: self.send_header(key, value)
                self.send_header("Content-Length", str(len(rest))); self.end_headers(); self.wfile.write(rest)
            do_GET = do_POST = serve
            def log_message(self, *args): pass
        s = http.server.HTTPServer(("127.0.0.1", 0), H)
        print(s.server_address[1], flush=True)
        s.serve_forever()
        """

    /// A bare repository `root/repo.git` with one commit ("first"), its branch main, made from `work`.
    static func makeRepository(root: String, work: String, _ environment: [String: String]) async throws {
        for arguments in [
            ["init", "-q", "--bare", root + "/repo.git"], ["init", "-q", work],
            [
                "-C", work, "-c", "user.name=T", "-c", "user.email=t@example", "commit", "-q", "--allow-empty", "-m",
                "first",
            ],
            ["-C", work, "push", "-q", root + "/repo.git", "HEAD:refs/heads/main"],
            ["--git-dir", root + "/repo.git", "symbolic-ref", "HEAD", "refs/heads/main"],
        ] {
            let result = try await Self.git(arguments, environment)
            try #require(result.status == 0, "git \(arguments): \(result.error)")
        }
    }

    @Test func gitClonesOverHTTPWithTheSharedCredentialAndForgetsARejectedOne() async throws {
        let daemon = try await DaemonProcess()
        let keyjar = KeyjarCLI(daemon: daemon)
        let root = daemon.directory.path("served")

        // `credential.helper keyjar` finds git-credential-keyjar on PATH: a link to the binary.
        let bin = daemon.directory.path("bin")
        try FileManager.default.createDirectory(atPath: bin, withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(
            atPath: bin + "/git-credential-keyjar",
            withDestinationPath: KeyjarCLI.binary
        )
        let environment = Self.gitEnvironment(keyjar, home: daemon.directory.path, extraPath: bin)
        let helper = ["-c", "credential.helper=", "-c", "credential.helper=keyjar"]

        // A bare repository with one commit, served over HTTP with Basic auth
        try await Self.makeRepository(root: root, work: daemon.directory.path("work"), environment)
        let server = try await LocalHTTPServer(script: Self.gitServer, arguments: [root])
        let remote = "\(server.base)/repo.git"

        // Without a stored credential the clone fails (git may not prompt)
        let denied = try await Self.git(helper + ["clone", "-q", remote, daemon.directory.path("denied")], environment)
        #expect(denied.status != 0)

        // With alice's password in the shared store, git clones with it (get), then stores it (store)
        try await keyjar.ok(
            [
                "credential", "add", "--url", server.base, "--realm", "git", "--method", "basic", "--user", "alice",
                "--password-stdin",
            ],
            input: "wonderland\n"
        )
        let clone = try await Self.git(helper + ["clone", "-q", remote, daemon.directory.path("clone")], environment)
        #expect(clone.status == 0, "\(clone.error)")
        let log = try await Self.git(["-C", daemon.directory.path("clone"), "log", "--format=%s"], environment)
        #expect(log.output == "first\n")
        let records = try #require(try await keyjar.json("credential", "list", "--json") as? [[String: Any]])
        #expect(records.count == 1 && records.first?["realm"] as? String == "git" && records.first?["lastUsed"] != nil)

        // When the stored password goes stale, the fetch fails and git erases it (erase)
        try await keyjar.ok(
            [
                "credential", "add", "--url", server.base, "--realm", "git", "--method", "basic", "--user", "alice",
                "--password-stdin",
            ],
            input: "stale\n"
        )
        let fetch = try await Self.git(helper + ["-C", daemon.directory.path("clone"), "fetch", "-q"], environment)
        #expect(fetch.status != 0)
        #expect(try await keyjar.ok("credential", "list").isEmpty)
    }

    /// git (2.39 here: no authtype, no password_expiry_utc) clones and pushes over HTTP with a
    /// token stored as git 2.46 stores one (`authtype=Bearer`): it is given the token as the
    /// password, which the host takes over Basic. git's `store` keeps the token's expiry it does
    /// not know about; an expired token is not offered; a rejected one is erased.
    @Test func gitClonesAndPushesWithAStoredTokenUntilItExpiresOrIsRejected() async throws {
        let daemon = try await DaemonProcess()
        let keyjar = KeyjarCLI(daemon: daemon)
        let root = daemon.directory.path("served")
        let environment = Self.gitEnvironment(keyjar, home: daemon.directory.path)
        let helper = ["-c", "credential.helper=", "-c", "credential.helper=\(KeyjarCLI.binary) git-credential"]
        try await Self.makeRepository(root: root, work: daemon.directory.path("work"), environment)
        let token = "ghp_" + UUID().uuidString.lowercased()
        let server = try await LocalHTTPServer(script: Self.gitServer, arguments: [root, "*", token])
        let remote = "\(server.base)/repo.git"
        let serverLines = "protocol=http\nhost=127.0.0.1:\(server.port)\n"
        let expiry = Int64(Date().timeIntervalSince1970) + 3600
        try await keyjar.ok(
            ["git-credential", "store"],
            input: "capability[]=authtype\n\(serverLines)authtype=Bearer\ncredential=\(token)\n"
                + "password_expiry_utc=\(expiry)\n\n"
        )
        let socket = daemon.socketPath
        let client: @Sendable () throws -> KeyjarClient = {
            try KeyjarClient(configuration: .init(socketPath: socket, autoStart: false, keepsReplica: false))
        }
        let tokenSpace = ProtectionSpace(
            host: "127.0.0.1",
            port: server.port,
            protocol: "http",
            authenticationMethod: .httpBearer
        )

        // clone, commit, push: every request answered with the token
        let clone = daemon.directory.path("clone")
        let cloned = try await Self.git(helper + ["clone", "-q", remote, clone], environment)
        #expect(cloned.status == 0, "\(cloned.error)")
        let commit = try await Self.git(
            [
                "-C", clone, "-c", "user.name=T", "-c", "user.email=t@example", "commit", "-q", "--allow-empty", "-m",
                "second",
            ],
            environment
        )
        try #require(commit.status == 0, "\(commit.error)")
        let push = try await Self.git(helper + ["-C", clone, "push", "-q", "origin", "HEAD:main"], environment)
        #expect(push.status == 0, "\(push.error)")
        let log = try await Self.git(["--git-dir", root + "/repo.git", "log", "--format=%s", "main"], environment)
        #expect(log.output == "second\nfirst\n")
        // git's store (without the expiry it does not know) kept the token as it was
        let records = try await onOwnThread { try client().credentialRecords() }
        #expect(records.map(\.space) == [tokenSpace] && records.first?.user == "token")
        #expect(records.first?.expires == Double(expiry))

        // Expired: not offered, so git fails (it may not prompt); the record stays
        let past = Date().timeIntervalSince1970 - 60
        try await onOwnThread {
            try client().setCredential(user: "token", password: token, for: tokenSpace, expires: past)
        }
        let expired = try await Self.git(helper + ["-C", clone, "fetch", "-q"], environment)
        #expect(expired.status != 0)
        #expect(try await onOwnThread { try client().credentialRecords().count } == 1)

        // Rejected: git erases it
        try await keyjar.ok(
            ["git-credential", "store"],
            input: "capability[]=authtype\n\(serverLines)authtype=Bearer\ncredential=revoked-token\n\n"
        )
        #expect(try await onOwnThread { try client().credentialRecords().map(\.expires) } == [nil])
        let rejected = try await Self.git(helper + ["-C", clone, "fetch", "-q"], environment)
        #expect(rejected.status != 0)
        #expect(try await onOwnThread { try client().credentialRecords() }.isEmpty)
    }
}
