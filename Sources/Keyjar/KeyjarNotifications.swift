public import Foundation
import KeyjarCore

/// keyjard's changes on `NotificationCenter.default`, under Apple's names, so code written for
/// `HTTPCookieStorage` and `URLCredentialStorage` notifications keeps working.
///
/// **Who posts, with which object.** A `SharedCookieStorage` posts ``cookiesChanged`` and
/// ``acceptPolicyChanged`` with itself as object, a `SharedCredentialStorage`
/// ``credentialStorageChanged``, as Foundation's storages do: an observer registered for the
/// storage object, under Foundation's names (`.NSHTTPCookieManagerCookiesChanged` is the same
/// name), hears them with nothing switched on. A `KeyjarClient` after
/// `KeyjarClient.startPostingNotifications()` posts every change with itself as object too,
/// so an observer of `object: nil` hears a change once per poster.
///
/// **When.** Every change a storage's replica applies is posted on the thread that applied it,
/// in order, with the `SequencedEvent` under ``eventKey``: this process's own writes before
/// the call returns, and other processes' changes as the replica learns of them. A process
/// that does not listen learns of them at its next lookup (which catches up first, and posts
/// them before it answers); one that listens, as keyjard commits them. A process listens while
/// an observer added through a storage's `addObserver(forName:queue:using:)` is in place
/// (`SharedCookieStorage.addObserver(forName:queue:using:)`), a `KeyjarClient.changes()`
/// stream is open, a listener is in place (`KeyjarClient.addListener(_:)`), or after
/// `KeyjarClient.startPostingNotifications()`.
///
/// **Without NotificationCenter.** A client's listeners (`KeyjarClient.addListener(_:)`) are
/// told of the same changes, in the same order, on the same thread, with nothing posted: a
/// client that only has listeners (no storage made on it, not posting) never touches
/// `NotificationCenter`. Foundation gives no way to know whether anyone observes its names, so
/// storages post whenever they exist; a listener costs a listening process about 60% of what
/// a notification does (`client_listener_notified_cpu_per_change_per_process` against
/// `client_notified_cpu_per_change_per_process`, `KEYJAR_BENCH_CLIENT_ONLY=notify keyjar-bench
/// client`).
///
/// **Why listening is not the default.** Measured on a release build, 2 cores
/// (`swift build -c release`; 2026-11-25, 17ff2f4): a process that listens is woken for every
/// change any process makes, 27–31 µs of CPU per change in each listening process, whether a
/// storage's observer or the client listens (`client_notified_cpu_per_change_per_process`,
/// `KEYJAR_BENCH_CLIENT_ONLY=notify KEYJAR_BENCH_PEER_MODE=storage KEYJAR_BENCH_CLIENT_PEERS=9
/// keyjar-bench client`, and `KEYJAR_BENCH_PEER_MODE=client`). One that does not listen is
/// never woken: 21 ns per change while changes go by, the noise of the measurement
/// (`client_not_listening_cpu_per_foreign_change`, `KEYJAR_BENCH_CLIENT_ONLY=fresh`). It pays
/// at its next lookup, which catches up anyway (36–38 µs, one round trip), posting each change:
/// 0.54 µs with nobody observing, 0.86 µs with one observer (`client_post_unobserved`,
/// `client_post_observed`, `KEYJAR_BENCH_CLIENT_ONLY=post keyjar-bench client`; the lookup's
/// own median did not move measurably). So posting is always on, and live delivery costs a
/// process only once something asked for it.
///
/// After the replica was replaced by a snapshot (a long disconnection), what changed is not
/// known: storages post their names without an event, and a client that posts posts
/// ``resynchronised``.
public enum KeyjarNotifications {
    public static let cookiesChanged = Notification.Name(StoreEvent.cookiesChangedNotification)
    public static let acceptPolicyChanged = Notification.Name(StoreEvent.acceptPolicyChangedNotification)
    public static let credentialStorageChanged = Notification.Name(StoreEvent.credentialStorageChangedNotification)
    /// Posted by a client that posts (`KeyjarClient.startPostingNotifications()`) after its
    /// replica was replaced by a snapshot (after a long disconnection).
    public static let resynchronised = Notification.Name("KeyjarReplicaResynchronisedNotification")

    /// userInfo key holding the `SequencedEvent`.
    public static let eventKey = "KeyjarEvent"

    /// What posts for clients and storages.
    static let poster: any NotificationPoster = FoundationPoster()
}

/// Posting on `NotificationCenter.default`, for the clients and storages of this process.
private struct FoundationPoster: NotificationPoster {
    /// Posts one change for the client (when it posts) and for each storage it concerns.
    func post(_ event: SequencedEvent, client: KeyjarClient?, _ targets: [NotificationTarget]) {
        // Nothing is made for nobody: the name and userInfo alone were 15% of a listening
        // process's reader thread when only Keyjar listeners heard it (perf, 99 peers).
        guard client != nil || targets.contains(where: { $0.kind.posts(event.event) }) else { return }
        let name = Notification.Name(event.event.notificationName)
        let userInfo: [AnyHashable: Any] = [KeyjarNotifications.eventKey: event]
        if let client { NotificationCenter.default.post(name: name, object: client, userInfo: userInfo) }
        for target in targets where target.kind.posts(event.event) {
            guard let object = target.object else { continue }
            NotificationCenter.default.post(name: name, object: object, userInfo: userInfo)
        }
    }

    /// Tells that the replica was replaced: the client's own name, and each storage's names
    /// without an event.
    func postResynchronised(client: KeyjarClient?, _ targets: [NotificationTarget]) {
        if let client { NotificationCenter.default.post(name: KeyjarNotifications.resynchronised, object: client) }
        for target in targets {
            guard let object = target.object else { continue }
            for name in target.kind.names { NotificationCenter.default.post(name: name, object: object) }
        }
    }
}

extension NotificationTarget.Kind {
    /// The names a storage of this kind posts.
    var names: [Notification.Name] {
        switch self {
        case .cookies: [KeyjarNotifications.cookiesChanged, KeyjarNotifications.acceptPolicyChanged]
        case .credentials: [KeyjarNotifications.credentialStorageChanged]
        }
    }
}

extension KeyjarClient {
    /// Posts every change on `NotificationCenter.default` under Apple's names
    /// (``KeyjarNotifications``) with this client as object from now on; the process listens
    /// until `KeyjarClient.stopPostingNotifications()`. Not needed for an
    /// observer of a storage: storages post with themselves as object anyway, and their
    /// `addObserver(forName:queue:using:)` makes the process listen while the observer is in
    /// place. Off by default: a process that never looks at notifications is then not woken by
    /// every other process's change.
    public func startPostingNotifications() {
        startPosting(with: KeyjarNotifications.poster)
    }
}
