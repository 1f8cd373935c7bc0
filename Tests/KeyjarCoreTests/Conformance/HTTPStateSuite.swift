import Foundation
import KeyjarCore

/// The http-state conformance data in ../shared (beside the repository root), read as the
/// suite's README describes it.
enum HTTPStateSuite {
    struct Case: Decodable, Sendable {
        var id: String
        var category: String
        var disabled: Bool
        var optional: Bool
        var setFrom: String
        var setCookie: [String]
        var requestURL: String
        var expectedCookie: String
        var wptRFC6265bisExpectedCookie: String?

        enum CodingKeys: String, CodingKey {
            case id, category, disabled, optional
            case setFrom = "set_from"
            case setCookie = "set_cookie"
            case requestURL = "request_url"
            case expectedCookie = "expected_cookie"
            case wptRFC6265bisExpectedCookie = "wpt_rfc6265bis_expected_cookie"
        }

        var testDescription: String { "\(id) (\(category))" }
    }

    struct DateCase: Decodable, Sendable {
        var input: String
        var expectedUTC: String?

        enum CodingKeys: String, CodingKey {
            case input
            case expectedUTC = "expected_utc"
        }
    }

    /// A case where Keyjar follows RFC 6265bis against the suite's RFC 6265 expectation.
    struct Exception: Decodable, Sendable {
        var id: String
        var reason: String
        /// What Keyjar sends instead (checked, so an exception is a claim, not a skip).
        var expected: String
    }

    /// The instant the suite's clock-dependent cases were written for.
    static let frozenNow = Date(timeIntervalSince1970: 1_502_236_800)  // 2017-08-09T00:00:00Z

    static let repositoryRoot = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
    static let dataDirectory = repositoryRoot.deletingLastPathComponent()
        .appendingPathComponent("shared/conformance/http-state")
    static let exceptionsFile = repositoryRoot.appendingPathComponent(
        "Tests/KeyjarCoreTests/Conformance/http-state-exceptions.json"
    )

    static func load<T: Decodable>(_ type: T.Type, from url: URL) -> T? {
        guard let data = try? Data(contentsOf: url) else { return nil }
        return try? JSONDecoder().decode(type, from: data)
    }

    static let cases: [Case] =
        load([Case].self, from: dataDirectory.appendingPathComponent("http-state-cases.json")) ?? []
    static let dateCases: [DateCase] =
        load([DateCase].self, from: dataDirectory.appendingPathComponent("http-state-dates.json")) ?? []
    static let exceptions: [String: Exception] = Dictionary(
        uniqueKeysWithValues: (load([Exception].self, from: exceptionsFile) ?? []).map { ($0.id, $0) }
    )

    /// Runs one case as a user agent would: an empty jar, each Set-Cookie stored one by one
    /// from `set_from`, then the Cookie header for `request_url` ("" when none).
    static func run(_ testCase: Case) -> String {
        var jar = CookieJar()
        guard let setFrom = URL(string: testCase.setFrom), let setContext = CookieContext(url: setFrom),
            let requestURL = URL(string: testCase.requestURL), let requestContext = CookieContext(url: requestURL)
        else { return "<unparseable URL>" }
        for header in testCase.setCookie {
            jar.setCookie(header, context: setContext, now: frozenNow)
        }
        return jar.cookieHeader(for: requestContext, now: frozenNow) ?? ""
    }
}
