/// The `.netrc` file that curl (`--netrc`), ftp, wget, Python and git's `netrc` remote helper
/// read: logins and passwords by machine name.
///
/// Read as curl's `lib/netrc.c` reads it: words separated by blanks and newlines; the keywords
/// `machine NAME`, `default`, `login VALUE`, `password VALUE`, `account VALUE` and
/// `macdef NAME` (case-insensitive); a value may be quoted, `"with \"escapes\", \n, \r and \t"`;
/// a line whose first non-blank character is `#` is a comment, and so is the rest of a line from
/// a word starting with `#` where a keyword belongs; a `macdef` runs to the next empty line and
/// is skipped whole. Stricter than curl in one way: a word that is no keyword and no
/// keyword's value (curl ignores it) is an error, because it is almost always the second word of
/// an unquoted value with a space in it, which curl would silently cut short.
///
/// ```swift
/// let entries = try NetrcFile.parse("machine example.com login alice password s3cret\n")
/// entries[0].host      // .machine("example.com")
/// entries[0].login     // "alice"
/// ```
public enum NetrcFile {
    /// One `machine` or `default` entry with the values that followed it.
    public struct Entry: Sendable, Hashable, CustomStringConvertible, CustomDebugStringConvertible {
        public enum Host: Sendable, Hashable {
            /// `machine NAME`: that host, as curl matches it (any scheme, any port).
            case machine(String)
            /// `default`: every host no `machine` names.
            case `default`
        }

        public var host: Host
        public var login: String?
        public var password: String?
        /// The line of the entry's `machine` or `default`.
        public var line: Int

        public init(host: Host, login: String? = nil, password: String? = nil, line: Int) {
            self.host = host
            self.login = login
            self.password = password
            self.line = line
        }

        public var description: String {
            let name =
                switch host {
                case .machine(let name): "machine \(name)"
                case .default: "default"
                }
            let login = login.map { " login \($0)" } ?? ""
            let password = password == nil ? "" : " password <hidden>"
            return "line \(line): \(name)\(login)\(password)"
        }
        public var debugDescription: String { description }
    }

    /// Why a file is not a netrc file, with the line. Never repeats a value: any word may be a
    /// password, or part of one.
    public struct ParseError: Error, Sendable, Hashable, CustomStringConvertible {
        public enum Reason: Sendable, Hashable {
            /// A quoted value with no closing quote on its line.
            case unterminatedQuote
            /// A keyword at the end of the file, without the value it takes.
            case missingValue(keyword: String)
            /// `login`, `password` or `account` before any `machine` or `default`, or after a
            /// `macdef` (which ends the entry).
            case outsideEntry(keyword: String)
            /// A word that is neither a keyword nor a keyword's value.
            case unexpectedWord
            /// A NUL character, which no C reader of the file would see past.
            case nulCharacter
        }

        public let line: Int
        public let reason: Reason

        public init(line: Int, reason: Reason) {
            self.line = line
            self.reason = reason
        }

        public var description: String {
            let message =
                switch reason {
                case .unterminatedQuote: "a quoted value has no closing quote on its line"
                case .missingValue(let keyword): "'\(keyword)' at the end of the file has no value"
                case .outsideEntry(let keyword): "'\(keyword)' belongs to no 'machine' or 'default' entry"
                case .unexpectedWord:
                    "a word that is not a netrc keyword (machine, default, login, password, account, "
                        + "macdef) nor a keyword's value; quote a value that contains a space"
                case .nulCharacter: "the line contains a NUL character"
                }
            return "line \(line): \(message)"
        }
    }

    /// Reads every entry, in the file's order (curl uses the first that matches).
    /// - Throws: ``ParseError`` for the first malformed line.
    public static func parse(_ text: String) throws(ParseError) -> [Entry] {
        var text = text
        // withUTF8 rethrows untyped: the error comes out as a value.
        let parsed: Result<[Entry], ParseError> = text.withUTF8 { bytes in
            var parser = Parser()
            do throws(ParseError) {
                try parser.run(bytes)
                return .success(parser.entries)
            } catch {
                return .failure(error)
            }
        }
        return try parsed.get()
    }

    /// A word and the line it is on.
    private struct Token {
        var value: String
        var line: Int
        /// Whether it was quoted: a quoted word is always a value, never a keyword.
        var quoted: Bool
    }

    private struct Parser {
        var entries: [Entry] = []
        /// Whether `login`, `password` and `account` may follow (an entry is open).
        private var inEntry = false
        /// The keyword waiting for its value.
        private var pending: Token?

