internal import CLibSecret
import KeyjarPlatform

/// libsecret's synchronous calls as Keyjar makes them, each failure a ``LibSecretFailure``.
///
/// Every call blocks on D-Bus: make it off any event loop. ``lookup(_:_:)``,
/// ``store(_:_:_:label:)`` and ``items(ofSchemaNamed:)`` make the Secret Service prompt for a
/// locked collection; the searches (``itemExists(_:_:)``, ``items(_:having:reading:)``,
/// ``onlyLockedItemsMatch(_:_:)``) and ``defaultCollection()`` never do.
///
/// ```swift
/// let attributes = try LibSecretAttributes()
/// try attributes.set("application", "chromium")
/// if !LibSecret.onlyLockedItemsMatch(.chromiumV2, attributes) {
///     let password = try LibSecret.lookup(.chromiumV2, attributes)
/// }
/// ```
package enum LibSecret {
    /// The secret of the item of `schema` that matches `attributes`, or nil when none does. An item
    /// in a locked collection is unlocked first, which prompts: ask ``onlyLockedItemsMatch(_:_:)``
    /// before where a prompt must not appear.
    package static func lookup(
        _ schema: LibSecretSchema,
        _ attributes: LibSecretAttributes
    ) throws(LibSecretFailure) -> String? {
        var error: UnsafeMutablePointer<GError>?
        let secret = withExtendedLifetime(attributes) {
            secret_password_lookupv_sync(schema.pointer, attributes.table, nil, &error)
        }
        if let error {
            secret_password_free(secret)
            throw LibSecretFailure(consuming: error)
        }
        guard let secret else { return nil }
        // secret_password_free overwrites the C copy; the Swift copy is the caller's to keep.
        defer { secret_password_free(secret) }
        return String(cString: secret)
    }

    /// Stores `secret` in the default collection under `schema` and `attributes`, labelled
    /// `label`; the Secret Service replaces an item with the same attributes. A locked default
    /// collection makes it prompt.
    /// - Throws: ``LibSecretFailure/Kind/invalidInput`` for a secret with a NUL (C would store
    ///   it cut short); a failure without a message when libsecret stored nothing and said nothing.
    package static func store(
        _ secret: String,
        _ schema: LibSecretSchema,
        _ attributes: LibSecretAttributes,
        label: String
    ) throws(LibSecretFailure) {
        guard !secret.utf8.contains(0) else {
            throw LibSecretFailure(.invalidInput, "the secret contains a NUL character")
        }
        var error: UnsafeMutablePointer<GError>?
        let stored = withExtendedLifetime(attributes) {
            secret_password_storev_sync(
                schema.pointer,
                attributes.table,
                SECRET_COLLECTION_DEFAULT,
                label,
                secret,
                nil,
                &error
            )
        }
        if let error { throw LibSecretFailure(consuming: error) }
        guard stored != 0 else { throw LibSecretFailure(.failed, nil) }
    }

    /// Removes the items of `schema` that match `attributes`; true if there was one.
    package static func clear(
        _ schema: LibSecretSchema,
        _ attributes: LibSecretAttributes
    ) throws(LibSecretFailure) -> Bool {
        var error: UnsafeMutablePointer<GError>?
        let removed = withExtendedLifetime(attributes) {
            secret_password_clearv_sync(schema.pointer, attributes.table, nil, &error)
        }
        if let error { throw LibSecretFailure(consuming: error) }
        return removed != 0
    }

    /// Whether an item of `schema` matches `attributes`, in any collection, locked or not: one
    /// search, no secret loaded, never a prompt.
    /// - Throws: a failure without a message when the search failed without saying why.
    package static func itemExists(
        _ schema: LibSecretSchema,
        _ attributes: LibSecretAttributes
    ) throws(LibSecretFailure) -> Bool {
        var error: UnsafeMutablePointer<GError>?
        let found = withExtendedLifetime(attributes) {
            keyjar_item_exists(schema.pointer, attributes.table, &error)
        }
        if let error { throw LibSecretFailure(consuming: error) }
        guard found >= 0 else { throw LibSecretFailure(.failed, nil) }
        return found == 1
    }

    /// The attributes `names` of every item of `schema` (that has the attribute `required`, when
    /// given), in every collection, locked or not: one map per item, holding the names it has.
    /// No secret is loaded and nothing prompts; an item removed meanwhile is left out.
    /// - Throws: a failure without a message when the listing failed without saying why.
    package static func items(
        _ schema: LibSecretSchema,
        having required: String?,
        reading names: [String]
    ) throws(LibSecretFailure) -> [[String: String]] {
        final class Found {
            let names: [String]
            var items: [[String: String]] = []
            init(_ names: [String]) { self.names = names }
        }
        let found = Found(names)
        var error: UnsafeMutablePointer<GError>?
        let listed = keyjar_each_item(
            schema.pointer,
            required,
            { context, table in
                guard let context, let table else { return }
                let found = Unmanaged<Found>.fromOpaque(context).takeUnretainedValue()
                var item: [String: String] = [:]
                for name in found.names {
                    if let value = keyjar_attributes_get(table, name) { item[name] = String(cString: value) }
                }
                found.items.append(item)
            },
            Unmanaged.passUnretained(found).toOpaque(),
            &error
        )
        if let error { throw LibSecretFailure(consuming: error) }
        guard listed != 0 else { throw LibSecretFailure(.failed, nil) }
        return withExtendedLifetime(found) { found.items }
    }

    /// Whether the items of `schema` that match `attributes` are all in locked collections: then a
    /// lookup would prompt. A search, which never prompts; false when nothing matches, and when
    /// the search itself fails (the lookup after it then says why, from the same service).
    package static func onlyLockedItemsMatch(_ schema: LibSecretSchema, _ attributes: LibSecretAttributes) -> Bool {
        var error: UnsafeMutablePointer<GError>?
        guard let service = secret_service_get_sync(SECRET_SERVICE_NONE, nil, &error) else {
            if let error { _ = LibSecretFailure(consuming: error, keepingService: true) }
            return false
        }
        defer { g_object_unref(UnsafeMutableRawPointer(service)) }
        var unlocked: UnsafeMutablePointer<UnsafeMutablePointer<gchar>?>?
        var locked: UnsafeMutablePointer<UnsafeMutablePointer<gchar>?>?
        let searched = withExtendedLifetime(attributes) {
            secret_service_search_for_dbus_paths_sync(
                service,
                schema.pointer,
                attributes.table,
                nil,
                &unlocked,
                &locked,
                &error
            )
        }
        defer {
            g_strfreev(unlocked)
            g_strfreev(locked)
        }
        if let error {
            _ = LibSecretFailure(consuming: error, keepingService: true)
            return false
        }
        return searched != 0 && unlocked?.pointee == nil && locked?.pointee != nil
    }

    /// Whether the Secret Service answers but has no collection under the `default` alias.
    /// Never prompts; false when the question itself fails (the caller reports its own failure).
    package static func lacksDefaultCollection() -> Bool {
        var error: UnsafeMutablePointer<GError>?
        guard let service = secret_service_get_sync(SECRET_SERVICE_NONE, nil, &error) else {
            if let error { _ = LibSecretFailure(consuming: error, keepingService: true) }
            return false
        }
        defer { g_object_unref(UnsafeMutableRawPointer(service)) }
        let collection = secret_collection_for_alias_sync(
            service,
            SECRET_COLLECTION_DEFAULT,
            SECRET_COLLECTION_NONE,
            nil,
            &error
        )
        if let collection { g_object_unref(UnsafeMutableRawPointer(collection)) }
        if let error {
            _ = LibSecretFailure(consuming: error, keepingService: true)
            return false
        }
        return collection == nil
    }

    /// What the default collection is like, for a store's health: nothing here prompts (storing
    /// into a missing or locked collection would).
    package enum DefaultCollection: Sendable, Hashable {
        /// There, unlocked, with its label ("" when it has none).
        case unlocked(label: String)
        /// There and locked.
        case locked
        /// The Secret Service has no collection under the `default` alias.
        case missing
        /// There is nothing to ask: no session bus, no service, or no owner of its bus name; why.
        case unreachable(String)
        /// A call failed while doing `action` ("connecting to the Secret Service", …).
        case failed(LibSecretFailure, action: String)
    }

    /// The default collection's state: the session bus, the service (with a session, so that a
    /// bus without a Secret Service fails here rather than yielding a proxy with no owner), its
    /// owner, the collection under the `default` alias, its lock and label. Never prompts.
    package static func defaultCollection() -> DefaultCollection {
        if let problem = SessionBus.problem() { return .unreachable(problem) }
        var error: UnsafeMutablePointer<GError>?
        let service = secret_service_get_sync(SECRET_SERVICE_OPEN_SESSION, nil, &error)
        if let error {
            if let service { g_object_unref(UnsafeMutableRawPointer(service)) }
            return .failed(LibSecretFailure(consuming: error), action: "connecting to the Secret Service")
        }
        guard let service else { return .unreachable("libsecret returned no service") }
        defer { g_object_unref(UnsafeMutableRawPointer(service)) }
        guard let owner = g_dbus_proxy_get_name_owner(keyjar_service_proxy(service)) else {
            return .unreachable("org.freedesktop.secrets has no owner")
        }
        g_free(owner)

        let collection = secret_collection_for_alias_sync(
            service,
            SECRET_COLLECTION_DEFAULT,
            SECRET_COLLECTION_NONE,
            nil,
            &error
        )
        if let error {
            if let collection { g_object_unref(UnsafeMutableRawPointer(collection)) }
            return .failed(LibSecretFailure(consuming: error), action: "finding the default collection")
        }
        guard let collection else { return .missing }
        defer { g_object_unref(UnsafeMutableRawPointer(collection)) }
        if secret_collection_get_locked(collection) != 0 { return .locked }
        let label = secret_collection_get_label(collection).map { label in
            defer { g_free(label) }
            return String(cString: label)
        }
        return .unlocked(label: label ?? "")
    }
}
