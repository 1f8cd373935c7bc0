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
    /// The unqualified `no-cache` (or any `no-cache` in a request): no reuse without validation.
    public var noCache = false
    public var noStore = false
    public var mustRevalidate = false
    public var isPrivate = false
    public var isPublic = false
    public var maxStale: MaxStale?
    public var minFresh: Int?
    public var onlyIfCached = false
    /// Fields named by a qualified `no-cache="…"` (§5.2.2.4), lowercased: the rest of the
    /// response may be reused without validation, these fields only after one.
    public var noCacheFields: [String] = []
    /// Fields named by a qualified `private="…"` (§5.2.2.7), lowercased. A private cache may
    /// keep them; this one does not, so that what the origin marked as one user's does not
    /// sit in a cache directory (the rest of the response is stored).
    public var privateFields: [String] = []
    /// RFC 5861 §3: how many seconds after it became stale the response may still be served
    /// while it is revalidated in the background.
    public var staleWhileRevalidate: Int?
    /// RFC 5861 §4: how many seconds after it became stale the response may still be served
    /// when validating or reloading it fails (an error, or a 500, 502, 503 or 504).
    public var staleIfError: Int?
    /// A max-age that was not a number, or two that disagree: the response is to be taken as
    /// stale (§4.2.1, §1.2.2).
    public var hasInvalidMaxAge = false

    public init() {}

    /// Parses every Cache-Control line of `headers` (and Pragma, for a request).
    public init(_ headers: HTTPHeaderFields, isRequest: Bool = false) {
        let members = headers.listMembers("Cache-Control")
        for member in members { apply(member, isRequest: isRequest) }
        if isRequest, members.isEmpty,
            headers.listMembers("Pragma").contains(where: { $0.lowercased() == "no-cache" })
        {
            noCache = true
        }
    }

    private mutating func apply(_ member: String, isRequest: Bool) {
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
            // Qualified, it only holds back the fields it names; a request's no-cache takes
            // no argument, and one that names no field is the unqualified directive.
            let fields = argument.map(Self.fieldNames) ?? []
            if isRequest || fields.isEmpty { noCache = true } else { noCacheFields += fields }
        case "no-store": noStore = true
        // proxy-revalidate binds shared caches only.
        case "must-revalidate": mustRevalidate = true
        case "private":
            isPrivate = true
            if !isRequest, let argument { privateFields += Self.fieldNames(argument) }
        case "public": isPublic = true
        case "max-stale": maxStale = argument.flatMap(Self.deltaSeconds).map(MaxStale.seconds) ?? .any
        case "min-fresh": minFresh = argument.flatMap(Self.deltaSeconds)
        case "only-if-cached": onlyIfCached = true
        // A window that is not delta-seconds is no window (the directive is ignored).
        case "stale-while-revalidate": staleWhileRevalidate = argument.flatMap(Self.deltaSeconds)
        case "stale-if-error": staleIfError = argument.flatMap(Self.deltaSeconds)
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
