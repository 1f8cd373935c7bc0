import Foundation
import KeyjarCodec
import KeyjarTestSupport
import Testing

/// `~/.git-credentials` as git's credential-store writes and reads it.
struct GitCredentialsFileTests {
    /// Credentials stored by the real `git credential-store`, read back: awkward passwords,
    /// ports, IPv6, paths (`credential.useHttpPath`), non-ASCII.
    @Test func readsWhatGitCredentialStoreWrites() async throws {
        let directory = try TemporaryDirectory()
        let file = directory.path("git-credentials")
        let stored: [(input: String, expected: GitCredentialsFile.Entry)] = [
            (
                "protocol=https\nhost=example.com\nusername=alice\npassword=p@ss:w/rd%20?#&+ é\n",
                .init(protocol: "https", host: "example.com", user: "alice", password: "p@ss:w/rd%20?#&+ é", line: 0)
            ),
            (
                "protocol=http\nhost=git.example.org:8080\nusername=bob@corp\npassword=x\n",
                .init(protocol: "http", host: "git.example.org", port: 8080, user: "bob@corp", password: "x", line: 0)
            ),
            (
                "protocol=https\nhost=[::1]:8443\nusername=carol\npassword=y\npath=team/repo.git\n",
                .init(
                    protocol: "https",
                    host: "::1",
                    port: 8443,
                    user: "carol",
                    password: "y",
                    path: "team/repo.git",
                    line: 0
                )
            ),
        ]
        for (input, _) in stored {
            let result = try await runCommand(
                "/usr/bin/git",
                ["credential-store", "--file", file, "store"],
                environment: ["PATH": "/usr/bin:/bin", "HOME": directory.path],
                input: input + "\n"
            )
            #expect(result.status == 0, "\(result.error)")
        }
        let text = try String(contentsOfFile: file, encoding: .utf8)
        let entries = try GitCredentialsFile.parse(text)
        // git puts the newest line first.
        let expected = stored.reversed().enumerated().map { index, pair in
            var entry = pair.expected
            entry.line = index + 1
            return entry
        }
        #expect(entries == expected)
    }

