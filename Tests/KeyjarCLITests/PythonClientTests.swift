import Foundation
import KeyjarTestSupport
import Testing

/// Keyjar's Python package with the real programs that use it: keyring's command, pip behind
/// a password only Keyjar has, requests and httpx sharing a login with a Swift `KeyjarLoader`
/// program and `keyjar fetch`, keyring with no session bus, and Docker's helper protocol as
/// Docker's Python client library speaks it. Each against a real keyjard, on real servers on
/// 127.0.0.1.
@Suite(.timeLimit(hangLimit), .servicesStopCleanly)
struct PythonClientTests {
    private let python = PythonEnvironment.shared

    /// The package's own tests (python/tests): its framing, spaces and errors, and its
    /// keyring backend, cookie jar and transports live against this keyjard.
    @Test func thePackagesOwnTestsPass() async throws {
        let daemon = try await DaemonProcess()
        let root = PythonEnvironment.root
        let result = try await python.run(
            ["-m", "unittest", "discover", "-s", root + "/python/tests", "-t", root + "/python"],
            daemon: daemon,
            environment: ["KEYJAR_TEST_REQUIRE_KEYJARD": "1"]
        )
        #expect(result.status == 0, "\(result.error)")
        #expect(result.error.contains("\nOK"), "\(result.error)")
    }

    /// keyring's own command: it reads what `keyjar credential add` stored (by URL or host),
    /// and what it sets and deletes is Keyjar's.
    @Test func keyringsCommandUsesTheSharedCredentials() async throws {
        let daemon = try await DaemonProcess()
        let keyjar = KeyjarCLI(daemon: daemon)
        let host = uniqueHost("keyring")
        try await keyjar.ok(
            ["credential", "add", "--url", "https://\(host)", "--user", "alice", "--password-stdin"],
            input: "from-keyjar\n"
        )
        let chosen = try await python.run(
            [
                "-c",
                "import keyring; k = keyring.get_keyring(); print(type(k).__module__); "
                    + "print(' '.join(type(b).__module__ for b in getattr(k, 'backends', [k])))",
            ],
            daemon: daemon
        )
        #expect(chosen.status == 0, "\(chosen.error)")
        #expect(chosen.output.split(separator: "\n").last?.hasPrefix("keyjar.") == true, "\(chosen.output)")

        for service in ["https://\(host)/some/path", host] {
            let got = try await python.run(["-m", "keyring", "get", service, "alice"], daemon: daemon)
            #expect(got.status == 0 && got.output == "from-keyjar\n", "\(service): \(got.error)")
        }
        let other = uniqueHost("keyring-set")
        let set = try await python.run(
            ["-m", "keyring", "set", "https://\(other)", "bob"],
            daemon: daemon,
            input: "typed-by-bob\n"
        )
        #expect(set.status == 0, "\(set.error)")
        let shown = try await keyjar.ok(
            "credential",
            "show",
            "--url",
            "https://\(other)",
            "--user",
            "bob",
            "--reveal",
            "--force"
        )
        #expect(shown.contains("typed-by-bob"), "\(shown)")
        let deleted = try await python.run(["-m", "keyring", "del", "https://\(other)", "bob"], daemon: daemon)
        #expect(deleted.status == 0, "\(deleted.error)")
        #expect(!(try await keyjar.ok("credential", "list")).contains(other))
    }

