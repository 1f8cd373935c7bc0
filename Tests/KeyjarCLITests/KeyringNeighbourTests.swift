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
}