    @Test func readsLinesAsGitDoes() throws {
        let text = """
            https://alice:one@example.com

            # a note the user added
            https://bob:two%3Athree@Example.com%3A8443/
            http://carol:%00%zz%4@[2001:db8::1]/path/to/repo/?x\r
            https://:empty-user@host.example
            """
        let entries = try GitCredentialsFile.parse(text)
        #expect(
            entries == [
                .init(protocol: "https", host: "example.com", user: "alice", password: "one", line: 1),
                .init(protocol: "https", host: "Example.com", port: 8443, user: "bob", password: "two:three", line: 4),
                .init(
                    protocol: "http",
                    host: "2001:db8::1",
                    user: "carol",
                    password: "%00%zz%4",
                    path: "path/to/repo/?x",
                    line: 5
                ),
                .init(protocol: "https", host: "host.example", user: "", password: "empty-user", line: 6),
            ]
        )
    }

    struct Malformed: Sendable, CustomTestStringConvertible {
        let name: String
        let text: String
        let error: GitCredentialsFile.ParseError
        var testDescription: String { name }
    }

    static let malformed: [Malformed] = [
        Malformed(name: "no scheme", text: "alice:hunter2@example.com", error: .init(line: 1, reason: .noScheme)),
        Malformed(
            name: "no password",
            text: "https://a:b@x\nhttps://alice@example.com:443",
            error: .init(line: 2, reason: .noUserAndPassword)
        ),
        Malformed(
            name: "no user",
            text: "https://example.com/hunter2",
            error: .init(line: 1, reason: .noUserAndPassword)
        ),
        Malformed(name: "no host", text: "https://alice:hunter2@/path", error: .init(line: 1, reason: .noHost)),
        Malformed(
            name: "bad port",
            text: "https://alice:hunter2@example.com:99999",
            error: .init(line: 1, reason: .invalidPort)
        ),
        Malformed(
            name: "encoded newline",
            text: "https://alice:hunter2%0a@example.com",
            error: .init(line: 1, reason: .invalidComponent("password"))
        ),
        Malformed(
            name: "not UTF-8 once decoded",
            text: "https://alice:hunter2%ff@example.com",
            error: .init(line: 1, reason: .invalidComponent("password"))
        ),
    ]

    @Test(arguments: malformed)
    func malformedLinesSayWhichLineAndNeverThePassword(_ case: Malformed) {
        #expect(throws: `case`.error) { try GitCredentialsFile.parse(`case`.text) }
        do {
            _ = try GitCredentialsFile.parse(`case`.text)
        } catch {
            #expect(!error.description.contains("hunter2"))
            #expect(error.description.hasPrefix("line \(`case`.error.line): "))
        }
    }

    @Test func descriptionsHideThePassword() throws {
        let entry = try #require(try GitCredentialsFile.parse("https://a:hunter2@b/c").first)
        #expect(!"\(entry)".contains("hunter2"))
        #expect(!String(reflecting: entry).contains("hunter2"))
    }

    @Test(arguments: 0..<2)
    func mutatedFilesNeverCrash(seed: UInt64) {
        var random = SplitMix64(state: seed)
        let valid = "https://alice:p%40ss@example.com:8443/repo\nhttp://[::1]:80/x\nhttps://b:c@d\n"
        for _ in 0..<2_000 {
            let text = Mutation.mutate(valid, alphabet: Mutation.alphabet + Array("@%/[]#?".utf8), using: &random)
            if let entries = try? GitCredentialsFile.parse(text) {
                #expect(entries.allSatisfy { !$0.host.isEmpty && !$0.protocol.isEmpty })
                #expect(entries.allSatisfy { entry in entry.port.map { (1...65_535).contains($0) } ?? true })
            }
        }
    }
}

/// git-credential-libsecret's items, as its `keyring_get` reads them.
struct GitLibsecretItemTests {
    @Test func readsThePasswordAndTheLinesGit247Adds() throws {
        let item = try GitLibsecretItem(
            attributes: [
                "xdg:schema": "org.git.Password", "protocol": "https", "server": "example.com", "port": "8443",
                "user": "alice", "object": "team/repo.git",
            ],
            secret: "gho_token\npassword_expiry_utc=1767225600\noauth_refresh_token=refresh-me\nfuture_key=x"
        )
        #expect(item.protocol == "https")
        #expect(item.server == "example.com")
        #expect(item.port == 8443)
        #expect(item.user == "alice")
        #expect(item.path == "team/repo.git")
        #expect(item.password == "gho_token")
        #expect(item.expires == 1_767_225_600)
        #expect(item.refreshToken == "refresh-me")
        #expect(!"\(item)".contains("gho_token") && !"\(item)".contains("refresh-me"))
    }

    @Test func aPlainPasswordHasNoExtras() throws {
        let item = try GitLibsecretItem(
            attributes: ["protocol": "https", "server": "example.com", "user": "bob"],
            secret: "only a password"
        )
        #expect(item.port == nil && item.path == nil && item.expires == nil && item.refreshToken == nil)
        #expect(item.password == "only a password")
    }

    @Test func itemsGitCouldNotHaveStoredAreErrorsWithoutTheSecret() {
        for (attributes, secret) in [
            (["server": "example.com", "user": "a"], "hunter2"),
            (["protocol": "https", "user": "a"], "hunter2"),
            (["protocol": "https", "server": "example.com"], "hunter2"),
            (["protocol": "https", "server": "example.com", "user": "a", "port": "x"], "hunter2"),
            (["protocol": "https", "server": "example.com", "user": "a"], "hunter2\npassword_expiry_utc=soon"),
        ] {
            #expect {
                try GitLibsecretItem(attributes: attributes, secret: secret)
            } throws: { error in
                !"\(error)".contains("hunter2")
            }
        }
    }
}
