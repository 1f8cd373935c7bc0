import KeyjarCore
import Testing

/// A credential carries a password: nothing generic may write it out.
struct CredentialValueTests {
    @Test func aCredentialShowsNoPasswordAndCannotBeEncodedOrDecoded() {
        let credential = Credential(user: "alice", password: "PASSWORD-MARK", persistence: .permanent)
        #expect(!"\(credential)".contains("PASSWORD-MARK"))
        #expect(!String(reflecting: credential).contains("PASSWORD-MARK"))
        var dumped = ""
        dump(credential, to: &dumped)
        #expect(dumped.contains("alice") && !dumped.contains("PASSWORD-MARK"))
        #expect(!(Credential.self is any Encodable.Type))
        #expect(!(Credential.self is any Decodable.Type))
    }
}