        mutating func run(_ bytes: UnsafeBufferPointer<UInt8>) throws(ParseError) {
            var lineNumber = 0
            var inMacro = false
            // A UTF-8 byte-order mark is not part of the first word.
            var lineStart = bytes.starts(with: [0xEF, 0xBB, 0xBF]) ? 3 : 0
            while lineStart < bytes.count {
                lineNumber += 1
                var lineEnd = lineStart
                while lineEnd < bytes.count, bytes[lineEnd] != newline { lineEnd += 1 }
                let line = UnsafeBufferPointer(rebasing: bytes[lineStart..<lineEnd])
                lineStart = lineEnd + 1
                if line.contains(0) { throw ParseError(line: lineNumber, reason: .nulCharacter) }
                var first = 0
                while first < line.count, isBlank(line[first]) { first += 1 }
                // Comments go first, as curl drops them on loading: a comment line inside a
                // macro therefore neither belongs to it nor ends it.
                if first < line.count, line[first] == hash { continue }
                if inMacro {
                    // Only an empty line (CRs aside) ends a macro, as in curl.
                    if line.allSatisfy({ $0 == carriageReturn }) { inMacro = false }
                    continue
                }
                var position = first
                while let token = try nextToken(line, &position, lineNumber) {
                    // A word starting with `#` where a keyword belongs begins a comment to the end
                    // of the line, as Python's netrc reads it (curl skips such words as junk).
                    if pending == nil, !token.quoted, token.value.hasPrefix("#") { break }
                    if try take(token) {
                        // The rest of the `macdef` line and the lines up to an empty one.
                        inMacro = true
                        break
                    }
                }
            }
            if let pending {
                throw ParseError(line: pending.line, reason: .missingValue(keyword: pending.value.lowercased()))
            }
        }

        /// Feeds one word; true when it began a macro definition.
        private mutating func take(_ token: Token) throws(ParseError) -> Bool {
            if let keyword = pending {
                pending = nil
                let value = token.value
                switch keyword.value.lowercased() {
                case "machine":
                    entries.append(Entry(host: .machine(value), line: keyword.line))
                    inEntry = true
                case "login": entries[entries.count - 1].login = value
                case "password": entries[entries.count - 1].password = value
                default:
                    // `account`: FTP's ACCT password, which no HTTP credential has; dropped.
                    break
                }
                return false
            }
            let keyword = token.quoted ? "" : token.value.lowercased()
            switch keyword {
            case "machine":
                pending = token
            case "default":
                entries.append(Entry(host: .default, line: token.line))
                inEntry = true
            case "login", "password", "account":
                guard inEntry else { throw ParseError(line: token.line, reason: .outsideEntry(keyword: keyword)) }
                pending = token
            case "macdef":
                // A macro ends the entry before it, and runs from its name to the next empty
                // line, as in curl.
                inEntry = false
                return true
            default:
                throw ParseError(line: token.line, reason: .unexpectedWord)
            }
            return false
        }

        /// The next word of the line from `position`, or nil at its end.
        private func nextToken(
            _ line: UnsafeBufferPointer<UInt8>,
            _ position: inout Int,
            _ lineNumber: Int
        ) throws(ParseError) -> Token? {
            while position < line.count, isBlank(line[position]) { position += 1 }
            guard position < line.count else { return nil }
            guard line[position] == quote else {
                let start = position
                while position < line.count, !isBlank(line[position]) { position += 1 }
                return Token(
                    value: String(decoding: UnsafeBufferPointer(rebasing: line[start..<position]), as: UTF8.self),
                    line: lineNumber,
                    quoted: false
                )
            }
            position += 1
            var value: [UInt8] = []
            var escaped = false
            while position < line.count {
                let byte = line[position]
                position += 1
                if escaped {
                    escaped = false
                    switch byte {
                    case UInt8(ascii: "n"): value.append(newline)
                    case UInt8(ascii: "r"): value.append(carriageReturn)
                    case UInt8(ascii: "t"): value.append(tab)
                    default: value.append(byte)
                    }
                } else if byte == backslash {
                    escaped = true
                } else if byte == quote {
                    return Token(value: String(decoding: value, as: UTF8.self), line: lineNumber, quoted: true)
                } else {
                    value.append(byte)
                }
            }
            throw ParseError(line: lineNumber, reason: .unterminatedQuote)
        }
    }

    /// Blanks between words: space, tab, and a CR (of a line ending in CRLF), as curl's lexer.
    private static func isBlank(_ byte: UInt8) -> Bool {
        byte == UInt8(ascii: " ") || byte == tab || byte == carriageReturn
    }

    private static let newline = UInt8(ascii: "\n")
    private static let carriageReturn = UInt8(ascii: "\r")
    private static let tab = UInt8(ascii: "\t")
    private static let hash = UInt8(ascii: "#")
    private static let quote = UInt8(ascii: "\"")
    private static let backslash = UInt8(ascii: "\\")
}
