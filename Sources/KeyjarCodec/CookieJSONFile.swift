public import FoundationEssentials
public import KeyjarCore

/// Keyjar's JSON cookie file: an array of objects with every stored field, times as Unix
/// seconds (fractions kept, so creation order survives a round trip), and a partitioned
/// cookie's `partitionKey` (`"https://example.com"`; absent for an unpartitioned cookie).
///
/// ```json
/// [{"name":"sid","value":"42","domain":"example.com","hostOnly":false,"path":"/",
///   "expires":1767225600,"secure":true,"httpOnly":true,"sameSite":"Lax",
///   "creation":1735689600.25,"lastAccess":1735689600.25}]
/// ```
public enum CookieJSONFile {
    /// Encodes cookies as indented JSON with sorted keys (stable diffs).
    public static func serialize(_ cookies: [Cookie]) -> Data {
        var writer = JSONWriter()
        writer.write(fileCookies: cookies)
        return Data(writer.bytes)
    }

    /// Decodes a JSON array of cookies. A document that is not such an array is one problem at
    /// line 0; an entry with a bad field is a problem numbered by its 1-based position. Only
    /// `name`, `value` and `domain` are required: a missing (or null) `hostOnly` is true, `path`
    /// is "/", `secure`, `httpOnly` false, `sameSite` Unspecified, and a cookie without
    /// `creation` is one the import gives a fresh time.
    public static func parse(_ data: Data) -> (cookies: [NumberedCookie], problems: [CookieFileProblem]) {
        var bytes = Array(data)
        // Editors on some systems start a UTF-8 file with a byte order mark.
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { bytes.removeFirst(3) }
        guard let json = JSONReader.parse(bytes) else {
            return (
                [], [CookieFileProblem(line: 0, message: "not a JSON array of cookies: the data is not valid JSON")]
            )
        }
        guard case .array(let entries) = json else {
            return (
                [], [CookieFileProblem(line: 0, message: "not a JSON array of cookies: field '' has the wrong type")]
            )
        }
        var cookies: [NumberedCookie] = []
        var problems: [CookieFileProblem] = []
        for (offset, entry) in entries.enumerated() {
            let number = offset + 1
            do {
                cookies.append(try cookie(entry, line: number))
            } catch {
                problems.append(CookieFileProblem(line: number, message: describe(error)))
            }
        }
        return (cookies, problems)
    }

    private static func cookie(_ entry: JSONValue, line: Int) throws(JSONShapeError) -> NumberedCookie {
        let members = try CookieMembers(json: entry, nullIsAbsent: true)
        guard let name = members.name else { throw JSONShapeError(.missing("name")) }
        guard let value = members.value else { throw JSONShapeError(.missing("value")) }
        guard let domain = members.domain else { throw JSONShapeError(.missing("domain")) }
        let cookie = Cookie(
            name: name,
            value: value,
            domain: domain.lowercased(),
            hostOnly: members.hostOnly ?? true,
            path: members.path ?? "/",
            expires: members.expires.map(Date.init(timeIntervalSince1970:)),
            secure: members.secure ?? false,
            httpOnly: members.httpOnly ?? false,
            sameSite: members.sameSite ?? .unspecified,
            creation: Date(timeIntervalSince1970: members.creation ?? 0),
            lastAccess: members.lastAccess.map(Date.init(timeIntervalSince1970:)),
            partitionKey: members.partitionKey
        )
        return NumberedCookie(line: line, cookie: cookie, hasCreationTime: members.creation != nil)
    }

    /// The entry's position is reported separately, so paths name only the field.
    private static func describe(_ error: JSONShapeError) -> String {
        let field = error.path.joined(separator: ".")
        switch error.problem {
        case .missing(let key): return "missing field '\(key)'"
        case .wrongType: return "field '\(field)' has the wrong type"
        case .invalidValue: return "field '\(field)' is invalid"
        }
    }
}
