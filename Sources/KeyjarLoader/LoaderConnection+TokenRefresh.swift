public import Foundation
import FoundationNetworking
public import Keyjar
import KeyjarAuth
public import KeyjarCore
import KeyjarTransfer

/// Why a stored token could not be refreshed. The text names the credential and the reason,
/// never a token.
public struct TokenRefreshFailure: Error, Sendable, CustomStringConvertible {
    public let description: String
}

extension URLLoader {
    /// Refreshes a stored token credential (RFC 6749 §6) as the loader does after a refusal:
    /// through keyjard's lease, so that every process that finds the token expired makes one
    /// request to the token endpoint between them. For programs that hand the token on
    /// (`keyjar git-credential get`) rather than load with it.
    ///
    /// Blocking (keyjard may hold the call while another process refreshes): call it from a
    /// thread that may block, never from Swift's cooperative pool.
    ///
    /// - Parameters:
    ///   - record: A credential that `canRefresh` (a refresh token and endpoint, not revoked).
    ///   - rejected: The access token a server refused; nil when it only expired.
    ///   - proxy: The proxy for the token endpoint.
    ///   - trustAnchors: The certificate authorities the token endpoint's certificate is
    ///     verified against.
    /// - Returns: The access token now stored, or why there is none (`invalid_grant` revokes the
    ///   credential and says to log in again).
    public static func refreshStoredToken(
        _ record: CredentialRecord,
        rejected: String? = nil,
        client: KeyjarClient,
        proxy: URL? = nil,
        trustAnchors: TrustAnchors = .system
    ) -> Result<String, TokenRefreshFailure> {
        TokenRefresher.run(
            user: record.user,
            space: record.space,
            rejected: rejected,
            client: client,
            endpoint: .init(proxy: proxy, trustAnchors: trustAnchors)
        )
    }
}

/// One OAuth 2 refresh of a stored token credential (RFC 6749 §6) through keyjard's lease, so
/// that however many loads in however many processes find the token expired, one of them
/// refreshes and the others get its result.
///
/// Blocking: run it off the connection's serial work (it waits for keyjard, which may wait for
/// another process's refresh, and for the token endpoint).
enum TokenRefresher {
    /// Returns the access token to retry with: the one this call got from the token endpoint,
    /// or the one another refresh stored meanwhile.
    /// - Parameters:
    ///   - rejected: The access token the server just refused; nil when the token was only
    ///     seen to have expired.
    ///   - endpoint: How the token endpoint is reached: the loader's proxy and trust anchors.
    /// How long the token endpoint gets: less than keyjard holds a lease (30 s), so that the
    /// answer is reported while this process still holds it.
    static let endpointTimeout: TimeInterval = 20
    /// How long asking for the lease may wait: for another process's whole refresh.
    static let leaseWait: TimeInterval = 45

    /// How the token endpoint is reached: as the load that needed the token reaches servers.
    struct Endpoint: Sendable {
        var proxy: URL?
        var trustAnchors: TrustAnchors
    }

    static func run(
        user: String,
        space: ProtectionSpace,
        rejected: String?,
        client shared: KeyjarClient,
        endpoint: Endpoint
    ) -> Result<String, TokenRefreshFailure> {
        let server = "\(space.protocol)://\(space.host):\(space.port)"
        let whose = "\(user) at \(server)"
        let step: TokenRefreshStep
        let client: KeyjarClient
        do {
            // A connection of its own: keyjard answers a connection's requests in order, so
            // while this one waits for another process's refresh the process's other loads
            // (their cookies) would wait too, and two loads of this process could not both
            // ask. Long enough a timeout to outwait a refresh that holds the lease to its end.
            var configuration = shared.configuration
            configuration.keepsReplica = false
            configuration.clientName += " (token refresh)"
            configuration.requestTimeout = max(configuration.requestTimeout, Self.leaseWait)
            client = try KeyjarClient(configuration: configuration)
            step = try client.beginTokenRefresh(user: user, for: space, rejected: rejected)
        } catch {
            return .failure(
                .init(description: "The token of \(whose) cannot be refreshed: \(error.message)")
            )
        }
        switch step {
        case .current(let accessToken, _):
            return .success(accessToken)
        case .refresh(let refreshToken, let refresh):
            // The lease is this call's now: every way out ends it.
            let outcome = requestNewToken(refreshToken: refreshToken, refresh: refresh, endpoint: endpoint)
            let finish: TokenRefreshOutcome
            switch outcome {
            case .success(let answer):
                finish = .refreshed(
                    accessToken: answer.accessToken,
                    refreshToken: answer.refreshToken,
                    expires: answer.expires(from: Date().timeIntervalSince1970)
                )
            case .failure(let error):
                finish = .failed(revoke: error.isInvalidGrant)
            }
            do {
                try client.finishTokenRefresh(user: user, for: space, outcome: finish)
            } catch {
                if case .success = outcome {
                    return .failure(
                        .init(
                            description: "The refreshed token of \(whose) could not be stored: \(error.message)"
                        )
                    )
                }
            }
            switch outcome {
            case .success(let answer):
                return .success(answer.accessToken)
            case .failure(let error) where error.isInvalidGrant:
                return .failure(
                    .init(
                        description:
                            "The token endpoint \(refresh.endpoint) no longer accepts the refresh token of \(whose) "
                            + "(invalid_grant); the stored token is marked revoked. Log in again and store the new token: "
                            + "keyjar credential add --url \(server) --user \(user) --token-stdin …"
                    )
                )
            case .failure(let error):
                return .failure(
                    .init(
                        description: "The token of \(whose) could not be refreshed: \(error.description)"
                    )
                )
            }
        }
    }

