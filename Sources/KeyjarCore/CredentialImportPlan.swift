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

/// What Keyjar already stores for a candidate's space and user, to compare with and to keep
/// in an update. `description` never shows the secrets.
public struct StoredCredentialSecrets: Sendable, Hashable, CustomStringConvertible, CustomDebugStringConvertible {
    public var password: String
    public var expires: Double?
    public var refreshToken: String?
    /// ``CredentialRecord/tokenRefresh``: where Keyjar itself refreshes with ``refreshToken``.
    public var tokenRefresh: TokenRefresh?

    public init(
        password: String,
        expires: Double? = nil,
        refreshToken: String? = nil,
        tokenRefresh: TokenRefresh? = nil
    ) {
        self.password = password
        self.expires = expires
        self.refreshToken = refreshToken
        self.tokenRefresh = tokenRefresh
    }

    public var description: String {
        "StoredCredentialSecrets(password: <hidden>, expires: \(expires.map { "\($0)" } ?? "never")"
            + "\(refreshToken == nil ? "" : ", refresh token: <hidden>")"
            + "\(tokenRefresh.map { ", token endpoint: \($0.endpoint)" } ?? ""))"
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
///   that has no expiry or refresh token (netrc, git-store) never takes away stored ones: the
///   write keeps the stored expiry and refresh token where the source has none, and where Keyjar
///   refreshes the token (``CredentialRecord/tokenRefresh``) unless the source brings another
///   refresh token.
/// - One stored with a different password is **left** as it is, unless `replace` is set: then it
///   is **updated**, with the source's expiry and refresh token only. Which is right cannot be
///   known; the user is told and decides.
/// - A second credential of the source for a space and user it offered already is a
///   **duplicate**, never imported: curl, git and git's helpers all answer with the first.
/// - One that has expired (a token git stored with `password_expiry_utc`) is **expired**, never
///   imported: it would never be offered.
///
/// ```swift
/// let plan = CredentialImportPlan(candidates: found, stored: secrets, replace: false)
/// for entry in plan.entries { print(entry.candidate.origin, entry.outcome) }
/// try client.saveCredentials(plan.writes)
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
        /// What is sent to keyjard for it, when the outcome writes: the candidate, merged with
        /// what is stored for an update of the same password.
        public var write: CredentialWrite?

        init(candidate: CredentialImportCandidate, outcome: Outcome, write: CredentialWrite? = nil) {
            self.candidate = candidate
            self.outcome = outcome
            self.write = write
        }
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
            guard let existing = stored[key] else {
                return Entry(candidate: candidate, outcome: .added, write: Self.write(candidate))
            }
            if existing.password != candidate.password {
                // A new password comes with its own token fields only: a stored refresh token
                // and endpoint were issued with the old password, and keyjard deletes that
                // refresh token when the write carries none.
                return replace
                    ? Entry(candidate: candidate, outcome: .updated, write: Self.write(candidate))
                    : Entry(candidate: candidate, outcome: .left)
            }
            let newExpiry = candidate.expires.map { $0 != existing.expires } ?? false
            let newRefreshToken = candidate.refreshToken.map { $0 != existing.refreshToken } ?? false
            guard newExpiry || newRefreshToken else { return Entry(candidate: candidate, outcome: .unchanged) }
            // keyjard replaces the record's token fields with the write's (and deletes a stored
            // refresh token the write does not carry), so what the source lacks is taken from
            // what is stored. The endpoint and client id Keyjar refreshes with stay only with the
            // refresh token they were recorded for: a refresh token is bound to the client it
            // was issued to (RFC 6749 §6), and sending another one there could be refused as
            // invalid_grant, which would mark the credential revoked.
            var write = Self.write(candidate)
            write.expires = candidate.expires ?? existing.expires
            write.refreshToken = candidate.refreshToken ?? existing.refreshToken
            if write.refreshToken != nil, write.refreshToken == existing.refreshToken {
                write.tokenRefresh = existing.tokenRefresh
            }
            return Entry(candidate: candidate, outcome: .updated, write: write)
        }
    }

    /// The candidate as it is written: its own password and token fields, and no endpoint (a
    /// source never has one).
    private static func write(_ candidate: CredentialImportCandidate) -> CredentialWrite {
        CredentialWrite(
            space: candidate.space,
            user: candidate.user,
            password: candidate.password,
            expires: candidate.expires,
            refreshToken: candidate.refreshToken
        )
    }

    /// What to send to keyjard (`saveCredentials`, one transaction), in the source's order.
    public var writes: [CredentialWrite] {
        entries.compactMap(\.write)
    }

    /// How many entries have each outcome's kind, for the summary line.
    public func count(_ outcome: (Outcome) -> Bool) -> Int {
        entries.count { outcome($0.outcome) }
    }
}
