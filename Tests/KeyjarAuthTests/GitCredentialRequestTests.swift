import KeyjarAuth
import KeyjarCore
import Testing

/// git's credential-helper input (gitcredentials(7)), as `keyjar git-credential` reads it.
struct GitCredentialRequestTests {
    @Test func hostsPortsAndURLsGiveTheServersSpace() throws {
        let plain = try GitCredentialRequest.parse("protocol=HTTPS\nhost=Example.com:8443\nusername=alice\n\n")
        #expect(plain.space == ProtectionSpace(host: "example.com", port: 8443, protocol: "https"))
        #expect(plain.username == "alice" && plain.namesServer)
        let v6 = try GitCredentialRequest.parse("protocol=http\nhost=[::1]:8080\n")
        #expect(v6.host == "::1" && v6.port == 8080)
        let url = try GitCredentialRequest.parse(
            "url=https://bob@git.example.com/repo.git\r\npassword=pw\r\n\r\nprotocol=ftp\n"
        )
        #expect(url.space == ProtectionSpace(host: "git.example.com", protocol: "https"))
        #expect(url.username == "bob" && url.password == "pw")
        #expect(!(try GitCredentialRequest.parse("username=x\n")).namesServer)
    }

    @Test func theStrongestChallengeGitPassesOnNamesRealmAndMethod() throws {
        let request = try GitCredentialRequest.parse(
            "protocol=https\nhost=h\nwwwauth[]=Basic realm=\"git\"\nwwwauth[]=Digest realm=\"Team, Area\", nonce=\"n\", algorithm=SHA-256\n\n"
        )
        #expect(request.method == .httpDigest)
        #expect(request.realm == "Team, Area")
        let unknown = try GitCredentialRequest.parse("protocol=https\nhost=h\nwwwauth[]=Mutual realm=\"x\"\n")
        #expect(unknown.method == .default && unknown.realm == nil)
        #expect(unknown.spaces == [ProtectionSpace(host: "h", protocol: "https")])
    }

