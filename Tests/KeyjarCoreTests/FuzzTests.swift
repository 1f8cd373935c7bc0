import Foundation
import KeyjarCore
import KeyjarTestSupport
import Testing

/// Feeds random and mutated input to every parser and decoder; they must never crash, and
/// whatever the jar stores must still satisfy the storage invariants.
struct FuzzTests {
    static let seeds: [String] = [
        "sid=42; Path=/; Domain=example.com; Secure; HttpOnly; SameSite=Lax; Max-Age=60",
        "a=b; Expires=Wed, 09 Jun 2021 10:18:14 GMT", "__Host-x=1; Secure; Path=/", "=nameless", "z=y, a=b",
        "a=\"quoted;value\"; Domain=.co.uk", "x=1; Domain=127.0.0.1",
    ]
    @Test(arguments: 0..<4)
    func setCookieNeverCrashesAndStoresOnlyValidCookies(seed: UInt64) {
        var random = SplitMix64(state: seed)
        var jar = CookieJar()
        let origins = ["https://www.example.com/a/b", "http://127.0.0.1/", "http://co.uk/", "https://x.github.io/"]
        for iteration in 0..<5_000 {
            let header =
                iteration.isMultiple(of: 5)
                ? Mutation.randomBytesString(length: Int.random(in: 0..<64, using: &random), using: &random)
                : Mutation.mutate(Self.seeds.randomElement(using: &random) ?? "", using: &random)
            let origin = origins.randomElement(using: &random) ?? origins[0]
            _ = jar.setCookie(header, context: context(origin), now: testNow)
            _ = CookieDate.parse(header)
        }
        // The properties below are about stored cookies: the mutations must store some.
        #expect(jar.allCookies.count >= 100, "only \(jar.allCookies.count) of 5,000 headers were stored")
        for cookie in jar.allCookies {
            let bytes = Array(cookie.name.utf8) + Array(cookie.value.utf8) + Array(cookie.path.utf8)
            #expect(!bytes.contains { ($0 < 0x20 && $0 != 0x09) || $0 == 0x7F })
            #expect(cookie.name.utf8.count + cookie.value.utf8.count <= 4096)
            #expect(cookie.path.hasPrefix("/"))
            #expect(cookie.hostOnly || PublicSuffixList.system.isPublicSuffix(cookie.domain) == false)
            if cookie.sameSite == .none { #expect(cookie.secure) }
        }
        for origin in origins { _ = jar.header(for: origin) }
    }
}
