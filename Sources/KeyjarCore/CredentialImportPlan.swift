/// A credential another store holds, offered to `keyjar credential import`.
/// `description` never shows the password or the refresh token.
public struct CredentialImportCandidate: Sendable, Hashable, CustomStringConvertible, CustomDebugStringConvertible {
    /// Where it came from, for the report: `line 3`, `https://alice@example.com`.
    public var origin: String
    public var space: ProtectionSpace
    public var user: String
    public var password: String
    /// When the password (a token) expires, in seconds since 1970; nil when it does not.
    public var expires: Double?
    /// An OAuth refresh token kept beside the password (git's `oauth_refresh_token`).
    public var refreshToken: String?

    public init(
        origin: String,
        space: ProtectionSpace,
        user: String,
        password: String,
        expires: Double? = nil,
        refreshToken: String? = nil
    ) {
        self.origin = origin
        self.space = space
        self.user = user
        self.password = password
        self.expires = expires
        self.refreshToken = refreshToken
    }

    public var description: String {
        let extras =
            (expires.map { ", expires: \($0)" } ?? "") + (refreshToken == nil ? "" : ", refresh token: <hidden>")
        return "CredentialImportCandidate(\(origin): \(user) for \(space), password: <hidden>\(extras))"
    }
    public var debugDescription: String { description }
}

/// What Keyjar already stores for a candidate's space and user, to compare with.
/// `description` never shows the secrets.
public struct StoredCredentialSecrets: Sendable, Hashable, CustomStringConvertible, CustomDebugStringConvertible {
    public var password: String
    public var expires: Double?
    public var refreshToken: String?

    public init(password: String, expires: Double? = nil, refreshToken: String? = nil) {
        self.password = password
        self.expires = expires
        self.refreshToken = refreshToken
    }

    public var description: String {
        "StoredCredentialSecrets(password: <hidden>, expires: \(expires.map { "\($0)" } ?? "never")"
            + "\(refreshToken == nil ? "" : ", refresh token: <hidden>"))"
    }
    public var debugDescription: String { description }
}

/// What an import does with each credential a source offers, given what Keyjar stores: the rule
/// of `keyjar credential import`, as a value (the command reads, plans, prints, then writes
/// ``writes`` in one transaction, or nothing with `--dry-run`).
///
/// - A credential Keyjar does not store (same space and user, compared exactly) is **added**.
/// - One stored with the same password, expiry and refresh token is **unchanged**.
/// - One stored with the same password but another expiry or refresh token is **updated** (the
///   source has the newer token metadata; the password itself is not in question). A source
///   that has no expiry or refresh token (netrc, git-store) never takes away stored ones.
/// - One stored with a different password is **left** as it is, unless `replace` is set: then it
///   is **updated**. Which is right cannot be known; the user is told and decides.
/// - A second credential of the source for a space and user it offered already is a
///   **duplicate**, never imported: curl, git and git's helpers all answer with the first.
/// - One that has expired (a token git stored with `password_expiry_utc`) is **expired**, never
///   imported: it would never be offered.
///
/// ```swift
/// let plan = CredentialImportPlan(candidates: found, stored: secrets, replace: false)
/// for entry in plan.entries { print(entry.candidate.origin, entry.outcome) }
/// client.saveCredentials(plan.writes.map { … })
/// ```
public struct CredentialImportPlan: Sendable {
    /// A space and user: what one credential is stored under.
    public struct Key: Sendable, Hashable {
        public var space: ProtectionSpace
        public var user: String

        public init(space: ProtectionSpace, user: String) {
            self.space = space
            self.user = user
        }
    }

    public enum Outcome: Sendable, Hashable, CustomStringConvertible {
        case added
        case updated
        case unchanged
        /// Stored with a different password, left as it is (no `replace`).
        case left
        /// The source offered this space and user before, at the origin given.
        case duplicate(of: String)
        case expired

        /// Whether the credential is written.
        public var writes: Bool { self == .added || self == .updated }

        public var description: String {
            switch self {
            case .added: "added"
            case .updated: "updated"
            case .unchanged: "unchanged"
            case .left: "left (a different password is stored; --replace replaces it)"
            case .duplicate(let origin): "skipped (a duplicate of \(origin))"
            case .expired: "skipped (expired)"
            }
        }
    }

    public struct Entry: Sendable, Hashable {
        public var candidate: CredentialImportCandidate
        public var outcome: Outcome
    }

    /// Every candidate, in the source's order, with what the import does with it.
    public let entries: [Entry]

    /// - Parameters:
    ///   - candidates: what the source offers, in its order.
    ///   - stored: what Keyjar stores under the candidates' keys (other keys are never looked at).
    ///   - replace: whether a different stored password is replaced.
    ///   - now: seconds since 1970, for expiry.
    public init(
        candidates: [CredentialImportCandidate],
        stored: [Key: StoredCredentialSecrets],
        replace: Bool,
        now: Double
    ) {
        var firstOrigin: [Key: String] = [:]
        entries = candidates.map { candidate in
            let key = Key(space: candidate.space, user: candidate.user)
            if let origin = firstOrigin[key] { return Entry(candidate: candidate, outcome: .duplicate(of: origin)) }
            firstOrigin[key] = candidate.origin
            if let expires = candidate.expires, expires <= now {
                return Entry(candidate: candidate, outcome: .expired)
            }
            guard let existing = stored[key] else { return Entry(candidate: candidate, outcome: .added) }
            let outcome: Outcome
            if existing.password != candidate.password {
                outcome = replace ? .updated : .left
            } else if let expires = candidate.expires, expires != existing.expires {
                outcome = .updated
            } else if let token = candidate.refreshToken, token != existing.refreshToken {
                outcome = .updated
            } else {
                outcome = .unchanged
            }
            return Entry(candidate: candidate, outcome: outcome)
        }
    }

    /// The credentials to write, in the source's order.
    public var writes: [CredentialImportCandidate] {
        entries.filter(\.outcome.writes).map(\.candidate)
    }

    /// How many entries have each outcome's kind, for the summary line.
    public func count(_ outcome: (Outcome) -> Bool) -> Int {
        entries.count { outcome($0.outcome) }
    }
}
