import KeyjarAuth
import KeyjarCore
import KeyjarTestSupport
import Testing

/// Random and mutated helper input (the invariants of the git-credential fuzz target): parsing
/// never crashes, a refusal never depends on a secret, and what was read, written back as an
/// answer, reads back the same unless a value git cannot carry makes writing it fail.
struct GitCredentialFuzzTests {
    static let seeds = [
        "protocol=https\nhost=example.com\n\n",
        "capability[]=authtype\ncapability[]=state\nprotocol=https\nhost=[::1]:8443\nusername=alice\npassword=pw\n"
            + "password_expiry_utc=1999999999\noauth_refresh_token=r\nstate[]=keyjar:1?protocol=https&host=h&port=1"
            + "&method=default&proxy=none&user=u\n\n",
        "capability[]=authtype\nprotocol=https\nhost=h\nauthtype=Bearer\ncredential=tok\nephemeral=1\ncontinue=1\n"
            + "wwwauth[]=Bearer realm=\"api\"\nwwwauth[]=\nunknown=x\n\n",
        "url=https://bob@git.example.com:444/repo.git\r\nwwwauth[]=Digest realm=\"d\", nonce=\"n\"\r\n\r\n",
    ]
    static let alphabet = Array("=[]\n\r:?&%@/ aZ09".utf8) + [0x00, 0x0B, 0x7F, 0xC3, 0xA9, 0xFF]

    /// Each secret's value masked, lines split at line feeds; NUL bytes kept (they alone make a
    /// line invalid).
    static func masked(_ text: String) -> String {
        let secrets = ["password=", "oauth_refresh_token=", "credential="].map { Array($0.utf8) }
        let lines = text.utf8.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).map { line in
            let bytes = Array(line)
            guard let key = secrets.first(where: { bytes.starts(with: $0) }) else { return bytes }
            return key + bytes.dropFirst(key.count).map { $0 == 0 ? 0 : UInt8(ascii: "*") }
        }
        return String(decoding: Array(lines.joined(separator: [UInt8(ascii: "\n")])), as: UTF8.self)
    }

    @Test(arguments: 0..<4)
    func parsingAndAnsweringKeepTheirRules(seed: UInt64) {
        var random = SplitMix64(state: seed)
        var parsed = 0
        var written = 0
        for _ in 0..<3_000 {
            let input = Mutation.mutate(
                Self.seeds.randomElement(using: &random) ?? "",
                alphabet: Self.alphabet,
                using: &random
            )
            let request: GitCredentialRequest
            do {
                request = try GitCredentialRequest.parse(input)
            } catch {
                do {
                    _ = try GitCredentialRequest.parse(Self.masked(input))
                    Issue.record("masking the secrets made \(input.debugDescription) valid")
                } catch let maskedError {
                    #expect(maskedError.description == error.description, "\(input.debugDescription)")
                }
                continue
            }
            parsed += 1
            var response = GitCredentialResponse(answering: request)
            response.username = request.username
            response.password = request.password
            response.passwordExpiryUTC = request.passwordExpiryUTC
            response.oauthRefreshToken = request.oauthRefreshToken
            response.authType = request.authType
            response.credential = request.authType == nil ? nil : request.credential
            response.ephemeral = request.ephemeral
            response.state = request.state
            response.multistage = request.multistage
            let text: String
            do {
                text = try response.encoded()
            } catch {
                let values =
                    [request.username, request.password, request.oauthRefreshToken, request.authType]
                    .compactMap { $0 } + request.state + [request.credential].compactMap { $0 }
                #expect(values.contains { $0.contains("\r") }, "refused without a carriage return: \(error)")
                continue
            }
            written += 1
            let back: GitCredentialRequest
            do {
                back = try GitCredentialRequest.parse(text)
            } catch {
                Issue.record("an answer Keyjar wrote does not parse: \(text.debugDescription)")
                continue
            }
            let carried = request.capabilities.contains(.authtype)
            let stated = request.capabilities.contains(.state)
            #expect(text.isEmpty || back.capabilities == request.capabilities)
            #expect(back.username == request.username && back.password == request.password)
            #expect(back.passwordExpiryUTC == request.passwordExpiryUTC)
            #expect(back.oauthRefreshToken == request.oauthRefreshToken)
            #expect(back.authType == (carried ? request.authType : nil))
            #expect(back.credential == (carried && request.authType != nil ? request.credential : nil))
            #expect(back.ephemeral == (carried && request.ephemeral))
            #expect(back.state == (stated ? request.state : []))
            #expect(back.multistage == (stated && request.multistage))
            for value in request.state {
                guard let state = GitCredentialState(decoding: value) else { continue }
                #expect(GitCredentialState(decoding: state.encoded) == state)
            }
        }
        // The mutations must leave enough inputs valid for the round trip to be exercised.
        #expect(parsed > 300 && written > 300, "parsed \(parsed), written \(written)")
    }
}
