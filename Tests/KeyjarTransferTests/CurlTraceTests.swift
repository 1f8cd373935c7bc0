import Testing

@testable import KeyjarTransfer

/// `KEYJAR_LOADER_TRACE`'s redaction: a field that carries a credential or a session shows no
/// value, however its name is spelled or spaced; other lines pass as they are.
@Suite("Curl trace")
struct CurlTraceTests {
    @Test("secret fields are redacted in any case and with spaces or tabs before the colon")
    func redaction() {
        let block = "GET / HTTP/1.1\r\nauthorization: Basic dTpw\r\nCOOKIE \t: a=b\r\nAccept: */*\r\n"
        #expect(
            CurlTrace.redacted(block, marker: "> ")
                == "> GET / HTTP/1.1\n> authorization: [redacted]\n> COOKIE \t: [redacted]\n> Accept: */*"
        )
        #expect(CurlTrace.redacted("Set-Cookie: s=1; Path=/", marker: "< ") == "< Set-Cookie: [redacted]")
        #expect(CurlTrace.redacted("Proxy-Authorization: Basic eA==", marker: "> ").hasSuffix("[redacted]"))
        #expect(!CurlTrace.redacted("Proxy-Authorization: Basic eA==", marker: "> ").contains("eA=="))
    }
}