    /// A Bearer challenge (RFC 6750) selects the token method; every challenge Keyjar can answer
    /// is a space to look up in turn, strongest first, so that a stored password still answers a
    /// server that also offers Bearer.
    @Test func aBearerChallengeSelectsTheTokenMethodAndTheOthersFollow() throws {
        let request = try GitCredentialRequest.parse(
            "protocol=https\nhost=h\nwwwauth[]=Basic realm=\"git\"\nwwwauth[]=Bearer realm=\"api\", error=\"invalid_token\"\n"
        )
        #expect(request.method == .httpBearer && request.realm == "api")
        #expect(
            request.spaces == [
                ProtectionSpace(host: "h", protocol: "https", realm: "api", authenticationMethod: .httpBearer),
                ProtectionSpace(host: "h", protocol: "https", realm: "git", authenticationMethod: .httpBasic),
            ]
        )
    }

    /// `authtype=Bearer` with a `credential` is a token (the scheme in any case); another scheme's
    /// pre-encoded value, or an empty one, is not.
    @Test func aBearerCredentialIsAToken() throws {
        #expect(try GitCredentialRequest.parse("authtype=bearer\ncredential=t0k\n").bearerToken == "t0k")
        #expect(try GitCredentialRequest.parse("authtype=Digest\ncredential=x\n").bearerToken == nil)
        #expect(try GitCredentialRequest.parse("authtype=Bearer\ncredential=\n").bearerToken == nil)
        #expect(try GitCredentialRequest.parse("credential=t0k\n").bearerToken == nil)
    }

    @Test func notTheProtocolIsAnErrorThatNeverRepeatsAPassword() {
        #expect(throws: GitCredentialRequest.ParseError.self) {
            try GitCredentialRequest.parse("protocol=https\nnonsense\n")
        }
        do {
            _ = try GitCredentialRequest.parse("url=not a url with s3cret\n")
            Issue.record("a URL without a scheme and host was accepted")
        } catch {
            #expect(!error.description.contains("s3cret"))
        }
    }

    /// Found by the git-credential fuzz target: the refusal is the same whatever the password,
    /// even one that is part of the message ("toco" of "protocol"). A NUL byte (which git cannot
    /// send) makes the input invalid, whichever line it is on.
    @Test func theRefusalIsTheSameWhateverThePassword() throws {
        func refusal(_ password: String) -> String? {
            do {
                _ = try GitCredentialRequest.parse(
                    "protocol=[.:1name=alice\npassword=\(password)\u{0B}\0\0\npassword=x\n"
                )
                return nil
            } catch {
                return error.description
            }
        }
        let reasons = ["toco", "s3cret", "protocol"].map(refusal)
        #expect(reasons.allSatisfy { $0?.contains("NUL") == true }, "\(reasons)")
        #expect(Set(reasons).count == 1, "\(reasons)")
    }

    /// Lines end at a line feed only (a carriage return before it dropped), as git reads them:
    /// a vertical tab, a form feed or U+2028 in a password is part of it.
    @Test func onlyALineFeedEndsALine() throws {
        let password = "a\u{0B}b\u{0C}c\u{85}d\u{2028}e\rf"
        let request = try GitCredentialRequest.parse(
            "protocol=https\r\nhost=h\npassword=\(password)\r\n\r\nusername=late\n"
        )
        #expect(request.password == password)
        #expect(request.host == "h" && request.username == nil)
        #expect(try GitCredentialRequest.parse("password=x\r\r\n").password == "x\r")
    }

    /// Every attribute of git-credential(1) as of git 2.46 is read.
    @Test func everyAttributeOfGit246IsRead() throws {
        let request = try GitCredentialRequest.parse(
            """
            capability[]=authtype
            capability[]=state
            protocol=https
            host=git.example.com
            path=team/repo.git
            username=alice
            password=gho_access
            password_expiry_utc=1999999999
            oauth_refresh_token=ghr_refresh
            authtype=Bearer
            credential=b64token==
            ephemeral=1
            state[]=other-helper:abc
            state[]=keyjar:1?x
            continue=true
            wwwauth[]=Basic realm="git"


            """
        )
        #expect(request.capabilities == [.authtype, .state])
        #expect(request.path == "team/repo.git")
        #expect(request.username == "alice" && request.password == "gho_access")
        #expect(request.passwordExpiryUTC == 1_999_999_999)
        #expect(request.oauthRefreshToken == "ghr_refresh")
        #expect(request.authType == "Bearer" && request.credential == "b64token==")
        #expect(request.ephemeral && request.multistage)
        #expect(request.state == ["other-helper:abc", "keyjar:1?x"])
        #expect(request.challenges == ["Basic realm=\"git\""] && request.method == .httpBasic && request.realm == "git")

        let plain = try GitCredentialRequest.parse("protocol=https\nhost=h\n")
        #expect(plain.capabilities.isEmpty && plain.passwordExpiryUTC == nil && plain.oauthRefreshToken == nil)
        #expect(plain.authType == nil && plain.credential == nil && !plain.ephemeral && !plain.multistage)
        #expect(plain.state.isEmpty && plain.path == nil)
    }

    /// Keys git may add later, and capabilities Keyjar does not know, are ignored, never an error.
    @Test func unknownKeysAndCapabilitiesAreIgnored() throws {
        let request = try GitCredentialRequest.parse(
            "capability[]=future\ncapability[]=state\nprotocol=https\nfuture_key=x=y\nquit=1\nhost=h\n=\n\n"
        )
        #expect(request.capabilities == [.state])
        #expect(request.space == ProtectionSpace(host: "h", protocol: "https"))
    }

    /// "An empty multi-valued attribute (`key[]=`) acts to clear any previous entries."
    @Test func anEmptyMultiValuedAttributeClearsTheList() throws {
        let request = try GitCredentialRequest.parse(
            """
            capability[]=authtype
            capability[]=
            capability[]=state
            state[]=a:1
            state[]=
            state[]=b:2
            wwwauth[]=Basic realm="old"
            wwwauth[]=
            protocol=https
            host=h

            """
        )
        #expect(request.capabilities == [.state])
        #expect(request.state == ["b:2"])
        #expect(request.challenges.isEmpty && request.method == .default && request.realm == nil)
    }

    /// `password_expiry_utc` as git reads it (`parse_timestamp`): the leading digits; none, 0 or
    /// a number too large means no expiry. The last value of a key wins.
    @Test(arguments: [
        ("1700000000", Int64?.some(1_700_000_000)), ("1700000000abc", 1_700_000_000), (" 42", 42), ("0", nil),
        ("", nil), ("soon", nil), ("-5", nil), ("99999999999999999999999", nil),
    ])
    func expiryIsReadAsGitReadsIt(value: String, expected: Int64?) throws {
        let request = try GitCredentialRequest.parse("password_expiry_utc=1\npassword_expiry_utc=\(value)\n")
        #expect(request.passwordExpiryUTC == expected)
    }

    /// `ephemeral` and `continue` are git's booleans; a value git would refuse turns nothing on.
    @Test(arguments: [
        ("1", true), ("true", true), ("YES", true), ("on", true), ("2", true), ("0", false), ("false", false),
        ("no", false), ("off", false), ("", false), ("maybe", false),
    ])
    func booleansAreGits(value: String, expected: Bool) throws {
        let request = try GitCredentialRequest.parse("ephemeral=\(value)\ncontinue=\(value)\n")
        #expect(request.ephemeral == expected && request.multistage == expected)
    }

    /// Only Keyjar's own `state[]` value names a credential; other helpers' are ignored.
    @Test func keyjarsStateIsFoundAmongOtherHelpers() throws {
        let state = GitCredentialState(space: ProtectionSpace(host: "h", protocol: "https", realm: "R"), user: "u")
        let request = try GitCredentialRequest.parse(
            "state[]=cache:keyjar:1?x\nstate[]=keyjar:1?broken\nstate[]=\(state.encoded)\n"
        )
        #expect(request.keyjarState == state)
        #expect(try GitCredentialRequest.parse("state[]=other:1\n").keyjarState == nil)
    }

    @Test func descriptionsAndDumpsHideEverySecret() throws {
        let request = try GitCredentialRequest.parse(
            "capability[]=authtype\nprotocol=https\nhost=h\nusername=u\npassword=pw-secret\n"
                + "oauth_refresh_token=refresh-secret\nauthtype=Bearer\ncredential=credential-secret\n"
        )
        for text in [request.description, String(reflecting: request), "\(request)", dumped(request)] {
            #expect(!text.contains("secret"), "\(text)")
            #expect(text.contains("username: u"), "\(text)")
        }
    }
}
