import KeyjarAuth
import KeyjarCore
import Testing

/// A helper's answer to git (git-credential(1), git 2.46), as `keyjar git-credential` writes it.
struct GitCredentialResponseTests {
    static func answer(
        _ capabilities: Set<GitCredentialCapability>,
        _ fill: (inout GitCredentialResponse) -> Void
    ) throws(GitCredentialResponse.EncodingError) -> String {
        var response = GitCredentialResponse(capabilities: capabilities)
        fill(&response)
        return try response.encoded()
    }

    /// The fields of a full answer: token, refresh token and expiry, a pre-encoded credential,
    /// and Keyjar's state.
    static func full(_ response: inout GitCredentialResponse) {
        response.username = "alice"
        response.password = "access"
        response.oauthRefreshToken = "refresh"
        response.passwordExpiryUTC = 1_999_999_999
        response.authType = "Bearer"
        response.credential = "token"
        response.ephemeral = true
        response.multistage = true
        response.state = ["keyjar:1?a=b"]
    }

    @Test func withEveryCapabilityTheyComeFirstAndEveryFieldIsWrittenInGitsOrder() throws {
        #expect(
            try Self.answer([.state, .authtype], Self.full) == """
                capability[]=authtype
                capability[]=state
                authtype=Bearer
                credential=token
                ephemeral=1
                username=alice
                password=access
                oauth_refresh_token=refresh
                password_expiry_utc=1999999999
                continue=1
                state[]=keyjar:1?a=b

                """
        )
    }

    @Test func withoutCapabilitiesOnlyTheBasicFieldsAreWritten() throws {
        #expect(
            try Self.answer([], Self.full)
                == "username=alice\npassword=access\noauth_refresh_token=refresh\npassword_expiry_utc=1999999999\n"
        )
    }

    @Test func authtypeAloneCarriesNoState() throws {
        let text = try Self.answer([.authtype], Self.full)
        #expect(text.hasPrefix("capability[]=authtype\nauthtype=Bearer\ncredential=token\nephemeral=1\n"))
        #expect(!text.contains("state") && !text.contains("continue"))
    }

    @Test func stateAloneCarriesNoAuthtype() throws {
        let text = try Self.answer([.state], Self.full)
        #expect(text.hasPrefix("capability[]=state\nusername=alice\n"))
        #expect(text.hasSuffix("continue=1\nstate[]=keyjar:1?a=b\n"))
        #expect(!text.contains("authtype=") && !text.contains("credential=") && !text.contains("ephemeral"))
    }

    /// The capabilities of the answer are those git announced (`capability[]` in the request).
    @Test func answeringARequestUsesWhatGitAnnounced() throws {
        let request = try GitCredentialRequest.parse("capability[]=state\ncapability[]=future\nprotocol=https\n")
        var response = GitCredentialResponse(answering: request)
        response.username = "u"
        response.password = "p"
        response.authType = "Bearer"
        response.credential = "t"
        response.state = ["keyjar:x"]
        #expect(try response.encoded() == "capability[]=state\nusername=u\npassword=p\nstate[]=keyjar:x\n")
    }

    /// A helper with nothing to say writes nothing, not a lone capability announcement; false
    /// booleans are not written.
    @Test func nothingToAnswerIsEmpty() throws {
        #expect(try Self.answer([.authtype, .state]) { _ in }.isEmpty)
        #expect(
            try Self.answer([.authtype, .state]) { $0.username = "u" }
                == "capability[]=authtype\ncapability[]=state\nusername=u\n"
        )
    }

    @Test func aCredentialWithoutAnAuthtypeIsAnError() throws {
        #expect(throws: GitCredentialResponse.EncodingError.self) {
            try Self.answer([.authtype]) { $0.credential = "c" }
        }
        // Without the capability the credential is not written at all.
        #expect(try Self.answer([]) { $0.credential = "c" } == "")
    }

    /// A value git cannot carry is refused, naming the field but never the value.
    @Test(arguments: ["new\nline", "carriage\rreturn", "n\0ul", "trailing\n"])
    func aValueWithALineBreakOrNULIsRefusedWithoutRepeatingIt(secret: String) {
        let fields: [(inout GitCredentialResponse) -> Void] = [
            { $0.username = secret }, { $0.password = secret }, { $0.oauthRefreshToken = secret },
            {
                $0.authType = "Bearer"
                $0.credential = secret
            }, { $0.authType = secret }, { $0.state = ["ok", secret] },
        ]
        for fill in fields {
            do {
                let text = try Self.answer([.authtype, .state], fill)
                Issue.record("written: \(text.debugDescription)")
            } catch {
                #expect(error.description.contains("line break or NUL"))
                #expect(!error.description.contains(secret))
            }
        }
    }

    @Test func aLineLongerThanGitsLimitIsRefused() throws {
        let fits = String(repeating: "x", count: GitCredentialResponse.maximumLineLength - "password=\n".utf8.count)
        #expect(try Self.answer([]) { $0.password = fits }.utf8.count == GitCredentialResponse.maximumLineLength)
        #expect(throws: GitCredentialResponse.EncodingError.self) {
            try Self.answer([]) { $0.password = fits + "x" }
        }
    }

    /// What Keyjar writes, git (here: Keyjar's reading of git's protocol) reads back the same.
    @Test func anAnswerReadsBackAsWritten() throws {
        var response = GitCredentialResponse(capabilities: [.authtype, .state])
        Self.full(&response)
        let read = try GitCredentialRequest.parse(try response.encoded())
        #expect(read.capabilities == [.authtype, .state])
        #expect(read.username == "alice" && read.password == "access" && read.oauthRefreshToken == "refresh")
        #expect(read.passwordExpiryUTC == 1_999_999_999 && read.authType == "Bearer" && read.credential == "token")
        #expect(read.ephemeral && read.multistage && read.state == ["keyjar:1?a=b"])
    }

    @Test func descriptionsAndDumpsHideEverySecret() {
        var response = GitCredentialResponse(capabilities: [.authtype, .state])
        response.username = "u"
        response.password = "pw-secret"
        response.oauthRefreshToken = "refresh-secret"
        response.authType = "Bearer"
        response.credential = "credential-secret"
        for text in [response.description, String(reflecting: response), "\(response)", dumped(response)] {
            #expect(!text.contains("secret"), "\(text)")
            #expect(text.contains("username: u") && text.contains("authtype: Bearer"), "\(text)")
        }
    }

    /// `keyjar git-credential capability` (git's `git credential capability` format).
    @Test func theCapabilityAnnouncement() {
        #expect(GitCredentialCapability.announcement == "version 0\ncapability authtype\ncapability state\n")
    }
}

