import FoundationEssentials
package import KeyjarConnection
package import KeyjarCore

/// Which stored credential answers a command's lookup, and the token to refresh first when the
/// one that would answer has expired (or is about to): Keyjar's matching rule
/// (``CredentialChoice``), tried for each space in order, the first that answers winning.
///
/// git's helper, `keyjar run` and Docker's helper look credentials up through it, so that a
/// credential answers each of them as it answers a server's challenge.
package struct StoredCredentialLookup: Sendable {
    /// The spaces to try, the strongest first (git's `wwwauth[]` challenges), then the origin's.
    package var spaces: [ProtectionSpace]
    /// The user asked for; nil for whoever answers unasked (the default).
    package var user: String?

    package init(spaces: [ProtectionSpace], user: String?) {
        self.spaces = spaces
        self.user = user.flatMap { $0.isEmpty ? nil : $0 }
    }

    /// The credential that answers; keyjard never offers an expired or revoked one.
    package func answer(client: KeyjarClient) throws(KeyjarClientError) -> CredentialRecord? {
        for space in spaces {
            if let found = try client.credentialCandidates(for: space).answer(forUser: user) { return found }
        }
        return nil
    }

    /// The token Keyjar can refresh that would answer, by the same rule, were it not expired,
    /// or that answers but expires within `margin` seconds (a command started now would be
    /// handed a token about to be refused).
    package func tokenToRefresh(
        client: KeyjarClient,
        answering: CredentialRecord?,
        margin: Double = 0
    ) throws(KeyjarClientError) -> CredentialRecord? {
        let now = Date().timeIntervalSince1970
        if let answering {
            return answering.canRefresh && answering.isExpired(at: now + margin) ? answering : nil
        }
        let expired = try client.credentialRecords().filter { $0.canRefresh && $0.isExpired(at: now) }
        guard !expired.isEmpty else { return nil }
        for space in spaces {
            let choice = CredentialChoice(for: space, among: expired, now: -.infinity)
            let candidates = CredentialCandidates(records: choice.candidates.map(\.record), preferred: choice.preferred)
            if let found = candidates.answer(forUser: user) { return found }
        }
        return nil
    }
}
