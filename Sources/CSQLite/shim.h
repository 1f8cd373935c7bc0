#include <sqlite3.h>

// sqlite3_db_config is variadic, which Swift cannot call: one wrapper for its on/off options.
static inline int keyjar_sqlite3_db_config_flag(sqlite3 *db, int op, int on) {
    return sqlite3_db_config(db, op, on, (int *)0);
}
