import KeyjarCore
import KeyjarProtocol
import Testing

/// Messages that carry a password never show it when described, however they are printed.
struct RedactionTests {
    @Test func passwordsNeverAppearInDescriptions() {
        let secret = "hunter2-\(Int.random(in: 1000...9999))"
        let space = ProtectionSpace(
            host: "example.com",
            protocol: "https",
            realm: "r",
            authenticationMethod: .httpBasic
        )
        let request = Request.setCredential(space: space, user: "alice", password: secret, makeDefault: true)
        let reply = ServerMessage.reply(id: 7, response: .password(password: secret))
        let client = ClientMessage(id: 3, request: request)
        for text in [
            "\(request)", String(reflecting: request), "\(reply)", String(reflecting: reply), "\(client)",
            String(reflecting: client), "\(Response.password(password: secret))",
        ] {
            #expect(!text.contains(secret), "leaked in: \(text)")
            #expect(text.contains("<hidden>"), "no mark where the password was in: \(text)")
        }
        #expect("\(request)".contains("alice"))
        // Other messages still describe themselves in full.
        #expect("\(Request.listCookies(domain: "example.com"))".contains("example.com"))
        #expect("\(Response.cookieHeader(header: "a=1"))".contains("a=1"))
    }
}
