import KeyjarLibSecret

/// A watch on the Secret Service (``LibSecretStore/watchItems(_:)``): while it lasts, every
/// item another program, or Keyjar, changes or deletes in any collection calls `changed`, on
/// GDBus's message thread, and so does another Secret Service taking the bus name. A created
/// item does not: it cannot take a password away. Ends with ``cancel()`` or when released; once
/// `cancel()` has returned, `changed` is not called again.
final class SecretServiceItemWatch: SecretStoreWatch {
    private let watch: LibSecretItemWatch

    /// Starts a watch on the session bus; throws when there is no session bus to watch.
    init(_ changed: @escaping @Sendable () -> Void) throws {
        do {
            watch = try LibSecretItemWatch(changed)
        } catch {
            // Whatever the bus said, there is nothing to watch: the service is unavailable.
            throw SecretStoreError(
                .serviceUnavailable,
                error.message.map { "watching the Secret Service's items: \($0)" }
                    ?? "watching the Secret Service's items failed without a reason"
            )
        }
    }

    /// Stops the watch without blocking on D-Bus (an event loop may call it).
    func cancel() { watch.cancel() }
}
