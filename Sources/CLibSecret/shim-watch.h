/* Part of shim.h, which includes it last. */

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
