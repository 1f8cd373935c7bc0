import Foundation
import KeyjarCore
import KeyjarPlatform
import KeyjarTestSupport
import Testing

@testable import KeyjarStore

// These tests use the real Secret Service of the session they run in: the test command starts a
// private D-Bus session with an unlocked throwaway gnome-keyring. Every test uses its own host
// name, so tests can run in parallel and never see each other's (or a real user's) items.

/// A host name no other test (or run) uses.
private func uniqueHost() -> String {
    "kj-\(UUID().uuidString.lowercased()).example.com"
}

/// Runs a command and returns its exit status and its standard output and error, merged.
private func run(_ executable: String, _ arguments: [String]) async throws -> (status: Int32, output: String) {
    let result = try await runCommand(executable, arguments)
    return (result.status, result.output + result.error)
}

/// Spaces that differ from each other in exactly one attribute each from the first one.
private func collidingCandidates(host: String) -> [ProtectionSpace] {
    [
        ProtectionSpace(host: host, port: 8080, protocol: "http", realm: "a", authenticationMethod: .httpBasic),
        ProtectionSpace(host: host, port: 8080, protocol: "http", realm: "b", authenticationMethod: .httpBasic),
        ProtectionSpace(host: host, port: 8080, protocol: "http", realm: nil, authenticationMethod: .httpBasic),
        ProtectionSpace(host: host, port: 8081, protocol: "http", realm: "a", authenticationMethod: .httpBasic),
        ProtectionSpace(host: host, port: 8080, protocol: "http", realm: "a", authenticationMethod: .httpDigest),
        ProtectionSpace(
            host: host,
            port: 8080,
            protocol: "http",
            realm: "a",
            authenticationMethod: .httpBasic,
            proxyType: .http
        ),
        ProtectionSpace(host: host, port: 8080, protocol: "https", realm: "a", authenticationMethod: .httpBasic),
    ]
}

/// Checks the behaviour every ``SecretStore`` must share, against `store`.
func checkCommonBehaviour(of store: any SecretStore) throws {
    let host = uniqueHost()
    let space = ProtectionSpace(host: host, protocol: "https", realm: "admin", authenticationMethod: .httpBasic)

    // Given nothing stored, lookups find nothing and removal reports it.
    #expect(try store.password(for: space, user: "alice") == nil)
    #expect(try store.removePassword(for: space, user: "alice") == false)

    // Store then look up; a second user is independent of the first.
    try store.storePassword("alice-pw", for: space, user: "alice")
    try store.storePassword("bob-pw", for: space, user: "bob")
    #expect(try store.password(for: space, user: "alice") == "alice-pw")
    #expect(try store.password(for: space, user: "bob") == "bob-pw")
    #expect(try store.password(for: space, user: "carol") == nil)

    // Overwrite replaces only that user's password.
    try store.storePassword("alice-pw-2", for: space, user: "alice")
    #expect(try store.password(for: space, user: "alice") == "alice-pw-2")
    #expect(try store.password(for: space, user: "bob") == "bob-pw")

    // Remove returns true, then false; the other user survives.
    #expect(try store.removePassword(for: space, user: "alice") == true)
    #expect(try store.removePassword(for: space, user: "alice") == false)
    #expect(try store.password(for: space, user: "alice") == nil)
    #expect(try store.password(for: space, user: "bob") == "bob-pw")
    try store.removePassword(for: space, user: "bob")

    // Spaces that differ in only realm, port, authtype, proxytype or protocol do not collide.
    let spaces = collidingCandidates(host: uniqueHost())
    #expect(Set(spaces).count == spaces.count)
    for (index, space) in spaces.enumerated() {
        try store.storePassword("pw-\(index)", for: space, user: "alice")
    }
    for (index, space) in spaces.enumerated() {
        #expect(try store.password(for: space, user: "alice") == "pw-\(index)", "space \(index): \(space)")
    }
    #expect(try store.removePassword(for: spaces[0], user: "alice"))
    for (index, space) in spaces.enumerated().dropFirst() {
        #expect(try store.password(for: space, user: "alice") == "pw-\(index)", "space \(index) after removal")
        try store.removePassword(for: space, user: "alice")
    }

    // A refresh token is kept beside the password, under the same key, and neither is ever
    // returned for the other; only passwords are listed as keys.
    let token = ProtectionSpace(host: uniqueHost(), protocol: "https", authenticationMethod: .httpBearer)
    try store.storeSecret("refresh", .refreshToken, for: token, user: "")
    #expect(try store.password(for: token, user: "") == nil)
    try store.storePassword("access", for: token, user: "")
    #expect(try store.secret(.refreshToken, for: token, user: "") == "refresh")
    #expect(try store.password(for: token, user: "") == "access")
    #expect(try store.keys().filter { $0.space.host == token.host }.count == 1)
    // A `.netrc` login's wildcard space is listed as itself (not as another program's item).
    let machine = ProtectionSpace(anySchemeAndPortOf: uniqueHost())
    try store.storePassword("netrc", for: machine, user: "alice")
    #expect(try store.keys().contains(SecretStoreKey(space: machine, user: "alice")))
    // ...and one imported to go in clear too keeps that.
    let inClear = ProtectionSpace(anySchemeAndPortOf: machine.host, inClearToo: true)
    try store.storePassword("netrc-clear", for: inClear, user: "alice")
    #expect(try store.keys().contains(SecretStoreKey(space: inClear, user: "alice")))
    #expect(try store.password(for: machine, user: "alice") == "netrc")
    #expect(try store.removePassword(for: inClear, user: "alice"))
    #expect(try store.removePassword(for: machine, user: "alice"))
    #expect(try store.removePassword(for: token, user: ""))
    #expect(try store.secret(.refreshToken, for: token, user: "") == "refresh")
    #expect(try store.removeSecret(.refreshToken, for: token, user: ""))
    #expect(try store.secret(.refreshToken, for: token, user: "") == nil)
}

