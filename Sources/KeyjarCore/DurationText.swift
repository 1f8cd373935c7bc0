/// A length of time as a person types it and reads it: whole numbers with units, largest
/// first, `90s`, `15m`, `2h`, `1d`, `1h30m` (a bare number is seconds). The one rule for every
/// option that takes a duration, in keyjard and in `keyjar`.
public enum DurationText {
    private static let units: [(suffix: UInt8, seconds: Int)] = [
        (UInt8(ascii: "d"), 86_400), (UInt8(ascii: "h"), 3_600), (UInt8(ascii: "m"), 60), (UInt8(ascii: "s"), 1),
    ]
    /// Ten years: a longer duration is a mistake, and refusing it keeps every sum in range.
    private static let longest = 3_660 * 86_400

    /// The seconds `text` names, or nil when it is not a duration this rule reads (negative,
    /// fractional, spaced, a unit unknown or out of order, or more than ten years).
    public static func seconds(_ text: String) -> Int? {
        let bytes = Array(text.utf8)
        guard !bytes.isEmpty else { return nil }
        if bytes.allSatisfy(isDigit) { return number(bytes[...]) }
        var total = 0
        var start = 0
        var nextUnit = 0
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            if isDigit(byte) {
                index += 1
                continue
            }
            guard index > start, let unit = units[nextUnit...].firstIndex(where: { $0.suffix == byte }),
                let count = number(bytes[start..<index])
            else { return nil }
            total += count * units[unit].seconds
            guard total <= longest else { return nil }
            nextUnit = unit + 1
            index += 1
            start = index
        }
        return start == bytes.count ? total : nil
    }

    /// `seconds` in the largest units that name it exactly: `15m`, `1h30m`, `45s`, `0s`.
    public static func text(seconds: Int) -> String {
        guard seconds > 0 else { return "0s" }
        var rest = seconds
        var text = ""
        for (suffix, size) in units where rest >= size {
            text += "\(rest / size)\(Character(Unicode.Scalar(suffix)))"
            rest %= size
        }
        return text
    }

    private static func isDigit(_ byte: UInt8) -> Bool { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) }

    /// Digits as a number of at most ten years' seconds.
    private static func number(_ digits: ArraySlice<UInt8>) -> Int? {
        guard digits.count <= 10, let value = Int(String(decoding: digits, as: UTF8.self)), value <= longest else {
            return nil
        }
        return value
    }
}
