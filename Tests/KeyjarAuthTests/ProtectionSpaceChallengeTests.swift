import Foundation
import KeyjarAuth
import KeyjarCore
import Testing

struct ProtectionSpaceChallengeTests {
    func challenge(_ field: String) throws -> AuthenticationChallenge {
        try #require(ChallengeParser.parse([field]).challenges.first)
    }

    @Test func serverSpaceFromTheRequestURL() throws {
        let url = try #require(URL(string: "https://WWW.Example.com/private/index.html"))
        let space = try #require(
            ProtectionSpace(challenge: try challenge(#"Basic realm="Staff only""#), requestURL: url)
        )
        #expect(
            space
                == ProtectionSpace(
                    host: "www.example.com",
                    port: 443,
                    protocol: "https",
                    realm: "Staff only",
                    authenticationMethod: .httpBasic
                )
        )
        #expect(!space.isProxy)

        let ipv6 = try #require(URL(string: "http://[::1]:8080/"))
        let digest = try #require(
            ProtectionSpace(challenge: try challenge(#"digest realm="r", nonce="n""#), requestURL: ipv6)
        )
        #expect(digest.host == "::1" && digest.port == 8080 && digest.protocol == "http")
        #expect(digest.authenticationMethod == .httpDigest && digest.realm == "r")

        let ntlm = try #require(ProtectionSpace(challenge: try challenge("NTLM"), requestURL: url))
        #expect(ntlm.authenticationMethod == .ntlm && ntlm.realm == nil)
        let negotiate = try #require(ProtectionSpace(challenge: try challenge("Negotiate abc="), requestURL: url))
        #expect(negotiate.authenticationMethod == .negotiate)
        let bearer = try #require(ProtectionSpace(challenge: try challenge("Bearer realm=api"), requestURL: url))
        #expect(bearer.authenticationMethod == .httpBearer && bearer.realm == "api")
        let other = try #require(ProtectionSpace(challenge: try challenge("Newauth realm=api"), requestURL: url))
        #expect(other.authenticationMethod == .default)

        #expect(
            ProtectionSpace(challenge: try challenge("Basic"), requestURL: try #require(URL(string: "/relative")))
                == nil
        )
    }

    @Test func proxySpaceFromTheProxy() throws {
        let space = ProtectionSpace(
            challenge: try challenge(#"Basic realm="proxy""#),
            proxyHost: "Proxy.LAN",
            proxyPort: nil,
            proxyType: .http
        )
        #expect(space.isProxy && space.proxyType == .http)
        #expect(space.host == "proxy.lan" && space.port == 8080 && space.protocol == "http")
        #expect(space.realm == "proxy" && space.authenticationMethod == .httpBasic)
        let https = ProtectionSpace(
            challenge: try challenge("NTLM"),
            proxyHost: "p",
            proxyPort: 3128,
            proxyType: .https
        )
        #expect(https.port == 3128 && https.proxyType == .https && https.authenticationMethod == .ntlm)
        let untyped = ProtectionSpace(
            challenge: try challenge("Basic"),
            proxyHost: "p",
            proxyPort: nil,
            proxyType: .none
        )
        #expect(untyped.isProxy)
    }
}
