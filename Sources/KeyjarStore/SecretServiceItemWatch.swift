internal import CLibSecret
import Synchronization

/// A watch on the Secret Service (``LibSecretStore/watchItems(_:)``): while it lasts, every
/// item another program, or Keyjar, creates, changes or deletes in any collection calls
/// `changed` with the signal's name and the item's path, on GDBus's message thread, and so does
/// another Secret Service taking the bus name (`NameOwnerChanged`, path ""). Ends with
/// ``cancel()`` or when released; once `cancel()` has returned, `changed` is not called again.
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
        let changed: @Sendable (_ signal: String, _ path: String) -> Void
        let isActive = Mutex(true)
        init(_ changed: @escaping @Sendable (String, String) -> Void) { self.changed = changed }

        func call(_ signal: String, _ path: String) { isActive.withLock { if $0 { changed(signal, path) } } }
    }

    private let cancelled: @Sendable () -> Void

    /// Starts a watch on the session bus; throws when there is no session bus to watch.
    /// `cancelled` is called once, when the watch ends.
    init(
        changed: @escaping @Sendable (_ signal: String, _ path: String) -> Void,
        cancelled: @escaping @Sendable () -> Void
    ) throws {
        let callback = Callback(changed)
        var connection: OpaquePointer?
        var error: UnsafeMutablePointer<GError>?
        let filter = keyjar_watch_items(
            { context, signal, path in
                guard let context, let signal, let path else { return }
                Unmanaged<Callback>.fromOpaque(context).takeUnretainedValue().call(
                    String(cString: signal),
                    String(cString: path)
                )
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
        self.cancelled = cancelled
    }

    /// Stops the watch without blocking on D-Bus (an event loop may call it).
    func cancel() {
        let wasActive = callback.isActive.withLock { active in
            defer { active = false }
            return active
        }
        guard wasActive else { return }
        keyjar_unwatch_items(connection, filter)
        cancelled()
    }

    deinit {
        cancel()
        g_object_unref(UnsafeMutableRawPointer(connection))
    }
}
