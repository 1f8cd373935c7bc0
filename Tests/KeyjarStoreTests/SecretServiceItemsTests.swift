import Foundation
import KeyjarCodec
import KeyjarCore
import KeyjarTestSupport
import Testing

@testable import KeyjarStore

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
        #expect(throws: SecretStoreError.self) { try SecretServiceItems.items(ofSchema: "") }
    }
}
