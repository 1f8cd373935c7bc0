/*
 * Part of shim.h, which includes it after shim-glib.h: the libsecret types, constants and
 * functions Keyjar uses, declared as libsecret's headers declare them.
 */

/* Types Keyjar only holds pointers to. */
typedef struct _SecretService SecretService;
typedef struct _SecretCollection SecretCollection;
typedef struct _SecretValue SecretValue;

/* Types whose fields Keyjar reads or which it allocates itself. */
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

#ifndef KEYJAR_ABI_CHECK
/* secret-types.h; a macro there too. */
#define SECRET_COLLECTION_DEFAULT "default"
#endif

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