    /// `pip download` from a package index behind Basic authentication whose password is in
    /// Keyjar only (pip's `--keyring-provider import`).
    @Test func pipFindsTheIndexPasswordInKeyjar() async throws {
        let daemon = try await DaemonProcess()
        let keyjar = KeyjarCLI(daemon: daemon)
        let password = "index-" + UUID().uuidString.prefix(8)
        let index = try await LocalHTTPServer(
            script: try String(contentsOfFile: PythonEnvironment.script("package_index.py"), encoding: .utf8),
            arguments: ["alice", String(password)]
        )
        try await keyjar.ok(
            ["credential", "add", "--url", index.base, "--user", "alice", "--password-stdin"],
            input: "\(password)\n"
        )
        let directory = try TemporaryDirectory()
        let downloaded = try await python.run(
            [
                "-m", "pip", "download", "--no-deps", "--no-cache-dir", "--disable-pip-version-check",
                "--keyring-provider", "import", "--index-url", index.base + "/simple/", "-d", directory.path, "kjdemo",
            ],
            daemon: daemon,
            environment: ["NETRC": directory.path("no-netrc")]
        )
        #expect(downloaded.status == 0, "\(downloaded.output)\n\(downloaded.error)")
        #expect(FileManager.default.fileExists(atPath: directory.path("kjdemo-1.0-py3-none-any.whl")))
        let seen = try await runCommand("/usr/bin/curl", ["-s", index.base + "/seen"]).output
        // Asked without a password first (401), then with Keyjar's (200).
        #expect(seen.contains(#"["/simple/kjdemo/", 401]"#) && seen.contains(#"["/simple/kjdemo/", 200]"#), "\(seen)")
        #expect(!downloaded.output.contains(password) && !downloaded.error.contains(password))
    }

    /// One login shared by requests, `keyjar fetch`, a Swift `KeyjarLoader` program and httpx.
    @Test func requestsAndHttpxShareALoginWithSwiftAndFetch() async throws {
        let daemon = try await DaemonProcess()
        let keyjar = KeyjarCLI(daemon: daemon)
        let site = try await LocalHTTPServer(
            script: try String(contentsOfFile: PythonEnvironment.script("login_server.py"), encoding: .utf8)
        )
        // requests logs in, its session's cookies being the shared jar.
        let login = try await python.run(
            [
                "-c",
                "import sys, requests, keyjar; s = requests.Session(); s.cookies = keyjar.KeyjarCookieJar(); "
                    + "print(s.get(sys.argv[1]).text)", site.base + "/login?name=py",
            ],
            daemon: daemon
        )
        #expect(login.status == 0, "\(login.error)")
        let session = login.output.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(session.hasPrefix("py-"))
        // keyjar fetch is sent it.
        let fetched = try await keyjar.run(["fetch", site.base + "/whoami"])
        #expect(fetched.output == "session=\(session)", "\(fetched.error)")
        // A Swift program on KeyjarLoader sets another cookie.
        var environment = keyjar.environment
        environment["XDG_CACHE_HOME"] = try TemporaryDirectory().path
        let loaded = try await runCommand(
            DaemonProcess.builtExecutable(named: "KeyjarTestPeer"),
            ["load", site.base + "/prefer"],
            environment: environment
        )
        #expect(loaded.status == 0 && loaded.output == "ok", "\(loaded.error)")
        // httpx, through Keyjar's transport (twice from one client: its own jar keeps no stale
        // copy), and requests, through the jar, send both.
        let httpx = try await python.run(
            [
                "-c",
                "import sys; from keyjar.httpx_transport import keyjar_client; c = keyjar_client(); "
                    + "c.get(sys.argv[1]); print(c.get(sys.argv[1]).text)", site.base + "/whoami",
            ],
            daemon: daemon
        )
        #expect(httpx.status == 0, "\(httpx.error)")
        let requests = try await python.run(
            [
                "-c",
                "import sys, requests, keyjar; s = requests.Session(); s.cookies = keyjar.KeyjarCookieJar(); "
                    + "print(s.get(sys.argv[1]).text)", site.base + "/whoami",
            ],
            daemon: daemon
        )
        for (name, answer) in [("httpx", httpx.output), ("requests", requests.output)] {
            let sent = Set(answer.trimmingCharacters(in: .whitespacesAndNewlines).components(separatedBy: "; "))
            #expect(sent == ["session=\(session)", "pref=dark"], "\(name): \(answer)")
        }
    }

