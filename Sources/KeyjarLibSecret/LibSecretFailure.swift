internal import CLibSecret

/// A libsecret call that failed, told apart as every caller needs: no Secret Service, a locked
/// item, a value that cannot be passed, anything else; with libsecret's message, which never
/// holds a secret. Callers turn it into their own errors (``kind`` picks the code, ``message``
/// the detail).
package struct LibSecretFailure: Error, Sendable, Hashable {
    package enum Kind: Sendable, Hashable {
        /// No Secret Service answers: a bus name without an owner, a service that cannot be
        /// started, a bus that went away.
        case serviceUnavailable
        /// The item, or its collection, is locked and was not unlocked.
        case locked
        /// An argument C would cut short (text with a NUL): refused before libsecret is called.
        case invalidInput
        /// Anything else; the message says what.
        case failed
    }

    package var kind: Kind
    /// libsecret's message ("no message" when its error had none), or Keyjar's for
    /// ``Kind/invalidInput``; nil when libsecret reported a failure without an error, so that
    /// the caller says so in its own words.
    package var message: String?

    package init(_ kind: Kind, _ message: String?) {
        self.kind = kind
        self.message = message
    }

    /// The failure a GError describes; frees the error. The one place a libsecret (or GIO) error
    /// becomes Keyjar's, so the rule below holds for every call.
    ///
    /// `keepingService` is for an error that is not libsecret's service failing (the item watch's
    /// own bus connection), and for a question whose failure is ignored: the call after it must
    /// meet the same service, not a new one (Chromium's lookup runs only after a search found no
    /// locked item; reconnected to another service, it could prompt).
    init(consuming error: UnsafeMutablePointer<GError>, keepingService: Bool = false) {
        defer { g_error_free(error) }
        // libsecret keeps one service proxy per process, bound to the bus name and session of
        // the service it first reached. After that service restarts, every call through it fails
        // ("The name :1.3 was not provided", "The session … does not exist"): drop it, so that
        // the next call connects to whichever service is there now. Safe at any time, by its
        // documentation; calls in progress keep their own reference.
        if !keepingService { secret_service_disconnect() }
        let domain = error.pointee.domain
        let code = error.pointee.code
        message = error.pointee.message.map { String(cString: $0) } ?? "no message"
        kind = .failed
        if domain == g_dbus_error_quark() {
            switch GDBusError(rawValue: UInt32(bitPattern: code)) {
            case G_DBUS_ERROR_SERVICE_UNKNOWN, G_DBUS_ERROR_NAME_HAS_NO_OWNER, G_DBUS_ERROR_NO_SERVER,
                G_DBUS_ERROR_SPAWN_SERVICE_NOT_FOUND, G_DBUS_ERROR_SPAWN_CHILD_EXITED, G_DBUS_ERROR_SPAWN_FAILED,
                G_DBUS_ERROR_DISCONNECTED, G_DBUS_ERROR_FILE_NOT_FOUND:
                kind = .serviceUnavailable
            default:
                break
            }
        }
        if domain == secret_error_get_quark(), code == Int32(SECRET_ERROR_IS_LOCKED.rawValue) {
            kind = .locked
        }
    }
}
