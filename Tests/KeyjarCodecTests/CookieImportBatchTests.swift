import Foundation
import KeyjarCodec
import KeyjarCore
import KeyjarTestSupport
import Testing

/// Large imports: the net change of a batch, limits enforced once, and files cut into batches
/// that parse on their own.
struct CookieImportBatchTests {
    private func cookie(_ name: String, _ site: String, value: String = "v") -> Cookie {
        Cookie(
            name: name,
            value: value,
            domain: site,
            hostOnly: true,
            path: "/",
            expires: testNow.addingTimeInterval(86_400),
            creation: testNow,
            lastAccess: testNow
        )
    }

    // MARK: Net change

    @Test func aRunOfChangesComesToItsNetChange() {
        let a = cookie("a", "a.example")
        let a2 = cookie("a", "a.example", value: "2")
        let a3 = cookie("a", "a.example", value: "3")
        let b = cookie("b", "b.example")
        let c = cookie("c", "c.example")
        let d = cookie("d", "d.example")
        let changes: [CookieChange] = [
            .added(b), .removed(b, cause: .evicted),  // in and out again: nothing
            .replaced(old: a, new: a2), .replaced(old: a2, new: a3),  // twice: once, from the original
            .added(c), .replaced(old: c, new: cookie("c", "c.example", value: "x")),  // added as it ends
            .replaced(old: d, new: cookie("d", "d.example", value: "y")),
            .removed(cookie("d", "d.example", value: "y"), cause: .evicted),
        ]
        #expect(
            CookieChange.net(changes) == [
                .replaced(old: a, new: a3), .added(cookie("c", "c.example", value: "x")), .removed(d, cause: .evicted),
            ]
        )
        // Replaced back to what it was: no change.
        #expect(CookieChange.net([.replaced(old: a, new: a2), .replaced(old: a2, new: a)]).isEmpty)
        #expect(CookieChange.net([]).isEmpty)
    }

    @Test func aLargeImportIsLimitedOnceAndCarriesOnlyWhatItChanged() {
        var jar = CookieJar()
        // Given 3,000 sites of 40 cookies each: 120,000 cookies for a jar of 3,300.
        let entries = (0..<120_000).map { index in
            NumberedCookie(
                line: index + 1,
                cookie: cookie("n\(index % 40)", "site\(index / 40).example"),
                hasCreationTime: false
            )
        }
        let report = jar.importCookies(entries, now: testNow)
        // Then the jar keeps its limits, every cookie counts as imported, and the change carries
        // only the survivors: nothing added and evicted by the same import.
        #expect(report.imported == 120_000)
        #expect(jar.allCookies.count <= jar.limits.total)
        #expect(report.changes.allSatisfy { if case .added = $0 { true } else { false } })
        #expect(Set(report.changes.map(\.cookie.identity)) == Set(jar.allCookies.map(\.identity)))
        // The survivors are the newest (the last sites), as one-by-one eviction keeps them.
        #expect(jar.allCookies.contains { $0.domain == "site2999.example" })
        #expect(!jar.allCookies.contains { $0.domain == "site0.example" })
    }

    // MARK: Batches

    private func batches(
        _ text: String,
        kind: CookieFileBatcher.Kind,
        size: Int,
        chunk: Int
    ) throws -> [CookieFileBatcher.Batch] {
        var batcher = CookieFileBatcher(kind: kind, maximumItems: size)
        var result: [CookieFileBatcher.Batch] = []
        let bytes = Array(text.utf8)
        var index = 0
        while index < bytes.count {
            result += batcher.feed(bytes[index..<min(bytes.count, index + chunk)])
            index += chunk
        }
        return result + (try batcher.finish())
    }

    @Test func cookiesTxtIsCutAtLinesWithTheirNumbers() throws {
        let lines = (1...25).map { "site\($0).example\tFALSE\t/\tFALSE\t0\tn\($0)\tv\n" }
        for chunk in [1, 3, 7, 64, 4096] {
            let cut = try batches(lines.joined(), kind: .lines, size: 10, chunk: chunk)
            #expect(cut.map(\.firstLine) == [1, 11, 21])
            #expect(cut.map(\.text).joined() == lines.joined())
            #expect(cut.last?.text == lines[20...].joined())
        }
        // A last line without a newline is still a line.
        #expect(try batches("a\nb", kind: .lines, size: 10, chunk: 1).map(\.text) == ["a\nb"])
    }

    @Test func aJSONArrayIsCutAtElementsThatParseOnTheirOwn() throws {
        let cookies = (0..<23).map { cookie("n\($0)", "s\($0).example", value: "v, ] } [ \"q\" \\\\ \($0)") }
        let file = String(decoding: CookieJSONFile.serialize(cookies), as: UTF8.self)
        var random = SplitMix64(state: 9)
        for _ in 0..<20 {
            let cut = try batches(file, kind: .jsonArray, size: 10, chunk: Int.random(in: 1...300, using: &random))
            #expect(cut.map(\.firstLine) == [1, 11, 21])
            let parsed = cut.map { CookieJSONFile.parse(Data($0.text.utf8)) }
            #expect(parsed.allSatisfy { $0.problems.isEmpty })
            let read = parsed.flatMap { $0.cookies.map { "\($0.cookie.name)=\($0.cookie.value)@\($0.cookie.domain)" } }
            #expect(read == cookies.map { "\($0.name)=\($0.value)@\($0.domain)" })
        }
        #expect(try batches("[ ]", kind: .jsonArray, size: 10, chunk: 1).isEmpty)
    }

    @Test func aDocumentThatIsNotAJSONArraySaysSo() {
        for text in [#"{"name":"a"}"#, "[1, 2", "[1]]", "[1,,2]", "[1] x", ""] {
            #expect(throws: CookieFileBatcher.Malformed.self, "\(text)") {
                _ = try self.batches(text, kind: .jsonArray, size: 10, chunk: 2)
            }
        }
    }
}
