import Foundation
import KeyjarAuth
import KeyjarCore
import KeyjarTestSupport
import Testing

/// `keyjar git-credential` driven with git 2.46's credential-helper protocol directly (the git
/// here is older and cannot send the newer attributes), against a real keyjard.
@Suite(.timeLimit(hangLimit), .servicesStopCleanly)
struct GitCredentialProtocolTests {
    /// `keyjar credential show --reveal`'s password for one exact space, nil when none is stored.
    static func storedPassword(
        _ keyjar: KeyjarCLI,
        _ url: String,
        user: String,
        realm: String? = nil,
        method: String = "default"
    ) async throws -> String? {
        var arguments = [
            "credential", "show", "--url", url, "--user", user, "--method", method, "--reveal", "--force", "--json",
        ]
        if let realm { arguments += ["--realm", realm] }
        let result = try await keyjar.run(arguments)
        guard result.status == 0 else { return nil }
        let object = try JSONSerialization.jsonObject(with: Data(result.output.utf8)) as? [String: Any]
        guard object?["realm"] as? String == realm else { return nil }
        return object?["password"] as? String
    }

    @Test func theCapabilityQueryIsAnsweredInGitsFormat() async throws {
        let daemon = try await DaemonProcess()
        let keyjar = KeyjarCLI(daemon: daemon)
        #expect(
            try await keyjar.ok(["git-credential", "capability"], input: "")
                == "version 0\ncapability authtype\ncapability state\n"
        )
    }

    /// `state[]` names exactly the credential that answered, so that git's `store` and `erase`
    /// act on it, not on whichever credential of the user the bare server would pick.
    @Test func stateNamesTheCredentialThatAnsweredForTheStoreAndEraseThatFollow() async throws {
        let daemon = try await DaemonProcess()
        let keyjar = KeyjarCLI(daemon: daemon)
        let host = uniqueHost("git-state")
        let url = "https://\(host)"
        try await keyjar.ok(
            ["credential", "add", "--url", url, "--user", "alice", "--password-stdin"],
            input: "server-wide\n"
        )
        try await keyjar.ok(
            [
                "credential", "add", "--url", url, "--realm", "Git Area", "--method", "basic", "--user", "alice",
                "--password-stdin",
            ],
            input: "realm-pw\n"
        )

        // git announces state; the challenge picks the realm's credential, and the answer names it
        let challenge = "wwwauth[]=Basic realm=\"Git Area\"\n"
        let answer = try await keyjar.ok(
            ["git-credential", "get"],
            input: "capability[]=state\nprotocol=https\nhost=\(host)\n\(challenge)\n"
        )
        let expectedState = GitCredentialState(
            space: ProtectionSpace(host: host, protocol: "https", realm: "Git Area", authenticationMethod: .httpBasic),
            user: "alice"
        )
        #expect(
            answer == "capability[]=state\nusername=alice\npassword=realm-pw\nstate[]=\(expectedState.encoded)\n"
        )
        #expect(expectedState.encoded.contains("realm=Git%20Area") && !answer.contains("server-wide"))

        // Without the capability: neither the announcement nor the state
        #expect(
            try await keyjar.ok(["git-credential", "get"], input: "protocol=https\nhost=\(host)\n\(challenge)\n")
                == "username=alice\npassword=realm-pw\n"
        )

        // git's store carries no challenge (git drops it once it has an answer): the state alone
        // says the realm's credential answered, and it is the one updated.
        let state = "state[]=other-helper:x\nstate[]=\(expectedState.encoded)\n"
        try await keyjar.ok(
            ["git-credential", "store"],
            input: "capability[]=state\nprotocol=https\nhost=\(host)\nusername=alice\npassword=rotated\n\(state)\n"
        )
        #expect(try await Self.storedPassword(keyjar, url, user: "alice", realm: "Git Area", method: "basic") == "rotated")
        #expect(try await Self.storedPassword(keyjar, url, user: "alice") == "server-wide")

        // A state that names another user than git's, or another server, is not trusted
        let bobState = GitCredentialState(space: expectedState.space, user: "bob").encoded
        let elsewhere = GitCredentialState(space: ProtectionSpace(host: "elsewhere.example", protocol: "https"), user: "alice")
        for foreign in [bobState, elsewhere.encoded] {
            try await keyjar.ok(
                ["git-credential", "store"],
                input: "protocol=https\nhost=\(host)\nusername=alice\npassword=plain-store\nstate[]=\(foreign)\n\n"
            )
        }
        #expect(try await Self.storedPassword(keyjar, url, user: "alice") == "plain-store")
        #expect(try await Self.storedPassword(keyjar, url, user: "alice", realm: "Git Area", method: "basic") == "rotated")
        #expect(try await keyjar("credential", "list").lines.count == 2)

        // erase with the state removes exactly the credential that failed
        try await keyjar.ok(
            ["git-credential", "erase"],
            input: "capability[]=state\nprotocol=https\nhost=\(host)\nusername=alice\npassword=rotated\n\(state)\n"
        )
        #expect(try await Self.storedPassword(keyjar, url, user: "alice", realm: "Git Area", method: "basic") == nil)
        #expect(try await Self.storedPassword(keyjar, url, user: "alice") == "plain-store")
        #expect(try await keyjar("credential", "list").lines.count == 1)
    }

    /// Keys and capabilities git may add later are ignored; a NUL byte is not git's protocol.
    @Test func unknownKeysAreIgnoredAndANULIsAUsageError() async throws {
        let daemon = try await DaemonProcess()
        let keyjar = KeyjarCLI(daemon: daemon)
        let host = uniqueHost("git-unknown")
        let extra = "capability[]=future\nfuture_key=1\nquit=1\npath=repo.git\n"
        try await keyjar.ok(
            ["git-credential", "store"],
            input: "\(extra)protocol=https\nhost=\(host)\nusername=u\npassword=p\u{2028}q\n\n"
        )
        #expect(
            try await keyjar.ok(["git-credential", "get"], input: "\(extra)protocol=https\nhost=\(host)\n\n")
                == "username=u\npassword=p\u{2028}q\n"
        )
        let nul = try await keyjar.run(["git-credential", "get"], input: "protocol=https\nhost=\(host)\npassword=s3\0\n\n")
        #expect(nul.status == 2 && nul.error.contains("NUL") && !nul.error.contains("s3"), "\(nul.error)")
    }
}
