/*
 * libsecret, GLib and GIO as Keyjar uses them, declared here rather than taken from their
 * headers. Those headers are only found through pkg-config, and pkg-config's flags for
 * libsecret-1 include -pthread, which SwiftPM refuses ("prohibited flag(s): -pthread") with a
 * warning in every build of every package that depends on Keyjar, even one that never links
 * this module. Declared here, the module needs no flags at all: module.modulemap links the
 * libraries.
 *
 * Only what Keyjar calls is declared. Every declaration must match the system headers exactly;
 * scripts/check-libsecret-abi compiles this file, the functions below included, after
 * <libsecret/secret.h> (scripts/test runs it): the compiler rejects any prototype or typedef that
 * differs, and assertions compare the layouts of the structures and the values of the
 * constants, which in that check carry a keyjar_abi_ prefix (KEYJAR_ABI) so as not to clash
 * with the real ones.
 */
#include <stddef.h>

#ifdef KEYJAR_ABI_CHECK
#define KEYJAR_ABI(name) keyjar_abi_##name
#else
#define KEYJAR_ABI(name) name
#endif

/* GLib's basic types (gtypes.h, glibconfig.h for x86_64 and aarch64 Linux, gquark.h). */
typedef char gchar;
typedef int gint;
typedef gint gboolean;
typedef unsigned int guint;
typedef unsigned int guint32;
typedef unsigned long gsize;
typedef signed long gssize;
typedef guint32 GQuark;
typedef void *gpointer;
typedef const void *gconstpointer;
typedef guint (*GHashFunc)(gconstpointer key);
typedef gboolean (*GEqualFunc)(gconstpointer a, gconstpointer b);
typedef void (*GDestroyNotify)(gpointer data);
typedef void (*GHFunc)(gpointer key, gpointer value, gpointer user_data);

/* Types Keyjar only holds pointers to. */
typedef struct _GHashTable GHashTable;
typedef struct _GVariant GVariant;
typedef struct _GVariantType GVariantType;
typedef struct _GCancellable GCancellable;
typedef struct _GDBusConnection GDBusConnection;
typedef struct _GDBusProxy GDBusProxy;
typedef struct _GDBusMessage GDBusMessage;
typedef struct _GObject GObject;
typedef struct _GAsyncResult GAsyncResult;
typedef void (*GAsyncReadyCallback)(GObject *source_object, GAsyncResult *res, gpointer data);
typedef struct _SecretService SecretService;
typedef struct _SecretCollection SecretCollection;
typedef struct _SecretValue SecretValue;

/* Types whose fields Keyjar reads or which it allocates itself. */
typedef struct _GError GError;
struct KEYJAR_ABI(_GError) {
    GQuark domain;
    gint code;
    gchar *message;
};

typedef struct _GVariantIter GVariantIter;
struct KEYJAR_ABI(_GVariantIter) {
    gsize x[16];
};

typedef enum {
    KEYJAR_ABI(SECRET_SCHEMA_ATTRIBUTE_STRING) = 0,
    KEYJAR_ABI(SECRET_SCHEMA_ATTRIBUTE_INTEGER) = 1,
    KEYJAR_ABI(SECRET_SCHEMA_ATTRIBUTE_BOOLEAN) = 2,
} KEYJAR_ABI(SecretSchemaAttributeType);

typedef struct {
    const gchar *name;
    KEYJAR_ABI(SecretSchemaAttributeType) type;
} KEYJAR_ABI(SecretSchemaAttribute);

typedef enum {
    KEYJAR_ABI(SECRET_SCHEMA_NONE) = 0,
    KEYJAR_ABI(SECRET_SCHEMA_DONT_MATCH_NAME) = 1 << 1,
} KEYJAR_ABI(SecretSchemaFlags);

typedef struct {
    const gchar *name;
    KEYJAR_ABI(SecretSchemaFlags) flags;
    KEYJAR_ABI(SecretSchemaAttribute) attributes[32];
    /* <private> */
    gint reserved;
    gpointer reserved1;
    gpointer reserved2;
    gpointer reserved3;
    gpointer reserved4;
    gpointer reserved5;
    gpointer reserved6;
    gpointer reserved7;
} KEYJAR_ABI(SecretSchema);

typedef enum {
    KEYJAR_ABI(SECRET_SERVICE_NONE) = 0,
    KEYJAR_ABI(SECRET_SERVICE_OPEN_SESSION) = 1 << 1,
    KEYJAR_ABI(SECRET_SERVICE_LOAD_COLLECTIONS) = 1 << 2,
} KEYJAR_ABI(SecretServiceFlags);

