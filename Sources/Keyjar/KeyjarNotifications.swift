public import Foundation
import KeyjarCore

/// Posts keyjard's changes on `NotificationCenter.default` under Apple's names, so code written
/// for `HTTPCookieStorage` and `URLCredentialStorage` notifications keeps working, once a
/// client was asked to: ``KeyjarClient/startPostingNotifications()``. (Without it a process
/// is not woken for other processes' changes at all.)
public enum KeyjarNotifications {
    public static let cookiesChanged = Notification.Name(StoreEvent.cookiesChangedNotification)
    public static let acceptPolicyChanged = Notification.Name(StoreEvent.acceptPolicyChangedNotification)
    public static let credentialStorageChanged = Notification.Name(StoreEvent.credentialStorageChangedNotification)
    /// Posted after the replica was replaced by a snapshot (after a long disconnection).
    public static let resynchronised = Notification.Name("KeyjarReplicaResynchronisedNotification")

    /// userInfo key holding the `SequencedEvent`.
    public static let eventKey = "KeyjarEvent"

    static func post(_ event: SequencedEvent, from client: KeyjarClient) {
        NotificationCenter.default.post(
            name: Notification.Name(event.event.notificationName),
            object: client,
            userInfo: [eventKey: event]
        )
    }

    static func postResynchronised(_ client: KeyjarClient) {
        NotificationCenter.default.post(name: resynchronised, object: client)
    }
}
