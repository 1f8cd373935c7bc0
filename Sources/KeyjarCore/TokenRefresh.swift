// OAuth 2 refresh (RFC 6749 §6): what keyjard keeps about where a token is refreshed, and the
// two steps of a refresh that keyjard serialises for every process (one refreshes, the others
// wait for its token).

/// Where an OAuth 2 access token is refreshed (RFC 6749 §6): the token endpoint and the client
/// id sent with the refresh token. Metadata, not secret.
public struct TokenRefresh: Sendable, Hashable {
    /// The token endpoint's URL (https, or http on a loopback address).
    public var endpoint: String
    /// The OAuth client id, when the endpoint wants one.
    public var clientID: String?

    public init(endpoint: String, clientID: String? = nil) {
        self.endpoint = endpoint
        self.clientID = clientID
    }
}

/// keyjard's answer to a process whose access token expired or was rejected.
public enum TokenRefreshStep: Sendable, Hashable, CustomStringConvertible {
    /// Another process refreshed meanwhile (or the token is still good): use this one.
    case current(accessToken: String, expires: Double?)
    /// This process holds the credential's refresh lease: post `refreshToken` to the endpoint,
    /// then report with ``TokenRefreshOutcome``. Others asking meanwhile wait for that report
    /// (or for this process's connection to close).
    case refresh(refreshToken: String, refresh: TokenRefresh)

    public var description: String {
        switch self {
        case .current(_, let expires): "current(accessToken: <hidden>, expires: \(expires.map { "\($0)" } ?? "nil"))"
        case .refresh(_, let refresh): "refresh(refreshToken: <hidden>, endpoint: \(refresh.endpoint))"
        }
    }
}

/// How a refresh the lease holder made ended.
public enum TokenRefreshOutcome: Sendable, Hashable, CustomStringConvertible {
    /// The endpoint issued `accessToken`; a rotated `refreshToken` replaces the stored one.
    case refreshed(accessToken: String, refreshToken: String?, expires: Double?)
    /// The refresh failed. `revoke` when the endpoint refused the refresh token itself
    /// (`invalid_grant`): the credential is marked revoked and never offered until stored anew.
    /// Otherwise (the network, a server error) the lease is only released.
    case failed(revoke: Bool)

    public var description: String {
        switch self {
        case .refreshed(_, let refreshToken, let expires):
            "refreshed(accessToken: <hidden>, refreshToken: \(refreshToken == nil ? "nil" : "<hidden>"),"
                + " expires: \(expires.map { "\($0)" } ?? "nil"))"
        case .failed(let revoke): "failed(revoke: \(revoke))"
        }
    }
}