typedef enum {
    KEYJAR_ABI(SECRET_COLLECTION_NONE) = 0,
    KEYJAR_ABI(SECRET_COLLECTION_LOAD_ITEMS) = 1 << 1,
} KEYJAR_ABI(SecretCollectionFlags);

typedef enum {
    KEYJAR_ABI(SECRET_ERROR_PROTOCOL) = 1,
    KEYJAR_ABI(SECRET_ERROR_IS_LOCKED) = 2,
    KEYJAR_ABI(SECRET_ERROR_NO_SUCH_OBJECT) = 3,
    KEYJAR_ABI(SECRET_ERROR_ALREADY_EXISTS) = 4,
} KEYJAR_ABI(SecretError);

/* The GDBusError codes Keyjar tells apart (gioenums.h; the others are not declared). */
typedef enum {
    KEYJAR_ABI(G_DBUS_ERROR_SERVICE_UNKNOWN) = 2,
    KEYJAR_ABI(G_DBUS_ERROR_NAME_HAS_NO_OWNER) = 3,
    KEYJAR_ABI(G_DBUS_ERROR_NO_SERVER) = 11,
    KEYJAR_ABI(G_DBUS_ERROR_DISCONNECTED) = 15,
    KEYJAR_ABI(G_DBUS_ERROR_FILE_NOT_FOUND) = 17,
    KEYJAR_ABI(G_DBUS_ERROR_SPAWN_CHILD_EXITED) = 25,
    KEYJAR_ABI(G_DBUS_ERROR_SPAWN_FAILED) = 27,
    KEYJAR_ABI(G_DBUS_ERROR_SPAWN_SERVICE_NOT_FOUND) = 31,
    KEYJAR_ABI(G_DBUS_ERROR_UNKNOWN_OBJECT) = 41,
} KEYJAR_ABI(GDBusError);

typedef enum {
    KEYJAR_ABI(G_DBUS_CALL_FLAGS_NONE) = 0,
} KEYJAR_ABI(GDBusCallFlags);

typedef enum {
    KEYJAR_ABI(G_BUS_TYPE_SESSION) = 2,
} KEYJAR_ABI(GBusType);

typedef enum {
    KEYJAR_ABI(G_DBUS_MESSAGE_TYPE_SIGNAL) = 4,
} KEYJAR_ABI(GDBusMessageType);

typedef GDBusMessage *(*GDBusMessageFilterFunction)(
    GDBusConnection *connection, GDBusMessage *message, gboolean incoming, gpointer user_data);

#ifndef KEYJAR_ABI_CHECK
/* secret-types.h; a macro there too. */
#define SECRET_COLLECTION_DEFAULT "default"
#endif

/* GLib */
void g_free(gpointer mem);
gpointer g_malloc(gsize n_bytes);
gchar *g_strdup(const gchar *str);
gchar *g_strstr_len(const gchar *haystack, gssize haystack_len, const gchar *needle);
void g_strfreev(gchar **str_array);
guint g_str_hash(gconstpointer v);
/* In parentheses: newer GLib headers also define g_str_equal as a macro. */
gboolean(g_str_equal)(gconstpointer v1, gconstpointer v2);
GHashTable *g_hash_table_new_full(
    GHashFunc hash_func, GEqualFunc key_equal_func, GDestroyNotify key_destroy_func, GDestroyNotify value_destroy_func);
gboolean g_hash_table_replace(GHashTable *hash_table, gpointer key, gpointer value);
gpointer g_hash_table_lookup(GHashTable *hash_table, gconstpointer key);
void g_hash_table_unref(GHashTable *hash_table);
void g_hash_table_foreach(GHashTable *hash_table, GHFunc func, gpointer user_data);
void g_error_free(GError *error);
void g_propagate_error(GError **dest, GError *src);
GVariant *g_variant_new(const gchar *format_string, ...);
void g_variant_get(GVariant *value, const gchar *format_string, ...);
gboolean g_variant_is_of_type(GVariant *value, const GVariantType *type);
gsize g_variant_iter_init(GVariantIter *iter, GVariant *value);
gboolean g_variant_iter_next(GVariantIter *iter, const gchar *format_string, ...);
void g_variant_unref(GVariant *value);

/* GObject */
void g_object_unref(gpointer object);

