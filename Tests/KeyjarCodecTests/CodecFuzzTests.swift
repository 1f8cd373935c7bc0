import Foundation
import KeyjarCodec
import KeyjarCore
import KeyjarTestSupport
import Testing

/// Random and mutated input to the cookie-file parsers; they must never crash, and every line
/// must be accounted for.
struct CookieFileFuzzTests {
    @Test(arguments: 0..<2)
    func cookieFilesNeverCrash(seed: UInt64) {
        var random = SplitMix64(state: seed)
        let netscape = CookieFileTests.curlJar
        let json = String(
            decoding: CookieJSONFile.serialize([
                Cookie(name: "a", value: "1", domain: "example.com", expires: testNow, creation: testNow)
            ]),
            as: UTF8.self
        )
        for _ in 0..<1_000 {
            var jar = CookieJar()
            let text = Mutation.mutate(netscape, using: &random)
            let parsed = NetscapeCookieFile.parse(text)
            let report = jar.importCookies(parsed.cookies, problems: parsed.problems, now: testNow)
            // Every non-blank, non-comment line is imported, expired, or reported.
            // Lines as bytes between LFs (a CR before the LF dropped), as cookies.txt defines them.
            let contentLines = Array(text.utf8).split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)
                .filter { line in
                    let trimmed = line.last == UInt8(ascii: "\r") ? line.dropLast() : line[...]
                    return !trimmed.allSatisfy { $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\t") }
                        && !(trimmed.first == UInt8(ascii: "#") && !trimmed.starts(with: "#HttpOnly_".utf8))
                }
            #expect(report.imported + report.expired + report.problems.count == contentLines.count)

            let jsonResult = CookieJSONFile.parse(Data(Mutation.mutate(json, using: &random).utf8))
            _ = jar.importCookies(jsonResult.cookies, problems: jsonResult.problems, now: testNow)
            _ = CookieJSONFile.parse(Data(Mutation.randomBytesString(length: 40, using: &random).utf8))
        }
    }
}

/// Events and cookies written by the codec read back equal, by the tree reader and by the reader
/// of keyjard's own layout.
struct EventJSONTests {
    @Test func eventsReadBackEqual() throws {
        var random = SplitMix64(state: 7)
        for _ in 0..<200 {
            let name = Mutation.randomBytesString(length: Int.random(in: 0..<12, using: &random), using: &random)
            let cookie = Cookie(
                name: name,
                value: "v\"\\\t\u{1}é",
                domain: "example.com",
                hostOnly: Bool.random(using: &random),
                path: "/p",
                expires: Bool.random(using: &random) ? Date(timeIntervalSince1970: 1_767_225_600.125) : nil,
                secure: true,
                httpOnly: Bool.random(using: &random),
                sameSite: SameSite.allCases.randomElement(using: &random) ?? .lax,
                creation: Date(timeIntervalSince1970: Double.random(in: 0...2e9, using: &random)),
                lastAccess: Date(timeIntervalSince1970: 1e9 + 0.1),
                partitionKey: Bool.random(using: &random)
                    ? CookiePartitionKey(scheme: "https", site: "news.example") : nil
            )
            let event = StoreEvent.cookies(changes: [
                .added(cookie), .replaced(old: cookie, new: cookie), .removed(cookie, cause: .evicted),
            ])
            let json = Array(StoreEventJSON.encode(event).utf8)
            #expect(try StoreEventJSON.decode(json) == event)
            let canonical = json.withUnsafeBufferPointer { bytes -> StoreEvent? in
                var reader = JSONReader(bytes: bytes)
                return StoreEvent(canonical: &reader)
            }
            #expect(canonical == event)
            var writer = JSONWriter()
            writer.write(cookies: [cookie, cookie])
            #expect(try JSONReader.parse(writer.bytes).map(Cookie.array(json:)) == [cookie, cookie])
        }
        let space = ProtectionSpace(host: "example.com", protocol: "https", realm: "r")
        for event in [
            StoreEvent.policy(
                policy: CookiePolicy(acceptPolicy: .never, domainRules: ["a.example": .block, "b.example": .allow])
            ),
            .credentials(changes: [CredentialChange(kind: .defaultChanged, space: space, user: "u")]),
        ] {
            #expect(try StoreEventJSON.decode(Array(StoreEventJSON.encode(event).utf8)) == event)
        }
    }

    @Test func aStoredEventThatIsNotOneSaysWhy() {
        #expect(throws: StoreEventJSONError(message: "not valid JSON")) { try StoreEventJSON.decode(Array("{".utf8)) }
        #expect(throws: StoreEventJSONError(message: "invalid value at policy.policy.acceptPolicy")) {
            try StoreEventJSON.decode(
                Array(#"{"policy":{"policy":{"acceptPolicy":"sometimes","domainRules":{}}}}"#.utf8)
            )
        }
    }
}
