/*
 * Part of shim.h, which includes it first: the GLib, GObject and GIO types and functions Keyjar
 * uses, declared as their own headers declare them.
 */

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
