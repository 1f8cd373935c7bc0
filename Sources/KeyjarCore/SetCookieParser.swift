import FoundationEssentials

/// Parses a Set-Cookie header value by the algorithm of RFC 6265bis §5.6 (not a grammar: the
/// algorithm is what browsers do with the malformed headers real servers send).
///
/// Each header line is one cookie: never split a header on commas (`z=y, a=b` is one cookie
/// named `z` with the value `y, a=b`).
///
/// ```swift
/// let parsed = try SetCookieParser.parse("sid=42; Path=/; Secure; SameSite=Lax")
/// parsed.name      // "sid"
/// parsed.sameSite  // .lax
/// ```
public enum SetCookieParser {
    /// RFC 6265bis §5.6 step 5: name and value together may not exceed this many bytes.
    public static let maximumNameValueBytes = 4096
    /// RFC 6265bis §5.6 step 4 of attribute parsing: longer attribute values are ignored.
    public static let maximumAttributeValueBytes = 1024

    /// Parses one header value.
    /// - Throws: ``CookieParseError`` when the whole header must be ignored.
    public static func parse(_ header: String) throws(CookieParseError) -> SetCookie {
        var header = header
        let result = header.withUTF8 { bytes -> Result<SetCookie, CookieParseError> in
            do throws(CookieParseError) {
                return .success(try parse(bytes: bytes))
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }

    static func parse(bytes: UnsafeBufferPointer<UInt8>) throws(CookieParseError) -> SetCookie {
        // Step 1: any CTL but HTAB rejects the whole header (a NUL or a bare CR included).
        for (offset, byte) in bytes.enumerated() where (byte < 0x20 && byte != 0x09) || byte == 0x7F {
            throw .controlCharacter(offset: offset)
        }
        let end = bytes.count
        let firstSemicolon = bytes.firstIndex(of: UInt8(ascii: ";")) ?? end

        // Steps 2-6: the name-value pair; without "=" the whole pair is the value.
        var name = ""
        var value = ""
        if let equals = bytes[0..<firstSemicolon].firstIndex(of: UInt8(ascii: "=")) {
            name = trimmedString(bytes, 0, equals)
            value = trimmedString(bytes, equals + 1, firstSemicolon)
        } else {
            value = trimmedString(bytes, 0, firstSemicolon)
        }
        let nameValueBytes = name.utf8.count + value.utf8.count
        if nameValueBytes > maximumNameValueBytes { throw .nameValueTooLong(bytes: nameValueBytes) }
        if nameValueBytes == 0 { throw .emptyNameAndValue }

        var cookie = SetCookie(name: name, value: value)
        var position = firstSemicolon
        while position < end {
            let avStart = position + 1
            let avEnd = bytes[avStart..<end].firstIndex(of: UInt8(ascii: ";")) ?? end
            position = avEnd
            let equals = bytes[avStart..<avEnd].firstIndex(of: UInt8(ascii: "="))
            let (nameStart, nameEnd) = trimmed(bytes, avStart, equals ?? avEnd)
            let (valueStart, valueEnd) = equals.map { trimmed(bytes, $0 + 1, avEnd) } ?? (avEnd, avEnd)
            if valueEnd - valueStart > maximumAttributeValueBytes { continue }
            let attributeName = UnsafeBufferPointer(rebasing: bytes[nameStart..<nameEnd])
            let attributeValue = UnsafeBufferPointer(rebasing: bytes[valueStart..<valueEnd])
            apply(attributeName, attributeValue, to: &cookie)
        }
        return cookie
    }

    /// Steps of §5.6.1-§5.6.7: each recognised attribute overwrites what an earlier one set.
    private static func apply(
        _ name: UnsafeBufferPointer<UInt8>,
        _ value: UnsafeBufferPointer<UInt8>,
        to cookie: inout SetCookie
    ) {
        switch name.count {
        case 4 where equalsLowercased(name, "path"):
            cookie.path = value.first == UInt8(ascii: "/") ? String(decoding: value, as: UTF8.self) : nil
        case 6 where equalsLowercased(name, "domain"):
            // An empty value is ignored entirely (§5.6.3: "SHOULD ignore the cookie-av"), so it
            // does not undo an earlier Domain; a lone "." does, leaving the cookie host-only.
            guard !value.isEmpty else { break }
            let domainBytes = value.first == UInt8(ascii: ".") ? value.dropFirst() : value[...]
            cookie.domain = domainBytes.isEmpty ? nil : String(decoding: domainBytes, as: UTF8.self).lowercased()
        case 6 where equalsLowercased(name, "secure"):
            cookie.secure = true
        case 7 where equalsLowercased(name, "expires"):
            if let date = CookieDate.parse(bytes: value) { cookie.expires = date }
        case 7 where equalsLowercased(name, "max-age"):
            if let seconds = parseMaxAge(value) { cookie.maxAge = seconds }
        case 8 where equalsLowercased(name, "httponly"):
            cookie.httpOnly = true
        case 8 where equalsLowercased(name, "samesite"):
            cookie.sameSite = SameSite(attributeValue: String(decoding: value, as: UTF8.self))
        case 11 where equalsLowercased(name, "partitioned"):
            // A flag, as Secure is: a value (`Partitioned=no`) does not unset it (CHIPS).
            cookie.partitioned = true
        default:
            break
        }
    }

    /// §5.6.2: a leading DIGIT or "-", then only digits; out-of-range values saturate.
    private static func parseMaxAge(_ value: UnsafeBufferPointer<UInt8>) -> Int64? {
        guard let first = value.first else { return nil }
        let negative = first == UInt8(ascii: "-")
        let digits = negative ? UnsafeBufferPointer(rebasing: value.dropFirst()) : value
        guard !digits.isEmpty, digits.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
        var result: Int64 = 0
        for digit in digits {
            let (times10, overflow1) = result.multipliedReportingOverflow(by: 10)
            let (sum, overflow2) = times10.addingReportingOverflow(Int64(digit - 0x30))
            if overflow1 || overflow2 {
                result = .max
                break
            }
            result = sum
        }
        return negative ? -result : result
    }

    @inline(__always)
    private static func isWhitespace(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 }

    private static func trimmed(_ bytes: UnsafeBufferPointer<UInt8>, _ start: Int, _ end: Int) -> (Int, Int) {
        var start = start
        var end = end
        while start < end, isWhitespace(bytes[start]) { start += 1 }
        while end > start, isWhitespace(bytes[end - 1]) { end -= 1 }
        return (start, end)
    }

    private static func trimmedString(_ bytes: UnsafeBufferPointer<UInt8>, _ start: Int, _ end: Int) -> String {
        let (start, end) = trimmed(bytes, start, end)
        return String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<end]), as: UTF8.self)
    }

    /// Compares ASCII case-insensitively with a lower-case literal of the same length.
    @inline(__always)
    private static func equalsLowercased(_ bytes: UnsafeBufferPointer<UInt8>, _ literal: StaticString) -> Bool {
        let expected = UnsafeBufferPointer(start: literal.utf8Start, count: literal.utf8CodeUnitCount)
        guard bytes.count == expected.count else { return false }
        for index in 0..<bytes.count {
            var byte = bytes[index]
            if byte >= 0x41 && byte <= 0x5A { byte |= 0x20 }
            if byte != expected[index] { return false }
        }
        return true
    }
}
