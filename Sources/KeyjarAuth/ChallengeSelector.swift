/// A challenge the loader can answer, with what was worked out while choosing it.
public struct SelectedChallenge: Sendable, Hashable {
    public var challenge: AuthenticationChallenge
    public var scheme: AuthenticationScheme
    /// The decoded Digest challenge, for `.digest`.
    public var digest: DigestChallenge?
    /// Higher is stronger (see ``ChallengeSelector``).
    public var rank: Int
}

/// Picks the challenge to answer among those of one response.
///
/// The order, strongest first, and why:
/// 1. **Negotiate** (Kerberos/SPNEGO): no password goes to the server at all, and the server is
///    authenticated too.
/// 2. **NTLM**: a challenge-response bound to the connection; the password never travels,
///    although its hashes are weaker than SHA-2. Servers that offer it beside Digest are
///    Windows domains, where it is the scheme that works.
/// 3. **Digest** by hash strength: SHA-512-256, then SHA-256, then MD5 (a `-sess` variant ranks
///    with its base hash). The password never travels, but an eavesdropper can try to guess it
///    offline from one exchange, more cheaply the weaker the hash.
/// 4. **Bearer** (RFC 6750): a token travels in every request, as Basic's password does, but it
///    is scoped, expires and can be revoked without changing the user's password.
/// 5. **Basic**: the password itself, only base64-encoded, in every request.
///
/// Equal ranks keep the server's order (RFC 9110 §11.6.1 leaves the choice to the client, and
/// servers list their preference first). Digest challenges Keyjar cannot answer are skipped:
/// a missing realm or nonce, an unknown algorithm, a qop list with only `auth-int` when the
/// caller cannot hash the body, a `-sess` algorithm without qop. Unknown schemes are skipped.
///
/// ```swift
/// let challenges = ChallengeParser.parse(response.values(for: "WWW-Authenticate")).challenges
/// if let choice = ChallengeSelector.strongest(in: challenges, supported: [.basic, .digest]) { … }
/// ```
public enum ChallengeSelector {
    /// Every answerable challenge, strongest first; the loader walks down it when it has no
    /// credential for a stronger one's realm.
    /// - Parameters:
    ///   - supported: The schemes the caller can answer (NTLM and Negotiate only if libcurl has them).
    ///   - canHashBody: Whether the request body is at hand for Digest `auth-int`.
    public static func candidates(
        in challenges: [AuthenticationChallenge],
        supported: Set<AuthenticationScheme> = Set(AuthenticationScheme.allCases),
        canHashBody: Bool = false
    ) -> [SelectedChallenge] {
        var found: [SelectedChallenge] = []
        for challenge in challenges {
            guard let scheme = AuthenticationScheme(challengeScheme: challenge.scheme), supported.contains(scheme)
            else { continue }
            switch scheme {
            case .negotiate: found.append(SelectedChallenge(challenge: challenge, scheme: scheme, rank: 6))
            case .ntlm: found.append(SelectedChallenge(challenge: challenge, scheme: scheme, rank: 5))
            case .basic: found.append(SelectedChallenge(challenge: challenge, scheme: scheme, rank: 0))
            case .bearer: found.append(SelectedChallenge(challenge: challenge, scheme: scheme, rank: 1))
            case .digest:
                guard let digest = try? DigestChallenge(challenge),
                    digest.qualityOfProtection(canHashBody: canHashBody) != nil
                else { continue }
                found.append(
                    SelectedChallenge(
                        challenge: challenge,
                        scheme: scheme,
                        digest: digest,
                        rank: 2 + digest.algorithm.strength
                    )
                )
            }
        }
        // Stable, so equal ranks keep the server's order.
        return found.enumerated().sorted { ($0.element.rank, -$0.offset) > ($1.element.rank, -$1.offset) }.map(
            \.element
        )
    }

    /// The strongest answerable challenge, or nil when there is none.
    public static func strongest(
        in challenges: [AuthenticationChallenge],
        supported: Set<AuthenticationScheme> = Set(AuthenticationScheme.allCases),
        canHashBody: Bool = false
    ) -> SelectedChallenge? {
        candidates(in: challenges, supported: supported, canHashBody: canHashBody).first
    }
}
