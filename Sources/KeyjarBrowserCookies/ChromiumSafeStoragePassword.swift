internal import CLibSecret
import Glibc
import KeyjarFiles

/// A Chromium-family browser's "Safe Storage" password from the Secret Service: the secret its
/// v11 cookie key is derived from.
package enum ChromiumSafeStoragePassword {
    /// The passwords found (v2 schema's first), and why the Secret Service could not be asked
    /// when it could not (locked, absent). Never prompts: a locked keyring is reported, not
    /// unlocked behind the user's back.
    package struct Lookup: Sendable {
        package var passwords: [String] = []
        package var problem: Problem?
    }

    package enum Problem: Sendable, Hashable {
        case locked
        case unavailable(String)
    }

    package static func lookup(application: String) -> Lookup {
        var lookup = Lookup()
        guard SessionBus.problem() == nil else {
            lookup.problem = .unavailable("no D-Bus session bus (DBUS_SESSION_BUS_ADDRESS is not set)")
            return lookup
        }
        // v2 by the browser's name; v1 items have no attributes (one for every browser), only
        // their schema's name, which libsecret matches as `xdg:schema`.
        for (schema, byApplication) in [(keyjar_chromium_schema_v2(), true), (keyjar_chromium_schema_v1(), false)] {
            guard let attributes = keyjar_attributes_new() else { continue }
            defer { g_hash_table_unref(attributes) }
            if byApplication { keyjar_attributes_set(attributes, "application", application) }
            // Looking up a locked item makes the Secret Service prompt (or fail to, without a
            // display): find out first, without a prompt, and say so instead.
            if onlyLockedItems(schema, attributes) {
                lookup.problem = .locked
                continue
            }
            var error: UnsafeMutablePointer<GError>?
            let secret = secret_password_lookupv_sync(schema, attributes, nil, &error)
            if let error {
                let locked =
                    error.pointee.domain == secret_error_get_quark()
                    && error.pointee.code == Int32(SECRET_ERROR_IS_LOCKED.rawValue)
                let message = error.pointee.message.map { String(cString: $0) } ?? "no message"
                g_error_free(error)
                secret_password_free(secret)
                // A restarted service leaves libsecret's cached proxy dead (see LibSecretStore).
                secret_service_disconnect()
                lookup.problem = locked ? .locked : .unavailable(message)
                continue
            }
            guard let secret else { continue }
            defer { secret_password_free(secret) }
            let password = String(cString: secret)
            if !lookup.passwords.contains(password) { lookup.passwords.append(password) }
        }
        return lookup
    }

    /// Whether the items that match are all in locked collections (SearchItems never prompts);
    /// false when there are none, or when the search itself fails (the lookup then says why).
    private static func onlyLockedItems(_ schema: UnsafePointer<SecretSchema>?, _ attributes: OpaquePointer) -> Bool {
        var error: UnsafeMutablePointer<GError>?
        guard let service = secret_service_get_sync(SECRET_SERVICE_NONE, nil, &error) else {
            if let error { g_error_free(error) }
            return false
        }
        defer { g_object_unref(UnsafeMutableRawPointer(service)) }
        var unlocked: UnsafeMutablePointer<UnsafeMutablePointer<gchar>?>?
        var locked: UnsafeMutablePointer<UnsafeMutablePointer<gchar>?>?
        let searched = secret_service_search_for_dbus_paths_sync(
            service,
            schema,
            attributes,
            nil,
            &unlocked,
            &locked,
            &error
        )
        defer {
            g_strfreev(unlocked)
            g_strfreev(locked)
        }
        if let error {
            g_error_free(error)
            return false
        }
        return searched != 0 && unlocked?.pointee == nil && locked?.pointee != nil
    }
}
