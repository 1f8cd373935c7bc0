import FoundationEssentials
import Testing

@testable import KeyjarTransfer

/// What a redirect makes of the next request, without a server: each status's method and
/// body, what counts as one origin, and which responses redirect at all.
@Suite("Redirect hop")
struct RedirectHopTests {
    @Test(
        "the next request's method and body by status",
        arguments: [
            (303, "POST", "GET", true), (303, "PUT", "GET", true), (303, "HEAD", "HEAD", false),
            (303, "get", "GET", true), (301, "POST", "GET", true), (302, "post", "GET", true),
            (301, "PUT", "PUT", false), (302, "DELETE", "DELETE", false), (307, "POST", "POST", false),
            (308, "PUT", "PUT", false), (301, "GET", "GET", false),
        ]
    )
    func method(status: Int, sent: String, next: String, dropsBody: Bool) {
        let hop = RedirectHop.method(after: status, sentWith: sent)
        #expect(hop.method == next && hop.dropsBody == dropsBody)
    }

    @Test("one origin: scheme, host and port, the default port filled in, case aside")
    func origins() throws {
        func url(_ text: String) throws -> URL { try #require(URL(string: text)) }
        #expect(RedirectHop.sameOrigin(try url("https://Example.COM/a"), try url("https://example.com:443/b?c")))
        #expect(RedirectHop.sameOrigin(try url("http://example.com/"), try url("HTTP://example.com:80/")))
        #expect(!RedirectHop.sameOrigin(try url("https://example.com/"), try url("http://example.com/")))
        #expect(!RedirectHop.sameOrigin(try url("https://example.com/"), try url("https://example.com:8443/")))
        #expect(!RedirectHop.sameOrigin(try url("https://example.com/"), try url("https://example.com.evil/")))
        #expect(!RedirectHop.sameOrigin(try url("https://a.example.com/"), try url("https://example.com/")))
        #expect(RedirectHop.origin(try url("https://Example.com/x")) == "https://example.com:443")
    }

    @Test("a redirect is one of the five statuses with a Location")
    func isRedirect() {
        func head(_ status: Int, location: String?) -> ResponseHead {
            ResponseHead(
                statusCode: status,
                httpVersion: "HTTP/1.1",
                fields: location.map { [(name: "location", value: $0)] } ?? []
            )
        }
        for status in [301, 302, 303, 307, 308] { #expect(RedirectHop.isRedirect(head(status, location: "/next"))) }
        #expect(!RedirectHop.isRedirect(head(302, location: nil)))
        #expect(!RedirectHop.isRedirect(head(300, location: "/next")))
        #expect(!RedirectHop.isRedirect(head(304, location: "/next")))
    }
}
