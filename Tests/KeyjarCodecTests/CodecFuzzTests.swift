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

/// The hand-written event JSON must decode to the same value as the Codable shape.
struct EventJSONTests {
    @Test func handWrittenEventJSONDecodesToTheSameEvent() throws {
        var random = SplitMix64(state: 7)
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .secondsSince1970
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
                lastAccess: Date(timeIntervalSince1970: 1e9 + 0.1)
            )
            let event = StoreEvent.cookies(changes: [
                .added(cookie), .replaced(old: cookie, new: cookie), .removed(cookie, cause: .evicted),
            ])
            let decoded = try decoder.decode(StoreEvent.self, from: Data(StoreEventJSON.encode(event).utf8))
            #expect(decoded == event)
            var writer = JSONWriter()
            writer.write(cookies: [cookie, cookie])
            let array = try decoder.decode([Cookie].self, from: Data(writer.bytes))
            #expect(array == [cookie, cookie])
        }
        let policy = StoreEvent.policy(policy: CookiePolicy(acceptPolicy: .never))
        #expect(try decoder.decode(StoreEvent.self, from: Data(StoreEventJSON.encode(policy).utf8)) == policy)
    }
}
