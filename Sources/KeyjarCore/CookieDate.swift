public import FoundationEssentials
import KeyjarPlatform

/// The cookie-date algorithm of RFC 6265bis §5.1.1, which browsers use to read `Expires`.
///
/// It is deliberately lenient (it finds a time, a day, a month and a year among tokens in any
/// order) and then strict about ranges. It works on bytes and computes the instant without a
/// `Calendar`, so parsing never depends on the process locale or time zone.
///
/// ```swift
/// CookieDate.parse("Wed, 09 Jun 2021 10:18:14 GMT")   // 2021-06-09T10:18:14Z
/// CookieDate.parse("not a date")                      // nil
/// ```
public enum CookieDate {
    /// Returns the instant `text` denotes, or `nil` when the algorithm rejects it.
    public static func parse(_ text: some StringProtocol) -> Date? {
        var copy = String(text)
        return copy.withUTF8 { parse(bytes: $0) }
    }

    static func parse(bytes: UnsafeBufferPointer<UInt8>) -> Date? {
        var time: (Int, Int, Int)?
        var dayOfMonth: Int?
        var month: Int?
        var year: Int?

        var index = 0
        let count = bytes.count
        while index < count {
            while index < count, isDelimiter(bytes[index]) { index += 1 }
            let start = index
            while index < count, !isDelimiter(bytes[index]) { index += 1 }
            guard start < index else { break }
            let token = UnsafeBufferPointer(rebasing: bytes[start..<index])
            if time == nil, let parsed = parseTime(token) {
                time = parsed
            } else if dayOfMonth == nil, let parsed = parseDigits(token, min: 1, max: 2) {
                dayOfMonth = parsed
            } else if month == nil, let parsed = parseMonth(token) {
                month = parsed
            } else if year == nil, let parsed = parseDigits(token, min: 2, max: 4) {
                year = parsed
            }
        }
        guard var year, let month, let dayOfMonth, let (hour, minute, second) = time else { return nil }
        if (70...99).contains(year) { year += 1900 } else if (0...69).contains(year) { year += 2000 }
        guard (1...31).contains(dayOfMonth), year >= 1601, hour <= 23, minute <= 59, second <= 59,
            dayOfMonth <= CivilDate.daysIn(month: month, year: year)
        else { return nil }
        let days = CivilDate.days(year: year, month: month, day: dayOfMonth)
        let seconds = days * 86_400 + hour * 3_600 + minute * 60 + second
        return Date(timeIntervalSince1970: TimeInterval(seconds))
    }

    /// delimiter = %x09 / %x20-2F / %x3B-40 / %x5B-60 / %x7B-7E
    @inline(__always)
    private static func isDelimiter(_ byte: UInt8) -> Bool {
        switch byte {
        case 0x09, 0x20...0x2F, 0x3B...0x40, 0x5B...0x60, 0x7B...0x7E: return true
        default: return false
        }
    }

    @inline(__always)
    private static func isDigit(_ byte: UInt8) -> Bool { byte >= 0x30 && byte <= 0x39 }

    /// `min...max` digits, optionally followed by a non-digit and anything.
    private static func parseDigits(_ token: UnsafeBufferPointer<UInt8>, min: Int, max: Int) -> Int? {
        var value = 0
        var digits = 0
        while digits < token.count, isDigit(token[digits]) {
            guard digits < max else { return nil }
            value = value * 10 + Int(token[digits] - 0x30)
            digits += 1
        }
        return digits >= min ? value : nil
    }

    /// hms-time = time-field ":" time-field ":" time-field, optionally followed by a non-digit.
    private static func parseTime(_ token: UnsafeBufferPointer<UInt8>) -> (Int, Int, Int)? {
        var fields = [0, 0, 0]
        var index = 0
        for field in 0..<3 {
            var digits = 0
            while index < token.count, isDigit(token[index]) {
                guard digits < 2 else { return nil }
                fields[field] = fields[field] * 10 + Int(token[index] - 0x30)
                digits += 1
                index += 1
            }
            guard digits > 0 else { return nil }
            if field < 2 {
                guard index < token.count, token[index] == UInt8(ascii: ":") else { return nil }
                index += 1
            }
        }
        return (fields[0], fields[1], fields[2])
    }

    private static let monthNames: [[UInt8]] = [
        "jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec",
    ].map { Array($0.utf8) }

    /// The first three bytes name a month, case-insensitively; the rest is ignored.
    private static func parseMonth(_ token: UnsafeBufferPointer<UInt8>) -> Int? {
        guard token.count >= 3 else { return nil }
        let lowered = (token[0] | 0x20, token[1] | 0x20, token[2] | 0x20)
        for (offset, name) in monthNames.enumerated()
        where lowered.0 == name[0] && lowered.1 == name[1] && lowered.2 == name[2] {
            return offset + 1
        }
        return nil
    }

    /// Formats an instant as an IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`), the form
    /// servers send in `Expires`.
    public static func httpDate(_ date: Date) -> String {
        CivilDate.imfFixdate(secondsSince1970: Int(date.timeIntervalSince1970.rounded(.down)))
    }
}