/* GIO */
GQuark g_dbus_error_quark(void);
gchar *g_dbus_error_get_remote_error(const GError *error);
GDBusConnection *g_dbus_proxy_get_connection(GDBusProxy *proxy);
const gchar *g_dbus_proxy_get_name(GDBusProxy *proxy);
gchar *g_dbus_proxy_get_name_owner(GDBusProxy *proxy);
GVariant *g_dbus_connection_call_sync(
    GDBusConnection *connection, const gchar *bus_name, const gchar *object_path, const gchar *interface_name,
    const gchar *method_name, GVariant *parameters, const GVariantType *reply_type, GDBusCallFlags flags,
    gint timeout_msec, GCancellable *cancellable, GError **error);
void g_dbus_connection_call(
    GDBusConnection *connection, const gchar *bus_name, const gchar *object_path, const gchar *interface_name,
    const gchar *method_name, GVariant *parameters, const GVariantType *reply_type, GDBusCallFlags flags,
    gint timeout_msec, GCancellable *cancellable, GAsyncReadyCallback callback, gpointer user_data);
GDBusConnection *g_bus_get_sync(GBusType bus_type, GCancellable *cancellable, GError **error);
guint g_dbus_connection_add_filter(
    GDBusConnection *connection, GDBusMessageFilterFunction filter_function, gpointer user_data,
    GDestroyNotify user_data_free_func);
void g_dbus_connection_remove_filter(GDBusConnection *connection, guint filter_id);
GDBusMessageType g_dbus_message_get_message_type(GDBusMessage *message);
const gchar *g_dbus_message_get_interface(GDBusMessage *message);
const gchar *g_dbus_message_get_member(GDBusMessage *message);
GVariant *g_dbus_message_get_body(GDBusMessage *message);

/* libsecret */
GQuark secret_error_get_quark(void);
SecretService *secret_service_get_sync(SecretServiceFlags flags, GCancellable *cancellable, GError **error);
void secret_service_disconnect(void);
/* secret-paths.h, behind SECRET_API_SUBJECT_TO_CHANGE there; unchanged since libsecret 0.7. */
gboolean secret_service_search_for_dbus_paths_sync(
    SecretService *self, const SecretSchema *schema, GHashTable *attributes, GCancellable *cancellable,
    gchar ***unlocked, gchar ***locked, GError **error);
SecretCollection *secret_collection_for_alias_sync(
    SecretService *service, const gchar *alias, SecretCollectionFlags flags, GCancellable *cancellable, GError **error);
gchar *secret_collection_get_label(SecretCollection *self);
gboolean secret_collection_get_locked(SecretCollection *self);
gboolean secret_password_storev_sync(
    const SecretSchema *schema, GHashTable *attributes, const gchar *collection, const gchar *label,
    const gchar *password, GCancellable *cancellable, GError **error);
gchar *secret_password_lookupv_sync(
    const SecretSchema *schema, GHashTable *attributes, GCancellable *cancellable, GError **error);
gboolean secret_password_clearv_sync(
    const SecretSchema *schema, GHashTable *attributes, GCancellable *cancellable, GError **error);
void secret_password_free(gchar *password);
/* secret-paths.h too. */
gint secret_service_unlock_dbus_paths_sync(
    SecretService *self, const gchar **paths, GCancellable *cancellable, gchar ***unlocked, GError **error);
SecretValue *secret_service_get_secret_for_dbus_path_sync(
    SecretService *self, const gchar *item_path, GCancellable *cancellable, GError **error);
const gchar *secret_value_get(SecretValue *value, gsize *length);
void secret_value_unref(gpointer value);

/*
 * The schemas Keyjar stores URL-credential secrets under (documented in Schemas/secret-schema.md).
 * They live in C because SecretSchema's fixed 32-entry attribute array is a 32-element tuple in
 * Swift, which is unwieldy to initialise there. A function-local static gives every caller the
 * same immutable instance without a global symbol in every translation unit's namespace.
 *
 * The attribute names are Keyjar's own (`keyjar-server`, …): a Secret Service replaces, on a
 * store, every item whose attributes include all of the new item's (gnome-keyring does), so with
 * the common names a neighbour's `secret-tool store server H user U` would replace Keyjar's
 * password. The password and the OAuth refresh token kept beside it have the same attributes
 * under two schema names, so that a lookup of one (which matches the schema's name) never
 * returns the other.
 */
