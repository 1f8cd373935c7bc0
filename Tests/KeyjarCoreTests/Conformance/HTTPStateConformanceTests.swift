import Foundation
import KeyjarCore
import Testing

@Suite("http-state conformance")
struct HTTPStateConformanceTests {
    @Test func suiteDataIsPresent() {
        #expect(HTTPStateSuite.cases.count == 222, "read \(HTTPStateSuite.dataDirectory.path)")
        #expect(HTTPStateSuite.dateCases.count == 70)
    }

    @Test("parser case", arguments: HTTPStateSuite.cases.map(\.id))
    func parserCase(id: String) throws {
        let testCase = try #require(HTTPStateSuite.cases.first { $0.id == id })
        let actual = HTTPStateSuite.run(testCase)
        if let exception = HTTPStateSuite.exceptions[id] {
            // An exception claims a deliberate 6265bis difference: check both halves of the claim.
            #expect(actual == exception.expected, "\(id): \(exception.reason)")
            #expect(actual != testCase.expectedCookie, "\(id) passes now; remove it from the exceptions file")
        } else {
            #expect(actual == testCase.expectedCookie, "\(id): \(testCase.setCookie) → \(testCase.requestURL)")
        }
    }

    @Test func exceptionsNameRealCases() {
        let ids = Set(HTTPStateSuite.cases.map(\.id))
        for id in HTTPStateSuite.exceptions.keys { #expect(ids.contains(id), "unknown case \(id) in exceptions") }
    }

    @Test("date case", arguments: HTTPStateSuite.dateCases.map(\.input))
    func dateCase(input: String) throws {
        let testCase = try #require(HTTPStateSuite.dateCases.first { $0.input == input })
        #expect(CookieDate.parse(input).map(CookieDate.httpDate) == testCase.expectedUTC)
    }
}
