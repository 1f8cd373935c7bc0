import Foundation
import Keyjar
import KeyjarCore
import KeyjarTestSupport
import Testing

/// `keyjar credential import` against a real keyjard and a Secret Service of the test's own,
/// from real files (one written by git's own credential-store) and real Secret Service items
/// stored as git-credential-libsecret stores them.
@Suite(.timeLimit(hangLimit), .servicesStopCleanly)
struct CredentialImportCommandTests {
    /// A keyjard on a private Secret Service, and a private home for the sources' default paths.
    struct Setup {
        let secrets: PrivateSecretService
        let daemon: DaemonProcess
        let keyjar: KeyjarCLI
        var home: String { secrets.directory.path("home") }

        init() async throws {
            secrets = try await PrivateSecretService()
            daemon = try await DaemonProcess(environment: secrets.environment)
            keyjar = KeyjarCLI(daemon: daemon)
        }

        /// The private Secret Service and home, and no $NETRC of the test's.
        var environment: [String: String] {
            secrets.environment.merging(["NETRC": "", "XDG_CONFIG_HOME": home + "/.config"]) { _, new in new }
        }

        func run(_ arguments: [String], input: String? = nil) async throws -> KeyjarCLI.Result {
            try await keyjar.run(arguments, input: input, environment: environment)
        }

        /// Runs and expects success.
        @discardableResult
        func ok(_ arguments: [String], sourceLocation: SourceLocation = #_sourceLocation) async throws -> String {
            let result = try await run(arguments)
            #expect(result.status == 0, "keyjar \(arguments) failed: \(result.error)", sourceLocation: sourceLocation)
            return result.output
        }

        /// What `keyjar git-credential get` answers for a URL's protocol and host: the password
        /// Keyjar's matching rule picks.
        func gitGet(_ protocol: String, _ host: String) async throws -> String {
            try await run(["git-credential", "get"], input: "protocol=\(`protocol`)\nhost=\(host)\n\n").output
        }

        /// A column of keyjard's credential table, for what no command shows (a token's expiry).
        func column(_ name: String, user: String) async throws -> String {
            let result = try await runCommand(
                "/usr/bin/sqlite3",
                ["-readonly", daemon.databasePath, "SELECT \(name) FROM credential WHERE user = '\(user)'"]
            )
            return result.output.trimmingCharacters(in: .whitespacesAndNewlines)
        }
    }

    /// A file's bytes and modification time: proof that it was only read.
    private static func fingerprint(_ path: String) throws -> (Data, Date?) {
        let data = try Data(contentsOf: URL(fileURLWithPath: path))
        let modified = try FileManager.default.attributesOfItem(atPath: path)[.modificationDate] as? Date
        return (data, modified)
    }

    @Test func netrcMachinesAnswerEverySchemeAndPortAndDefaultOnlyWhenAsked() async throws {
        let setup = try await Setup()
        let host = uniqueHost("netrc")
        let netrc = setup.home + "/.netrc"
        try """
        # curl's --netrc file
        machine \(host) login alice password "s3cret with spaces"
        machine nopass.\(host) login carol

        macdef init
        machine inside.\(host) login mallory password never-read

        default login anonymous password guest-pw
        """.write(toFile: netrc, atomically: true, encoding: .utf8)

        // A dry run says what it would do and stores nothing.
        let dry = try await setup.ok(["credential", "import", "--from", "netrc", "--dry-run"])
        let limit =
            "over http or ftp only to this machine, never in clear over the network; --allow-unencrypted allows it"
        #expect(
            dry == """
                would add \(netrc):2 alice at any scheme and port of \(host) (\(limit))
                would skip \(netrc):3 carol at any scheme and port of nopass.\(host) (no password)
                would skip \(netrc):8 anonymous at every server (a default entry: --include-default imports it)
                1 would add, 2 would skip (dry run: nothing was stored)

                """
        )
        #expect(try await setup.ok(["credential", "list"]).isEmpty)

