import Foundation
import KeyjarCodec
import KeyjarCore
import KeyjarLibSecret
import KeyjarTestSupport
import Testing

// These tests use the Secret Service of the session they run in (scripts/test's throwaway
// gnome-keyring, KEYJAR_TEST_SECRET_SERVICE=private) and store items under git's schema there;
// every test uses host names of its own and looks only at its own items. Items are stored with
// storeAsGitCredentialLibsecret (KeyjarTestSupport), exactly as git's helper stores them.

private func uniqueHost() -> String {
    "git-\(UUID().uuidString.lowercased()).example.com"
}

@Suite("SecretServiceItems (real Secret Service)")
struct SecretServiceItemsTests {
    @Test func readsGitCredentialLibsecretItemsAsGitStoredThem() async throws {
        let host = uniqueHost()
        let other = uniqueHost()
        try await storeAsGitCredentialLibsecret(protocol: "https", host: host, user: "alice", secret: "plain-password")
        try await storeAsGitCredentialLibsecret(
            protocol: "https",
            host: host,
            port: 8443,
            path: "team/repo.git",
            user: "bob",
            secret: "gho_access\npassword_expiry_utc=4102444800\noauth_refresh_token=refresh-token-1"
        )
        try await storeAsGitCredentialLibsecret(protocol: "http", host: other, user: "carol", secret: "pässwörd 🔑")
        // An item of another schema with the same attributes is not git's.
        let foreign = try await runCommand(
            "/usr/bin/secret-tool",
            [
                "store", "--label=not git", "xdg:schema", "org.example.Other", "server", host, "user", "mallory",
                "protocol", "https",
            ],
            input: "not-gits"
        )
        #expect(foreign.status == 0)
        let before = try await runCommand("/usr/bin/secret-tool", ["search", "--all", "server", host])

        let items = try SecretServiceItems.items(ofSchema: GitLibsecretItem.schema)
            .filter { [host, other].contains($0.attributes["server"]) }
        let read = try items.map { try GitLibsecretItem(attributes: $0.attributes, secret: $0.secret) }
            .sorted { $0.user < $1.user }

        #expect(read.map(\.user) == ["alice", "bob", "carol"])
        #expect(read[0].protocol == "https" && read[0].server == host && read[0].port == nil)
        #expect(read[0].password == "plain-password" && read[0].expires == nil && read[0].refreshToken == nil)
        #expect(read[1].port == 8443 && read[1].path == "team/repo.git")
        #expect(read[1].password == "gho_access")
        #expect(read[1].expires == 4_102_444_800)
        #expect(read[1].refreshToken == "refresh-token-1")
        #expect(read[2].protocol == "http" && read[2].server == other && read[2].password == "pässwörd 🔑")
        #expect(items.allSatisfy { $0.attributes["xdg:schema"] == GitLibsecretItem.schema })
        #expect(items.allSatisfy { !"\($0)".contains("plain-password") && !"\($0)".contains("gho_access") })

        // Reading changed nothing.
        let after = try await runCommand("/usr/bin/secret-tool", ["search", "--all", "server", host])
        #expect(before.output == after.output && !before.output.isEmpty)
        for server in [host, other] {
            _ = try await runCommand("/usr/bin/secret-tool", ["clear", "server", server])
        }
    }

    /// git's helper keeps a client certificate's passphrase (http.sslCertPasswordProtected) as
    /// `protocol=cert` with an empty server and user, and `git send-email`'s as `smtp`: items of
    /// its schema that are no web credential, told apart from the one beside them.
    @Test func tellsGitsItemsForOtherThingsApartFromWebCredentials() async throws {
        let host = uniqueHost()
        let certificate = "/tmp/\(host)/client.p12"
        try await storeAsGitCredentialLibsecret(protocol: "https", host: host, user: "alice", secret: "alice-pw")
        try await storeAsGitCredentialLibsecret(
            protocol: "cert",
            host: "",
            path: certificate,
            user: "",
            secret: "cert-passphrase"
        )
        try await storeAsGitCredentialLibsecret(protocol: "smtp", host: host, user: "bob", secret: "smtp-pw")

        let items = try SecretServiceItems.items(ofSchema: GitLibsecretItem.schema)
            .filter { $0.attributes["server"] == host || $0.attributes["object"] == certificate }
        #expect(items.count == 3)
        let cert = try #require(items.first { $0.attributes["protocol"] == "cert" })
        #expect(cert.attributes["server"] == "" && cert.attributes["user"] == "")
        // What the reader threw before it knew git's other items.
        #expect(throws: GitLibsecretItem.ReadError.self) {
            try GitLibsecretItem(attributes: cert.attributes, secret: cert.secret)
        }

        var credentials: [GitLibsecretItem] = []
        var others: [String: String] = [:]
        for item in items {
            switch try GitLibsecretItem.read(attributes: item.attributes, secret: item.secret) {
            case .credential(let credential): credentials.append(credential)
            case .other(let name, let reason): others[name] = reason
            }
        }
        #expect(credentials.map(\.user) == ["alice"] && credentials.first?.password == "alice-pw")
        #expect(
            others == [
                "cert:///\(certificate)":
                    "the passphrase of a client certificate (http.sslCertPasswordProtected), not a server's",
                "smtp://bob@\(host)": "protocol smtp: Keyjar keeps http and https credentials",
            ]
        )
        #expect(!"\(others)".contains("cert-passphrase") && !"\(others)".contains("smtp-pw"))
        for attribute in [("server", host), ("object", certificate)] {
            _ = try await runCommand("/usr/bin/secret-tool", ["clear", attribute.0, attribute.1])
        }
    }

    @Test func readsTheItemsOfASchemaGivenByName() async throws {
        let schema = "org.example.Import\(UUID().uuidString.prefix(8))"
        let host = uniqueHost()
        for (user, secret) in [("alice", "one"), ("bob", "two\nlines")] {
            let stored = try await runCommand(
                "/usr/bin/secret-tool",
                ["store", "--label=x", "xdg:schema", schema, "server", host, "user", user],
                input: secret
            )
            #expect(stored.status == 0)
        }
        let items = try SecretServiceItems.items(ofSchema: schema)
        #expect(
            items == [
                SecretServiceItem(attributes: ["xdg:schema": schema, "server": host, "user": "alice"], secret: "one"),
                SecretServiceItem(
                    attributes: ["xdg:schema": schema, "server": host, "user": "bob"],
                    secret: "two\nlines"
                ),
            ]
        )
        #expect(!"\(items)".contains("one") && !"\(items)".contains("two"))
        #expect(try SecretServiceItems.items(ofSchema: schema + ".none").isEmpty)
        _ = try await runCommand("/usr/bin/secret-tool", ["clear", "server", host])
    }

    @Test func anEmptySchemaNameIsRefused() {
        #expect(throws: LibSecretFailure(.invalidInput, "a schema name must be non-empty text without NUL")) {
            try SecretServiceItems.items(ofSchema: "")
        }
    }
}
