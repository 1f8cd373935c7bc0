import Foundation
import KeyjarCore
import KeyjarTestSupport
import Testing

/// The cookie engine's example in docs/cookie-engine.md (`Examples/Sources/CookieEngine`, "The
/// model"), kept honest: if this breaks, so does that page.
struct ReadmeExampleTests {
    @Test func readmeExampleBehavesAsDocumented() throws {
        var jar = CookieJar()
        let loginURL = try #require(URL(string: "https://www.example.com/login"))
        let response = try #require(CookieContext(url: loginURL))
        let stored = jar.setCookie(
            "sid=42; Domain=example.com; Path=/; Secure; HttpOnly; SameSite=Lax",
            context: response
        )
        guard case .success(let changes) = stored, case .added(let cookie)? = changes.first else {
            Issue.record("expected an added cookie, got \(stored)")
            return
        }
        #expect(cookie.description.hasPrefix("sid=42; domain=.example.com"))
        #expect(jar.setCookie("x=1; Domain=com", context: response) == .failure(.publicSuffix(domain: "com")))

        let apiURL = try #require(URL(string: "https://api.example.com/v1"))
        let request = try #require(CookieContext(url: apiURL, mainDocumentURL: URL(string: "https://www.example.com/")))
        #expect(jar.cookieHeader(for: request) == "sid=42")
    }
}
