import Foundation
import KeyjarTestSupport
import Testing

/// Keyjar's keyring items against other programs writing to the same keyring, through the real
/// `keyjar`, keyjard and gnome-keyring.
@Suite(.timeLimit(hangLimit), .servicesStopCleanly)
struct KeyringNeighbourTests {
    private static let gitRequest = "protocol=https\nhost=git.example.com\n\n"

    /// gnome-keyring replaces every item whose attributes include all of a new item's: a
    /// schemaless `secret-tool store server H user U` replaced the password Keyjar stored for
    /// that server and user while it used the common attribute names.
    @Test func aNeighboursSecretToolStoreLeavesKeyjarsPasswordAnsweringGit() async throws {
        let secrets = try await PrivateSecretService()
        let daemon = try await DaemonProcess(environment: secrets.environment)
        let keyjar = KeyjarCLI(daemon: daemon)
        try await keyjar.ok(
            ["credential", "add", "--url", "https://git.example.com", "--user", "alice", "--password-stdin"],
            input: "keyjars-pw"
        )
        let neighbour = try await secrets.secretTool(
            ["store", "--label=x", "server", "git.example.com", "user", "alice"],
            input: "neighbours-pw"
        )
        #expect(neighbour.status == 0, "\(neighbour.error)")

        let answer = try await keyjar.run(["git-credential", "get"], input: Self.gitRequest)
        #expect(answer.status == 0 && answer.output.contains("password=keyjars-pw\n"), "\(answer.error)")
        #expect(try await keyjar.ok("status").contains("credentials and passwords: every credential has its password"))
        let theirs = try await secrets.secretTool(["lookup", "server", "git.example.com", "user", "alice"])
        #expect(theirs.output == "neighbours-pw")
    }

    /// A password an older Keyjar stored under the common names answers at once after an
    /// upgrade, and keyjard moves it to Keyjar's own names before any credential write.
    @Test func anItemUnderTheCommonNamesIsMovedWithoutAMomentMissing() async throws {
        let secrets = try await PrivateSecretService()
        let daemon = try await DaemonProcess(environment: secrets.environment)
        let keyjar = KeyjarCLI(daemon: daemon)
        try await keyjar.ok(
            ["credential", "add", "--url", "https://git.example.com", "--user", "alice", "--password-stdin"],
            input: "older-pw"
        )
        #expect(await daemon.stop() == 0)
        // The item as an older Keyjar stored it.
        let own = PrivateSecretService.keyjarAttributes(
            host: "git.example.com",
            port: 443,
            protocol: "https",
            user: "alice"
        )
        let shared = PrivateSecretService.keyjarAttributes(
            host: "git.example.com",
            port: 443,
            protocol: "https",
            user: "alice",
            sharedNames: true
        )
        #expect(try await secrets.secretTool(["clear"] + own).status == 0)
        let stored = try await secrets.secretTool(
            ["store", "--label=Keyjar: alice@git.example.com:443"] + shared,
            input: "older-pw"
        )
        #expect(stored.status == 0, "\(stored.error)")

        let restarted = try await daemon.restarted()
        let upgraded = KeyjarCLI(daemon: restarted)
        let answer = try await upgraded.run(["git-credential", "get"], input: Self.gitRequest)
        #expect(answer.status == 0 && answer.output.contains("password=older-pw\n"), "\(answer.error)")
        // A credential write waits for the move (both in keyjard's credential lane).
        try await upgraded.ok(
            ["credential", "add", "--url", "https://git.example.com", "--user", "bob", "--password-stdin"],
            input: "bobs-pw"
        )
        #expect(try await secrets.secretTool(["lookup"] + shared).output.isEmpty, "left under the common names")
        #expect(try await secrets.secretTool(["lookup"] + own).output == "older-pw")
        #expect(restarted.log.contains("moved keyring items to Keyjar's own attribute names"))
        #expect(try await upgraded.ok("status").contains("every credential has its password"))
        #expect(!restarted.log.contains("older-pw"))
    }

    /// Another program deleting a password Keyjar stored: keyjard hears it from the Secret
    /// Service (no status request needed), logs it once, and `keyjar status` names the
    /// credential and since when, across a restart, until the password is stored again.
    @Test func aPasswordAnotherProgramDeletesIsNoticedLoggedOnceAndShownWithItsTime() async throws {
        let secrets = try await PrivateSecretService()
        let daemon = try await DaemonProcess(environment: secrets.environment)
        let keyjar = KeyjarCLI(daemon: daemon)
        for user in ["alice", "bob"] {
            try await keyjar.ok(
                ["credential", "add", "--url", "https://gone.example", "--user", user, "--password-stdin"],
                input: "pw-\(user)"
            )
        }
        let before = Date().timeIntervalSince1970
        let bob = PrivateSecretService.keyjarAttributes(host: "gone.example", port: 443, protocol: "https", user: "bob")
        #expect(try await secrets.secretTool(["clear"] + bob).status == 0)

        let notice = "a credential's password is gone from the secret store"
        try await waitUntil("keyjard logging the deleted password") { daemon.log.contains(notice) }
        let line = try #require(daemon.log.split(separator: "\n").first { $0.contains(notice) })
        #expect(line.contains("host=gone.example") && line.contains("user=bob"), "\(line)")

        let json = try #require(try await keyjar.json("status", "--json") as? [String: Any])
        let mismatches = try #require(json["credentialMismatches"] as? [[String: Any]])
        #expect(mismatches.map { $0["user"] as? String } == ["bob"])
        let noticed = try #require(mismatches.first?["noticed"] as? Double)
        #expect(noticed >= before && noticed <= Date().timeIntervalSince1970)
        let since = Date(timeIntervalSince1970: noticed).ISO8601Format()
        let bobsLine =
            "  credential without its password (gone since \(since)): https://gone.example:443 method default user bob\n"
        #expect(try await keyjar.ok("status").contains(bobsLine))
        #expect(daemon.log.components(separatedBy: notice).count == 2, "logged more than once:\n\(daemon.log)")

        // Recorded with the credential: the next keyjard shows the same time and does not log it again.
        #expect(await daemon.stop() == 0)
        let next = try await daemon.restarted()
        let again = KeyjarCLI(daemon: next)
        #expect(try await again.ok("status").contains(bobsLine))
        #expect(!next.log.contains(notice), "\(next.log)")

        // Storing the password again mends the credential and clears the record.
        try await again.ok(
            ["credential", "add", "--url", "https://gone.example", "--user", "bob", "--password-stdin"],
            input: "pw-bob"
        )
        #expect(try await again.ok("status").contains("credentials and passwords: every credential has its password"))
        #expect(try await secrets.secretTool(["clear"] + bob).status == 0)
        try await waitUntil("keyjard logging the password deleted again") { next.log.contains(notice) }
        let later = try #require(try await again.json("status", "--json") as? [String: Any])
        let renewed = try #require((later["credentialMismatches"] as? [[String: Any]])?.first?["noticed"] as? Double)
        #expect(renewed > noticed)
    }
}
