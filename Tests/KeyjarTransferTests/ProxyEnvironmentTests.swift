import FoundationEssentials
import Testing

@testable import KeyjarTransfer

/// The proxy libcurl takes from the environment for a URL, as a 407's protection space must
/// name it: the scheme's variable, `all_proxy` after it, `no_proxy`'s exceptions, and
/// `HTTP_PROXY` never (a CGI program's environment sets it from a request header).
@Suite("Proxy environment")
struct ProxyEnvironmentTests {
    static func proxy(_ url: String, _ environment: [String: String]) -> String? {
        ProxyEnvironment.proxy(for: URL(string: url), environment: environment)?.absoluteString
    }

    @Test("each scheme's variable, then all_proxy; a bare host:port is an http proxy")
    func byScheme() {
        let environment = [
            "http_proxy": "http://plain:3128", "HTTPS_PROXY": "secure:8443", "ALL_PROXY": "socks5://any:1080",
        ]
        #expect(Self.proxy("http://example.com/", environment) == "http://plain:3128")
        #expect(Self.proxy("https://example.com/", environment) == "http://secure:8443")
        #expect(Self.proxy("ftp://example.com/", environment) == "socks5://any:1080")
        #expect(Self.proxy("https://example.com/", [:]) == nil)
    }

    @Test("HTTP_PROXY in upper case is not read, and an empty variable is none")
    func upperCaseHTTPProxy() {
        #expect(Self.proxy("http://example.com/", ["HTTP_PROXY": "http://injected:1"]) == nil)
        #expect(
            Self.proxy("http://example.com/", ["HTTP_PROXY": "http://injected:1", "all_proxy": "http://a:2"])
                == "http://a:2"
        )
        #expect(Self.proxy("https://example.com/", ["https_proxy": "", "all_proxy": "http://a:2"]) == "http://a:2")
    }

    @Test("no_proxy: a host, its subdomains, a leading dot, a star; not a look-alike")
    func noProxy() {
        let environment = ["https_proxy": "http://p:1", "no_proxy": " internal.example , .corp.example,Other.Example"]
        #expect(Self.proxy("https://internal.example/", environment) == nil)
        #expect(Self.proxy("https://a.internal.example/", environment) == nil)
        #expect(Self.proxy("https://corp.example/", environment) == nil)
        #expect(Self.proxy("https://x.corp.example/", environment) == nil)
        #expect(Self.proxy("https://OTHER.example/", environment) == nil)
        #expect(Self.proxy("https://notinternal.example/", environment) == "http://p:1")
        #expect(Self.proxy("https://internal.example.evil/", environment) == "http://p:1")
        #expect(Self.proxy("https://x.example/", ["https_proxy": "http://p:1", "NO_PROXY": "*"]) == nil)
    }
}
