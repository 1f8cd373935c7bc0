import KeyjarLibSecret
import KeyjarPlatform

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
        for (schema, byApplication) in [(LibSecretSchema.chromiumV2, true), (.chromiumV1, false)] {
            let attributes: LibSecretAttributes
            do {
                attributes = try LibSecretAttributes()
                if byApplication { try attributes.set("application", application) }
            } catch {
                continue
            }
            // Looking up a locked item makes the Secret Service prompt (or fail to, without a
            // display): find out first, without a prompt, and say so instead.
            if LibSecret.onlyLockedItemsMatch(schema, attributes) {
                lookup.problem = .locked
                continue
            }
            do {
                guard let password = try LibSecret.lookup(schema, attributes) else { continue }
                if !lookup.passwords.contains(password) { lookup.passwords.append(password) }
            } catch {
                lookup.problem = error.kind == .locked ? .locked : .unavailable(error.message ?? "no message")
            }
        }
        return lookup
    }
}
