import FoundationEssentials

/// A minimal JSON writer for Keyjar's formats, appending bytes: String appends piece by piece
/// cost several times as much (docs/performance.md, Engine and wire coding).
package struct JSONWriter {
    package var bytes: [UInt8] = []

    package init() {}

    package var output: String { String(decoding: bytes, as: UTF8.self) }

    @inline(__always)
    package mutating func raw(_ text: StaticString) {
        bytes.append(contentsOf: UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    /// Shortest round-tripping form; a non-finite number (never stored) is written as 0.
    package mutating func write(number: Double) {
        bytes.append(contentsOf: (number.isFinite ? "\(number)" : "0").utf8)
    }

    // Concrete rather than generic: a generic of this module is not specialized in the
    // modules that write messages, and every message has a sequence number or an id.
    package mutating func write(integer: Int) {
        bytes.append(contentsOf: String(integer).utf8)
    }

    package mutating func write(integer: UInt64) {
        bytes.append(contentsOf: String(integer).utf8)
    }

    /// The other widths (a status's pid, an error's code), written rarely.
    package mutating func write(integer: some BinaryInteger) {
        bytes.append(contentsOf: "\(integer)".utf8)
    }

    package mutating func write(bool: Bool) {
        if bool { raw("true") } else { raw("false") }
    }

    package mutating func write(string: String) {
        bytes.append(UInt8(ascii: "\""))
        var string = string
        // Runs that need no escaping are copied whole: cookie headers and imported files are
        // long, and appending byte by byte dominated their encoding.
        string.withUTF8 { utf8 in
            var runStart = 0
            for index in utf8.indices {
                let byte = utf8[index]
                guard byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") else { continue }
                if runStart < index { bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[runStart..<index])) }
                writeEscape(byte)
                runStart = index + 1
            }
            if runStart < utf8.count { bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[runStart...])) }
        }
        bytes.append(UInt8(ascii: "\""))
    }

    private mutating func writeEscape(_ byte: UInt8) {
        switch byte {
        case UInt8(ascii: "\""): raw("\\\"")
        case UInt8(ascii: "\\"): raw("\\\\")
        case 0x08: raw("\\b")
        case 0x09: raw("\\t")
        case 0x0A: raw("\\n")
        case 0x0C: raw("\\f")
        case 0x0D: raw("\\r")
        default:
            func hexDigit(_ value: UInt8) -> UInt8 {
                value < 10 ? UInt8(ascii: "0") + value : UInt8(ascii: "a") + value - 10
            }
            raw("\\u00")
            bytes.append(hexDigit(byte >> 4))
            bytes.append(hexDigit(byte & 0xF))
        }
    }
}
