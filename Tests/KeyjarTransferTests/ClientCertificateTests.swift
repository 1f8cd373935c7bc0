import Testing

@testable import KeyjarTransfer

/// A client certificate's private key never shows when the value is printed, debugged or dumped
/// (a log line or an error message that interpolates it).
@Suite("Client certificate")
struct ClientCertificateTests {
    @Test("the key shows in no description, debug description or dump")
    func keyHidden() {
        let key = "-----BEGIN PRIVATE KEY-----\nc2VjcmV0LWtleQ==\n-----END PRIVATE KEY-----\n"
        let certificate = ClientCertificate(certificatesPEM: "-----BEGIN CERTIFICATE-----\n", privateKeyPEM: key)
        var dumped = ""
        dump(certificate, to: &dumped)
        for text in ["\(certificate)", String(reflecting: certificate), dumped] {
            #expect(!text.contains("c2VjcmV0LWtleQ"), "\(text)")
            #expect(text.contains("key: <hidden>"), "\(text)")
        }
    }
}