/// Keyjar's `state[]` value: which stored credential answered.
struct GitCredentialStateTests {
    @Test func aSpaceAndUserRoundTripWhateverTheyHold() throws {
        let spaces = [
            ProtectionSpace(host: "example.com", protocol: "https"),
            ProtectionSpace(
                host: "::1",
                port: 8443,
                protocol: "http",
                realm: "Team & Co = 100% \"ü\"\n",
                authenticationMethod: .httpDigest
            ),
            ProtectionSpace(host: "proxy", port: 3128, protocol: "http", realm: "p", proxyType: .http),
            ProtectionSpace(host: "api.example", protocol: "https", realm: "api", authenticationMethod: .httpBearer),
            ProtectionSpace(anySchemeAndPortOf: "netrc.example"), .anyServer,
            ProtectionSpace(anySchemeAndPortOf: "netrc.example", inClearToo: true), .anyServer(inClearToo: true),
        ]
        for space in spaces {
            for user in ["alice", "a&b=c%d e\r\nf", "", "ü@x"] {
                let state = GitCredentialState(space: space, user: user)
                let encoded = state.encoded
                #expect(encoded.hasPrefix(GitCredentialState.prefix))
                #expect(encoded.utf8.allSatisfy { $0 > 0x20 && $0 < 0x7F }, "\(encoded)")
                #expect(GitCredentialState(decoding: encoded) == state)
            }
        }
        #expect(
            GitCredentialState(space: spaces[0], user: "alice").encoded
                == "keyjar:1?protocol=https&host=example.com&port=443&method=default&proxy=none&user=alice"
        )
    }

    @Test(arguments: [
        "", "keyjar:", "keyjar:2?protocol=https",
        "other:1?protocol=https&host=h&port=1&method=default&proxy=none&user=u",
        "keyjar:1?protocol=https&host=h&port=1&method=default&proxy=none",
        "keyjar:1?protocol=https&host=h&port=0&method=default&proxy=none&user=u",
        "keyjar:1?protocol=https&host=h&port=1&method=magic&proxy=none&user=u",
        "keyjar:1?protocol=https&host=h&port=1&method=default&proxy=none&user=u&user=v",
        "keyjar:1?protocol=https&host=h&port=1&method=default&proxy=none&user=u&extra=1",
        "keyjar:1?protocol=https&host=h&port=1&method=default&proxy=none&user=%zz",
        "keyjar:1?protocol=https&host=h&port=1&method=default&proxy=none&user=%FF",
        "keyjar:1?protocol=https&host=h&port=1&method=default&proxy=none&user=a b",
        "keyjar:1?protocol=https&host=h&port=1&method=default&proxy=none&user",
        "keyjar:1?protocol=%2A&host=h&port=443&method=default&proxy=none&user=u",
        "keyjar:1?protocol=%2A&host=h&port=0&method=httpBasic&proxy=none&user=u",
    ])
    func anotherHelpersOrAMalformedValueIsIgnored(value: String) {
        #expect(GitCredentialState(decoding: value) == nil)
    }
}
