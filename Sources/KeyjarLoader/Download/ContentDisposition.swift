public import Foundation
import KeyjarCore
import KeyjarPlatform

/// A `Content-Disposition` field (RFC 6266): its type and the file name it suggests, with
/// `filename*` (RFC 8187: `UTF-8''…` or `ISO-8859-1'lang'…`, percent-encoded) preferred over
/// `filename`. Malformed parameters are skipped, never fatal: a download still gets a name.
public struct ContentDisposition: Sendable, Hashable {
    /// "attachment", "inline" or another type, lowercased.
    public var type: String
    /// The suggested file name as sent (before it is made safe); nil when none could be read.
    public var filename: String?

    public init?(_ value: String) {
        var scanner = ParameterScanner(value)
        guard let type = scanner.token(), !type.isEmpty else { return nil }
        self.type = type.lowercased()
        var plain: String?
        var extended: String?
        while scanner.skip(";") {
            guard let name = scanner.token()?.lowercased(), scanner.skip("=") else {
                scanner.skipParameter()
                continue
            }
            let raw = scanner.quotedString() ?? scanner.token()
            guard let raw else {
                scanner.skipParameter()
                continue
            }
            switch name {
            case "filename": if plain == nil { plain = raw }
            case "filename*": if extended == nil { extended = Self.decodeExtValue(raw) }
            default: break
            }
        }
        filename = extended ?? plain
    }

    /// RFC 8187's ext-value: charset, optional language, percent-encoded bytes; nil when the
    /// charset is not UTF-8 or ISO-8859-1 or the bytes do not decode.
    static func decodeExtValue(_ text: String) -> String? {
        let parts = text.split(separator: "'", maxSplits: 2, omittingEmptySubsequences: false)
        guard parts.count == 3 else { return nil }
        let charset = parts[0].lowercased()
        guard let bytes = PercentEncoding.decoded(parts[2].utf8, strict: true) else { return nil }
        switch charset {
        case "utf-8": return String(validating: bytes, as: UTF8.self)
        case "iso-8859-1": return String(bytes.map { Character(Unicode.Scalar($0)) })
        default: return nil
        }
    }
}

/// Reads `token`, `"quoted string"` and separators of a header field value.
struct ParameterScanner {
    private let bytes: [UInt8]
    private var position = 0

    init(_ text: String) { bytes = Array(text.utf8) }

    private mutating func skipSpace() {
        while position < bytes.count, bytes[position] == UInt8(ascii: " ") || bytes[position] == UInt8(ascii: "\t") {
            position += 1
        }
    }

    mutating func skip(_ separator: Character) -> Bool {
        skipSpace()
        guard position < bytes.count, let ascii = separator.asciiValue, bytes[position] == ascii else { return false }
        position += 1
        return true
    }

    /// A run of token characters (and, leniently, anything but separators and spaces).
    mutating func token() -> String? {
        skipSpace()
        let start = position
        while position < bytes.count,
            ![UInt8(ascii: ";"), UInt8(ascii: "="), UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\"")].contains(
                bytes[position]
            )
        {
            position += 1
        }
        return position > start ? String(decoding: bytes[start..<position], as: UTF8.self) : nil
    }

    mutating func quotedString() -> String? {
        skipSpace()
        guard position < bytes.count, bytes[position] == UInt8(ascii: "\"") else { return nil }
        var value: [UInt8] = []
        var index = position + 1
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\\"), index + 1 < bytes.count {
                value.append(bytes[index + 1])
                index += 2
                continue
            }
            if byte == UInt8(ascii: "\"") {
                position = index + 1
                return String(decoding: value, as: UTF8.self)
            }
            value.append(byte)
            index += 1
        }
        return nil
    }

    /// Skips to the next ";" (a parameter that could not be read).
    mutating func skipParameter() {
        while position < bytes.count, bytes[position] != UInt8(ascii: ";") { position += 1 }
    }
}

/// The name a download is saved under when none is given (the seed's order):
/// Content-Disposition's file name, else the URL's last path component, else `index.html`; made
/// safe for a file system (no directory part, no control characters, no leading dots, at most
/// 224 bytes: a file system's 255 less room for `-N` and a download's `.keyjar-resume.new`
/// beside it), and unique in a directory on request (`report-1.pdf`).
public enum SuggestedFilename {
    /// The longest name suggested, in bytes.
    public static let maximumBytes = 224

