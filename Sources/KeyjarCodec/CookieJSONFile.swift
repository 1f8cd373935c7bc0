public import Foundation
public import KeyjarCore

/// Keyjar's JSON cookie file: an array of objects with every stored field, times as Unix
/// seconds (fractions kept, so creation order survives a round trip).
///
/// ```json
/// [{"name":"sid","value":"42","domain":"example.com","hostOnly":false,"path":"/",
///   "expires":1767225600,"secure":true,"httpOnly":true,"sameSite":"Lax",
///   "creation":1735689600.25,"lastAccess":1735689600.25}]
/// ```
public enum CookieJSONFile {
    private struct Entry: Codable {
        var name: String
        var value: String
        var domain: String
        var hostOnly: Bool?
        var path: String?
        var expires: Double?
        var secure: Bool?
        var httpOnly: Bool?
        var sameSite: SameSite?
        var creation: Double?
        var lastAccess: Double?
    }

    /// Decodes one array element on its own, so that one bad entry does not hide the others.
    private struct FailableEntry: Decodable {
        var result: Result<Entry, any Error>

        init(from decoder: any Decoder) {
            result = Result { try Entry(from: decoder) }
        }
    }

    /// Encodes cookies as pretty-printed JSON with sorted keys (stable diffs).
    public static func serialize(_ cookies: [Cookie]) -> Data {
        let entries = cookies.map { cookie in
            Entry(
                name: cookie.name,
                value: cookie.value,
                domain: cookie.domain,
                hostOnly: cookie.hostOnly,
                path: cookie.path,
                expires: cookie.expires?.timeIntervalSince1970,
                secure: cookie.secure,
                httpOnly: cookie.httpOnly,
                sameSite: cookie.sameSite,
                creation: cookie.creation.timeIntervalSince1970,
                lastAccess: cookie.lastAccess.timeIntervalSince1970
            )
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        // Encoding plain strings, numbers and booleans cannot fail.
        return (try? encoder.encode(entries)) ?? Data("[]".utf8)
    }

    /// Decodes a JSON array of cookies. A document that is not such an array is one problem at
    /// line 0; an entry with a bad field is a problem numbered by its 1-based position.
    public static func parse(_ data: Data) -> (cookies: [NumberedCookie], problems: [CookieFileProblem]) {
        let raw: [FailableEntry]
        do {
            raw = try JSONDecoder().decode([FailableEntry].self, from: data)
        } catch {
            return ([], [CookieFileProblem(line: 0, message: "not a JSON array of cookies: \(describe(error))")])
        }
        var cookies: [NumberedCookie] = []
        var problems: [CookieFileProblem] = []
        for (offset, decoded) in raw.enumerated() {
            let number = offset + 1
            do {
                let entry = try decoded.result.get()
                guard entry.expires?.isFinite ?? true, entry.creation?.isFinite ?? true,
                    entry.lastAccess?.isFinite ?? true
                else { throw CookieFileProblem(line: number, message: "times must be finite numbers") }
                let creation = Date(timeIntervalSince1970: entry.creation ?? 0)
                let cookie = Cookie(
                    name: entry.name,
                    value: entry.value,
                    domain: entry.domain.lowercased(),
                    hostOnly: entry.hostOnly ?? true,
                    path: entry.path ?? "/",
                    expires: entry.expires.map(Date.init(timeIntervalSince1970:)),
                    secure: entry.secure ?? false,
                    httpOnly: entry.httpOnly ?? false,
                    sameSite: entry.sameSite ?? .unspecified,
                    creation: creation,
                    lastAccess: entry.lastAccess.map(Date.init(timeIntervalSince1970:))
                )
                cookies.append(NumberedCookie(line: number, cookie: cookie, hasCreationTime: entry.creation != nil))
            } catch let problem as CookieFileProblem {
                problems.append(problem)
            } catch {
                problems.append(CookieFileProblem(line: number, message: describe(error)))
            }
        }
        return (cookies, problems)
    }

    private static func describe(_ error: any Error) -> String {
        // The entry's position is reported separately, so array indices are left out of paths.
        func fieldPath(_ context: DecodingError.Context) -> String {
            context.codingPath.filter { $0.intValue == nil }.map(\.stringValue).joined(separator: ".")
        }
        switch error as? DecodingError {
        case .keyNotFound(let key, _)?: return "missing field '\(key.stringValue)'"
        case .typeMismatch(_, let context)?, .valueNotFound(_, let context)?:
            return "field '\(fieldPath(context))' has the wrong type"
        case .dataCorrupted(let context)?:
            let path = fieldPath(context)
            return path.isEmpty ? "the data is not valid JSON" : "field '\(path)' is invalid"
        default: return "\(error)"
        }
    }
}
