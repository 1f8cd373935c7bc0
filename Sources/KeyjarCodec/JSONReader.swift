import FoundationEssentials
internal import Glibc
import KeyjarCore

/// A parsed JSON value, which Keyjar's formats read (JSONDecoding.swift).
///
/// Numbers keep their text so that 64-bit integers stay exact; objects keep their members in
/// order (they are small, and a linear search beats hashing at this size).
public enum JSONValue: Sendable {
    case null
    case bool(Bool)
    case number(Substring)
    case string(String)
    case array([JSONValue])
    case object([(key: String, value: JSONValue)])

    /// Finite only: a number too large for a Double (1e400) is no time or count Keyjar keeps.
    public var double: Double? {
        guard case .number(let text) = self else { return nil }
        if let value = text.utf8.withContiguousStorageIfAvailable(JSONReader.double) { return value }
        var copy = String(text)
        return copy.withUTF8(JSONReader.double)
    }

    @inlinable
    public var isNull: Bool {
        if case .null = self { return true }
        return false
    }
}

/// A strict JSON parser (RFC 8259) over bytes: nil for anything it does not accept, which its
/// callers report as not valid JSON. Duplicate keys and a byte order mark are refused.
///
/// Its cost is linear in the input whatever the input is: keyjard parses what any client sends,
/// and a quadratic step (the duplicate-key check once was) lets one message of a few megabytes
/// hold the parser for minutes.
package struct JSONReader {
    /// Deeper nesting is refused (no message of the protocol comes close), so hostile input
    /// cannot exhaust the stack.
    static let maximumDepth = 64
    /// More members in one object are refused: far more than any map Keyjar writes (a policy's
    /// domain rules). (What a whole message may hold, arrays included, is bounded by its
    /// frame's size: 64 MiB by default.)
    package static let maximumMembers = 1 << 18
    /// Up to this many members, duplicates are found by comparing with each earlier key (no
    /// hashing, the common case); a larger object switches to a set of its keys.
    static let linearDuplicateCheck = 16

    package static func parse(_ bytes: UnsafeBufferPointer<UInt8>) -> JSONValue? {
        var reader = JSONReader(bytes: bytes)
        guard let value = reader.value(depth: 0) else { return nil }
        reader.skipWhitespace()
        return reader.position == bytes.count ? value : nil
    }

    package static func parse(_ bytes: [UInt8]) -> JSONValue? {
        bytes.withUnsafeBufferPointer { parse($0) }
    }

    private let bytes: UnsafeBufferPointer<UInt8>
    private var position = 0

    /// A reader at the start of `bytes`, for stepping through JSON of a known layout (see
    /// "Reading a known layout" below) instead of parsing it into a tree.
    package init(bytes: UnsafeBufferPointer<UInt8>) { self.bytes = bytes }

    private var current: UInt8? { position < bytes.count ? bytes[position] : nil }

    private mutating func skipWhitespace() {
        while let byte = current, byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09 { position += 1 }
    }

    private mutating func value(depth: Int) -> JSONValue? {
        guard depth < Self.maximumDepth else { return nil }
        skipWhitespace()
        guard let byte = current else { return nil }
        switch byte {
        case UInt8(ascii: "{"): return object(depth: depth)
        case UInt8(ascii: "["): return array(depth: depth)
        case UInt8(ascii: "\""): return string().map(JSONValue.string)
        case UInt8(ascii: "t"): return literal("true") ? .bool(true) : nil
        case UInt8(ascii: "f"): return literal("false") ? .bool(false) : nil
        case UInt8(ascii: "n"): return literal("null") ? .null : nil
        default: return number()
        }
    }

    private mutating func literal(_ word: StaticString) -> Bool {
        let count = word.utf8CodeUnitCount
        guard bytes.count - position >= count, let base = bytes.baseAddress else { return false }
        // memcmp: a byte loop through StaticString's accessors costs far more per key
        // (docs/performance.md, Engine and wire coding).
        guard memcmp(base + position, word.utf8Start, count) == 0 else { return false }
        position += count
        return true
    }

    private mutating func object(depth: Int) -> JSONValue? {
        position += 1
        var members: [(key: String, value: JSONValue)] = []
        skipWhitespace()
        if current == UInt8(ascii: "}") {
            position += 1
            return .object(members)
        }
        var keys: Set<String> = []
        while true {
            skipWhitespace()
            guard current == UInt8(ascii: "\""), let key = string(), members.count < Self.maximumMembers else {
                return nil
            }
            // Readers could disagree on which duplicate wins (Foundation's kept the first): refuse.
            if members.count < Self.linearDuplicateCheck {
                guard !members.contains(where: { $0.key == key }) else { return nil }
            } else {
                if keys.isEmpty { keys = Set(members.lazy.map(\.key)) }
                guard keys.insert(key).inserted else { return nil }
            }
            skipWhitespace()
            guard current == UInt8(ascii: ":") else { return nil }
            position += 1
            guard let value = value(depth: depth + 1) else { return nil }
            members.append((key, value))
            skipWhitespace()
            switch current {
            case UInt8(ascii: ","): position += 1
            case UInt8(ascii: "}"):
                position += 1
                return .object(members)
            default: return nil
            }
        }
    }

    private mutating func array(depth: Int) -> JSONValue? {
        position += 1
        var values: [JSONValue] = []
        skipWhitespace()
        if current == UInt8(ascii: "]") {
            position += 1
            return .array(values)
        }
        while true {
            guard let value = value(depth: depth + 1) else { return nil }
            values.append(value)
            skipWhitespace()
            switch current {
            case UInt8(ascii: ","): position += 1
            case UInt8(ascii: "]"):
                position += 1
                return .array(values)
            default: return nil
            }
        }
    }

    /// `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?`, kept as text.
    private mutating func number() -> JSONValue? {
        guard let text = scanNumber() else { return nil }
        return .number(Substring(String(decoding: text, as: UTF8.self)))
    }

    /// The bytes of a number at the current position (see ``number()``), consumed.
    private mutating func scanNumber() -> UnsafeBufferPointer<UInt8>? {
        let start = position
        if current == UInt8(ascii: "-") { position += 1 }
        guard let first = current, isDigit(first) else { return nil }
        position += 1
        if first != UInt8(ascii: "0") { skipDigits() }
        if current == UInt8(ascii: ".") {
            position += 1
            guard let byte = current, isDigit(byte) else { return nil }
            skipDigits()
        }
        if current == UInt8(ascii: "e") || current == UInt8(ascii: "E") {
            position += 1
            if current == UInt8(ascii: "+") || current == UInt8(ascii: "-") { position += 1 }
            guard let byte = current, isDigit(byte) else { return nil }
            skipDigits()
        }
        return UnsafeBufferPointer(rebasing: bytes[start..<position])
    }

    private func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }

    private mutating func skipDigits() {
        while let byte = current, isDigit(byte) { position += 1 }
    }

    /// A string at the current quote; nil for bad escapes, control characters or invalid UTF-8.
    private mutating func string() -> String? {
        position += 1
        let start = position
        // The common case: no escapes, so the bytes are the string.
        while let byte = current, byte != UInt8(ascii: "\""), byte != UInt8(ascii: "\\"), byte >= 0x20 { position += 1 }
        guard let stop = current else { return nil }
        if stop == UInt8(ascii: "\"") {
            position += 1
            return Self.validatedString(UnsafeBufferPointer(rebasing: bytes[start..<position - 1]))
        }
        guard stop == UInt8(ascii: "\\") else { return nil }
        // With escapes (an imported cookies.txt has one per field): plain runs are copied whole.
        var decoded = Array(UnsafeBufferPointer(rebasing: bytes[start..<position]))
        while let byte = current {
            switch byte {
            case UInt8(ascii: "\""):
                position += 1
                return decoded.withUnsafeBufferPointer(Self.validatedString)
            case UInt8(ascii: "\\"):
                position += 1
                guard let escaped = current else { return nil }
                position += 1
                switch escaped {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): decoded.append(escaped)
                case UInt8(ascii: "b"): decoded.append(0x08)
                case UInt8(ascii: "f"): decoded.append(0x0C)
                case UInt8(ascii: "n"): decoded.append(0x0A)
                case UInt8(ascii: "r"): decoded.append(0x0D)
                case UInt8(ascii: "t"): decoded.append(0x09)
                case UInt8(ascii: "u"):
                    guard let scalar = unicodeEscape() else { return nil }
                    decoded.append(contentsOf: String(Character(scalar)).utf8)
                default: return nil
                }
            case 0..<0x20: return nil
            default:
                let runStart = position
                while let next = current, next != UInt8(ascii: "\""), next != UInt8(ascii: "\\"), next >= 0x20 {
                    position += 1
                }
                decoded.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart..<position]))
            }
        }
        return nil
    }

    /// The bytes as a string, nil when they are not valid UTF-8. ASCII, nearly every string of
    /// the protocol, needs no validation; `String(validating:as:)` is generic over the encoding
    /// and looked up type metadata at run time on every call.
    private static func validatedString(_ bytes: UnsafeBufferPointer<UInt8>) -> String? {
        if bytes.allSatisfy({ $0 < 0x80 }) { return String(decoding: bytes, as: UTF8.self) }
        return String(validating: bytes, as: UTF8.self)
    }

    /// The scalar of a `\uXXXX` escape (the `\u` already read), joining a surrogate pair.
    private mutating func unicodeEscape() -> Unicode.Scalar? {
        guard let high = hex4() else { return nil }
        if (0xD800..<0xDC00).contains(high) {
            guard literal("\\u"), let low = hex4(), (0xDC00..<0xE000).contains(low) else { return nil }
            return Unicode.Scalar(0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00))
        }
        return Unicode.Scalar(high)
    }

    private mutating func hex4() -> UInt32? {
        guard bytes.count - position >= 4 else { return nil }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let byte = bytes[position]
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: return nil
            }
            value = value << 4 | UInt32(digit)
            position += 1
        }
        return value
    }
}

