import KeyjarPlatform
import Testing

/// The one `%XX` decoder: strict (a broken escape refuses the text) and lenient (it stays).
struct PercentEncodingTests {
    private func decoded(_ text: String, strict: Bool) -> String? {
        PercentEncoding.decoded(text.utf8, strict: strict).map { String(decoding: $0, as: UTF8.self) }
    }

    @Test func escapesAreDecodedAndBrokenOnesRefusedOrKept() {
        #expect(decoded("ci%40corp%2f%25", strict: true) == "ci@corp/%")
        #expect(decoded("%C3%A9", strict: true) == "é")
        for broken in ["%", "a%4", "%zz", "%4g"] {
            #expect(decoded(broken, strict: true) == nil, "\(broken)")
            #expect(decoded(broken, strict: false) == broken, "\(broken)")
        }
        #expect(decoded("100% sure%21", strict: false) == "100% sure!")
        #expect(decoded("", strict: true) == "")
    }
}