/// A password whose bytes are easy to get wrong, named so test output stays readable.
struct AwkwardPassword: Sendable, CustomTestStringConvertible {
    let name: String
    let value: String
    var testDescription: String { name }
}

private let awkwardPasswords = [
    AwkwardPassword(name: "non-ASCII and emoji", value: "pässwörd 🔑 密码 Ωμέγα"),
    // A decomposed é must come back decomposed, not normalised.
    AwkwardPassword(name: "combining accent", value: "e\u{301}"),
    AwkwardPassword(name: "one space", value: " "),
    AwkwardPassword(name: "whitespace only", value: " \t\n "),
    AwkwardPassword(name: "empty", value: ""),
    AwkwardPassword(name: "quotes and backslashes", value: "\"quoted\" \\back\\slash {json: [1]}"),
    AwkwardPassword(name: "10 000 characters", value: String(repeating: "long-", count: 2000)),
]

@Suite("LibSecretStore (real Secret Service)")
struct LibSecretStoreTests {
    let store = LibSecretStore()

    @Test func healthIsAvailableInTheTestSession() {
        let health = store.health()
        guard case .available(let backend) = health else {
            Issue.record("expected the test session's gnome-keyring to be usable, got \(health)")
            return
        }
        #expect(backend.contains("Secret Service"))
    }

    @Test func sharedStoreBehaviour() throws {
        try checkCommonBehaviour(of: store)
    }

    @Test(arguments: awkwardPasswords)
    func awkwardPasswordsRoundTrip(_ awkward: AwkwardPassword) throws {
        let password = awkward.value
        let space = ProtectionSpace(host: uniqueHost(), protocol: "https")
        try store.storePassword(password, for: space, user: "alice")
        defer { _ = try? store.removePassword(for: space, user: "alice") }
        let found = try #require(try store.password(for: space, user: "alice"))
        #expect(Array(found.utf8) == Array(password.utf8))
    }

    @Test func unicodeUserAndRealmAreAttributes() throws {
        let space = ProtectionSpace(host: uniqueHost(), protocol: "https", realm: "Zöne 🌍")
        try store.storePassword("pw", for: space, user: "jürgen")
        defer { _ = try? store.removePassword(for: space, user: "jürgen") }
        #expect(try store.password(for: space, user: "jürgen") == "pw")
        #expect(try store.password(for: space, user: "jurgen") == nil)
    }

