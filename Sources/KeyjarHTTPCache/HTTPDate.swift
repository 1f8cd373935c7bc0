public import Foundation
import KeyjarPlatform

/// HTTP-date (RFC 9110 §5.6.7), the one date form of Expires, Date, Last-Modified and
/// If-Modified-Since: IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`), and the two obsolete
/// forms a recipient must still accept, rfc850 (`Sunday, 06-Nov-94 08:49:37 GMT`) and asctime
/// (`Sun Nov  6 08:49:37 1994`). Nothing else: the grammar is case-sensitive and exact, unlike
/// the cookie-date parser, which accepts nearly anything with a day, a month, a year and a time
/// (RFC 6265 §5.1.1). A field that is not an HTTP-date means what RFC 9111 says for that field
/// (an Expires already past, a Date absent, a Last-Modified unusable).
public enum HTTPDate {
    static let dayNames = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"]
    static let longDayNames = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]
    static let monthNames = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    /// The instant `text` names (surrounding spaces and tabs, a field's OWS, aside); nil when it
    /// is not an HTTP-date or names no real day and time. An rfc850 two-digit year more than 50
    /// years after `now` is taken as the most recent past year with those digits (§5.6.7).
    public static func parse(_ text: some StringProtocol, now: Date = Date()) -> Date? {
        let bytes = Array(String(text).trimmingWhitespace.utf8)
        return imfFixdate(bytes) ?? rfc850(bytes, now: now) ?? asctime(bytes)
    }

    /// `date` as an IMF-fixdate, the form a sender generates (fractions of a second dropped).
    public static func format(_ date: Date) -> String {
        CivilDate.imfFixdate(secondsSince1970: Int(date.timeIntervalSince1970.rounded(.down)))
    }

    // MARK: The three forms

    /// `day-name "," SP 2DIGIT SP month SP 4DIGIT SP hh:mm:ss SP "GMT"`.
    static func imfFixdate(_ b: [UInt8]) -> Date? {
        guard b.count == 29, dayNames.contains(text(b[0..<3])), b[3] == comma, b[4] == space, b[7] == space,
            b[11] == space, b[16] == space, b[25] == space, text(b[26..<29]) == "GMT",
            let day = digits(b[5..<7]), let month = month(b[8..<11]), let year = digits(b[12..<16]),
            let time = time(b[17..<25])
        else { return nil }
        return instant(year: year, month: month, day: day, time: time)
    }

    /// `day-name-l "," SP 2DIGIT "-" month "-" 2DIGIT SP hh:mm:ss SP "GMT"`.
    static func rfc850(_ b: [UInt8], now: Date) -> Date? {
        guard let comma = b.firstIndex(of: comma), longDayNames.contains(text(b[0..<comma])) else { return nil }
        let rest = Array(b[(comma + 1)...])
        guard rest.count == 23, rest[0] == space, rest[3] == dash, rest[7] == dash, rest[10] == space,
            rest[19] == space, text(rest[20..<23]) == "GMT", let day = digits(rest[1..<3]),
            let month = month(rest[4..<7]), let shortYear = digits(rest[8..<10]), let time = time(rest[11..<19])
        else { return nil }
        // The century that puts the year no more than 50 years after now.
        let thisYear = CivilDate.date(fromDays: Int((now.timeIntervalSince1970 / 86_400).rounded(.down))).year
        var year = thisYear - thisYear % 100 + shortYear
        if year > thisYear + 50 { year -= 100 }
        return instant(year: year, month: month, day: day, time: time)
    }

    /// `day-name SP month SP ( 2DIGIT / ( SP DIGIT ) ) SP hh:mm:ss SP 4DIGIT`.
    static func asctime(_ b: [UInt8]) -> Date? {
        guard b.count == 24, dayNames.contains(text(b[0..<3])), b[3] == space, b[7] == space, b[10] == space,
            b[19] == space, let month = month(b[4..<7]), let time = time(b[11..<19]), let year = digits(b[20..<24])
        else { return nil }
        let day: Int?
        if b[8] == space { day = digits(b[9..<10]) } else { day = digits(b[8..<10]) }
        guard let day else { return nil }
        return instant(year: year, month: month, day: day, time: time)
    }

    // MARK: Pieces

    static let comma = UInt8(ascii: ","), space = UInt8(ascii: " "), dash = UInt8(ascii: "-")
    static let colon = UInt8(ascii: ":")

    static func text(_ bytes: ArraySlice<UInt8>) -> String { String(decoding: bytes, as: UTF8.self) }

    static func digits(_ bytes: ArraySlice<UInt8>) -> Int? {
        guard !bytes.isEmpty else { return nil }
        var value = 0
        for byte in bytes {
            guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
            value = value * 10 + Int(byte - UInt8(ascii: "0"))
        }
        return value
    }

    static func month(_ bytes: ArraySlice<UInt8>) -> Int? { monthNames.firstIndex(of: text(bytes)).map { $0 + 1 } }

    /// `hh:mm:ss`, each two digits; a second of 60 is a leap second (RFC 5322 allows it).
    static func time(_ b: ArraySlice<UInt8>) -> Int? {
        let b = Array(b)
        guard b.count == 8, b[2] == colon, b[5] == colon, let hour = digits(b[0..<2]), let minute = digits(b[3..<5]),
            let second = digits(b[6..<8]), hour < 24, minute < 60, second <= 60
        else { return nil }
        return hour * 3600 + minute * 60 + second
    }

    static func instant(year: Int, month: Int, day: Int, time: Int) -> Date? {
        guard day >= 1, day <= CivilDate.daysIn(month: month, year: year) else { return nil }
        let days = CivilDate.days(year: year, month: month, day: day)
        return Date(timeIntervalSince1970: TimeInterval(days * 86_400 + time))
    }
}
