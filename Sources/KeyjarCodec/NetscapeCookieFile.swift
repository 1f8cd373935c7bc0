import FoundationEssentials
public import KeyjarCore

/// The Netscape `cookies.txt` format that curl, wget, yt-dlp and libsoup read and write.
///
/// One cookie a line, seven tab-separated fields: domain, include-subdomains (`TRUE`/`FALSE`),
/// path, secure (`TRUE`/`FALSE`), expiry (Unix seconds, 0 for a session cookie), name, value.
/// A domain prefixed `#HttpOnly_` marks an HttpOnly cookie; other `#` lines are comments. An
/// optional eighth field carries SameSite as libsoup writes it; curl rejects eight-field lines,
/// so it is written only on request.
///
/// ```swift
/// let parsed = NetscapeCookieFile.parse(try String(contentsOfFile: "cookies.txt", encoding: .utf8))
/// let report = jar.importCookies(parsed.cookies, problems: parsed.problems)
/// ```
public enum NetscapeCookieFile {
    static let httpOnlyPrefix = "#HttpOnly_"
    static let header = "# Netscape HTTP Cookie File\n# Written by Keyjar. Edit at your own risk.\n\n"

    /// Reads every line; malformed ones come back as problems with their line numbers.
    ///
    /// Lines end at LF, with a CR before it dropped (files written on Windows). The parse runs
    /// on the UTF-8 bytes: keyjard parses every import request (`keyjar cookie import` sends a
    /// file in batches of thousands of lines), and splitting the text into `Character`s costs
    /// more than storing its cookies (docs/performance.md, Imports).
    public static func parse(_ text: String) -> (cookies: [NumberedCookie], problems: [CookieFileProblem]) {
        var text = text
        return text.withUTF8 { parse(bytes: $0) }
    }

    private static func parse(
        bytes: UnsafeBufferPointer<UInt8>
    ) -> (cookies: [NumberedCookie], problems: [CookieFileProblem]) {
        var cookies: [NumberedCookie] = []
        cookies.reserveCapacity(bytes.count / 64)
        var problems: [CookieFileProblem] = []
        var lineNumber = 0
        // A UTF-8 byte-order mark (written by Windows editors) is not part of the first line.
        var lineStart = bytes.starts(with: [0xEF, 0xBB, 0xBF]) ? 3 : 0
        // `<=`: text ending without a newline still has its last line; after a final newline
        // the empty remainder is a blank line, skipped like any other.
        while lineStart <= bytes.count {
            lineNumber += 1
            var lineEnd = lineStart
            while lineEnd < bytes.count, bytes[lineEnd] != newline { lineEnd += 1 }
            var contentEnd = lineEnd
            if contentEnd > lineStart, bytes[contentEnd - 1] == carriageReturn { contentEnd -= 1 }
            let line = UnsafeBufferPointer(rebasing: bytes[lineStart..<contentEnd])
            lineStart = lineEnd + 1
            if line.allSatisfy({ $0 == space || $0 == tab }) { continue }
            if line.first == UInt8(ascii: "#") && !line.starts(with: httpOnlyPrefix.utf8) { continue }
            switch parseLine(line) {
            case .success(let cookie):
                cookies.append(NumberedCookie(line: lineNumber, cookie: cookie, hasCreationTime: false))
            case .failure(let problem): problems.append(CookieFileProblem(line: lineNumber, message: problem.message))
            }
        }
        return (cookies, problems)
    }

    private static let newline = UInt8(ascii: "\n")
    private static let carriageReturn = UInt8(ascii: "\r")
    private static let space = UInt8(ascii: " ")
    private static let tab = UInt8(ascii: "\t")

    private struct LineProblem: Error {
        var message: String
    }

    private typealias Field = UnsafeBufferPointer<UInt8>

