/* Part of shim.h, which includes it after shim-libsecret.h. */

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