#define KEYJAR_OWN_ATTRIBUTES \
    { \
        { "keyjar-server", SECRET_SCHEMA_ATTRIBUTE_STRING }, \
        { "keyjar-port", SECRET_SCHEMA_ATTRIBUTE_INTEGER }, \
        { "keyjar-protocol", SECRET_SCHEMA_ATTRIBUTE_STRING }, \
        { "keyjar-realm", SECRET_SCHEMA_ATTRIBUTE_STRING }, \
        { "keyjar-authtype", SECRET_SCHEMA_ATTRIBUTE_STRING }, \
        { "keyjar-proxytype", SECRET_SCHEMA_ATTRIBUTE_STRING }, \
        { "keyjar-user", SECRET_SCHEMA_ATTRIBUTE_STRING }, \
        { NULL, 0 }, \
    }
/* The names every item had before: read, moved to Keyjar's own names and removed. */
#define KEYJAR_SHARED_ATTRIBUTES \
    { \
        { "server", SECRET_SCHEMA_ATTRIBUTE_STRING }, \
        { "port", SECRET_SCHEMA_ATTRIBUTE_INTEGER }, \
        { "protocol", SECRET_SCHEMA_ATTRIBUTE_STRING }, \
        { "realm", SECRET_SCHEMA_ATTRIBUTE_STRING }, \
        { "authtype", SECRET_SCHEMA_ATTRIBUTE_STRING }, \
        { "proxytype", SECRET_SCHEMA_ATTRIBUTE_STRING }, \
        { "user", SECRET_SCHEMA_ATTRIBUTE_STRING }, \
        { NULL, 0 }, \
    }

static inline const SecretSchema *keyjar_credential_schema(void) {
    static const SecretSchema schema = { "org.keyjar.Credential", SECRET_SCHEMA_NONE, KEYJAR_OWN_ATTRIBUTES };
    return &schema;
}

static inline const SecretSchema *keyjar_refresh_token_schema(void) {
    static const SecretSchema schema = { "org.keyjar.RefreshToken", SECRET_SCHEMA_NONE, KEYJAR_OWN_ATTRIBUTES };
    return &schema;
}

static inline const SecretSchema *keyjar_shared_credential_schema(void) {
    static const SecretSchema schema = { "org.keyjar.Credential", SECRET_SCHEMA_NONE, KEYJAR_SHARED_ATTRIBUTES };
    return &schema;
}

static inline const SecretSchema *keyjar_shared_refresh_token_schema(void) {
    static const SecretSchema schema = { "org.keyjar.RefreshToken", SECRET_SCHEMA_NONE, KEYJAR_SHARED_ATTRIBUTES };
    return &schema;
}

/*
 * The schemas Chromium-family browsers keep their "Safe Storage" password under (the key of
 * their v11 cookie encryption), keyed by the attribute `application` (`chrome`, `chromium`,
 * `brave`, ...). Chromium looks them up without matching the schema's name, and so does Keyjar:
 * an item is found by its application, never by its label, which Electron apps reuse.
 */
static inline const SecretSchema *keyjar_chromium_schema_v2(void) {
    static const SecretSchema schema = {
        "chrome_libsecret_os_crypt_password_v2",
        SECRET_SCHEMA_DONT_MATCH_NAME,
        {
            { "application", SECRET_SCHEMA_ATTRIBUTE_STRING },
            { NULL, 0 },
        },
    };
    return &schema;
}

/* The schema before it (Chromium 55 and older, and what such a profile still has): named
 * without a version, no attributes at all, so one item for every browser; found by its name. */
