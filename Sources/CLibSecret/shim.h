/* secret-paths.h (searching by D-Bus path, below) is behind this acknowledgement; it has not
 * changed since libsecret 0.7. */
#define SECRET_API_SUBJECT_TO_CHANGE
#include <libsecret/secret.h>

/*
 * The schema Keyjar stores URL-credential passwords under (documented in Schemas/secret-schema.md).
 * It lives in C because SecretSchema's fixed 32-entry attribute array is a 32-element tuple in
 * Swift, which is unwieldy to initialise there. A function-local static gives every caller the
 * same immutable instance without a global symbol in every translation unit's namespace.
 */
static inline const SecretSchema *keyjar_credential_schema(void) {
    static const SecretSchema schema = {
        "org.keyjar.Credential",
        SECRET_SCHEMA_NONE,
        {
            { "server", SECRET_SCHEMA_ATTRIBUTE_STRING },
            { "port", SECRET_SCHEMA_ATTRIBUTE_INTEGER },
            { "protocol", SECRET_SCHEMA_ATTRIBUTE_STRING },
            { "realm", SECRET_SCHEMA_ATTRIBUTE_STRING },
            { "authtype", SECRET_SCHEMA_ATTRIBUTE_STRING },
            { "proxytype", SECRET_SCHEMA_ATTRIBUTE_STRING },
            { "user", SECRET_SCHEMA_ATTRIBUTE_STRING },
            { NULL, 0 },
        },
    };
    return &schema;
}

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

/* SecretService is a GDBusProxy subclass; this is G_DBUS_PROXY(), a macro Swift cannot import. */
static inline GDBusProxy *keyjar_service_proxy(SecretService *service) {
    return G_DBUS_PROXY(service);
}

/* One attribute of an item, or NULL; the table keeps the string. */
static inline const char *keyjar_attributes_get(GHashTable *attributes, const char *name) {
    return (const char *)g_hash_table_lookup(attributes, name);
}

/* Whether a failed call names an item that is gone (removed since the search): skipped, not
 * a failure of the listing. */
static inline gboolean keyjar_error_is_gone_item(const GError *error) {
    gchar *name = g_dbus_error_get_remote_error(error);
    gboolean gone = name != NULL
        && (g_str_equal(name, "org.freedesktop.DBus.Error.UnknownObject")
            || g_str_equal(name, "org.freedesktop.Secret.Error.NoSuchObject"));
    g_free(name);
    return gone;
}

/*
 * Calls `each` with the attributes of every item under Keyjar's schema, in every collection,
 * locked or not, without loading a secret and without prompting: SearchItems for the items'
 * paths, then each item's Attributes property. Not through libsecret's searches, which make an
 * item proxy per result and leave a little GIO memory behind for each (LeakSanitizer, libsecret
 * 0.20.5). Returns FALSE with `error` set when the service fails; an item removed meanwhile is
 * skipped.
 */
static inline gboolean keyjar_each_item(void (*each)(void *context, GHashTable *attributes), void *context, GError **error) {
    SecretService *service = secret_service_get_sync(SECRET_SERVICE_NONE, NULL, error);
    if (service == NULL) return FALSE;
    GHashTable *query = keyjar_attributes_new();
    gchar **unlocked = NULL, **locked = NULL;
    gboolean listed = secret_service_search_for_dbus_paths_sync(
        service, keyjar_credential_schema(), query, NULL, &unlocked, &locked, error);
    g_hash_table_unref(query);
    GDBusProxy *proxy = G_DBUS_PROXY(service);
    gchar **lists[2] = { unlocked, locked };
    for (int list = 0; listed && list < 2; list++) {
        for (gchar **path = lists[list]; listed && path != NULL && *path != NULL; path++) {
            GError *failure = NULL;
            GVariant *reply = g_dbus_connection_call_sync(
                g_dbus_proxy_get_connection(proxy), g_dbus_proxy_get_name(proxy), *path,
                "org.freedesktop.DBus.Properties", "Get",
                g_variant_new("(ss)", "org.freedesktop.Secret.Item", "Attributes"), G_VARIANT_TYPE("(v)"),
                G_DBUS_CALL_FLAGS_NONE, -1, NULL, &failure);
            if (reply == NULL) {
                if (keyjar_error_is_gone_item(failure)) {
                    g_error_free(failure);
                    continue;
                }
                g_propagate_error(error, failure);
                listed = FALSE;
                break;
            }
            GVariant *value = NULL;
            g_variant_get(reply, "(v)", &value);
            GHashTable *attributes = keyjar_attributes_new();
            if (g_variant_is_of_type(value, G_VARIANT_TYPE("a{ss}"))) {
                GVariantIter iter;
                const gchar *name, *text;
                g_variant_iter_init(&iter, value);
                while (g_variant_iter_next(&iter, "{&s&s}", &name, &text)) keyjar_attributes_set(attributes, name, text);
            }
            each(context, attributes);
            g_hash_table_unref(attributes);
            g_variant_unref(value);
            g_variant_unref(reply);
        }
    }
    g_strfreev(unlocked);
    g_strfreev(locked);
    g_object_unref(service);
    return listed;
}
