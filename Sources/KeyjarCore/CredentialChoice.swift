public import FoundationEssentials

/// Which stored credentials may answer a challenge, most specific first, and which one answers
/// it without asking anybody: Keyjar's one rule for matching a protection space, used by keyjard,
/// the client library, the loader and every `keyjar` command.
///
/// People store a credential per server (as `.netrc`, git's helpers and `secret-tool` do),
/// before any server has named a realm or a method; a challenge then names both. So a lookup
/// for a challenge's space considers the credentials of the same origin (host, port, protocol
/// and proxy type) in four tiers of specificity:
///
/// 1. the exact space (same realm, same method);
/// 2. the same realm with method `default`;
/// 3. no realm with the challenge's method;
/// 4. no realm with method `default`.
///
/// Method `default` stands for whatever the server asks among Basic, Digest, NTLM and Negotiate;
/// it never answers an HTML-form, client-certificate or server-trust space, nor a Bearer
/// challenge (a password is not a token). A lookup that names no realm and method `default` (a
/// program, or git, asking "what do I have for this server?") also gets the credentials stored
/// under a realm or a specific HTTP method, as a fifth tier. Below all of the origin's own come
/// the credentials stored for every scheme and port of the host (a `.netrc` `machine`, as curl's
/// `--netrc` reads it), then one stored for every server (`.netrc`'s `default`).
///
/// An expired or revoked credential (``CredentialRecord/isOffered(at:)``) is never a candidate.
///
/// The most specific credential that is its space's default answers without asking; when no
/// candidate is a default but all belong to one user, the most specific of them does. Otherwise
/// (several users, no default) nobody answers on their own: the delegate is asked, with the most
/// specific candidate proposed.
///
/// ```swift
/// let stored = CredentialRecord(space: ProtectionSpace(host: "example.com", protocol: "https"),
///                               user: "alice", persistence: .permanent, isDefault: true, created: 0)
/// let challenge = ProtectionSpace(host: "example.com", protocol: "https", realm: "Team Area",
///                                 authenticationMethod: .httpBasic)
/// CredentialChoice(for: challenge, among: [stored]).preferred?.user   // "alice"
/// ```
public struct CredentialChoice: Sendable, Hashable {
    /// How closely a stored space matches the looked-up one; smaller is more specific.
    public enum Specificity: Int, Sendable, Hashable, Comparable, CaseIterable {
        case exactSpace
        case sameRealmAnyMethod
        case anyRealmSameMethod
        case anyRealmAnyMethod
        /// A lookup that named no challenge: a credential stored under another realm or method
        /// of the origin (still the origin's own, so before any `.netrc` login).
        case otherSpaceOfOrigin
        /// Stored for every scheme and port of the host (``ProtectionSpace/init(anySchemeAndPortOf:inClearToo:)``).
        case anySchemeAndPort
        /// Stored for every server (``ProtectionSpace/anyServer``).
        case anyServer

        public static func < (a: Specificity, b: Specificity) -> Bool { a.rawValue < b.rawValue }
    }

    /// One stored credential that may answer, with how specific its space is.
    public struct Candidate: Sendable, Hashable {
        public var record: CredentialRecord
        public var specificity: Specificity
    }

    /// The space looked up.
    public let space: ProtectionSpace
    /// One candidate per user (that user's most specific credential), most specific first;
    /// within a tier, a space's default first, then the most recently used (keyjard records a
    /// use to the minute).
    public let candidates: [Candidate]
    /// The credential that answers without asking, if any.
    public let preferred: CredentialRecord?

    /// The credential to propose to a delegate: the preferred one, else the most specific.
    public var proposed: CredentialRecord? { preferred ?? candidates.first?.record }

    /// - Parameter now: the time expiry is judged at, in seconds since 1970.
    public init(
        for space: ProtectionSpace,
        among records: some Sequence<CredentialRecord>,
        now: Double = Date().timeIntervalSince1970
    ) {
        self.space = space
        var ranked: [Candidate] = []
        for record in records where record.isOffered(at: now) {
            guard let specificity = Self.specificity(of: record.space, for: space) else { continue }
            ranked.append(Candidate(record: record, specificity: specificity))
        }
        ranked.sort(by: Self.isOrderedBefore)
        var seenUsers = Set<String>()
        candidates = ranked.filter { seenUsers.insert($0.record.user).inserted }
        if let firstDefault = ranked.first(where: \.record.isDefault) {
            preferred = firstDefault.record
        } else if seenUsers.count == 1 {
            preferred = candidates.first?.record
        } else {
            preferred = nil
        }
    }

