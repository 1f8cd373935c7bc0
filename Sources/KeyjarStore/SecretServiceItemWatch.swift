internal import CLibSecret
import Synchronization

/// A watch on the Secret Service (``LibSecretStore/watchItems(_:)``): while it lasts, every
/// item another program, or Keyjar, changes or deletes in any collection calls `changed`, on
/// GDBus's message thread, and so does another Secret Service taking the bus name. A created
/// item does not: it cannot take a password away. Ends with ``cancel()`` or when released; once
/// `cancel()` has returned, `changed` is not called again.
///
/// `@unchecked`: the connection pointer is only passed to GDBus, whose connections are
/// thread-safe.
final class SecretServiceItemWatch: SecretStoreWatch, @unchecked Sendable {
    private let connection: OpaquePointer
    private let filter: guint
    private let callback: Callback

    /// The closure, kept alive for GDBus's message thread until GDBus releases it. `isActive`
    /// is held while the closure runs, so that `cancel()` waits for a call in progress.
    private final class Callback: Sendable {
        let changed: @Sendable () -> Void
        let isActive = Mutex(true)
        init(_ changed: @escaping @Sendable () -> Void) { self.changed = changed }

        func call() { isActive.withLock { if $0 { changed() } } }
    }

    /// Starts a watch on the session bus; throws when there is no session bus to watch.
    init(_ changed: @escaping @Sendable () -> Void) throws {
        let callback = Callback(changed)
        var connection: OpaquePointer?
        var error: UnsafeMutablePointer<GError>?
        let filter = keyjar_watch_items(
            { context, _, _ in
                guard let context else { return }
                Unmanaged<Callback>.fromOpaque(context).takeUnretainedValue().call()
            },
            Unmanaged.passRetained(callback).toOpaque(),
            { context in
                guard let context else { return }
                Unmanaged<Callback>.fromOpaque(context).release()
            },
            &connection,
            &error
        )
        if let error {
            defer { g_error_free(error) }
            let message = error.pointee.message.map { String(cString: $0) } ?? "no message"
            throw SecretStoreError(.serviceUnavailable, "watching the Secret Service's items: \(message)")
        }
        guard filter != 0, let connection else {
            throw SecretStoreError(.serviceUnavailable, "watching the Secret Service's items failed without a reason")
        }
        self.connection = connection
        self.filter = filter
        self.callback = callback
    }

    /// Stops the watch without blocking on D-Bus (an event loop may call it).
    func cancel() {
        let wasActive = callback.isActive.withLock { active in
            defer { active = false }
            return active
        }
        if wasActive { keyjar_unwatch_items(connection, filter) }
    }

    deinit {
        cancel()
        g_object_unref(UnsafeMutableRawPointer(connection))
    }
}