    public static func name(contentDisposition: String?, url: URL?) -> String {
        if let field = contentDisposition, let name = ContentDisposition(field)?.filename, let safe = sanitize(name) {
            return safe
        }
        if let url, let safe = sanitize(url.path) {
            return safe
        }
        return "index.html"
    }

    /// The last path component of `name` (slashes and backslashes both end a directory), with
    /// control characters (C0, DEL, C1) and bidirectional formatting characters removed, leading
    /// dots and spaces stripped, and never named like a file Keyjar keeps beside a download
    /// (``avoidingKeyjarFiles(_:)``); nil when nothing is left.
    ///
    /// All of it by Unicode scalar, never by Character: a combining mark after a slash or a dot
    /// makes one Character of the two (`"/\u{301}"`), which is not equal to "/" or "." — split
    /// by Character, `../\u{301}..` would keep its slash (found by the content-disposition fuzz
    /// target).
    public static func sanitize(_ name: String) -> String? {
        let scalars = name.unicodeScalars
        let last = scalars.split(whereSeparator: { $0 == "/" || $0 == "\\" }).last.map(Array.init) ?? []
        var cleaned = last.filter { !$0.isControlOrBidiFormat }[...]
        while let first = cleaned.first, first == "." || first == " " { cleaned.removeFirst() }
        while let end = cleaned.last, end == " " { cleaned.removeLast() }
        guard !cleaned.isEmpty else { return nil }
        var view = String.UnicodeScalarView()
        view.append(contentsOf: cleaned)
        return shortened(avoidingKeyjarFiles(String(view)))
    }

    /// `name` with every `.keyjar-` (in any case) made `_keyjar-`: a download keeps its partial
    /// data, record and decoded copy beside its name as `NAME.keyjar-part`, `.keyjar-resume`,
    /// `.keyjar-resume.new` and `.keyjar-decoded`, and a server must not be able to name a file
    /// that is one of another download's (to replace it with `--overwrite`, or plant a record
    /// that `-C -O` reads).
    public static func avoidingKeyjarFiles(_ name: String) -> String {
        let marker = ".keyjar-"
        guard name.lowercased().contains(marker) else { return name }
        var result = ""
        var rest = Substring(name)
        while let range = rest.range(of: marker, options: .caseInsensitive) {
            result += rest[..<range.lowerBound] + "_" + rest[rest.index(after: range.lowerBound)..<range.upperBound]
            rest = rest[range.upperBound...]
        }
        return result + rest
    }

    /// `name` (no leading dot) cut to ``maximumBytes``, the extension kept when it is short.
    /// Scalars go from the end of the stem one by one: a Character may be a letter with hundreds
    /// of combining marks, and dropping it whole could leave the extension alone, a hidden name.
    private static func shortened(_ name: String) -> String {
        guard name.utf8.count > maximumBytes else { return name }
        let (stem, suffix) = split(name)
        var kept = Array(stem.unicodeScalars)
        var bytes = stem.utf8.count
        while bytes + suffix.utf8.count > maximumBytes, let last = kept.popLast() { bytes -= UTF8.width(last) }
        var view = String.UnicodeScalarView()
        if kept.isEmpty {
            // Even the extension is too long: the name's first scalars (its first is no dot).
            var total = 0
            for scalar in name.unicodeScalars {
                total += UTF8.width(scalar)
                guard total <= maximumBytes else { break }
                view.append(scalar)
            }
            return String(view)
        }
        view.append(contentsOf: kept)
        return String(view) + suffix
    }

    /// `name`, or the first of `stem-1.ext`, `stem-2.ext`, … for which `exists` is false.
    public static func unique(_ name: String, exists: (String) -> Bool) -> String {
        guard exists(name) else { return name }
        let (stem, suffix) = split(name)
        var number = 1
        while exists("\(stem)-\(number)\(suffix)") { number += 1 }
        return "\(stem)-\(number)\(suffix)"
    }

    /// The name before its extension and the extension with its dot; `.tar.*` counts as one.
    static func split(_ name: String) -> (String, String) {
        let lowered = name.lowercased()
        for double in [".tar.gz", ".tar.bz2", ".tar.xz", ".tar.zst"]
        where lowered.hasSuffix(double) && lowered.count > double.count {
            return (String(name.dropLast(double.count)), String(name.suffix(double.count)))
        }
        guard let dot = name.lastIndex(of: "."), dot != name.startIndex,
            name.distance(from: dot, to: name.endIndex) <= 16
        else {
            return (name, "")
        }
        return (String(name[..<dot]), String(name[dot...]))
    }
}
