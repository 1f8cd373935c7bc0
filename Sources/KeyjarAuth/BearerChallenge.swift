/// A `Bearer` challenge (RFC 6750 §3), read from what ``ChallengeParser`` parsed, and what a
/// client does about it.
///
/// ```swift
/// let challenge = ChallengeParser.parse([#"Bearer realm="api", error="invalid_token""#]).challenges[0]
/// let bearer = BearerChallenge(challenge)!
/// bearer.error            // .invalidToken
/// bearer.rejectsToken     // true: a refresh (or another token) may help
/// ```
public struct BearerChallenge: Sendable, Hashable {
    /// §3.1's error codes; another code is kept as received.
    public enum ErrorCode: Sendable, Hashable {
        /// 400: the request is malformed; another token does not help.
        case invalidRequest
        /// 401: the token is expired, revoked, malformed or otherwise invalid: refresh, or
        /// ask for another token.
        case invalidToken
        /// 403: the token lacks the scope in ``BearerChallenge/scope``; the same token never
        /// will have it.
        case insufficientScope
        case other(String)

        init(_ code: String) {
            switch code {
            case "invalid_request": self = .invalidRequest
            case "invalid_token": self = .invalidToken
            case "insufficient_scope": self = .insufficientScope
            default: self = .other(code)
            }
        }
    }

    public var realm: String?
    /// The scope the resource needs, space-separated (§3).
    public var scope: String?
    /// Nil when the request carried no token (§3.1: then the server sends no error).
    public var error: ErrorCode?
    /// The server's explanation, for people.
    public var errorDescription: String?

    /// Nil when the challenge is not `Bearer`.
    public init?(_ challenge: AuthenticationChallenge) {
        guard challenge.hasScheme("Bearer") else { return nil }
        realm = challenge.realm
        scope = challenge.parameter("scope")
        error = challenge.parameter("error").map(ErrorCode.init)
        errorDescription = challenge.parameter("error_description")
    }

    /// Whether the server said the token sent is no good (`invalid_token`), the case in which
    /// a refreshed token is worth a retry. A challenge without an error asks for a token
    /// (none was sent, or the server does not say why).
    public var rejectsToken: Bool { error == .invalidToken }

    /// Whether another token cannot help: a malformed request, or a scope the token lacks
    /// (§3.1: the client should not retry with the same token).
    public var isFinal: Bool {
        switch error {
        case .invalidRequest, .insufficientScope: true
        case .invalidToken, .other, nil: false
        }
    }
}
