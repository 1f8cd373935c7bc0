import Foundation
import FoundationNetworking
import KeyjarAuth
import KeyjarCore
import KeyjarDigest

/// What answers a 401 or 407, decided in one place: the order a load tries its sources in, and
/// what it tries once. The connection looks up what the decision asks for and carries out the
/// answer; `ChallengeAnswerTests` holds the order to its rules without a server.
enum ChallengeAnswer {
    /// The credential just sent, sent again: the server only found its Digest nonce stale.
    case resend(AuthenticationState.InUse)
    /// The stored token is refreshed first (keyjard refreshes it, or awaits another process's
    /// refresh), then the challenge answered with what that brings; `rejected`: the token the
    /// server refused, when it refused one.
    case refreshToken(CredentialRecord, rejected: String?)
    /// This credential answers.
    case use(URLCredential, AuthenticationState.Source)
    /// The delegate decides (else default handling), proposed this credential.
    case askDelegate(proposed: URLCredential?, previousFailureCount: Int)

    /// What the decision may ask the connection, each only when the order reaches it.
    struct Sources {
        /// The user and password in the request's URL.
        var urlCredential: (user: String, password: String)?
        /// The storage's answer for the space (nil when this load does not use the storage).
        var stored: () -> URLCredential?
        /// A stored token Keyjar can refresh for the space, of `user` (any when nil).
        var refreshableToken: (_ user: String?) -> CredentialRecord?
        /// What to propose to a delegate when nothing has failed yet.
        var proposedStored: () -> URLCredential?
        /// A pre-emptively sent credential of this space was refused: the loader stops sending it.
        var forgetPreemptive: (ProtectionSpace) -> Void
    }
}

extension AuthenticationState {
    /// The answer to `context` in `space`. First what the last attempt sent: a Digest
    /// credential whose nonce went stale is sent again; anything else sent to this server was
    /// refused (counted, proposed next), and a refused stored token is refreshed once unless
    /// the server says no token can help. Then, in order, each at most once per space and
    /// load: 1. the URL's user and password (a password is not a token); 2. the storage's
    /// answer (Keyjar's matching rule); 2b. for a token challenge a token may answer, a token
    /// Keyjar can refresh though none was offered (the stored one expired: keyjard refreshes
    /// it, or answers it as it is when it is good after all); 3. the delegate, proposed the
    /// credential that failed last, else the storage's best.
    mutating func answer(
        _ context: HTTPChallengeContext,
        in space: ProtectionSpace,
        from sources: ChallengeAnswer.Sources
    ) -> ChallengeAnswer {
        let selected = context.selected
        // RFC 6750 §3.1: insufficient_scope and invalid_request come with 403 and 400, never
        // here; a 401 that says either is final all the same: no token, refreshed or not, helps.
        let tokenCanHelp = selected.scheme == .bearer && BearerChallenge(selected.challenge)?.isFinal != true
        if let previous = inUse[context.target], previous.space.host == space.host, previous.space.port == space.port {
            if selected.scheme == .digest, let digest = selected.digest, var session = digestSessions[space],
                previous.scheme == .digest
            {
                let renewal = session.renew(with: digest)
                keep(session, for: space)
                if renewal == .stale { return .resend(previous) }
            }
            refusedInUse(for: context.target)
            if previous.source == .preemptive { sources.forgetPreemptive(previous.space) }
            // A stored token the server refused (invalid_token, or no reason): a refreshed one
            // may do, once.
            if previous.scheme == .bearer, tokenCanHelp, previous.source == .storage || previous.source == .preemptive,
                !hasRefreshedToken(in: space),
                let record = sources.refreshableToken(previous.credential.user)
            {
                return .refreshToken(record, rejected: previous.credential.password)
            }
        }
        if context.target == .server, selected.scheme != .bearer, let url = sources.urlCredential,
            !hasTriedURLCredential(in: space)
        {
            triedURLCredential(in: space)
            return .use(URLCredential(user: url.user, password: url.password, persistence: .none), .url)
        }
        if let stored = takeStoredCredential(in: space, from: sources.stored) { return .use(stored, .storage) }
        if tokenCanHelp, !hasRefreshedToken(in: space), let record = sources.refreshableToken(nil) {
            return .refreshToken(record, rejected: nil)
        }
        return .askDelegate(
            proposed: lastFailed[space] ?? sources.proposedStored(),
            previousFailureCount: failureCount(in: space)
        )
    }

    /// The storage's answer for `space` if it was not tried yet in this load (then it counts as
    /// tried): step 2 above, and a delegate's default handling.
    mutating func takeStoredCredential(
        in space: ProtectionSpace,
        from stored: () -> URLCredential?
    ) -> URLCredential? {
        guard !hasTriedStoredCredential(in: space), let credential = stored() else { return nil }
        triedStoredCredential(in: space)
        return credential
    }
}
