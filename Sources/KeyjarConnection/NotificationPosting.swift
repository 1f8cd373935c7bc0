package import KeyjarCore

/// Who posts a client's changes on Foundation's `NotificationCenter`: the `Keyjar` module's
/// `KeyjarNotifications`, handed to a client when it is asked to post
/// (`startPostingNotifications()`) or a storage is made on it. This module links only
/// FoundationEssentials, which has no `NotificationCenter`, so that the `keyjar` front starts
/// without Foundation (docs/performance.md, The command).
package protocol NotificationPoster: Sendable {
    /// Posts one change for the client (when it posts) and for each storage it concerns.
    func post(_ event: SequencedEvent, client: KeyjarClient?, _ targets: [NotificationTarget])

    /// Tells that the replica was replaced by a snapshot: what changed is not known.
    func postResynchronised(client: KeyjarClient?, _ targets: [NotificationTarget])
}

/// A storage made on a client, which the client's changes are posted for (weakly held: a
/// storage that is gone posts nothing).
package struct NotificationTarget: Sendable {
    package enum Kind: Sendable {
        /// A `SharedCookieStorage`: cookie and policy changes.
        case cookies
        /// A `SharedCredentialStorage`: credential changes.
        case credentials

        package func posts(_ event: StoreEvent) -> Bool {
            switch event {
            case .cookies, .policy: self == .cookies
            case .credentials: self == .credentials
            }
        }
    }

    package weak var object: (any AnyObject & Sendable)?
    package let kind: Kind
}
