public import KeyjarCore

/// The HTTP authentication schemes the loader can answer.
public enum AuthenticationScheme: String, Sendable, Hashable, CaseIterable {
    case basic = "Basic"
    case digest = "Digest"
    case ntlm = "NTLM"
    case negotiate = "Negotiate"
    /// An OAuth 2 bearer token (RFC 6750).
    case bearer = "Bearer"

    /// The scheme of a challenge, matched case-insensitively; nil for any other scheme.
    public init?(challengeScheme: String) {
        let lowered = challengeScheme.lowercased()
        guard let match = Self.allCases.first(where: { $0.rawValue.lowercased() == lowered }) else { return nil }
        self = match
    }

    /// The protection-space method a credential for this scheme is stored under.
    public var authenticationMethod: ProtectionSpace.AuthenticationMethod {
        switch self {
        case .basic: return .httpBasic
        case .digest: return .httpDigest
        case .ntlm: return .ntlm
        case .negotiate: return .negotiate
        case .bearer: return .httpBearer
        }
    }
}
