import KeyjarCodec
import KeyjarCore
import Testing

/// Credentials as pass entries, and where they are filed: what `pass`, gopass and browserpass
/// read, and what `keyjar sync` reads back.
struct PassEntryTests {
    @Test func anEntryIsWrittenAsPassAndBrowserpassReadIt() throws {
        let entry = PassEntry(
            password: "s3cret",
            login: "alice",
            url: "https://example.com:8443/",
            realm: "Admin area",
            method: .httpDigest,
            expires: 1_764_547_200,
            refreshToken: "r1",
            tokenRefresh: TokenRefresh(endpoint: "https://login.example/token", clientID: "cli"),
            modified: 1_764_493_923.25,
            otherLines: ["a note of the user's"]
        )
        let text = try entry.encoded()
        #expect(
            text == """
                s3cret
                login: alice
                url: https://example.com:8443/
                realm: Admin area
                method: digest
                expires: 2025-12-01T00:00:00.000Z
                refresh-token: r1
                token-endpoint: https://login.example/token
                client-id: cli
                modified: 2025-11-30T09:12:03.250Z
                a note of the user's

                """
        )
        #expect(try PassEntry.read(text) == entry)
        #expect(!"\(entry)".contains("s3cret") && !"\(entry)".contains("r1"))
    }

    /// Found by fuzzing (the `pass-entry` target's check was wrong, not the code): a url that
    /// holds the password's text shows it in the description, which is the login and url alone.
    @Test func aDescriptionIsTheLoginAndURLWhateverTheyHold() throws {
        let entry = try PassEntry.read("0asway\nURL: *:/0asway\nrefresh-token: r-secret\n")
        #expect("\(entry)" == "pass entry (no login) at *:/0asway")
        var secretsOnly = entry
        secretsOnly.password = "other"
        secretsOnly.refreshToken = nil
        #expect("\(secretsOnly)" == "\(entry)")
    }

    @Test func entriesOtherProgramsWroteAreRead() throws {
        let typed = try PassEntry.read("typed-into-pass\n")
        #expect(typed.password == "typed-into-pass" && typed.login == nil && typed.url == nil)
        let gopass = try PassEntry.read("pw\r\nUsername: bob\r\nURL: gitlab.example\r\nuser: second\r\nnotes\n")
        #expect(gopass.login == "bob" && gopass.url == "gitlab.example")
        #expect(gopass.otherLines == ["user: second", "notes"])
        #expect(try PassEntry.read("pw\nexpires: 1764547200\n").expires == 1_764_547_200)
        // Found by fuzzing: a time with more than milliseconds is written to the millisecond,
        // and then reads and writes the same.
        let fractions = try PassEntry.read("pw\nmodified: 203.2000001\n")
        let written = try fractions.encoded()
        #expect(written == "pw\nmodified: 1970-01-01T00:03:23.200Z\n")
        #expect(try PassEntry.read(written).encoded() == written)
        for text in ["203.2550", "203.2549999", "1764493923.2555"] {
            let once = try PassEntry.read("pw\nmodified: \(text)\n").encoded()
            #expect(try PassEntry.read(once).encoded() == once, "\(text): \(once)")
        }
        #expect(try PassEntry.read("pw\nmodified: 203.2550\n").encoded().hasSuffix("00:03:23.255Z\n"))
        for refused in [
            "", "pw\nmethod: telepathy\n", "pw\nexpires: soon\n", "pw\nproxy: carrier-pigeon\n", "pw\nexpires: 1e300\n",
            "pw\nmodified: -5\n",
        ] {
            #expect(throws: PassEntry.FormatError.self, "\(refused)") { try PassEntry.read(refused) }
        }
        #expect(throws: PassEntry.FormatError.self) { try PassEntry(password: "two\nlines").encoded() }
        #expect(throws: PassEntry.FormatError.self) { try PassEntry(password: "p", realm: "a\nb").encoded() }
    }

    @Test func credentialsAreFiledByServerAndUser() {
        let cases: [(ProtectionSpace, String, String)] = [
            (ProtectionSpace(host: "example.com", protocol: "https"), "alice", "example.com/alice"),
            (ProtectionSpace(host: "example.com", port: 8443, protocol: "https"), "alice", "example.com:8443/alice"),
            (ProtectionSpace(host: "example.com", protocol: "http"), "alice", "example.com/alice (http)"),
            (
                ProtectionSpace(
                    host: "example.com",
                    protocol: "https",
                    realm: "Admin",
                    authenticationMethod: .httpDigest
                ),
                "alice", "example.com/alice (digest, realm Admin)"
            ),
            (
                ProtectionSpace(host: "api.example", protocol: "https", authenticationMethod: .httpBearer), "",
                "api.example/(no user) (bearer)"
            ),
            (ProtectionSpace(host: "::1", port: 8080, protocol: "http"), "a/b", "[::1]:8080/a%2Fb (http)"),
            (ProtectionSpace(anySchemeAndPortOf: "ftp.example"), ".hidden", "ftp.example/%2Ehidden (any scheme)"),
            (ProtectionSpace.anyServer, "x", "*/x (any scheme)"),
            // Found by fuzzing: a combining mark first, control characters, a NUL, a "%".
            (
                ProtectionSpace(host: "example.com", protocol: "https"), "\u{59E}//\0x%41\n",
                "example.com/\u{59E}%2F%2F%00x%2541%0A"
            ),
        ]
        for (space, user, path) in cases {
            #expect(PassStoreLayout.path(of: space, user: user) == path)
            // Written and read back, the entry is the same credential.
            let record = CredentialRecord(
                space: space,
                user: user,
                persistence: .permanent,
                isDefault: true,
                created: 0
            )
            let entry = PassStoreLayout.entry(for: record, password: "pw", refreshToken: nil, modified: 5)
            let read = PassStoreLayout.credential(of: entry, at: path)
            #expect(read?.space == space && read?.user == user, "\(path): \(String(describing: read))")
        }
    }

    @Test func anEntryWithoutFieldsIsItsPathsAndANoteIsNoCredential() {
        let typed = PassEntry(password: "pw")
        let read = PassStoreLayout.credential(of: typed, at: "example.com/bob")
        #expect(read?.space == ProtectionSpace(host: "example.com", protocol: "https") && read?.user == "bob")
        #expect(PassStoreLayout.credential(of: typed, at: "email/gmail") == nil)
        #expect(PassStoreLayout.credential(of: typed, at: "gmail") == nil)
        // Fields win over the path: an entry filed anywhere.
        let filed = PassEntry(password: "pw", login: "carol", url: "gitlab.example")
        let byFields = PassStoreLayout.credential(of: filed, at: "work/gitlab")
        #expect(
            byFields?.space == ProtectionSpace(host: "gitlab.example", protocol: "https") && byFields?.user == "carol"
        )
    }
}