    @Test func secretToolSeesTheItemWithOurSchemaAndAttributes() async throws {
        // Given an item stored through the library,
        let host = uniqueHost()
        let password = "st-\(UUID().uuidString)"
        let space = ProtectionSpace(
            host: host,
            port: 8443,
            protocol: "https",
            realm: "admin",
            authenticationMethod: .httpDigest
        )
        try store.storePassword(password, for: space, user: "alice")
        defer { _ = try? store.removePassword(for: space, user: "alice") }

        // when the stock command-line client searches for it,
        let search = try await run(
            "/usr/bin/secret-tool",
            ["search", "--all", "keyjar-server", host, "keyjar-user", "alice"]
        )

        // then it finds exactly one item carrying our schema, label and attributes.
        #expect(search.status == 0, "secret-tool search failed: \(search.output)")
        let lines = Set(search.output.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) })
        let expected = [
            "label = Keyjar: alice@\(host):8443 (admin)",
            "schema = org.keyjar.Credential",
            "attribute.keyjar-server = \(host)",
            "attribute.keyjar-port = 8443",
            "attribute.keyjar-protocol = https",
            "attribute.keyjar-realm = admin",
            "attribute.keyjar-authtype = httpDigest",
            "attribute.keyjar-proxytype = none",
            "attribute.keyjar-user = alice",
            "secret = \(password)",
        ]
        for line in expected {
            #expect(lines.contains(line), "missing \"\(line)\" in:\n\(search.output)")
        }
        #expect(search.output.components(separatedBy: "schema = ").count - 1 == 1, "\(search.output)")

        let lookup = try await run(
            "/usr/bin/secret-tool",
            [
                "lookup", "keyjar-server", host, "keyjar-port", "8443", "keyjar-user", "alice", "keyjar-authtype",
                "httpDigest",
            ]
        )
        #expect(lookup.status == 0)
        #expect(lookup.output.trimmingCharacters(in: .newlines) == password)
    }

    @Test func overwriteLeavesOneItem() async throws {
        let host = uniqueHost()
        let space = ProtectionSpace(host: host, protocol: "https")
        try store.storePassword("first", for: space, user: "alice")
        try store.storePassword("second", for: space, user: "alice")
        defer { _ = try? store.removePassword(for: space, user: "alice") }

        let search = try await run("/usr/bin/secret-tool", ["search", "--all", "keyjar-server", host])
        #expect(search.output.components(separatedBy: "schema = org.keyjar.Credential").count - 1 == 1)
        #expect(search.output.contains("secret = second"))
        #expect(!search.output.contains("secret = first"))
    }

    @Test func itemsStoredBySecretToolWithoutOurSchemaAreNotReturned() async throws {
        // secret-tool stores under its own schema name, so the xdg:schema match must exclude it.
        let host = uniqueHost()
        let space = ProtectionSpace(host: host, protocol: "https")
        let stored = try await runCommand(
            "/usr/bin/secret-tool",
            [
                "store", "--label=foreign", "server", host, "port", "443", "protocol", "https", "realm", "",
                "authtype", "default", "proxytype", "none", "user", "alice",
            ],
            input: "foreign-pw"
        )
        #expect(stored.status == 0)

        #expect(try store.password(for: space, user: "alice") == nil)
        #expect(try store.removePassword(for: space, user: "alice") == false)
        // The foreign item is still there (Keyjar removed nothing of it); the test clears it.
        #expect(try await run("/usr/bin/secret-tool", ["clear", "server", host]).status == 0)
    }

    /// gnome-keyring replaces, on a store, every item whose attributes include all of the new
    /// item's: with the common names, a neighbour's `secret-tool store server H user U` would
    /// replace Keyjar's password.
    @Test func aNeighboursStoreWithTheCommonNamesLeavesKeyjarsItem() async throws {
        let host = uniqueHost()
        let space = ProtectionSpace(host: host, protocol: "https", authenticationMethod: .httpBasic)
        try store.storePassword("keyjars", for: space, user: "alice")
        defer { _ = try? store.removePassword(for: space, user: "alice") }
        let neighbour = try await runCommand(
            "/usr/bin/secret-tool",
            ["store", "--label=neighbour", "server", host, "user", "alice"],
            input: "neighbours"
        )
        #expect(neighbour.status == 0)

        #expect(try store.password(for: space, user: "alice") == "keyjars")
        #expect(try store.keys().contains(SecretStoreKey(space: space, user: "alice")))
        let lookup = try await runCommand("/usr/bin/secret-tool", ["lookup", "server", host, "user", "alice"])
        #expect(lookup.output == "neighbours", "the neighbour's item is its own")
        #expect(try await run("/usr/bin/secret-tool", ["clear", "server", host]).status == 0)
    }

    /// Items an older Keyjar stored under the common names answer until they are moved, and
    /// are moved (password and refresh token) with their secrets, leaving none behind.
    @Test func itemsUnderTheCommonNamesAreFoundThenMovedToKeyjarsOwn() async throws {
        let host = uniqueHost()
        let space = ProtectionSpace(host: host, port: 8443, protocol: "https", realm: "admin")
        let older = PrivateSecretService.keyjarAttributes(
            host: host,
            port: 8443,
            protocol: "https",
            realm: "admin",
            user: "alice",
            sharedNames: true
        )
        var token = older
        token[1] = "org.keyjar.RefreshToken"
        for (attributes, secret) in [(older, "older-pw"), (token, "older-refresh")] {
            let stored = try await runCommand(
                "/usr/bin/secret-tool",
                ["store", "--label=Keyjar: alice@\(host):8443 (admin)"] + attributes,
                input: secret
            )
            #expect(stored.status == 0, "\(stored.error)")
        }
        defer { _ = try? store.removeSecret(.refreshToken, for: space, user: "alice") }
        defer { _ = try? store.removePassword(for: space, user: "alice") }
        let key = SecretStoreKey(space: space, user: "alice")
        #expect(try store.password(for: space, user: "alice") == "older-pw")
        #expect(try store.secret(.refreshToken, for: space, user: "alice") == "older-refresh")
        #expect(try store.keys().filter { $0 == key }.count == 1)

        // A keyjard another test starts on this keyring may move them first: the end is the same.
        _ = try store.upgradeItems()

        let common = try await run("/usr/bin/secret-tool", ["search", "--all", "server", host])
        #expect(!common.output.contains("secret ="), "left under the common names: \(common.output)")
        let own = try await run("/usr/bin/secret-tool", ["search", "--all", "keyjar-server", host])
        #expect(own.output.contains("secret = older-pw") && own.output.contains("secret = older-refresh"))
        #expect(try store.password(for: space, user: "alice") == "older-pw")
        #expect(try store.secret(.refreshToken, for: space, user: "alice") == "older-refresh")
        #expect(try store.keys().filter { $0 == key }.count == 1)
        #expect(try store.removePassword(for: space, user: "alice"))
        #expect(try store.password(for: space, user: "alice") == nil)
    }

    @Test func passwordNeverAppearsInErrors() throws {
        let password = "hunter2-\(UUID().uuidString)"
        let space = ProtectionSpace(host: uniqueHost(), protocol: "https")

        let badUser = #expect(throws: SecretStoreError.self) {
            try store.storePassword(password, for: space, user: "ali\u{0}ce")
        }
        #expect(badUser?.code == .invalidInput)
        #expect(badUser.map { !$0.description.contains(password) } == true)

        let badPassword = #expect(throws: SecretStoreError.self) {
            try store.storePassword(password + "\u{0}tail", for: space, user: "alice")
        }
        #expect(badPassword?.code == .invalidInput)
        #expect(badPassword.map { !$0.description.contains(password) && !$0.description.contains("tail") } == true)
        #expect(try store.password(for: space, user: "alice") == nil)
    }

    @Test func missingSessionBusIsExplained() throws {
        let empty = FileManager.default.temporaryDirectory.appendingPathComponent("kj-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: empty, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: empty) }

        #expect(
            SessionBus.problem(in: XDGDirectories(environment: ["DBUS_SESSION_BUS_ADDRESS": "unix:path=/x"])) == nil
        )
        let noVariables = try #require(SessionBus.problem(in: XDGDirectories(environment: [:])))
        #expect(noVariables.contains("DBUS_SESSION_BUS_ADDRESS"))
        let noSocket = try #require(
            SessionBus.problem(in: XDGDirectories(environment: ["XDG_RUNTIME_DIR": empty.path]))
        )
        #expect(noSocket.contains(empty.path + "/bus"))

        let error = SecretStoreError(.serviceUnavailable, noSocket)
        #expect(error.description.hasPrefix("No Secret Service is running on the D-Bus session bus"))
        #expect(error.description.contains("gnome-keyring-daemon"))
        #expect(error.description.contains("--secrets file"))
        #expect(error.description.contains(noSocket))
    }

    @Test func labelNamesUserHostPortAndRealm() {
        let host = uniqueHost()
        #expect(
            LibSecretStore.label(for: ProtectionSpace(host: host, protocol: "https", realm: "r"), user: "a")
                == "Keyjar: a@\(host):443 (r)"
        )
        #expect(
            LibSecretStore.label(for: ProtectionSpace(host: "::1", port: 8080, protocol: "http"), user: "a")
                == "Keyjar: a@[::1]:8080"
        )
        #expect(
            LibSecretStore.label(for: ProtectionSpace(host: host, protocol: "", proxyType: .socks), user: "a")
                == "Keyjar: proxy a@\(host):1080"
        )
    }
}

