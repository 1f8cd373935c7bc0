import KeyjarCodec
import KeyjarCore
import Testing

/// Docker's credential-helper messages, as docker-credential-helpers' `credentials.go` reads
/// and writes them.
struct DockerCredentialFormatTests {
    @Test func storeInputIsReadWithDockersChecks() throws {
        let credential = try DockerCredentialFormat.readCredential(
            Array(#"{"ServerURL":"registry.example:5000","Username":"alice","Secret":"p\"w"}"#.utf8)
        )
        #expect(credential == .init(serverURL: "registry.example:5000", username: "alice", secret: "p\"w"))
        #expect(!"\(credential)".contains("p\"w"), "a description never carries the secret")
        let refusals: [(String, String)] = [
            ("not json", "not a JSON object"),
            (#"{"ServerURL":"x","Username":"a"}"#, "Secret"),
            (#"{"ServerURL":" ","Username":"a","Secret":"s"}"#, "no credentials server URL"),
            (#"{"ServerURL":"x","Username":"","Secret":"s"}"#, "no credentials username"),
            (#"{"ServerURL":"x","ServerURL":"y","Username":"a","Secret":"s"}"#, "not a JSON object"),
        ]
        for (input, message) in refusals {
            #expect {
                try DockerCredentialFormat.readCredential(Array(input.utf8))
            } throws: { error in
                "\(error)".contains(message) && !"\(error)".contains("\"s\"")
            }
        }
        #expect(
            try DockerCredentialFormat.readServerURL(Array(" https://index.docker.io/v1/\n".utf8))
                == "https://index.docker.io/v1/"
        )
        #expect(throws: DockerCredentialFormat.ReadError.self) {
            try DockerCredentialFormat.readServerURL(Array("\n".utf8))
        }
    }

    @Test func outputIsDockersJSON() {
        let answer = DockerCredentialFormat.encode(.init(serverURL: "r.example", username: "a", secret: "s\u{1}"))
        #expect(
            String(decoding: answer, as: UTF8.self) == #"{"ServerURL":"r.example","Username":"a","Secret":"s\u0001"}"#
                + "\n"
        )
        let list = DockerCredentialFormat.encode(list: [
            ("https://index.docker.io/v1/", "bob"), ("r.example:5000", "a"),
        ])
        #expect(
            String(decoding: list, as: UTF8.self)
                == #"{"https:\/\/index.docker.io\/v1\/":"bob","r.example:5000":"a"}"# + "\n"
                || String(decoding: list, as: UTF8.self)
                    == #"{"https://index.docker.io/v1/":"bob","r.example:5000":"a"}"# + "\n"
        )
    }

    /// Docker's names for registries and Keyjar's spaces, both ways.
    @Test func serverURLsNameTheRegistrysOrigin() throws {
        let cases: [(String, String, Int, String, String)] = [
            ("https://index.docker.io/v1/", "index.docker.io", 443, "https", "https://index.docker.io/v1/"),
            ("registry.example:5000", "registry.example", 5000, "https", "registry.example:5000"),
            ("Registry.Example", "registry.example", 443, "https", "registry.example"),
            ("https://ghcr.io", "ghcr.io", 443, "https", "ghcr.io"),
            ("http://localhost:5000/", "localhost", 5000, "http", "http://localhost:5000"),
            ("[::1]:5000", "::1", 5000, "https", "[::1]:5000"),
        ]
        for (serverURL, host, port, scheme, listed) in cases {
            let space = try #require(DockerCredentialFormat.space(forServerURL: serverURL), "\(serverURL)")
            #expect(space.host == host && space.port == port && space.protocol == scheme, "\(serverURL): \(space)")
            #expect(space.realm == nil && space.authenticationMethod == .default)
            #expect(DockerCredentialFormat.serverURL(for: space) == listed)
        }
        for refused in ["", "ftp://files.example", "https://user@registry.example", "https://"] {
            #expect(DockerCredentialFormat.space(forServerURL: refused) == nil, "\(refused)")
        }
    }

    /// `list` names the registries Docker's config.json records a login to.
    @Test func loginsAreReadFromDockersConfiguration() {
        let config =
            #"{"auths": {"https://index.docker.io/v1/": {}, "r.example:5000": {"auth": ""}}, "credsStore": "keyjar"}"#
        #expect(
            DockerCredentialFormat.loggedInRegistries(config: Array(config.utf8))
                == ["https://index.docker.io/v1/", "r.example:5000"]
        )
        for nothing in ["", "[]", #"{"credsStore": "keyjar"}"#, #"{"auths": []}"#, "{\"auths\": {"] {
            #expect(DockerCredentialFormat.loggedInRegistries(config: Array(nothing.utf8)).isEmpty, "\(nothing)")
        }
    }
}
