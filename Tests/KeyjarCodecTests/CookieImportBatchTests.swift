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

    @Test func aPlanOverBatchesIsTheNetChangeOfTheWholeFile() {
        // Given a jar of 300 older cookies, and limits of 400 (50 a site)
        let limits = CookieJar.Limits(perSite: 50, perSitePurgedTo: 40, total: 400, totalPurge: 40)
        var jar = CookieJar(limits: limits)
        let earlier = testNow.addingTimeInterval(-3_600)
        let stored = (0..<300).map { index in
            NumberedCookie(line: index + 1, cookie: cookie("o\(index % 30)", "old\(index / 30).example"))
        }
        _ = jar.importCookies(stored, now: earlier)
        let original = jar
        // When 20 batches of 200 cookies (100 sites of 40, ten times the jar) go into one plan
        var plan = CookieImportPlan(jar: original)
        var oneByOne = original
        for batch in 0..<20 {
            let entries = (0..<200).map { offset in
                let index = batch * 200 + offset
                return NumberedCookie(
                    line: index + 1,
                    cookie: cookie("n\(index % 40)", "new\(index / 40).example"),
                    hasCreationTime: false
                )
            }
            let report = plan.add(entries, now: testNow)
            // Each batch's report says what it held; what it comes to waits for the end
            #expect(report.imported == 200 && report.changes.isEmpty && report.kept == 0 && report.evicted == 0)
            _ = oneByOne.importCookies(entries, now: testNow)
        }

        // Then the trial is the jar as batch-by-batch imports leave it...
        #expect(Set(plan.trial.allCookies) == Set(oneByOne.allCookies))
        // ...and the plan carries each cookie once: nothing the file added and evicted again
        let outcome = plan.outcome
        let identities = outcome.changes.map(\.cookie.identity)
        #expect(Set(identities).count == identities.count)
        let kept = Set(plan.trial.allCookies.map(\.identity))
        for change in outcome.changes {
            switch change {
            case .added(let cookie), .replaced(_, let cookie): #expect(kept.contains(cookie.identity))
            case .removed(let cookie, _): #expect(cookie.domain.hasPrefix("old"))
            }
        }
        #expect(outcome.added == plan.trial.allCookies.filter { $0.domain.hasPrefix("new") }.count)
        #expect(outcome.evicted == original.count - plan.trial.allCookies.filter { $0.domain.hasPrefix("old") }.count)
        #expect(outcome.added > 0 && outcome.evicted > 0)
        // Applied part by part, removals first, the jar never holds more than its limit, and
        // ends as the trial
        var applied = original
        for part in stride(from: 0, to: outcome.changes.count, by: 32) {
            for change in outcome.changes[part..<min(outcome.changes.count, part + 32)] {
                switch change {
                case .added(let cookie), .replaced(_, let cookie): applied.restore(cookie)
                case .removed(let cookie, _): _ = applied.remove(cookie.identity)
                }
            }
            #expect(applied.count <= limits.total)
        }
        #expect(Set(applied.allCookies) == Set(plan.trial.allCookies))
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