static inline const SecretSchema *keyjar_chromium_schema_v1(void) {
    static const SecretSchema schema = {
        "chrome_libsecret_os_crypt_password",
        SECRET_SCHEMA_NONE,
        {
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

/*
 * Watching the Secret Service for items another program deletes or changes, and for the
 * service itself going or coming (another owner of org.freedesktop.secrets). A created item is
 * not reported: it cannot take a password away.
 *
 * A message filter, not a signal subscription: GDBus runs filters on its own message thread
 * for every incoming message, so no GMainLoop has to be iterated on a thread of Keyjar's. The
 * filter only calls `changed` with the signal's name and the item's path ("" for
 * NameOwnerChanged), which must return at once (it holds GDBus's thread). `release(context)`
 * is called once GDBus no longer uses the filter, which may be after keyjar_unwatch_items
 * returns (a filter may be running meanwhile).
 */
typedef void (*keyjar_items_changed_fn)(void *context, const char *signal, const char *path);

typedef struct {
    keyjar_items_changed_fn changed;
    void *context;
    void (*release)(void *context);
} keyjar_item_watch;

#define KEYJAR_ITEM_SIGNAL_RULE "type='signal',interface='org.freedesktop.Secret.Collection'"
#define KEYJAR_SERVICE_OWNER_RULE \
    "type='signal',sender='org.freedesktop.DBus',interface='org.freedesktop.DBus',member='NameOwnerChanged'," \
    "arg0='org.freedesktop.secrets'"

static inline GDBusMessage *keyjar_item_watch_filter(
    GDBusConnection *connection, GDBusMessage *message, gboolean incoming, gpointer user_data) {
    (void)connection;
    if (!incoming || g_dbus_message_get_message_type(message) != G_DBUS_MESSAGE_TYPE_SIGNAL) return message;
    const gchar *interface = g_dbus_message_get_interface(message);
    const gchar *member = g_dbus_message_get_member(message);
    if (interface == NULL || member == NULL) return message;
    keyjar_item_watch *watch = (keyjar_item_watch *)user_data;
    GVariant *body = g_dbus_message_get_body(message);
    if (g_str_equal(interface, "org.freedesktop.Secret.Collection")
        && (g_str_equal(member, "ItemDeleted") || g_str_equal(member, "ItemChanged"))
        && body != NULL && g_variant_is_of_type(body, (const GVariantType *)"(o)")) {
        const gchar *path = NULL;
        g_variant_get(body, "(&o)", &path);
        watch->changed(watch->context, member, path);
    } else if (g_str_equal(interface, "org.freedesktop.DBus") && g_str_equal(member, "NameOwnerChanged")
        && body != NULL && g_variant_is_of_type(body, (const GVariantType *)"(sss)")) {
        const gchar *name = NULL, *old_owner = NULL, *new_owner = NULL;
        g_variant_get(body, "(&s&s&s)", &name, &old_owner, &new_owner);
        if (g_str_equal(name, "org.freedesktop.secrets")) watch->changed(watch->context, member, "");
    }
    return message;
}

static inline void keyjar_item_watch_release(gpointer user_data) {
    keyjar_item_watch *watch = (keyjar_item_watch *)user_data;
    watch->release(watch->context);
    g_free(watch);
}

static inline gboolean keyjar_bus_match(GDBusConnection *connection, const char *method, const char *rule, GError **error) {
    GVariant *reply = g_dbus_connection_call_sync(
        connection, "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", method,
        g_variant_new("(s)", rule), NULL, G_DBUS_CALL_FLAGS_NONE, -1, NULL, error);
    if (reply == NULL) return 0;
    g_variant_unref(reply);
    return 1;
}

/*
 * Starts watching on the session bus: asks the bus for the signals (AddMatch) and filters them
 * out of the incoming messages. Returns the filter's id (never 0) with `*connection` set (the
 * caller unrefs it after keyjar_unwatch_items), or 0 with `error` set; `release` is then
 * called (or will be, by GDBus).
 */
static inline guint keyjar_watch_items(
    keyjar_items_changed_fn changed, void *context, void (*release)(void *context), GDBusConnection **connection,
    GError **error) {
    *connection = g_bus_get_sync(G_BUS_TYPE_SESSION, NULL, error);
    if (*connection == NULL) {
        release(context);
        return 0;
    }
    keyjar_item_watch *watch = (keyjar_item_watch *)g_malloc(sizeof(keyjar_item_watch));
    watch->changed = changed;
    watch->context = context;
    watch->release = release;
    guint filter = g_dbus_connection_add_filter(*connection, keyjar_item_watch_filter, watch, keyjar_item_watch_release);
    if (!keyjar_bus_match(*connection, "AddMatch", KEYJAR_ITEM_SIGNAL_RULE, error)
        || !keyjar_bus_match(*connection, "AddMatch", KEYJAR_SERVICE_OWNER_RULE, error)) {
        g_dbus_connection_remove_filter(*connection, filter);
        keyjar_bus_match(*connection, "RemoveMatch", KEYJAR_ITEM_SIGNAL_RULE, NULL);
        g_object_unref(*connection);
        *connection = NULL;
        return 0;
    }
    return filter;
}

/* Stops a watch without blocking: the filter is removed, and the bus is asked to stop sending
 * the signals (no reply awaited: a caller may be an event loop). */
static inline void keyjar_unwatch_items(GDBusConnection *connection, guint filter) {
    g_dbus_connection_remove_filter(connection, filter);
    const char *rules[2] = { KEYJAR_ITEM_SIGNAL_RULE, KEYJAR_SERVICE_OWNER_RULE };
    for (int rule = 0; rule < 2; rule++) {
        g_dbus_connection_call(
            connection, "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", "RemoveMatch",
            g_variant_new("(s)", rules[rule]), NULL, G_DBUS_CALL_FLAGS_NONE, -1, NULL, NULL, NULL);
    }
}