    /// POSTs the refresh request to the token endpoint with a loader of its own: no cookies,
    /// no stored credentials (the endpoint authenticates the refresh token, not a user), no
    /// cache (§5.1: the answer is `no-store`).
    static func requestNewToken(
        refreshToken: String,
        refresh: TokenRefresh,
        endpoint connection: Endpoint
    ) -> Result<OAuthTokenResponse, OAuthTokenError> {
        // The refresh token travels in the body: over TLS, or to this machine.
        if let problem = TokenRefresh.problem(withEndpoint: refresh.endpoint) {
            return .failure(.malformedRequest("\(problem) (\(refresh.endpoint))"))
        }
        guard let endpoint = URL(string: refresh.endpoint) else {
            return .failure(.malformedRequest("\(TokenRefresh.EndpointProblem.notHTTP)"))
        }
        let request: OAuthRefreshRequest
        do {
            request = try OAuthRefreshRequest(refreshToken: refreshToken, clientID: refresh.clientID)
        } catch {
            return .failure(error)
        }
        var post = URLRequest(url: endpoint, timeoutInterval: endpointTimeout)
        post.httpMethod = "POST"
        post.httpBody = request.body
        post.setValue(request.contentType, forHTTPHeaderField: "Content-Type")
        post.setValue("application/json", forHTTPHeaderField: "Accept")
        // No redirect: a 307 or 308 would post the refresh token again, maybe in clear text to
        // another host; the endpoint is the one stored, or the refresh fails.
        let loader = URLLoader(
            configuration: .init(maximumRedirects: 0, proxy: connection.proxy, trustAnchors: connection.trustAnchors)
        )
        do {
            let (data, response) = try loader.sendSynchronousRequest(post)
            let status = (response as? HTTPURLResponse)?.statusCode ?? 0
            return Result { () throws(OAuthTokenError) in try request.response(status: status, body: data) }
        } catch {
            // A transport failure: the URL error's text names the endpoint, not the body.
            return .failure(.unreachable(error.localizedDescription))
        }
    }
}

extension LoaderConnection {
    /// The stored token credential for `space` (of `user`, when given) that Keyjar may
    /// refresh: a refresh token and its endpoint stored, not revoked. Whether it needs a
    /// refresh is keyjard's call (`beginTokenRefresh` answers a good token as it is). The
    /// matching is Keyjar's rule (`CredentialChoice`), asked as if no token had expired yet:
    /// the rule itself offers no expired token.
    func refreshableToken(for space: ProtectionSpace, user: String?) -> CredentialRecord? {
        guard let shared = sharedCredentialStorage else { return nil }
        // keyjard's records, not the replica's: this runs only after a refusal, and the replica
        // may not have caught up yet with another process's refresh or revocation.
        let records = (try? shared.client.credentialRecords()) ?? shared.permanentCredentials
        let refreshable = records.filter { record in
            record.space.authenticationMethod == .httpBearer && record.canRefresh
                && (user == nil || record.user == user)
        }
        guard !refreshable.isEmpty else { return nil }
        return CredentialChoice(for: space, among: refreshable, now: -.infinity).proposed
    }

    /// Refreshes `record`'s token off the connection's work, then retries the challenged
    /// request with it (``tokenRefreshEnded(_:)``).
    func startTokenRefresh(
        _ record: CredentialRecord,
        rejected: String?,
        space: ProtectionSpace,
        context: HTTPChallengeContext
    ) {
        guard let shared = loader.configuration.credentialStorage as? SharedCredentialStorage else {
            return deliverFinal(context.response, body: context.body)
        }
        authentication.refreshStarted(space: space, user: record.user, context: context)
        let client = shared.client
        let endpoint = TokenRefresher.Endpoint(
            proxy: loader.configuration.proxy,
            trustAnchors: loader.configuration.trustAnchors
        )
        let user = record.user
        let stored = record.space
        // Not on the connection's work: keyjard may hold this call while another process
        // refreshes, and the token endpoint answers when it answers. A cancelled load ends
        // meanwhile; its refresh still completes and is stored for everyone.
        DispatchQueue.global().async {
            let result = TokenRefresher.run(
                user: user,
                space: stored,
                rejected: rejected,
                client: client,
                endpoint: endpoint
            )
            self.schedule { self.tokenRefreshEnded(result) }
        }
    }

    /// Retries with the refreshed token, or fails the load with why there is none (an
    /// `invalid_grant` says to log in again).
    func tokenRefreshEnded(_ result: Result<String, TokenRefreshFailure>) {
        guard !hasEnded, let pending = authentication.takePendingRefresh() else { return }
        switch result {
        case .success(let token):
            use(
                URLCredential(user: pending.user, password: token, persistence: .permanent),
                source: .storage,
                space: pending.space,
                context: pending.context
            )
        case .failure(let failure):
            fail(LoaderError.make(.userAuthenticationRequired, failure.description, url: currentRequest.url))
        }
    }
}
