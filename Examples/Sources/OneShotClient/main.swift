// A tool that asks keyjard a few things and exits: no replica, no thread of its own.
// snippet: one-shot
import Foundation
import Keyjar
import KeyjarCore  // ProtectionSpace and the other model types

let keyjar = try await KeyjarClient.connect(configuration: .init(keepsReplica: false))
let site = URL(string: "https://example.com/")!
try keyjar.storeCookies(["sid=1; Secure"], for: site)
print(try keyjar.cookieHeader(for: site) ?? "")  // sid=1

let space = ProtectionSpace(host: "git.example.com", port: 443, protocol: "https", realm: nil)
try keyjar.setCredential(user: "bob", password: "hunter2", for: space, makeDefault: true)
if let record = try keyjar.credentialCandidates(for: space).answer(forUser: nil) {
    print(record.user, try keyjar.password(user: record.user, for: space) ?? "")  // bob hunter2
}
print(try keyjar.status().cookieCount)
// snippet end
