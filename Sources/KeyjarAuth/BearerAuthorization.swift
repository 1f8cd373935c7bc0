/// The `Authorization: Bearer` value for an OAuth 2 access token (RFC 6750 §2.1).
///
/// ```swift
/// try BearerAuthorization(token: "mF_9.B5f-4.1JqM").headerValue   // "Bearer mF_9.B5f-4.1JqM"
/// ```
public struct BearerAuthorization: Sendable, Hashable {
    /// The header value; it holds the token, so it is never logged.
    public let headerValue: String

    /// - Throws: ``AuthenticationError/invalidBearerToken`` when the token is not RFC 6750's
    ///   `b64token` (letters, digits, `-._~+/`, then `=` padding): anything else would be sent
    ///   as something other than the token, or split the header.
    public init(token: String) throws(AuthenticationError) {
        guard Self.isBearerToken(token) else { throw .invalidBearerToken }
        headerValue = "Bearer " + token
    }

    /// RFC 6750 §2.1: `b64token = 1*( ALPHA / DIGIT / "-" / "." / "_" / "~" / "+" / "/" ) *"="`.
    public static func isBearerToken(_ token: String) -> Bool {
        let bytes = Array(token.utf8)
        let padding = bytes.reversed().prefix { $0 == UInt8(ascii: "=") }.count
        let body = bytes.dropLast(padding)
        return !body.isEmpty
            && body.allSatisfy { byte in
                switch byte {
                case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                    UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
                    UInt8(ascii: "~"), UInt8(ascii: "+"), UInt8(ascii: "/"):
                    true
                default: false
                }
            }
    }
}