    /// twine's way (keyring.set_password, then get_password in another process) on a machine
    /// with no session bus: keyjard keeps the token in its encrypted file, and a locked file
    /// is a typed error, never a hang or a plaintext fallback.
    @Test func keyringWorksWithoutASessionBus() async throws {
        var environment = ProcessInfo.processInfo.environment
        environment["DBUS_SESSION_BUS_ADDRESS"] = nil
        let daemon = try await DaemonProcess(arguments: ["--secrets", "encrypted"], environment: environment)
        let keyjar = KeyjarCLI(daemon: daemon)
        try await keyjar.ok("unlock", "--passphrase-stdin", input: "the passphrase\n")
        let token = "pypi-" + UUID().uuidString
        let noBus = ["DBUS_SESSION_BUS_ADDRESS"]
        let stored = try await python.run(
            [
                "-c",
                "import sys, keyring; keyring.set_password('https://upload.pypi.org/legacy/', '__token__', sys.stdin.read())",
            ],
            daemon: daemon,
            input: token,
            removing: noBus
        )
        #expect(stored.status == 0, "\(stored.error)")
        let read = try await python.run(
            ["-m", "keyring", "get", "https://upload.pypi.org/legacy/", "__token__"],
            daemon: daemon,
            removing: noBus
        )
        #expect(read.status == 0 && read.output == token + "\n", "\(read.error)")
        // Nowhere in keyjard's files in clear.
        let files = FileManager.default.enumerator(atPath: daemon.directory.path)?.compactMap { $0 as? String } ?? []
        #expect(!files.isEmpty)
        for file in files {
            let contents = FileManager.default.contents(atPath: daemon.directory.path(file)) ?? Data()
            #expect(contents.range(of: Data(token.utf8)) == nil, "\(file) holds the token")
        }
        try await keyjar.ok("lock")
        let locked = try await python.run(
            ["-m", "keyring", "get", "https://upload.pypi.org/legacy/", "__token__"],
            daemon: daemon,
            removing: noBus
        )
        #expect(locked.status != 0 && !locked.output.contains(token))
        #expect(locked.error.contains("keyjar unlock"), "\(locked.error)")
    }

    /// Docker's helper protocol as Docker's Python client library (docker-py's
    /// `docker.credentials.Store`) speaks it to `docker-credential-keyjar`.
    @Test func dockersClientLibraryStoresGetsListsAndErases() async throws {
        let daemon = try await DaemonProcess()
        let keyjar = KeyjarCLI(daemon: daemon)
        let bin = try TemporaryDirectory()
        try FileManager.default.createSymbolicLink(
            atPath: bin.path("docker-credential-keyjar"),
            withDestinationPath: KeyjarCLI.binary
        )
        let registry = uniqueHost("registry") + ":5000"
        // What `docker login` leaves in Docker's configuration with a credential store: the
        // registry's key, no secret.
        try #"{"auths": {"\#(registry)": {}}, "credsStore": "keyjar"}"#.write(
            toFile: bin.path("config.json"),
            atomically: true,
            encoding: .utf8
        )
        let other = uniqueHost("registry-other")
        try await keyjar.ok(
            ["credential", "add", "--url", "https://\(other)", "--user", "carol", "--password-stdin"],
            input: "carol-secret\n"
        )
        let script = #"""
            import json, sys
            from docker.credentials import Store, errors
            registry, other = sys.argv[1], sys.argv[2]
            store = Store("keyjar")
            store.store(registry, "alice", "registry-secret")
            print(json.dumps(store.get(registry), sort_keys=True))
            print(json.dumps(store.get(other), sort_keys=True))
            listed = store.list()
            print(json.dumps({k: v for k, v in listed.items() if k in (registry, other)}, sort_keys=True))
            store.erase(registry)
            try:
                store.get(registry)
                print("still there")
            except errors.CredentialsNotFound:
                print("gone")
            """#
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        let result = try await python.run(
            ["-c", script, registry, other],
            daemon: daemon,
            environment: ["PATH": bin.path + ":" + path, "DOCKER_CONFIG": bin.path]
        )
        #expect(result.status == 0, "\(result.error)")
        #expect(
            result.output.split(separator: "\n").map(String.init) == [
                #"{"Secret": "registry-secret", "ServerURL": "\#(registry)", "Username": "alice"}"#,
                #"{"Secret": "carol-secret", "ServerURL": "\#(other)", "Username": "carol"}"#,
                // Only what Docker logged into (its config.json), not every site's login.
                #"{"\#(registry)": "alice"}"#,
                "gone",
            ],
            "\(result.output)"
        )
    }
}
