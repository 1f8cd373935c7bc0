public import KeyjarCore
import KeyjarProtocol

/// keyjard's state: its status report and the cookie policy.
extension KeyjarClient {
    /// What keyjard reports about itself: versions, paths, counts, the secrets backend's health,
    /// connected clients, memory bounds, and the half credentials it finds.
    public func status() throws(KeyjarClientError) -> ServiceStatus {
        guard case .status(let status) = try call(.status) else { throw Self.unexpectedReply }
        return status
    }

    /// The accept policy and domain rules, as keyjard holds them.
    public func policy() throws(KeyjarClientError) -> CookiePolicy {
        guard case .policy(let policy) = try call(.policy) else { throw Self.unexpectedReply }
        return policy
    }

    /// Replaces the accept policy and domain rules (domains are canonicalised by keyjard).
    public func setPolicy(_ policy: CookiePolicy) throws(KeyjarClientError) {
        _ = try call(.setPolicy(policy: policy))
    }
}