@Suite("FileSecretStore")
struct FileSecretStoreTests {
    /// A fresh private directory, removed after `body`.
    private func withDirectory(_ body: (URL) throws -> Void) throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("kj-\(UUID().uuidString)")
        try FileManager.default.createDirectory(
            at: directory,
            withIntermediateDirectories: true,
            attributes: [.posixPermissions: 0o700]
        )
        defer { try? FileManager.default.removeItem(at: directory) }
        try body(directory)
    }

    private func mode(of url: URL) throws -> Int {
        let attributes = try FileManager.default.attributesOfItem(atPath: url.path)
        return try #require(attributes[.posixPermissions] as? Int)
    }

    @Test func sharedStoreBehaviour() throws {
        try withDirectory { directory in
            try checkCommonBehaviour(of: FileSecretStore(path: directory.appendingPathComponent("s.json").path))
        }
    }

    @Test func roundTripPersistsAcrossInstances() throws {
        try withDirectory { directory in
            let path = directory.appendingPathComponent("secrets.json").path
            let space = ProtectionSpace(host: uniqueHost(), protocol: "https", realm: "r")
            try FileSecretStore(path: path).storePassword("persisted", for: space, user: "alice")
            #expect(try FileSecretStore(path: path).password(for: space, user: "alice") == "persisted")
        }
    }

    @Test(arguments: awkwardPasswords)
    func awkwardPasswordsRoundTrip(_ awkward: AwkwardPassword) throws {
        let password = awkward.value
        try withDirectory { directory in
            let path = directory.appendingPathComponent("secrets.json").path
            let space = ProtectionSpace(host: uniqueHost(), protocol: "https")
            try FileSecretStore(path: path).storePassword(password, for: space, user: "alice")
            let found = try #require(try FileSecretStore(path: path).password(for: space, user: "alice"))
            #expect(Array(found.utf8) == Array(password.utf8))
        }
    }

    @Test func fileIsCreatedWithMode0600AndNoTemporaryFilesRemain() throws {
        try withDirectory { directory in
            let file = directory.appendingPathComponent("nested/secrets.json")
            let store = try FileSecretStore(path: file.path)
            #expect(try mode(of: file) == 0o600)
            #expect(try mode(of: file.deletingLastPathComponent()) == 0o700)

            try store.storePassword("pw", for: ProtectionSpace(host: uniqueHost(), protocol: "https"), user: "a")
            #expect(try mode(of: file) == 0o600)
            let names = try FileManager.default.contentsOfDirectory(atPath: file.deletingLastPathComponent().path)
            #expect(names == ["secrets.json"])
        }
    }

    @Test func concurrentStoresAreNotLost() throws {
        try withDirectory { directory in
            let store = try FileSecretStore(path: directory.appendingPathComponent("secrets.json").path)
            let space = ProtectionSpace(host: uniqueHost(), protocol: "https")
            DispatchQueue.concurrentPerform(iterations: 32) { index in
                _ = try? store.storePassword("pw-\(index)", for: space, user: "user-\(index)")
            }
            for index in 0..<32 {
                #expect(try store.password(for: space, user: "user-\(index)") == "pw-\(index)")
            }
        }
    }

    @Test func existingGroupReadableFileIsRefused() throws {
        try withDirectory { directory in
            let file = directory.appendingPathComponent("secrets.json")
            let space = ProtectionSpace(host: uniqueHost(), protocol: "https")
            let password = "leaky-\(UUID().uuidString)"
            try FileSecretStore(path: file.path).storePassword(password, for: space, user: "alice")
            try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: file.path)

            let error = #expect(throws: SecretStoreError.self) { try FileSecretStore(path: file.path) }
            #expect(error?.code == .insecureFile)
            let description = try #require(error?.description)
            #expect(description.contains("644"))
            #expect(description.contains("chmod 600"))
            #expect(!description.contains(password))

            // A store opened earlier notices too, and says so through health().
            try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: file.path)
            let store = try FileSecretStore(path: file.path)
            #expect(
                store.health() == .available(backend: "plain-text file \(file.path) (weaker than the Secret Service)")
            )
            try FileManager.default.setAttributes([.posixPermissions: 0o640], ofItemAtPath: file.path)
            #expect(throws: SecretStoreError.self) { try store.password(for: space, user: "alice") }
            guard case .unavailable(let reason) = store.health() else {
                Issue.record("a 0640 secrets file must make the store unavailable")
                return
            }
            #expect(reason.contains("chmod 600"))
        }
    }

    @Test func symbolicLinkIsRefused() throws {
        try withDirectory { directory in
            let target = directory.appendingPathComponent("target.json")
            _ = try FileSecretStore(path: target.path)
            let link = directory.appendingPathComponent("link.json")
            try FileManager.default.createSymbolicLink(at: link, withDestinationURL: target)

            let error = #expect(throws: SecretStoreError.self) { try FileSecretStore(path: link.path) }
            #expect(error?.code == .insecureFile)
        }
    }

    @Test(arguments: [
        #"{"format": "org.keyjar.secrets", "version": 1, "items": [{"password": "SECRET-MARK"}]}"#,
        #"{"format": "org.keyjar.secrets", "version": 1, "items": [{"server": 5, "password": "SECRET-MARK"}]}"#,
        #"{"format": "org.keyjar.secrets", "version": 1, "items": ["SECRET-MARK"#,
        #"SECRET-MARK"#,
    ])
    func corruptFileErrorsDoNotQuoteTheContent(content: String) throws {
        try withDirectory { directory in
            let file = directory.appendingPathComponent("secrets.json")
            #expect(
                FileManager.default.createFile(
                    atPath: file.path,
                    contents: Data(content.utf8),
                    attributes: [.posixPermissions: 0o600]
                )
            )
            let error = #expect(throws: SecretStoreError.self) { try FileSecretStore(path: file.path) }
            #expect(error?.code == .unreadableFile)
            let description = try #require(error?.description)
            #expect(description.contains(file.path))
            #expect(!description.contains("SECRET"))
            let underlying = error?.underlying.map { String(describing: $0) } ?? ""
            #expect(!underlying.contains("SECRET"))
        }
    }

    @Test func fileFormatIsTheDocumentedJSON() throws {
        try withDirectory { directory in
            let file = directory.appendingPathComponent("secrets.json")
            let space = ProtectionSpace(
                host: "Example.COM",
                protocol: "https",
                realm: nil,
                authenticationMethod: .httpBasic
            )
            try FileSecretStore(path: file.path).storePassword("pw", for: space, user: "alice")

            let object = try JSONSerialization.jsonObject(with: Data(contentsOf: file)) as? [String: Any]
            #expect(object?["format"] as? String == "org.keyjar.secrets")
            #expect(object?["version"] as? Int == 1)
            let items = try #require(object?["items"] as? [[String: Any]])
            #expect(items.count == 1)
            let item = try #require(items.first)
            #expect(item["server"] as? String == "example.com")
            #expect(item["port"] as? Int == 443)
            #expect(item["protocol"] as? String == "https")
            #expect(item["realm"] as? String == "")
            #expect(item["authtype"] as? String == "httpBasic")
            #expect(item["proxytype"] as? String == "none")
            #expect(item["user"] as? String == "alice")
            #expect(item["password"] as? String == "pw")
        }
    }
}
