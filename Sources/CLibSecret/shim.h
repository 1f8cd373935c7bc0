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

/* One attribute of an item found by a search, or NULL; the table keeps the string. */
static inline const char *keyjar_attributes_get(GHashTable *attributes, const char *name) {
    return (const char *)g_hash_table_lookup(attributes, name);
}

/* Frees what secret_password_searchv_sync returned: a list of SecretRetrievable references. */
static inline void keyjar_retrievables_free(GList *items) {
    g_list_free_full(items, g_object_unref);
}
