internal import CLibSecret
import Synchronization

/// A watch on the Secret Service's items, on the session bus: while it lasts, every item a
/// program changes or deletes in any collection calls `changed`, on GDBus's message thread, and
/// so does another Secret Service taking the bus name. A created item does not: it cannot take a
/// secret away. Ends with ``cancel()`` or when released; once `cancel()` has returned, `changed`
/// is not called again.
///
/// `@unchecked`: the connection pointer is only passed to GDBus, whose connections are
/// thread-safe.
package final class LibSecretItemWatch: @unchecked Sendable {
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

    /// Starts a watch on the session bus.
    /// - Throws: the bus's failure (its own connection's, not libsecret's service: that is left
    ///   as it is); a failure without a message when the watch failed without saying why.
    package init(_ changed: @escaping @Sendable () -> Void) throws(LibSecretFailure) {
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
        if let error { throw LibSecretFailure(consuming: error, keepingService: true) }
        guard filter != 0, let connection else { throw LibSecretFailure(.failed, nil) }
        self.connection = connection
        self.filter = filter
        self.callback = callback
    }

    /// Stops the watch without blocking on D-Bus (an event loop may call it).
    package func cancel() {
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
