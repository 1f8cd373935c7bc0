/*
 * Part of shim.h, which includes it after shim-schemas.h: attribute tables, and the Secret
 * Service's items read by their D-Bus paths (their attributes, and another application's secrets).
 */

/*
 * An attribute table in the shape libsecret's `…v` functions expect: keys and values are
 * g_strdup'ed strings the table owns. g_str_hash/g_str_equal are awkward to pass from Swift
 * as C function pointers, so the table is made here.
 */
static inline GHashTable *keyjar_attributes_new(void) {
    return g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
}

/* Adds one attribute, copying both strings so the caller's buffers may go away. */
static inline void keyjar_attributes_set(GHashTable *attributes, const char *name, const char *value) {
    g_hash_table_replace(attributes, g_strdup(name), g_strdup(value));
}

/* SecretService is a GDBusProxy subclass (its first member); this is G_DBUS_PROXY() without the
 * run-time type check, which is a macro Swift cannot import. */
static inline GDBusProxy *keyjar_service_proxy(SecretService *service) {
    return (GDBusProxy *)service;
}

/* One attribute of an item, or NULL; the table keeps the string. */
static inline const char *keyjar_attributes_get(GHashTable *attributes, const char *name) {
    return (const char *)g_hash_table_lookup(attributes, name);
}

/* Whether a failed call names an item that is gone (removed since the search): skipped, not
 * a failure of the listing. */
static inline gboolean keyjar_error_is_gone_item(const GError *error) {
    gchar *name = g_dbus_error_get_remote_error(error);
    /* gnome-keyring answers a Get on an item deleted meanwhile with UnknownMethod "Object does
       not exist at path …" (seen while another keyjard deleted items: status then called the
       whole store unusable), or, a moment later, "No such interface
       “org.freedesktop.DBus.Properties” on object at path …" (seen while another client
       removed items during a listing). */
    gboolean gone = name != NULL
        && (g_str_equal(name, "org.freedesktop.DBus.Error.UnknownObject")
            || g_str_equal(name, "org.freedesktop.Secret.Error.NoSuchObject")
            || (g_str_equal(name, "org.freedesktop.DBus.Error.UnknownMethod") && error->message != NULL
                && (g_strstr_len(error->message, -1, "Object does not exist") != NULL
                    || g_strstr_len(error->message, -1, "No such interface") != NULL)));
    g_free(name);
    return gone;
}

/*
 * An item's attributes, read as its Attributes property (no item proxy: libsecret's leave a
 * little GIO memory behind each, which LeakSanitizer reports, libsecret 0.20.5). Returns 1 with
 * `*attributes` set (the caller unrefs it), -1 for an item removed since it was found (skipped,
 * not a failure), 0 with `error` set.
 */
static inline int keyjar_item_attributes(SecretService *service, const char *path, GHashTable **attributes, GError **error) {
    GDBusProxy *proxy = keyjar_service_proxy(service);
    GError *failure = NULL;
    GVariant *reply = g_dbus_connection_call_sync(
        g_dbus_proxy_get_connection(proxy), g_dbus_proxy_get_name(proxy), path, "org.freedesktop.DBus.Properties",
        "Get", g_variant_new("(ss)", "org.freedesktop.Secret.Item", "Attributes"), (const GVariantType *)"(v)",
        G_DBUS_CALL_FLAGS_NONE, -1, NULL, &failure);
    if (reply == NULL) {
        if (keyjar_error_is_gone_item(failure)) {
            g_error_free(failure);
            return -1;
        }
        g_propagate_error(error, failure);
        return 0;
    }
    GVariant *value = NULL;
    g_variant_get(reply, "(v)", &value);
    *attributes = keyjar_attributes_new();
    if (g_variant_is_of_type(value, (const GVariantType *)"a{ss}")) {
        GVariantIter iter;
        const gchar *name, *text;
        g_variant_iter_init(&iter, value);
        while (g_variant_iter_next(&iter, "{&s&s}", &name, &text)) keyjar_attributes_set(*attributes, name, text);
    }
    g_variant_unref(value);
    g_variant_unref(reply);
    return 1;
}

/*
 * Calls `each` with the attributes of every item under `schema` (matched by its name and, when
 * `required` is not NULL, by having that attribute), in every collection,
 * locked or not, without loading a secret and without prompting: SearchItems for the items'
 * paths, then each item's Attributes property. Not through libsecret's searches, which make an
 * item proxy per result and leave a little GIO memory behind for each (LeakSanitizer, libsecret
 * 0.20.5). Returns 0 with `error` set when the service fails; an item removed meanwhile is
 * skipped.
 */
static inline gboolean keyjar_each_item(
    const SecretSchema *schema, const char *required, void (*each)(void *context, GHashTable *attributes),
    void *context, GError **error) {
    SecretService *service = secret_service_get_sync(SECRET_SERVICE_NONE, NULL, error);
    if (service == NULL) return 0;
    GHashTable *query = keyjar_attributes_new();
    gchar **unlocked = NULL, **locked = NULL;
    gboolean listed = secret_service_search_for_dbus_paths_sync(service, schema, query, NULL, &unlocked, &locked, error);
    g_hash_table_unref(query);
    gchar **lists[2] = { unlocked, locked };
    for (int list = 0; listed && list < 2; list++) {
        for (gchar **path = lists[list]; listed && path != NULL && *path != NULL; path++) {
            GHashTable *attributes = NULL;
            int read = keyjar_item_attributes(service, *path, &attributes, error);
            if (read < 0) continue;
            if (read == 0) {
                listed = 0;
                break;
            }
            if (required == NULL || keyjar_attributes_get(attributes, required) != NULL) each(context, attributes);
            g_hash_table_unref(attributes);
        }
    }
    g_strfreev(unlocked);
    g_strfreev(locked);
    g_object_unref(service);
    return listed;
}

