/// Why Keyjar cannot answer a challenge with the given credential or challenge.
public enum AuthenticationError: Error, Sendable, Hashable, CustomStringConvertible {
    /// A Basic user-id contains ':' (RFC 7617 §2: the first colon ends the user-id).
    case colonInUserID
    /// The user name or password contains a control character (RFC 7617 §2 forbids them;
    /// they cannot be sent in a Digest quoted string either).
    case controlCharacterInCredential
    /// The challenge's scheme is not the one asked for.
    case wrongScheme(String)
    /// A Digest challenge without a `realm` or `nonce` parameter (RFC 7616 §3.3 requires both).
    case missingParameter(String)
    /// A Digest `algorithm` Keyjar does not implement.
    case unsupportedAlgorithm(String)
    /// A Digest `qop` list with nothing Keyjar can answer (`auth-int` without a request body).
    case unsupportedQualityOfProtection([String])
    /// A `-sess` algorithm without `qop`: the session key needs a cnonce, which only the qop
    /// form sends (RFC 7616 §3.4.2).
    case sessionAlgorithmWithoutQualityOfProtection
    /// `auth-int` was chosen but no request body was given to hash.
    case requestBodyRequired
    /// The nonce has been used 2³² − 1 times; a new challenge is needed.
    case nonceCountExhausted
    /// A stored token that is not RFC 6750's `b64token`, so it cannot be sent as a bearer token.
    case invalidBearerToken

    public var description: String {
        switch self {
        case .colonInUserID: return "a Basic user name cannot contain ':'"
        case .controlCharacterInCredential: return "the user name or password contains a control character"
        case .wrongScheme(let scheme): return "the challenge is \(scheme), not the expected scheme"
        case .missingParameter(let name): return "the Digest challenge has no \(name)"
        case .unsupportedAlgorithm(let name): return "unsupported Digest algorithm \(name)"
        case .unsupportedQualityOfProtection(let values):
            return "unsupported Digest qop \(values.joined(separator: ", "))"
        case .sessionAlgorithmWithoutQualityOfProtection: return "a -sess Digest algorithm needs a qop"
        case .requestBodyRequired: return "qop=auth-int needs the request body"
        case .nonceCountExhausted: return "the Digest nonce count is exhausted"
        case .invalidBearerToken: return "the stored token has characters a bearer token cannot have"
        }
    }
}

/// Which header an authorization goes in: to the origin server after a 401, or to the proxy
/// after a 407 (RFC 9110 §11.6.2, §11.7.2).
public enum AuthorizationTarget: Sendable, Hashable {
    case server, proxy

    /// `Authorization` or `Proxy-Authorization`.
    public var headerName: String { self == .server ? "Authorization" : "Proxy-Authorization" }

    /// `WWW-Authenticate` or `Proxy-Authenticate`: where this target's challenges come from.
    public var challengeHeaderName: String { self == .server ? "WWW-Authenticate" : "Proxy-Authenticate" }

    /// `Authentication-Info` or `Proxy-Authentication-Info`.
    public var infoHeaderName: String {
        self == .server ? "Authentication-Info" : "Proxy-Authentication-Info"
    }
}

extension String {
    /// RFC 7617 §2 and RFC 7616 §3.4: no CTLs in user names and passwords.
    package var containsControlCharacter: Bool { utf8.contains { $0 < 0x20 || $0 == 0x7F } }
}
