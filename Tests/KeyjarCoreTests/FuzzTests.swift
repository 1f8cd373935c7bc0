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
    static let alphabet: [UInt8] = Array("=;, \t\"./-_:aZ0\u{1}\r\n\u{7F}\u{0}".utf8) + [0xC3, 0xA9, 0xFF]

    static func mutate(_ input: String, using random: inout SplitMix64) -> String {
        var bytes = Array(input.utf8)
        for _ in 0..<Int.random(in: 1...6, using: &random) {
            let position = bytes.isEmpty ? 0 : Int.random(in: 0..<bytes.count, using: &random)
            switch Int.random(in: 0..<4, using: &random) {
            case 0 where !bytes.isEmpty: bytes.remove(at: position)
            case 1: bytes.insert(alphabet.randomElement(using: &random) ?? 0, at: position)
            case 2 where !bytes.isEmpty: bytes[position] = UInt8.random(in: 0...255, using: &random)
            default: bytes.insert(contentsOf: bytes.prefix(8), at: position)
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    static func randomBytesString(length: Int, using random: inout SplitMix64) -> String {
        String(decoding: (0..<length).map { _ in UInt8.random(in: 0...255, using: &random) }, as: UTF8.self)
    }

    @Test(arguments: 0..<4)
    func setCookieNeverCrashesAndStoresOnlyValidCookies(seed: UInt64) {
        var random = SplitMix64(state: seed)
        var jar = CookieJar()
        let origins = ["https://www.example.com/a/b", "http://127.0.0.1/", "http://co.uk/", "https://x.github.io/"]
        for iteration in 0..<5_000 {
            let header = iteration.isMultiple(of: 5)
                ? Self.randomBytesString(length: Int.random(in: 0..<64, using: &random), using: &random)
                : Self.mutate(Self.seeds.randomElement(using: &random) ?? "", using: &random)
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

    @Test(arguments: 0..<2)
    func cookieFilesNeverCrash(seed: UInt64) {
        var random = SplitMix64(state: seed)
        let netscape = CookieFileTests.curlJar
        let json = String(decoding: CookieJSONFile.serialize([
            Cookie(name: "a", value: "1", domain: "example.com", expires: testNow, creation: testNow)
        ]), as: UTF8.self)
        for _ in 0..<1_000 {
            var jar = CookieJar()
            let text = Self.mutate(netscape, using: &random)
            let parsed = NetscapeCookieFile.parse(text)
            let report = jar.importCookies(parsed.cookies, problems: parsed.problems, now: testNow)
            // Every non-blank, non-comment line is imported, expired, or reported.
            // Lines as bytes between LFs (a CR before the LF dropped), as cookies.txt defines them.
            let contentLines = Array(text.utf8).split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).filter { line in
                let trimmed = line.last == UInt8(ascii: "\r") ? line.dropLast() : line[...]
                return !trimmed.allSatisfy { $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\t") }
                    && !(trimmed.first == UInt8(ascii: "#") && !trimmed.starts(with: "#HttpOnly_".utf8))
            }
            #expect(report.imported + report.expired + report.problems.count == contentLines.count)

            let jsonResult = CookieJSONFile.parse(Data(Self.mutate(json, using: &random).utf8))
            _ = jar.importCookies(jsonResult.cookies, problems: jsonResult.problems, now: testNow)
            _ = CookieJSONFile.parse(Data(Self.randomBytesString(length: 40, using: &random).utf8))
        }
    }
}

/// The hand-written event JSON must decode to the same value as the Codable shape.
struct EventJSONTests {
    @Test func handWrittenEventJSONDecodesToTheSameEvent() throws {
        var random = SplitMix64(state: 7)
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .secondsSince1970
        for _ in 0..<200 {
            let name = FuzzTests.randomBytesString(length: Int.random(in: 0..<12, using: &random), using: &random)
            let cookie = Cookie(
                name: name, value: "v\"\\\t\u{1}é", domain: "example.com", hostOnly: Bool.random(using: &random),
                path: "/p", expires: Bool.random(using: &random) ? Date(timeIntervalSince1970: 1_767_225_600.125) : nil,
                secure: true, httpOnly: Bool.random(using: &random), sameSite: SameSite.allCases.randomElement(using: &random) ?? .lax,
                creation: Date(timeIntervalSince1970: Double.random(in: 0...2e9, using: &random)),
                lastAccess: Date(timeIntervalSince1970: 1e9 + 0.1))
            let event = StoreEvent.cookies(changes: [
                .added(cookie), .replaced(old: cookie, new: cookie), .removed(cookie, cause: .evicted),
            ])
            let decoded = try decoder.decode(StoreEvent.self, from: Data(event.encodedJSON().utf8))
            #expect(decoded == event)
            var writer = JSONWriter()
            writer.write(cookies: [cookie, cookie])
            let array = try decoder.decode([Cookie].self, from: Data(writer.bytes))
            #expect(array == [cookie, cookie])
        }
        let policy = StoreEvent.policy(policy: CookiePolicy(acceptPolicy: .never))
        #expect(try decoder.decode(StoreEvent.self, from: Data(policy.encodedJSON().utf8)) == policy)
    }
}
