public import Foundation

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
        let seconds = Int(date.timeIntervalSince1970.rounded(.down))
        let days = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
        let secondOfDay = seconds - days * 86_400
        let (year, month, day) = civil(fromDays: days)
        // 1970-01-01 was a Thursday (index 3 from Monday).
        let weekday = ((days % 7) + 7 + 3) % 7
        return "\(dayNames[weekday]), \(two(day)) \(monthNames[month - 1]) \(four(year)) "
            + "\(two(secondOfDay / 3600)):\(two(secondOfDay / 60 % 60)):\(two(secondOfDay % 60)) GMT"
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
        let thisYear = civil(fromDays: Int((now.timeIntervalSince1970 / 86_400).rounded(.down))).year
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
        guard day >= 1, day <= daysIn(month: month, year: year) else { return nil }
        let days = daysFromCivil(year: year, month: month, day: day)
        return Date(timeIntervalSince1970: TimeInterval(days * 86_400 + time))
    }

    static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: return year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    /// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
    static func daysFromCivil(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    static func civil(fromDays days: Int) -> (year: Int, month: Int, day: Int) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let mp = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }

    static func two(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }

    static func four(_ value: Int) -> String {
        let text = String(value)
        return String(repeating: "0", count: max(0, 4 - text.count)) + text
    }
}
