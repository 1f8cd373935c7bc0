public import Foundation
import Synchronization

/// An observer added through a storage's `addObserver(forName:queue:using:)`
/// (``SharedCookieStorage/addObserver(forName:queue:using:)``,
/// ``SharedCredentialStorage/addObserver(forName:queue:using:)``): while it is in place, the
/// process listens, so other processes' changes are posted as keyjard commits them. It is
/// removed by ``cancel()`` or when it is released, whichever comes first; keep it for as long
/// as the observer should run.
public final class KeyjarObservation: Sendable {
    private let observer: Observer
    /// The storage observed, kept for as long as it is: a storage that is gone posts nothing.
    private let storage: any AnyObject & Sendable
    private let client: KeyjarClient?
    private let ended = Atomic(false)

    /// NotificationCenter's token, which is not Sendable but is only ever handed back to it.
    private struct Observer: @unchecked Sendable {
        let token: any NSObjectProtocol
    }

    init(
        name: Notification.Name?,
        object: any AnyObject & Sendable,
        client: KeyjarClient?,
        queue: OperationQueue?,
        block: @escaping @Sendable (Notification) -> Void
    ) {
        observer = Observer(
            token: NotificationCenter.default.addObserver(forName: name, object: object, queue: queue, using: block)
        )
        storage = object
        self.client = client
        client?.beginObservation()
    }

    /// Removes the observer; the process stops listening unless something else listens.
    public func cancel() {
        guard !ended.exchange(true, ordering: .acquiringAndReleasing) else { return }
        NotificationCenter.default.removeObserver(observer.token)
        client?.endObservation()
    }

    deinit { cancel() }
}

extension SharedCookieStorage {
    /// Observes this storage's notifications (`KeyjarNotifications.cookiesChanged` and
    /// `KeyjarNotifications.acceptPolicyChanged`; `name` nil for both) as
    /// `NotificationCenter.default.addObserver(forName:object:queue:using:)` with this storage
    /// as object does, and makes the process listen meanwhile: other processes' changes are
    /// posted as keyjard commits them, rather than at this process's next lookup. An observer
    /// registered on `NotificationCenter` directly hears the same notifications, live only
    /// while something listens.
    public func addObserver(
        forName name: Notification.Name?,
        queue: OperationQueue? = nil,
        using block: @escaping @Sendable (Notification) -> Void
    ) -> KeyjarObservation {
        KeyjarObservation(name: name, object: self, client: sharedClient, queue: queue, block: block)
    }
}

extension SharedCredentialStorage {
    /// Observes this storage's `KeyjarNotifications.credentialStorageChanged` (`name` nil:
    /// every notification it posts) as `NotificationCenter.default.addObserver(forName:object:queue:using:)`
    /// with this storage as object does, and makes the process listen meanwhile: other
    /// processes' changes are posted as keyjard commits them.
    public func addObserver(
        forName name: Notification.Name?,
        queue: OperationQueue? = nil,
        using block: @escaping @Sendable (Notification) -> Void
    ) -> KeyjarObservation {
        KeyjarObservation(name: name, object: self, client: client, queue: queue, block: block)
    }
}