/*
 * Whether an item of `schema` with `attributes` exists, in any collection, locked or not,
 * without loading a secret and without prompting: 1 or 0, or -1 with `error` set.
 */
static inline int keyjar_item_exists(const SecretSchema *schema, GHashTable *attributes, GError **error) {
    SecretService *service = secret_service_get_sync(SECRET_SERVICE_NONE, NULL, error);
    if (service == NULL) return -1;
    gchar **unlocked = NULL, **locked = NULL;
    gboolean searched =
        secret_service_search_for_dbus_paths_sync(service, schema, attributes, NULL, &unlocked, &locked, error);
    int found = !searched ? -1 : ((unlocked != NULL && *unlocked != NULL) || (locked != NULL && *locked != NULL));
    g_strfreev(unlocked);
    g_strfreev(locked);
    g_object_unref(service);
    return found;
}

/* Calls `each` with an attribute table's names and values (the table keeps the strings). */
typedef void (*keyjar_attribute_fn)(void *context, const char *name, const char *value);
struct keyjar_attribute_visit {
    keyjar_attribute_fn each;
    void *context;
};
static inline void keyjar_attribute_visit_one(gpointer name, gpointer value, gpointer visit) {
    struct keyjar_attribute_visit *target = (struct keyjar_attribute_visit *)visit;
    target->each(target->context, (const char *)name, (const char *)value);
}
static inline void keyjar_attributes_each(GHashTable *attributes, keyjar_attribute_fn each, void *context) {
    struct keyjar_attribute_visit visit = { each, context };
    g_hash_table_foreach(attributes, keyjar_attribute_visit_one, &visit);
}

/* Whether `path` is one of `paths` (a NULL-terminated list, or NULL). */
static inline gboolean keyjar_paths_contain(gchar **paths, const char *path) {
    for (gchar **each = paths; each != NULL && *each != NULL; each++) {
        if (g_str_equal(*each, path)) return 1;
    }
    return 0;
}

/*
 * Calls `each` with the attributes and the secret of every item, in every collection, whose
 * `xdg:schema` attribute is `schema_name`: another application's items (git-credential-libsecret's
 * `org.git.Password`, or a schema `secret-tool` stored under), read for `keyjar credential import`.
 * libsecret stores the schema's name with every item, also under a schema flagged
 * DONT_MATCH_NAME (as git's is, to find what older helpers stored), so matching that attribute
 * alone, with no schema, finds exactly that schema's items and never everything. Items in a
 * locked collection are unlocked as git's helper does (SECRET_SEARCH_UNLOCK: the Secret Service
 * may prompt); one still locked afterwards comes with `locked` set and no secret. By paths, as
 * keyjar_each_item, not through item proxies. `secret` is not NUL-terminated for certain: use
 * `length`. An item removed meanwhile is skipped.
 */
typedef void (*keyjar_schema_item_fn)(
    void *context, GHashTable *attributes, const char *secret, gsize length, gboolean locked);
static inline gboolean keyjar_each_item_of_schema(
    const char *schema_name, keyjar_schema_item_fn each, void *context, GError **error) {
    SecretService *service = secret_service_get_sync(SECRET_SERVICE_OPEN_SESSION, NULL, error);
    if (service == NULL) return 0;
    GHashTable *query = keyjar_attributes_new();
    keyjar_attributes_set(query, "xdg:schema", schema_name);
    gchar **unlocked = NULL, **locked = NULL, **opened = NULL;
    gboolean listed = secret_service_search_for_dbus_paths_sync(service, NULL, query, NULL, &unlocked, &locked, error);
    g_hash_table_unref(query);
    if (listed && locked != NULL && *locked != NULL) {
        /* A dismissed (or impossible) prompt unlocks nothing; those items are reported locked. */
        GError *refused = NULL;
        secret_service_unlock_dbus_paths_sync(service, (const gchar **)locked, NULL, &opened, &refused);
        if (refused != NULL) g_error_free(refused);
    }
    gchar **lists[3] = { unlocked, opened, locked };
    for (int list = 0; listed && list < 3; list++) {
        for (gchar **path = lists[list]; listed && path != NULL && *path != NULL; path++) {
            gboolean still_locked = list == 2;
            if (still_locked && keyjar_paths_contain(opened, *path)) continue;
            GHashTable *attributes = NULL;
            int read = keyjar_item_attributes(service, *path, &attributes, error);
            if (read < 0) continue;
            if (read == 0) {
                listed = 0;
                break;
            }
            SecretValue *value = NULL;
            if (!still_locked) {
                GError *failure = NULL;
                value = secret_service_get_secret_for_dbus_path_sync(service, *path, NULL, &failure);
                if (failure != NULL) {
                    gboolean gone = keyjar_error_is_gone_item(failure);
                    if (gone) g_error_free(failure);
                    else g_propagate_error(error, failure);
                    g_hash_table_unref(attributes);
                    if (gone) continue;
                    listed = 0;
                    break;
                }
            }
            gsize length = 0;
            const char *secret = value != NULL ? secret_value_get(value, &length) : NULL;
            each(context, attributes, secret, length, still_locked || value == NULL);
            if (value != NULL) secret_value_unref(value);
            g_hash_table_unref(attributes);
        }
    }
    g_strfreev(unlocked);
    g_strfreev(locked);
    g_strfreev(opened);
    g_object_unref(service);
    return listed;
}