    private static func parseLine(_ line: Field) -> Result<Cookie, LineProblem> {
        var fields: [Field] = []
        fields.reserveCapacity(8)
        var fieldStart = 0
        for index in line.indices where line[index] == tab {
            fields.append(Field(rebasing: line[fieldStart..<index]))
            fieldStart = index + 1
        }
        fields.append(Field(rebasing: line[fieldStart...]))
        // curl writes a cookie with an empty value as six fields.
        if fields.count == 6 { fields.append(Field(rebasing: line[line.count...])) }
        guard fields.count == 7 || fields.count == 8 else {
            return .failure(LineProblem(message: "expected 7 tab-separated fields, found \(fields.count)"))
        }
        var domain = fields[0]
        var httpOnly = false
        if domain.starts(with: httpOnlyPrefix.utf8) {
            httpOnly = true
            domain = Field(rebasing: domain[httpOnlyPrefix.utf8.count...])
        }
        guard let includeSubdomains = parseBool(fields[1]) else {
            return .failure(LineProblem(message: "include-subdomains must be TRUE or FALSE, not '\(text(fields[1]))'"))
        }
        guard let secure = parseBool(fields[3]) else {
            return .failure(LineProblem(message: "secure must be TRUE or FALSE, not '\(text(fields[3]))'"))
        }
        guard let seconds = parseExpiry(fields[4]) else {
            return .failure(
                LineProblem(message: "expiry must be a non-negative number of seconds, not '\(text(fields[4]))'")
            )
        }
        let hadDot = domain.first == UInt8(ascii: ".")
        if hadDot { domain = Field(rebasing: domain[1...]) }
        guard !domain.isEmpty else { return .failure(LineProblem(message: "the domain is empty")) }
        var domainText = lowercased(domain)
        if domain.contains(where: { $0 >= 0x80 }) {
            // A Unicode domain (`bücher.example`) is stored, matched and sent as its IDNA A-labels.
            guard let ascii = Host.normalisedDomain(domainText) else {
                return .failure(LineProblem(message: "the domain '\(domainText)' is not a valid domain name"))
            }
            domainText = ascii
        }
        var sameSite = SameSite.unspecified
        if fields.count == 8, !fields[7].isEmpty {
            let value = text(fields[7])
            let parsed = SameSite(attributeValue: value)
            guard parsed != .unspecified || value.lowercased() == "unspecified" else {
                return .failure(LineProblem(message: "SameSite must be Strict, Lax or None, not '\(value)'"))
            }
            sameSite = parsed
        }
        let cookie = Cookie(
            name: text(fields[5]),
            value: text(fields[6]),
            domain: domainText,
            hostOnly: !(includeSubdomains || hadDot),
            path: text(fields[2]),
            expires: seconds == 0 ? nil : Date(timeIntervalSince1970: seconds),
            secure: secure,
            httpOnly: httpOnly,
            sameSite: sameSite,
            creation: Date(timeIntervalSince1970: 0)
        )
        return .success(cookie)
    }

    /// The bytes of a field as text. They came from a `String` and were cut at ASCII tabs and
    /// newlines only, so they are valid UTF-8.
    private static func text(_ field: Field) -> String { String(decoding: field, as: UTF8.self) }

    private static func lowercased(_ field: Field) -> String {
        guard field.contains(where: { $0 >= 0x80 || ($0 >= UInt8(ascii: "A") && $0 <= UInt8(ascii: "Z")) }) else {
            return text(field)
        }
        return text(field).lowercased()
    }

    /// `TRUE` or `FALSE` in any letter case.
    private static func parseBool(_ field: Field) -> Bool? {
        func equalsIgnoringCase(_ word: StaticString) -> Bool {
            guard field.count == word.utf8CodeUnitCount else { return false }
            for index in field.indices where field[index] & 0xDF != word.utf8Start[index] { return false }
            return true
        }
        if equalsIgnoringCase("TRUE") { return true }
        if equalsIgnoringCase("FALSE") { return false }
        return nil
    }

    /// The expiry: decimal seconds, with a fraction (`1795701324.5`, as some exporters write
    /// it) kept; never negative.
    private static func parseExpiry(_ field: Field) -> Double? {
        guard let dot = field.firstIndex(of: UInt8(ascii: ".")) else { return parseSeconds(field).map(Double.init) }
        let fraction = field[(dot + 1)...]
        guard let whole = parseSeconds(Field(rebasing: field[..<dot])), !fraction.isEmpty,
            fraction.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") })
        else { return nil }
        return Double(text(field)).map { max(0, $0) } ?? Double(whole)
    }

    /// Decimal seconds, an optional sign allowed, never negative.
    private static func parseSeconds(_ field: Field) -> Int64? {
        var digits = field[...]
        var negative = false
        if let sign = digits.first, sign == UInt8(ascii: "+") || sign == UInt8(ascii: "-") {
            negative = sign == UInt8(ascii: "-")
            digits = digits.dropFirst()
        }
        guard !digits.isEmpty else { return nil }
        var value: Int64 = 0
        for byte in digits {
            guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
            let (shifted, overflow) = value.multipliedReportingOverflow(by: 10)
            let (sum, overflowAgain) = shifted.addingReportingOverflow(Int64(byte - UInt8(ascii: "0")))
            guard !overflow, !overflowAgain else { return nil }
            value = sum
        }
        return negative && value != 0 ? nil : value
    }

    /// Writes cookies in curl's layout; `includeSameSite` adds libsoup's eighth column.
    /// Partitioned cookies are left out (``canCarry(_:)``).
    public static func serialize(_ cookies: [Cookie], includeSameSite: Bool = false) -> String {
        var text = header
        for cookie in cookies where canCarry(cookie) {
            let domain = (cookie.httpOnly ? httpOnlyPrefix : "") + (cookie.hostOnly ? "" : ".") + cookie.domain
            var fields = [
                domain, cookie.hostOnly ? "FALSE" : "TRUE", cookie.path, cookie.secure ? "TRUE" : "FALSE",
                String(cookie.expires.map { max(1, Int64($0.timeIntervalSince1970.rounded(.up))) } ?? 0),
                cookie.name, cookie.value,
            ]
            if includeSameSite { fields.append(cookie.sameSite == .unspecified ? "" : cookie.sameSite.rawValue) }
            text += fields.joined(separator: "\t") + "\n"
        }
        return text
    }

    /// Whether a cookies.txt line can hold `cookie`: not when it is partitioned, since the
    /// format has no column for the partition key, and a line without it would be read back as
    /// an unpartitioned cookie that goes to every site.
    public static func canCarry(_ cookie: Cookie) -> Bool { !cookie.isPartitioned }
}