// MARK: - Reading a known layout

/// For JSON that keyjard writes itself, always in one layout: each step checks the exact next
/// bytes and reads one value, with the same grammar and conversions as the tree parser, and
/// any surprise (whitespace, another key order, an escaped key) answers nil so that the caller
/// falls back to `JSONReader.parse`. A notified client decodes every change this way without
/// building a tree of dictionaries first.
extension JSONReader {
    package var isAtEnd: Bool { position == bytes.count }

    /// Consumes `text` when the input continues with exactly these bytes.
    package mutating func skip(_ text: StaticString) -> Bool { literal(text) }

    package mutating func readString() -> String? {
        guard current == UInt8(ascii: "\"") else { return nil }
        return string()
    }

    package mutating func readBool() -> Bool? {
        if literal("true") { return true }
        if literal("false") { return false }
        return nil
    }

    /// A number as the tree parser keeps it (text), for its `double` and `uint64` conversions.
    package mutating func readNumber() -> JSONValue? {
        guard let byte = current, byte == UInt8(ascii: "-") || isDigit(byte) else { return nil }
        return number()
    }

    /// A number read as ``JSONValue/double`` reads it, without making its text a string first.
    package mutating func readDouble() -> Double? {
        guard let byte = current, byte == UInt8(ascii: "-") || isDigit(byte), let text = scanNumber() else {
            return nil
        }
        return Self.double(text)
    }

