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
        let unknown = try GitCredentialRequest.parse("protocol=https\nhost=h\nwwwauth[]=Bearer realm=\"x\"\n")
        #expect(unknown.method == .default && unknown.realm == nil)
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

    /// Found by the git-credential fuzz target: a vertical tab ends a line (as git's own
    /// reader would not), and the refusal is the same whatever the password, even one that is
    /// part of the message ("toco" of "protocol").
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
        #expect(reasons.allSatisfy { $0 != nil })
        #expect(Set(reasons).count == 1, "\(reasons)")
    }
}
