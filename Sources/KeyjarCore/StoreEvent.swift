/// One change to the shared store, as keyjard announces it to every client.
///
/// Each case corresponds to one of Apple's notification names, which clients post under.
public enum StoreEvent: Sendable, Hashable {
    /// Cookies were added, replaced or removed (with the cause).
    case cookies(changes: [CookieChange])
    /// The accept policy or a per-domain rule changed; carries the whole new policy.
    case policy(policy: CookiePolicy)
    /// Credentials changed: never a password, only where and whose.
    case credentials(changes: [CredentialChange])

    /// The notification name Apple's frameworks use for this kind of change.
    public var notificationName: String {
        switch self {
        case .cookies: return StoreEvent.cookiesChangedNotification
        case .policy: return StoreEvent.acceptPolicyChangedNotification
        case .credentials: return StoreEvent.credentialStorageChangedNotification
        }
    }

    public static let cookiesChangedNotification = "NSHTTPCookieManagerCookiesChangedNotification"
    public static let acceptPolicyChangedNotification = "NSHTTPCookieManagerAcceptPolicyChangedNotification"
    public static let credentialStorageChangedNotification = "NSURLCredentialStorageChangedNotification"
}

/// A credential change: the space and user, and what happened. Passwords are never part of it.
public struct CredentialChange: Sendable, Hashable {
    public enum Kind: String, Sendable, Hashable {
        case added, updated, removed, defaultChanged
    }

    public var kind: Kind
    public var space: ProtectionSpace
    public var user: String
    /// For `added` and `updated`: the credential's metadata as it now is (never a secret), so
    /// that a replica's copy has its expiry, refresh token and revocation too. Absent from
    /// events keyjard wrote before tokens (protocol version 4).
    public var record: CredentialRecord?

    public init(kind: Kind, space: ProtectionSpace, user: String, record: CredentialRecord? = nil) {
        self.kind = kind
        self.space = space
        self.user = user
        self.record = record
    }
}

/// A store event with its place in keyjard's total order of changes.
public struct SequencedEvent: Sendable, Hashable {
    /// Strictly increasing across keyjard restarts (it is the change log's key).
    public var sequence: UInt64
    public var event: StoreEvent

    public init(sequence: UInt64, event: StoreEvent) {
        self.sequence = sequence
        self.event = event
    }
}