        // The import ($HOME/.netrc by default) stores the machine for every scheme and port:
        // encrypted ones (any port), unencrypted ones only to this machine.
        let imported = try await setup.ok(["credential", "import", "--from", "netrc"])
        #expect(imported.hasPrefix("added \(netrc):2 alice at any scheme and port of \(host) (\(limit))\n"))
        #expect(imported.hasSuffix("1 added, 2 skipped\n"))
        for (scheme, address) in [("https", host), ("https", "\(host):8443")] {
            #expect(try await setup.gitGet(scheme, address).contains("username=alice\npassword=s3cret with spaces\n"))
        }
        for (scheme, address) in [("http", "\(host):8080"), ("http", host), ("ftp", host)] {
            #expect(try await setup.gitGet(scheme, address).isEmpty, "\(scheme)://\(address)")
        }
        #expect(try await setup.gitGet("https", "elsewhere.example").isEmpty)

        // Again: unchanged. With --include-default the default entry answers every other server.
        let again = try await setup.ok(["credential", "import", "--from", "netrc", netrc, "--include-default"])
        #expect(again.contains("unchanged \(netrc):2 alice"))
        #expect(again.contains("added \(netrc):8 anonymous at every server (\(limit))\n"))
        #expect(try await setup.gitGet("https", "elsewhere.example").contains("password=guest-pw\n"))
        #expect(try await setup.gitGet("http", "elsewhere.example").isEmpty)
        #expect(try await setup.gitGet("http", "127.0.0.1:8080").contains("password=guest-pw\n"))
        #expect(try await setup.gitGet("http", "127.attacker.example").isEmpty)
        #expect(try await setup.gitGet("https", host).contains("password=s3cret with spaces\n"))
        // The list shows what they answer, not a scheme and port of their own.
        let listed = try await setup.ok(["credential", "list"])
        #expect(
            listed.contains("*://\(host) (every scheme and port; http only to this machine) method default user alice")
        )
        #expect(listed.contains("*://* (every server; http only to this machine) method default user anonymous"))

        // A different password in the file is left, unless --replace.
        try String(contentsOfFile: netrc, encoding: .utf8).replacingOccurrences(
            of: "s3cret with spaces",
            with: "rotated"
        )
        .write(toFile: netrc, atomically: true, encoding: .utf8)
        let left = try await setup.ok(["credential", "import", "--from", "netrc"])
        #expect(
            left.contains("left \(netrc):2 alice at any scheme and port of \(host) (a different password is stored")
        )
        #expect(try await setup.gitGet("https", host).contains("password=s3cret with spaces\n"))
        let replaced = try await setup.ok(["credential", "import", "--from", "netrc", "--replace"])
        #expect(replaced.contains("updated \(netrc):2 alice"))
        #expect(try await setup.gitGet("https", host).contains("password=rotated\n"))

        // Asked for at import, it goes in clear too (as curl --netrc sends it)
        let unencrypted = try await setup.ok(["credential", "import", "--from", "netrc", "--allow-unencrypted"])
        #expect(
            unencrypted.contains(
                "added \(netrc):2 alice at any scheme and port of \(host) (replaces the one imported without "
                    + "--allow-unencrypted; unencrypted too, as asked (--allow-unencrypted))"
            ),
            "\(unencrypted)"
        )
        #expect(try await setup.gitGet("http", "\(host):8080").contains("password=rotated\n"))
        let widened = try await setup.ok(["credential", "list"])
        #expect(widened.contains("*://\(host) (every scheme and port, http too) method default user alice"))
        #expect(!widened.contains("*://\(host) (every scheme and port; http only"), "one credential, not two")
        // ...and imported again without it, limited again: the import decides.
        let narrowed = try await setup.ok(["credential", "import", "--from", "netrc"])
        #expect(narrowed.contains("replaces the one imported with --allow-unencrypted"), "\(narrowed)")
        #expect(try await setup.gitGet("http", "\(host):8080").isEmpty)
        #expect(try await setup.gitGet("https", host).contains("password=rotated\n"))
        for output in [dry, imported, again, left, replaced, unencrypted, narrowed] {
            for secret in ["s3cret", "rotated", "guest-pw", "never-read"] { #expect(!output.contains(secret)) }
        }
        // $NETRC names the file when no file is given.
        let viaVariable = try await setup.keyjar.run(
            ["credential", "import", "--from", "netrc", "--dry-run"],
            environment: setup.environment.merging(["NETRC": setup.home + "/missing-netrc"]) { _, new in new }
        )
        #expect(viaVariable.status == 1 && viaVariable.error.contains(setup.home + "/missing-netrc"))
    }

    /// Answers every request with the Authorization header it got, as its body.
    static let echoAuthorization = """
        import http.server, sys
        class Echo(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                body = (self.headers.get("Authorization") or "none").encode()
                self.send_response(200)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
            def log_message(self, *args):
                pass
        server = http.server.HTTPServer(("127.0.0.1", 0), Echo)
        print(server.server_address[1], flush=True)
        server.serve_forever()
        """

    /// The same .netrc files read by curl (`--netrc-file`) and imported: Keyjar answers with the
    /// login and password curl sends.
    @Test(arguments: [
        "machine 127.0.0.1 login alice password plain\n",
        "# a comment\nMACHINE 127.0.0.1\n  LOGIN \"al ice\"\n  PASSWORD \"sp ace\\\"quote\\\\back\\ttab\"\n",
        "macdef init\nmachine 127.0.0.1 login mallory password macro\n\nmachine 127.0.0.1 login bob password after-macro\n",
        "machine 127.0.0.1 login first password one\nmachine 127.0.0.1 login second password two\n",
        "machine other.example login x password y\ndefault login anon password dflt\n",
    ])
    func curlAndKeyjarAgree(netrcText: String) async throws {
        let setup = try await Setup()
        let server = try await LocalHTTPServer(script: Self.echoAuthorization)
        let netrc = setup.home + "/agree.netrc"
        try netrcText.write(toFile: netrc, atomically: true, encoding: .utf8)
        let curl = try await runCommand("/usr/bin/curl", ["-s", "--netrc-file", netrc, server.base + "/"])
        #expect(curl.status == 0, "\(curl.error)")
        try await setup.ok(["credential", "import", "--from", "netrc", netrc, "--include-default"])
        let answer = try await setup.gitGet("http", "127.0.0.1:\(server.port)")
        var fields: [String: String] = [:]
        for line in answer.split(separator: "\n") {
            if let equals = line.firstIndex(of: "=") {
                fields[String(line[..<equals])] = String(line[line.index(after: equals)...])
            }
        }
        let user = try #require(fields["username"], "keyjar answered nothing: \(answer)")
        let password = try #require(fields["password"])
        #expect(curl.output == "Basic " + Data("\(user):\(password)".utf8).base64EncodedString())
    }

    @Test func netrcIsOnlyRead() async throws {
        let setup = try await Setup()
        let netrc = setup.home + "/work.netrc"
        try "machine \(uniqueHost("ro")) login a password b\n".write(toFile: netrc, atomically: true, encoding: .utf8)
        let before = try Self.fingerprint(netrc)
        try await setup.ok(["credential", "import", "--from", "netrc", netrc])
        let after = try Self.fingerprint(netrc)
        #expect(before.0 == after.0 && before.1 == after.1)
    }

    @Test func aMalformedNetrcImportsNothingAndSaysWhichLine() async throws {
        let setup = try await Setup()
        let netrc = setup.home + "/bad.netrc"
        try """
        machine \(uniqueHost("good")) login alice password fine
        machine \(uniqueHost("bad")) login bob password two words
        """.write(toFile: netrc, atomically: true, encoding: .utf8)
        let result = try await setup.run(["credential", "import", "--from", "netrc", netrc])
        #expect(result.status == 1)
        #expect(result.error.contains("\(netrc): line 2: "))
        #expect(result.error.contains("nothing was imported"))
        #expect(!result.error.contains("two") && !result.error.contains("words") && !result.error.contains("fine"))
        #expect(result.output.isEmpty)
        #expect(try await setup.ok(["credential", "list"]).isEmpty)

        let missing = try await setup.run(["credential", "import", "--from", "netrc", setup.home + "/nope"])
        #expect(missing.status == 1 && missing.error.contains("cannot read \(setup.home)/nope: No such file"))
        let directory = try await setup.run(["credential", "import", "--from", "git-store", setup.home])
        #expect(directory.status == 1 && directory.error.contains("it is a directory"))
        let noDefault = try await setup.run(["credential", "import", "--from", "git-store"])
        #expect(noDefault.status == 1 && noDefault.error.contains("~/.git-credentials"))
        let usage = try await setup.run(["credential", "import", "--from", "secret-tool"])
        #expect(usage.status == 2 && usage.error.contains("--schema"))
    }

    @Test func gitStoreFilesWrittenByGitItself() async throws {
        let setup = try await Setup()
        let host = uniqueHost("gitstore")
        let file = setup.home + "/.git-credentials"
        for input in [
            "protocol=https\nhost=\(host)\nusername=alice\npassword=p@ss:w/rd%20 é\n\n",
            "protocol=http\nhost=\(host):8080\nusername=bob@corp\npassword=bob-pw\npath=team/repo.git\n\n",
        ] {
            let stored = try await runCommand(
                "/usr/bin/git",
                ["credential-store", "--file", file, "store"],
                environment: ["PATH": "/usr/bin:/bin", "HOME": setup.home],
                input: input
            )
            #expect(stored.status == 0, "\(stored.error)")
        }
        let before = try Self.fingerprint(file)

        let output = try await setup.ok(["credential", "import", "--from", "git-store"])
        #expect(
            output == """
                added \(file):1 bob@corp at http://\(host):8080 (path team/repo.git ignored: credentials are per server)
                added \(file):2 alice at https://\(host):443
                2 added

                """
        )
        #expect(try await setup.gitGet("https", host).contains("username=alice\npassword=p@ss:w/rd%20 é\n"))
        #expect(try await setup.gitGet("http", "\(host):8080").contains("username=bob@corp\npassword=bob-pw\n"))
        #expect(!output.contains("p@ss") && !output.contains("bob-pw"))
        let after = try Self.fingerprint(file)
        #expect(before.0 == after.0 && before.1 == after.1)
    }

    @Test func gitCredentialLibsecretItemsWithTheirTokens() async throws {
        let setup = try await Setup()
        let host = uniqueHost("libsecret")
        let environment = setup.secrets.environment
        try await storeAsGitCredentialLibsecret(
            protocol: "https",
            host: host,
            user: "alice",
            secret: "alice-pw",
            environment: environment
        )
        try await storeAsGitCredentialLibsecret(
            protocol: "https",
            host: host,
            port: 8443,
            path: "org/repo",
            user: "bob",
            secret: "gho_access\npassword_expiry_utc=4102444800\noauth_refresh_token=refresh-1",
            environment: environment
        )
        try await storeAsGitCredentialLibsecret(
            protocol: "https",
            host: host,
            user: "old",
            secret: "old-token\npassword_expiry_utc=1000000000",
            environment: environment
        )
        let before = try await setup.secrets.secretTool(["search", "--all", "xdg:schema", "org.git.Password"])

        let output = try await setup.ok(["credential", "import", "--from", "git-credential-libsecret"])
        #expect(
            output == """
                added item https://bob@\(host):8443/org/repo (with a refresh token) at https://\(host):8443 (path org/repo ignored: credentials are per server)
                added item https://alice@\(host) at https://\(host):443
                skipped item https://old@\(host) at https://\(host):443 (expired)
                2 added, 1 skipped

                """
        )
        #expect(try await setup.gitGet("https", host).contains("username=alice\npassword=alice-pw\n"))
        #expect(try await setup.gitGet("https", "\(host):8443").contains("username=bob\npassword=gho_access\n"))
        #expect(try await setup.column("expires", user: "bob") == "4102444800.0")
        #expect(try await setup.column("has_refresh_token", user: "bob") == "1")
        let refresh = try await setup.secrets.secretTool([
            "search", "--all", "xdg:schema", "org.keyjar.RefreshToken", "keyjar-user", "bob",
        ])
        #expect(refresh.output.contains("secret = refresh-1"))
        for secret in ["alice-pw", "gho_access", "refresh-1", "old-token"] { #expect(!output.contains(secret)) }

        // git's items are untouched, and a second run changes nothing.
        let after = try await setup.secrets.secretTool(["search", "--all", "xdg:schema", "org.git.Password"])
        #expect(before.output == after.output && before.output.contains("secret = alice-pw"))
        let again = try await setup.ok(["credential", "import", "--from", "git-credential-libsecret"])
        #expect(again.hasSuffix("1 skipped, 2 unchanged\n"))
    }

    /// An update of the same password sends keyjard the token fields the record is to have
    /// (keyjard deletes a stored refresh token the write lacks): what git's item lacks is kept,
    /// and so is the endpoint Keyjar refreshes at, unless git brings another refresh token.
    @Test func anUpdateKeepsTheStoredRefreshTokenAndWhereKeyjarRefreshes() async throws {
        let setup = try await Setup()
        let host = uniqueHost("keeps")
        let environment = setup.secrets.environment
        let socket = setup.daemon.socketPath
        let client: @Sendable () throws -> KeyjarClient = {
            try KeyjarClient(configuration: .init(socketPath: socket, autoStart: false, keepsReplica: false))
        }
        let space = ProtectionSpace(host: host, protocol: "https")
        let refresh = TokenRefresh(endpoint: "https://login.\(host)/token", clientID: "cli")
        let stored: Double = 4_000_000_000
        try await onOwnThread {
            for user in ["alice", "bob", "carol"] {
                try client().setCredential(
                    user: user,
                    password: "\(user)-token",
                    for: space,
                    expires: stored,
                    refreshToken: "\(user)-refresh",
                    tokenRefresh: refresh
                )
            }
        }
        // alice: a new expiry, no refresh token (git before 2.47 keeps none); bob: another
        // refresh token, no expiry; carol: another password.
        for (user, secret) in [
            ("alice", "alice-token\npassword_expiry_utc=4102444800"),
            ("bob", "bob-token\noauth_refresh_token=bob-refresh-2"),
            ("carol", "carol-new\npassword_expiry_utc=4102444800"),
        ] {
            try await storeAsGitCredentialLibsecret(
                protocol: "https",
                host: host,
                user: user,
                secret: secret,
                environment: environment
            )
        }
        struct Token: Sendable, Equatable {
            var expires: Double?
            var refreshToken: String?
            var tokenRefresh: TokenRefresh?
        }
        let tokens: @Sendable () async throws -> [String: Token] = {
            try await onOwnThread {
                let keyjar = try client()
                var tokens: [String: Token] = [:]
                for record in try keyjar.credentialRecords() where record.space == space {
                    tokens[record.user] = Token(
                        expires: record.expires,
                        refreshToken: try keyjar.refreshToken(user: record.user, for: space),
                        tokenRefresh: record.tokenRefresh
                    )
                }
                return tokens
            }
        }

        let output = try await setup.ok(["credential", "import", "--from", "git-credential-libsecret"])
        #expect(output.hasSuffix("1 left, 2 updated\n"), "\(output)")
        #expect(
            try await tokens() == [
                "alice": Token(expires: 4_102_444_800, refreshToken: "alice-refresh", tokenRefresh: refresh),
                "bob": Token(expires: stored, refreshToken: "bob-refresh-2", tokenRefresh: nil),
                "carol": Token(expires: stored, refreshToken: "carol-refresh", tokenRefresh: refresh),
            ]
        )
        #expect(try await setup.column("has_refresh_token", user: "alice") == "1")

        // --replace: the new password comes with git's token fields only; the old refresh token
        // and endpoint were the old password's.
        let replaced = try await setup.ok([
            "credential", "import", "--from", "git-credential-libsecret", "--replace",
        ])
        #expect(replaced.hasSuffix("2 unchanged, 1 updated\n"), "\(replaced)")
        #expect(try await tokens()["carol"] == Token(expires: 4_102_444_800, refreshToken: nil, tokenRefresh: nil))
        #expect(try await setup.gitGet("https", host).contains("username=alice\npassword=alice-token\n"))
    }

    /// git's libsecret helper keeps a client certificate's passphrase (http.sslCertPasswordProtected)
    /// in the same schema: protocol cert, an empty server and user, the certificate as object.
    @Test func gitCredentialLibsecretItemsForOtherThingsAreSkipped() async throws {
        let setup = try await Setup()
        let host = uniqueHost("cert")
        let environment = setup.secrets.environment
        let certificate = setup.home + "/client.p12"
        try await storeAsGitCredentialLibsecret(
            protocol: "cert",
            host: "",
            path: certificate,
            user: "",
            secret: "cert-passphrase",
            environment: environment
        )
        try await storeAsGitCredentialLibsecret(
            protocol: "https",
            host: host,
            user: "alice",
            secret: "alice-pw",
            environment: environment
        )
        try await storeAsGitCredentialLibsecret(
            protocol: "smtp",
            host: host,
            port: 587,
            user: "alice",
            secret: "smtp-pw",
            environment: environment
        )

        let output = try await setup.ok(["credential", "import", "--from", "git-credential-libsecret"])
        let lines = output.split(separator: "\n").map(String.init).sorted()
        #expect(
            lines == [
                "1 added, 2 skipped",
                "added item https://alice@\(host) at https://\(host):443",
                "skipped item cert:///\(certificate) (the passphrase of a client certificate "
                    + "(http.sslCertPasswordProtected), not a server's)",
                "skipped item smtp://alice@\(host):587 (protocol smtp: Keyjar keeps http and https credentials)",
            ]
        )
        for secret in ["cert-passphrase", "alice-pw", "smtp-pw"] { #expect(!output.contains(secret)) }
        #expect(try await setup.gitGet("https", host).contains("username=alice\npassword=alice-pw\n"))
        #expect(try await setup.ok(["credential", "list"]).split(separator: "\n").count == 1)
    }

    @Test func aLockedKeyringImportsNothing() async throws {
        let setup = try await Setup()
        let host = uniqueHost("locked")
        try await storeAsGitCredentialLibsecret(
            protocol: "https",
            host: host,
            user: "alice",
            secret: "alice-pw",
            environment: setup.secrets.environment
        )
        // Locked as a screen lock or `Lock` in Seahorse does it; nothing can show the unlock
        // prompt on the private bus, as on a machine without a desktop session.
        let lock = try await runCommand(
            "/usr/bin/dbus-send",
            [
                "--session", "--print-reply", "--dest=org.freedesktop.secrets", "/org/freedesktop/secrets",
                "org.freedesktop.Secret.Service.Lock", "array:objpath:/org/freedesktop/secrets/collection/login",
            ],
            environment: setup.secrets.environment
        )
        #expect(lock.status == 0, "\(lock.error)")
        let result = try await setup.run(["credential", "import", "--from", "git-credential-libsecret"])
        #expect(result.status == 1)
        #expect(result.error.contains("locked keyring") && result.error.contains("nothing was imported"))
        #expect(!result.error.contains("alice-pw"))
        #expect(try await setup.run(["credential", "list"]).output.isEmpty)
    }

    @Test func aFailedSaveImportsNothing() async throws {
        let setup = try await Setup()
        let netrc = setup.home + "/two.netrc"
        try "machine \(uniqueHost("one")) login a password one\nmachine \(uniqueHost("two")) login b password two\n"
            .write(toFile: netrc, atomically: true, encoding: .utf8)
        // The keyring keyjard stores passwords in is locked, and no prompt can unlock it.
        let lock = try await runCommand(
            "/usr/bin/dbus-send",
            [
                "--session", "--print-reply", "--dest=org.freedesktop.secrets", "/org/freedesktop/secrets",
                "org.freedesktop.Secret.Service.Lock", "array:objpath:/org/freedesktop/secrets/collection/login",
            ],
            environment: setup.secrets.environment
        )
        #expect(lock.status == 0, "\(lock.error)")
        let result = try await setup.run(["credential", "import", "--from", "netrc", netrc])
        #expect(result.status == 1, "\(result.output)")
        #expect(result.output.isEmpty)
        #expect(try await setup.ok(["credential", "list"]).isEmpty)
        // No password was left behind in the Secret Service either, locked or not.
        let search = try await runCommand(
            "/usr/bin/dbus-send",
            [
                "--session", "--print-reply", "--dest=org.freedesktop.secrets", "/org/freedesktop/secrets",
                "org.freedesktop.Secret.Service.SearchItems", "dict:string:string:xdg:schema,org.keyjar.Credential",
            ],
            environment: setup.secrets.environment
        )
        #expect(search.status == 0 && !search.output.contains("object path"), "\(search.output)\(search.error)")
    }

    @Test func aCredentialWithoutAUserNameIsSkipped() async throws {
        let setup = try await Setup()
        let host = uniqueHost("nouser")
        let file = setup.home + "/creds"
        try "https://:token@\(host)\nhttps://alice:pw@\(host)\n".write(toFile: file, atomically: true, encoding: .utf8)
        let output = try await setup.ok(["credential", "import", "--from", "git-store", file])
        #expect(output.contains("skipped \(file):1  at https://\(host):443 (no user name)\n"))
        #expect(output.hasSuffix("1 added, 1 skipped\n"))
        #expect(try await setup.ok(["credential", "list"]).split(separator: "\n").count == 1)
    }

    @Test func secretToolItemsOfASchema() async throws {
        let setup = try await Setup()
        let host = uniqueHost("secret-tool")
        let schema = "org.example.Password"
        for (attributes, secret) in [
            (["server", host, "user", "alice", "protocol", "https", "port", "8443"], "alice-pw"),
            (["server", "any.\(host)", "user", "bob"], "bob-pw"),
        ] {
            let stored = try await setup.secrets.secretTool(
                ["store", "--label=x", "xdg:schema", schema] + attributes,
                input: secret
            )
            #expect(stored.status == 0)
        }
        let output = try await setup.ok(["credential", "import", "--from", "secret-tool", "--schema", schema])
        #expect(
            output.contains(
                "added item server=any.\(host) user=bob at any scheme and port of any.\(host) (over http or ftp only to this machine"
            ),
            "\(output)"
        )
        #expect(
            output.contains("added item port=8443 protocol=https server=\(host) user=alice at https://\(host):8443\n")
        )
        #expect(try await setup.gitGet("https", "\(host):8443").contains("password=alice-pw\n"))
        #expect(try await setup.gitGet("https", "any.\(host)").contains("password=bob-pw\n"))
        #expect(try await setup.gitGet("http", "any.\(host)").isEmpty, "never in clear over the network")

        // An item that does not say which server and user it is for stops the import.
        let vague = try await setup.secrets.secretTool(
            ["store", "--label=x", "xdg:schema", schema, "server", "vague.\(host)"],
            input: "vague-pw"
        )
        #expect(vague.status == 0)
        let refused = try await setup.run([
            "credential", "import", "--from", "secret-tool", "--schema", schema, "--replace",
        ])
        #expect(refused.status == 1 && refused.error.contains("no server or no user attribute"))
        #expect(!refused.error.contains("vague-pw"))
    }
}
