import Foundation

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
    public static func parse(_ text: String) -> (cookies: [NumberedCookie], problems: [CookieFileProblem]) {
        var cookies: [NumberedCookie] = []
        var problems: [CookieFileProblem] = []
        var lineNumber = 0
        for rawLine in text.split(separator: "\n", omittingEmptySubsequences: false) {
            lineNumber += 1
            var line = rawLine
            if line.last == "\r" { line = line.dropLast() }
            if line.allSatisfy({ $0 == " " || $0 == "\t" }) { continue }
            if line.hasPrefix("#") && !line.hasPrefix(httpOnlyPrefix) { continue }
            switch parseLine(line) {
            case .success(let cookie):
                cookies.append(NumberedCookie(line: lineNumber, cookie: cookie, hasCreationTime: false))
            case .failure(let problem): problems.append(CookieFileProblem(line: lineNumber, message: problem.message))
            }
        }
        return (cookies, problems)
    }

    private struct LineProblem: Error {
        var message: String
    }

    private static func parseLine(_ line: Substring) -> Result<Cookie, LineProblem> {
        var fields = line.split(separator: "\t", omittingEmptySubsequences: false)
        // curl writes a cookie with an empty value as six fields.
        if fields.count == 6 { fields.append("") }
        guard fields.count == 7 || fields.count == 8 else {
            return .failure(LineProblem(message: "expected 7 tab-separated fields, found \(fields.count)"))
        }
        var domain = fields[0]
        var httpOnly = false
        if domain.hasPrefix(httpOnlyPrefix) {
            httpOnly = true
            domain = domain.dropFirst(httpOnlyPrefix.count)
        }
        guard let includeSubdomains = parseBool(fields[1]) else {
            return .failure(LineProblem(message: "include-subdomains must be TRUE or FALSE, not '\(fields[1])'"))
        }
        guard let secure = parseBool(fields[3]) else {
            return .failure(LineProblem(message: "secure must be TRUE or FALSE, not '\(fields[3])'"))
        }
        guard let seconds = Int64(fields[4]), seconds >= 0 else {
            return .failure(LineProblem(message: "expiry must be a non-negative number of seconds, not '\(fields[4])'"))
        }
        let hadDot = domain.hasPrefix(".")
        if hadDot { domain = domain.dropFirst() }
        guard !domain.isEmpty else { return .failure(LineProblem(message: "the domain is empty")) }
        var sameSite = SameSite.unspecified
        if fields.count == 8, !fields[7].isEmpty {
            let parsed = SameSite(attributeValue: fields[7])
            guard parsed != .unspecified || fields[7].lowercased() == "unspecified" else {
                return .failure(LineProblem(message: "SameSite must be Strict, Lax or None, not '\(fields[7])'"))
            }
            sameSite = parsed
        }
        let cookie = Cookie(
            name: String(fields[5]), value: String(fields[6]), domain: domain.lowercased(),
            hostOnly: !(includeSubdomains || hadDot), path: String(fields[2]),
            expires: seconds == 0 ? nil : Date(timeIntervalSince1970: TimeInterval(seconds)),
            secure: secure, httpOnly: httpOnly, sameSite: sameSite, creation: Date(timeIntervalSince1970: 0))
        return .success(cookie)
    }

    private static func parseBool(_ field: Substring) -> Bool? {
        switch field.uppercased() {
        case "TRUE": return true
        case "FALSE": return false
        default: return nil
        }
    }

    /// Writes cookies in curl's layout; `includeSameSite` adds libsoup's eighth column.
    public static func serialize(_ cookies: [Cookie], includeSameSite: Bool = false) -> String {
        var text = header
        for cookie in cookies {
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
}
