// The cookie engine alone: RFC 6265bis as pure values, no service.
// snippet: engine
import Foundation
import KeyjarCore

var jar = CookieJar()  // Chromium's limits, the system public suffix list, policy .always
let response = CookieContext(url: URL(string: "https://www.example.com/login")!)!
switch jar.setCookie("sid=42; Domain=example.com; Path=/; Secure; HttpOnly; SameSite=Lax", context: response) {
case .success(let changes): print(changes)  // [added sid=42; domain=.example.com …]
case .failure(let rejection): print(rejection)  // e.g. "Domain=com is a public suffix"
}

// The Cookie header for a request, with the site-for-cookies of its main document:
let request = CookieContext(
    url: URL(string: "https://api.example.com/v1")!,
    mainDocumentURL: URL(string: "https://www.example.com/")!
)!
print(jar.cookieHeader(for: request) ?? "")  // sid=42

// Policies: Apple's three, libsoup's two, and per-domain rules that outrank them.
jar.policy = CookiePolicy(
    acceptPolicy: .onlyFromMainDocumentDomain,
    domainRules: ["ads.example": .block, "news.example": .sessionOnly]
)
// snippet end

// snippet: rejection
// A rejected cookie says why:
if case .failure(let rejection) = jar.setCookie("a=1; Domain=com", context: response) {
    print(rejection)  // the Domain attribute is a public suffix
}
// snippet end

// snippet: choice
// Which stored credential answers a challenge: the same rule keyjard, the library, the loader
// and `keyjar` apply. A credential stored for the server answers a Digest challenge's realm:
let stored = [
    CredentialRecord(
        space: ProtectionSpace(host: "git.example.com", protocol: "https"),
        user: "alice",
        persistence: .permanent,
        isDefault: true,
        created: Date().timeIntervalSince1970
    )
]
let challengeSpace = ProtectionSpace(
    host: "git.example.com",
    protocol: "https",
    realm: "Team Area",
    authenticationMethod: .httpDigest
)
let choice = CredentialChoice(for: challengeSpace, among: stored)
print(choice.preferred?.user ?? "none")  // alice
// snippet end
