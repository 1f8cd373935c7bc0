// OAuth 2 refresh (RFC 6749 §6): what keyjard keeps about where a token is refreshed, and the
// two steps of a refresh that keyjard serialises for every process (one refreshes, the others
// wait for its token).

import FoundationEssentials

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

extension TokenRefresh {
    /// Why a token endpoint may not be stored or posted to: the refresh token travels in the
    /// request's body, so the endpoint is https, or http only to this machine
    /// (`Host.isThisMachine`). The one rule, asked by the command that stores an endpoint, by
    /// keyjard that keeps it (for every client) and by the loader that posts to it.
    public enum EndpointProblem: Error, Sendable, Hashable, CustomStringConvertible {
        /// Not an absolute http or https URL with a host.
        case notHTTP
        /// http to a host that is not this machine: the refresh token would cross the network
        /// in clear.
        case cleartext(host: String)
        /// A user or password in the URL: the endpoint is metadata (listings, SQLite).
        case userInfo

        public var description: String {
            switch self {
            case .notHTTP: "the token endpoint is not an http or https URL"
            case .cleartext(let host):
                "the token endpoint is http to \(host), which is not this machine: a refresh token goes only over https (or http to this machine)"
            case .userInfo: "the token endpoint has a user or password in it; give the client id apart"
            }
        }
    }

    /// Nil when `endpoint` may receive a refresh token, else why not.
    public static func problem(withEndpoint endpoint: String) -> EndpointProblem? {
        guard let url = URL(string: endpoint), let scheme = url.scheme?.lowercased(),
            scheme == "https" || scheme == "http", let host = url.host(percentEncoded: false), !host.isEmpty
        else { return .notHTTP }
        guard url.user == nil, url.password == nil else { return .userInfo }
        if scheme == "http", !Host.isThisMachine(host) { return .cleartext(host: host) }
        return nil
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
