/// What became of one cookie handed to a `SharedCookieStorage`: stored, or rejected and why.
///
/// ```swift
/// let outcomes = try storage.storeCookies(fromResponseHeaders: lines, for: url, mainDocumentURL: nil)
/// for case .rejected(let reason) in outcomes { print(reason) }   // e.g. "Domain=com is a public suffix"
/// ```
public enum CookieStoreOutcome: Sendable, Hashable, CustomStringConvertible {
    /// The cookie is in the jar (or, for one that was already expired, its namesake is gone).
    case stored
    /// The cookie was not stored; the reason is a sentence a program can show.
    case rejected(reason: String)

    /// Whether the cookie was stored.
    public var isStored: Bool { self == .stored }

    /// Why the cookie was not stored; nil when it was.
    public var rejectionReason: String? {
        if case .rejected(let reason) = self { reason } else { nil }
    }

    public var description: String {
        switch self {
        case .stored: "stored"
        case .rejected(let reason): "rejected: \(reason)"
        }
    }

    /// From the wire's form: nil when stored, else the reason.
    package init(_ rejection: String?) {
        self = rejection.map { .rejected(reason: $0) } ?? .stored
    }
}