    /// How specific a stored space is for a looked-up one; nil when it does not apply at all.
    public static func specificity(of stored: ProtectionSpace, for wanted: ProtectionSpace) -> Specificity? {
        if stored.isWildcard { return wildcardSpecificity(of: stored, for: wanted) }
        guard stored.host == wanted.host, stored.port == wanted.port, stored.protocol == wanted.protocol,
            stored.proxyType == wanted.proxyType
        else { return nil }
        let sameRealm = stored.realm == wanted.realm
        let sameMethod = stored.authenticationMethod == wanted.authenticationMethod
        let storedAnyMethod = stored.authenticationMethod == .default && wanted.authenticationMethod.isPasswordChallenge
        switch (sameRealm, sameMethod) {
        case (true, true): return .exactSpace
        case (true, false) where storedAnyMethod: return .sameRealmAnyMethod
        default: break
        }
        if stored.realm == nil {
            if sameMethod { return .anyRealmSameMethod }
            if storedAnyMethod { return .anyRealmAnyMethod }
        }
        if wanted.realm == nil, wanted.authenticationMethod == .default,
            stored.authenticationMethod.isHTTPChallenge || stored.authenticationMethod == .default
        {
            return .otherSpaceOfOrigin
        }
        return nil
    }

    /// A `.netrc` login answers a server's own space, a password challenge, or a lookup that
    /// names no challenge; never a proxy, a Bearer challenge, a form or a certificate. Over an
    /// unencrypted scheme it answers only this machine, unless the user imported it to go in
    /// clear too: a login for every scheme must not be read off the network because a link or
    /// a redirect said http.
    private static func wildcardSpecificity(of stored: ProtectionSpace, for wanted: ProtectionSpace) -> Specificity? {
        guard !wanted.isProxy, stored.realm == nil,
            wanted.authenticationMethod == .default || wanted.authenticationMethod.isPasswordChallenge,
            stored.goesInClearToo || ProtectionSpace.encryptedSchemes.contains(wanted.protocol)
                || Host.isThisMachine(wanted.host)
        else { return nil }
        if stored.isEveryServer { return .anyServer }
        return stored.host == wanted.host ? .anySchemeAndPort : nil
    }

    private static func isOrderedBefore(_ a: Candidate, _ b: Candidate) -> Bool {
        if a.specificity != b.specificity { return a.specificity < b.specificity }
        if a.record.isDefault != b.record.isDefault { return a.record.isDefault }
        let aUsed = a.record.lastUsed ?? a.record.created
        let bUsed = b.record.lastUsed ?? b.record.created
        if aUsed != bUsed { return aUsed > bUsed }
        return a.record.user < b.record.user
    }
}

extension ProtectionSpace.AuthenticationMethod {
    /// The methods a server names in a `WWW-Authenticate` or `Proxy-Authenticate` challenge.
    public var isHTTPChallenge: Bool {
        switch self {
        case .httpBasic, .httpDigest, .ntlm, .negotiate, .httpBearer: true
        case .default, .htmlForm, .clientCertificate, .serverTrust: false
        }
    }

    /// The HTTP challenges answered with a user and password: the ones a credential stored with
    /// method `default` answers (all but Bearer, answered only by a token stored for it).
    public var isPasswordChallenge: Bool { isHTTPChallenge && self != .httpBearer }
}

extension CredentialRecord {
    /// Whether a credential saved into its space becomes the space's default: when the caller
    /// asks for it, when it already is, or when the space has no default yet ("the first
    /// credential of a space becomes its default"). `stored` is what the store holds now.
    public func becomesDefault(asked: Bool, stored: some Sequence<CredentialRecord>) -> Bool {
        if asked { return true }
        var spaceHasDefault = false
        for other in stored where other.space == space && other.isDefault {
            if other.user == user { return true }
            spaceHasDefault = true
        }
        return !spaceHasDefault
    }
}

/// keyjard's answer to a credential lookup (``CredentialChoice`` applied to what it stores):
/// the candidates, most specific first, and the one that answers unasked.
public struct CredentialCandidates: Sendable, Hashable {
    public var records: [CredentialRecord]
    /// The credential that answers without asking anyone; nil when several users and no
    /// default leave the choice to a person.
    public var preferred: CredentialRecord?

    public init(records: [CredentialRecord], preferred: CredentialRecord?) {
        self.records = records
        self.preferred = preferred
    }

    /// The credential to answer with: the named user's most specific one, else (no user
    /// named) the preferred one.
    public func answer(forUser user: String?) -> CredentialRecord? {
        guard let user else { return preferred }
        return records.first { $0.user == user }
    }

    /// Where a new password for `user`, accepted (or to be stored) for a challenge of `space`,
    /// belongs: in the credential of that user that answers there, updated rather than doubled
    /// by a second one in the challenge's own space (which would leave the old one, wrong,
    /// answering elsewhere), else in `space` itself. git's `store` and `keyjar fetch --user`
    /// both follow it.
    ///
    /// Never a `.netrc` login's wildcard space: one server's password stored there would be
    /// sent to every server (or every scheme and port of the host); it goes to `space` instead,
    /// which then answers before the wildcard.
    public func space(forStoring user: String, challengedAt space: ProtectionSpace) -> ProtectionSpace {
        answer(forUser: user).flatMap { $0.space.isWildcard ? nil : $0.space } ?? space
    }
}
