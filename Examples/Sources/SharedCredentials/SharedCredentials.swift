// Credentials every program of the user shares: passwords in the Secret Service, one rule for
// which credential answers a challenge.
// snippet: credentials
import Foundation
import FoundationNetworking  // URLCredential and URLProtectionSpace live here on Linux
import Keyjar

@main
struct SharedCredentialsExample {
    static func main() async throws {
        let storage = try await SharedCredentialStorage.connect()
        let token = "ghp_example"  // a real program asks the user, or reads it from a file
        let server = URLProtectionSpace(
            host: "git.example.com",
            port: 443,
            protocol: "https",
            realm: nil,
            authenticationMethod: NSURLAuthenticationMethodDefault
        )
        try await storage.store(URLCredential(user: "alice", password: token, persistence: .permanent), for: server)

        // Later, a 401 with `WWW-Authenticate: Digest realm="Team Area"` from that server:
        let challengeSpace = URLProtectionSpace(
            host: "git.example.com",
            port: 443,
            protocol: "https",
            realm: "Team Area",
            authenticationMethod: NSURLAuthenticationMethodHTTPDigest
        )
        print(storage.defaultCredential(for: challengeSpace)?.user ?? "none")  // alice
    }
}
// snippet end