    /// The one conversion of a JSON number's text for the tree and the known layout alike: exact
    /// from the bytes where ``DecimalDouble`` can, else Foundation's, finite only.
    static func double(_ text: UnsafeBufferPointer<UInt8>) -> Double? {
        if let value = DecimalDouble.parse(text) { return value }
        guard let value = Double(String(decoding: text, as: UTF8.self)), value.isFinite else { return nil }
        return value
    }

    /// A number read as ``JSONValue/uint64`` reads it (digits only, in range), without a string.
    package mutating func readUInt64() -> UInt64? {
        guard let byte = current, byte == UInt8(ascii: "-") || isDigit(byte), let text = scanNumber() else {
            return nil
        }
        // `UInt64("-0")` is 0, and so is this: the tree and the known layout never disagree.
        let negative = text.first == UInt8(ascii: "-")
        var value: UInt64 = 0
        for digit in text.dropFirst(negative ? 1 : 0) {
            guard isDigit(digit) else { return nil }
            let (times10, overflow) = value.multipliedReportingOverflow(by: 10)
            let (sum, carry) = times10.addingReportingOverflow(UInt64(digit - UInt8(ascii: "0")))
            guard !overflow, !carry else { return nil }
            value = sum
        }
        return negative && value != 0 ? nil : value
    }
}
