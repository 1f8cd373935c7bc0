internal import CLibSecret

/// The attributes a libsecret call matches items on (or stores an item with): names and values,
/// copied into a GLib table that this object owns.
///
/// ```swift
/// let attributes = try LibSecretAttributes()
/// try attributes.set("application", "chromium")
/// let password = try LibSecret.lookup(.chromiumV2, attributes)
/// ```
package final class LibSecretAttributes {
    /// The GHashTable of g_strdup'ed strings that libsecret's `…v` functions take.
    let table: OpaquePointer

    /// An empty table: matches every item of a schema.
    package init() throws(LibSecretFailure) {
        guard let table = keyjar_attributes_new() else {
            throw LibSecretFailure(.failed, "cannot allocate an attribute table")
        }
        self.table = table
    }

    /// Sets `name` to `value`, replacing what it had.
    /// - Throws: ``LibSecretFailure/Kind/invalidInput`` for text with a NUL, which C would cut
    ///   short: two different keys would match the same item.
    package func set(_ name: String, _ value: String) throws(LibSecretFailure) {
        guard !name.utf8.contains(0) else {
            throw LibSecretFailure(.invalidInput, "an attribute's name contains a NUL character")
        }
        guard !value.utf8.contains(0) else {
            throw LibSecretFailure(.invalidInput, "the value of attribute \(name) contains a NUL character")
        }
        keyjar_attributes_set(table, name, value)
    }

    deinit {
        g_hash_table_unref(table)
    }
}
