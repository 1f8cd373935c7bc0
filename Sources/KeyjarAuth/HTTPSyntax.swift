/// RFC 9110 §5.6 character classes and quoting, shared by the challenge parser and the
/// Authorization writers.
package enum HTTPSyntax {
    /// tchar: the characters of a `token`.
    package static func isTokenCharacter(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"):
            return true
        default:
            return "!#$%&'*+-.^_`|~".utf8.contains(byte)
        }
    }

    /// The characters of a `token68` before its trailing `=` padding.
    package static func isToken68Character(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"):
            return true
        default:
            return "-._~+/".utf8.contains(byte)
        }
    }

    /// A quoted-string with `"` and `\` escaped; other characters are left alone, so the caller
    /// must not pass control characters it wants the receiver to accept.
    package static func quoted(_ value: String) -> String {
        var result = "\""
        for character in value.unicodeScalars {
            if character == "\"" || character == "\\" { result.append("\\") }
            result.unicodeScalars.append(character)
        }
        return result + "\""
    }

    /// Whether `value` fits in a quoted-string without change of meaning: printable ASCII,
    /// space and tab only (RFC 7616 §3.4.4 sends anything else as `username*`).
    package static func isQuotableASCII(_ value: String) -> Bool {
        value.utf8.allSatisfy { $0 == 0x09 || (0x20...0x7E).contains($0) }
    }
}
