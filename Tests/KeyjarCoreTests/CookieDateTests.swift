import Foundation
import KeyjarCore
import KeyjarTestSupport
import Testing

struct CookieDateTests {
    @Test func readsTheCommonFormats() {
        let expected = Date(timeIntervalSince1970: 784_111_777)  // 1994-11-06T08:49:37Z
        #expect(CookieDate.parse("Sun, 06 Nov 1994 08:49:37 GMT") == expected)
        #expect(CookieDate.parse("Sunday, 06-Nov-94 08:49:37 GMT") == expected)
        #expect(CookieDate.parse("Sun Nov  6 08:49:37 1994") == expected)
    }

    @Test func twoDigitYearsPivotAt70() {
        #expect(CookieDate.parse("01 Jan 69 00:00:00").map(CookieDate.httpDate) == "Tue, 01 Jan 2069 00:00:00 GMT")
        #expect(CookieDate.parse("01 Jan 70 00:00:00").map(CookieDate.httpDate) == "Thu, 01 Jan 1970 00:00:00 GMT")
    }

    @Test(arguments: [
        "29 Feb 2023 00:00:00",  // not a leap year
        "31 Apr 2024 00:00:00",  // April has 30 days
        "01 Jan 1600 00:00:00",  // before 1601
        "01 Jan 2024 24:00:00", "01 Jan 2024 23:60:00", "01 Jan 2024 23:59:60",
        "01 Jan 2024", "Jan 2024 10:00:00", "32 Jan 2024 10:00:00", "01 Foo 2024 10:00:00", "",
        "001 Jan 2024 10:00:00",  // three-digit day
    ])
    func rejectsImpossibleOrIncompleteDates(input: String) {
        #expect(CookieDate.parse(input) == nil)
    }

    @Test func acceptsLeapDay() {
        #expect(CookieDate.parse("29 Feb 2024 12:00:00").map(CookieDate.httpDate) == "Thu, 29 Feb 2024 12:00:00 GMT")
    }

    @Test func formatsIMFFixdate() {
        #expect(CookieDate.httpDate(Date(timeIntervalSince1970: 0)) == "Thu, 01 Jan 1970 00:00:00 GMT")
        #expect(CookieDate.httpDate(Date(timeIntervalSince1970: 253_402_300_799)) == "Fri, 31 Dec 9999 23:59:59 GMT")
    }
}
