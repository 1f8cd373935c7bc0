/// The Cache-Control directives of a request or a response (RFC 9111 §5.2), as a private
/// cache reads them. Unknown directives are ignored (§5.2.3); `Pragma: no-cache` counts as
/// `no-cache` in a request without Cache-Control (§5.4).
public struct CacheControl: Sendable, Hashable {
    /// How much staleness a request accepts.
    public enum MaxStale: Sendable, Hashable {
        case any
        case seconds(Int)
    }

    public var maxAge: Int?
    /// A shared cache's max-age: read, never used by this private cache.
    public var sharedMaxAge: Int?
    public var noCache = false
    public var noStore = false
    public var mustRevalidate = false
    public var isPrivate = false
    public var isPublic = false
    public var maxStale: MaxStale?
    public var minFresh: Int?
    public var onlyIfCached = false
    /// Fields named by a qualified `no-cache="…"` or `private="…"`, lowercased: not to be
    /// served from a store without validation (a private cache keeps `private` ones).
    public var noCacheFields: [String] = []
    /// A max-age that was not a number, or two that disagree: the response is to be taken as
    /// stale (§4.2.1, §1.2.2).
    public var hasInvalidMaxAge = false

    public init() {}

    /// Parses every Cache-Control line of `headers` (and Pragma, for a request).
    public init(_ headers: HTTPHeaderFields, isRequest: Bool = false) {
        let members = headers.listMembers("Cache-Control")
        for member in members { apply(member) }
        if isRequest, members.isEmpty,
            headers.listMembers("Pragma").contains(where: { $0.lowercased() == "no-cache" })
        {
            noCache = true
        }
    }

    private mutating func apply(_ member: String) {
        let (name, argument) = Self.split(member)
        switch name {
        case "max-age":
            guard let seconds = argument.flatMap(Self.deltaSeconds) else {
                hasInvalidMaxAge = true
                return
            }
            if let maxAge, maxAge != seconds { hasInvalidMaxAge = true }
            maxAge = seconds
        case "s-maxage": sharedMaxAge = argument.flatMap(Self.deltaSeconds)
        case "no-cache":
            noCache = true
            if let argument { noCacheFields += Self.fieldNames(argument) }
        case "no-store": noStore = true
        // proxy-revalidate binds shared caches only.
        case "must-revalidate": mustRevalidate = true
        case "private": isPrivate = true
        case "public": isPublic = true
        case "max-stale": maxStale = argument.flatMap(Self.deltaSeconds).map(MaxStale.seconds) ?? .any
        case "min-fresh": minFresh = argument.flatMap(Self.deltaSeconds)
        case "only-if-cached": onlyIfCached = true
        default: break
        }
    }

    /// A directive's lowercased name and its argument, unquoted.
    static func split(_ member: String) -> (String, String?) {
        guard let equals = member.firstIndex(of: "=") else { return (member.lowercased(), nil) }
        let name = String(member[..<equals]).trimmingWhitespace.lowercased()
        var value = String(member[member.index(after: equals)...]).trimmingWhitespace
        if value.count >= 2, value.first == "\"", value.last == "\"" {
            value = String(value.dropFirst().dropLast()).replacingEscapes()
        }
        return (name, value)
    }

    /// delta-seconds (§1.2.2): digits only; anything over 2^31 counts as 2^31.
    static func deltaSeconds(_ text: String) -> Int? {
        guard !text.isEmpty, text.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) else {
            return nil
        }
        return Int(text).map { min($0, 1 << 31) } ?? (1 << 31)
    }

    static func fieldNames(_ list: String) -> [String] {
        list.split(separator: ",").map { String($0).trimmingWhitespace.lowercased() }.filter { !$0.isEmpty }
    }
}

extension String {
    /// A quoted string's content with its backslash escapes undone.
    func replacingEscapes() -> String {
        var result = ""
        var escaped = false
        for character in self {
            if !escaped, character == "\\" {
                escaped = true
                continue
            }
            escaped = false
            result.append(character)
        }
        return result
    }
}
