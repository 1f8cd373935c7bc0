import Foundation
import KeyjarCore
import KeyjarTestSupport
import Testing

struct HostTests {
    @Test(arguments: ["127.0.0.1", "10.0.0.1", "::1", "fe80::1", "1.2.3.4", "example.0x7f", "0x7f000001"])
    func recognisesIPAddresses(host: String) {
        #expect(Host.isIPAddress(host))
    }

    @Test(arguments: ["example.com", "localhost", "1.2.3.example", "a1", "0xg"])
    func recognisesHostNames(host: String) {
        #expect(!Host.isIPAddress(host))
    }

    @Test func domainMatching() {
        #expect(Host.domainMatches("www.example.com", "example.com"))
        #expect(Host.domainMatches("example.com", "example.com"))
        #expect(!Host.domainMatches("notexample.com", "example.com"))
        #expect(!Host.domainMatches("example.com", "www.example.com"))
        #expect(!Host.domainMatches("1.2.3.4", "2.3.4"))
        #expect(Host.domainMatches("1.2.3.4", "1.2.3.4"))
    }

    @Test func loopback() {
        for host in [
            "localhost", "app.localhost", "bücher.localhost", "127.0.0.1", "127.1.2.3", "::1", "0:0:0:0:0:0:0:1",
        ] {
            #expect(Host.isLoopback(host), "\(host)")
        }
        for host in [
            "localhost.example", "xlocalhost", "localhost2", "128.0.0.1", "127.0.0", "example.com", "127.0.0.256",
            "127.0.0.1.", "127..0.1", "127.0.0.1.5", "127.0.0.x", "127.0.0.0001", "::2", "::1:", "", "127.",
        ] {
            #expect(!Host.isLoopback(host), "\(host)")
        }
        #expect(Host.isLoopback("127.255.0.001"))
    }

    /// The one "this machine" rule: loopback literals and `localhost` in any form a URL gives
    /// them, never a DNS name that merely starts like one.
    @Test func thisMachine() {
        for host in [
            "localhost", "LOCALHOST", "app.localhost", "127.0.0.1", "127.1.2.3", "::1", "[::1]", "[::1]",
            "0:0:0:0:0:0:0:1", "::ffff:127.0.0.1", "[::FFFF:127.0.0.2]", "localhost.", "127.0.0.1.",
        ] {
            #expect(Host.isThisMachine(host), "\(host)")
        }
        for host in [
            "127.attacker.example", "127.0.0.1.nip.io", "127.0.0.1..", "localhost.example", "localhost.attacker.",
            "example.com", "128.0.0.1", "::2", "::ffff:10.0.0.1", "[::1", "127.0.0.0001", "",
        ] {
            #expect(!Host.isThisMachine(host), "\(host)")
        }
    }

    /// A refresh token goes to an https endpoint, or over http only to this machine.
    @Test func tokenEndpoints() {
        for endpoint in [
            "https://login.example/token", "http://127.0.0.1:8080/token", "http://[::1]:8080/token",
            "http://localhost/token", "HTTP://LocalHost/token", "https://127.attacker.example/token",
        ] {
            #expect(TokenRefresh.problem(withEndpoint: endpoint) == nil, "\(endpoint)")
        }
        let refused: [(String, TokenRefresh.EndpointProblem)] = [
            ("http://127.attacker.example/token", .cleartext(host: "127.attacker.example")),
            ("http://login.example/token", .cleartext(host: "login.example")),
            ("http://127.0.0.1.nip.io/token", .cleartext(host: "127.0.0.1.nip.io")),
            ("ftp://login.example/token", .notHTTP),
            ("/token", .notHTTP),
            ("https:///token", .notHTTP),
            ("https://id:secret@login.example/token", .userInfo),
        ]
        for (endpoint, problem) in refused {
            #expect(TokenRefresh.problem(withEndpoint: endpoint) == problem, "\(endpoint)")
        }
    }

    @Test func defaultPath() {
        #expect(CookiePath.defaultPath(of: "") == "/")
        #expect(CookiePath.defaultPath(of: "noslash") == "/")
        #expect(CookiePath.defaultPath(of: "/") == "/")
        #expect(CookiePath.defaultPath(of: "/file") == "/")
        #expect(CookiePath.defaultPath(of: "/dir/file") == "/dir")
        #expect(CookiePath.defaultPath(of: "/dir/sub/") == "/dir/sub")
    }

    @Test func pathMatching() {
        #expect(CookiePath.matches("/", "/"))
        #expect(CookiePath.matches("/docs/page", "/docs"))
        #expect(CookiePath.matches("/docs/", "/docs"))
        #expect(CookiePath.matches("/docs/page", "/docs/"))
        #expect(CookiePath.matches("/docs", "/docs"))
        #expect(!CookiePath.matches("/docsets", "/docs"))
        #expect(!CookiePath.matches("/doc", "/docs"))
        #expect(!CookiePath.matches("/Docs", "/docs"))
    }

    @Test func cookieURLCanonicalises() throws {
        let url = try #require(CookieURL(string: "HTTPS://WWW.Example.COM:8443"))
        #expect(url.scheme == "https" && url.host == "www.example.com" && url.port == 8443 && url.path == "/")
        let ipv6 = try #require(CookieURL(string: "http://[::1]:8080/x"))
        #expect(ipv6.host == "::1" && ipv6.isSecure)
        #expect(CookieURL(string: "mailto:someone@example.com") == nil)
        #expect(try #require(CookieURL(string: "http://127.0.0.1/")).isSecure)
        #expect(try !#require(CookieURL(string: "http://example.com/")).isSecure)
    }

    @Test func publicSuffixList() {
        let list = PublicSuffixList.system
        #expect(list.isAvailable)
        for suffix in ["com", "co.uk", "github.io"] { #expect(list.isPublicSuffix(suffix) == true) }
        #expect(list.isPublicSuffix("example.com") == false)
        #expect(list.registrableDomain(of: "a.b.example.co.uk") == "example.co.uk")
        #expect(list.registrableDomain(of: "user.github.io") == "user.github.io")
        #expect(list.registrableDomain(of: "co.uk") == nil)
        #expect(list.registrableDomain(of: "127.0.0.1") == nil)
        let unavailable = PublicSuffixList.unavailable()
        #expect(!unavailable.isAvailable)
        #expect(unavailable.isPublicSuffix("com") == nil)
        #expect(unavailable.registrableDomain(of: "www.example.com") == nil)
    }
}
