/// Why a Set-Cookie header was ignored as a whole by the parser (RFC 6265bis §5.6).
public enum CookieParseError: Error, Sendable, Hashable {
    /// A control character other than HTAB (a NUL or a bare CR, say) appears at this byte offset.
    case controlCharacter(offset: Int)
    /// Name and value together exceed the 4096-byte limit.
    case nameValueTooLong(bytes: Int)
    /// Both the name and the value are empty.
    case emptyNameAndValue
}

extension CookieParseError: CustomStringConvertible {
    public var description: String {
        switch self {
        case .controlCharacter(let offset):
            return "the header contains a control character at byte \(offset)"
        case .nameValueTooLong(let bytes):
            return "name and value are \(bytes) bytes long, over the limit of \(SetCookieParser.maximumNameValueBytes)"
        case .emptyNameAndValue:
            return "the cookie has neither a name nor a value"
        }
    }
}
