// prctl(2) is variadic, which Swift cannot call: one wrapper per use.
#include <sys/prctl.h>

// No core file, and no ptrace or /proc/PID/mem by another process of the user (only by a
// process with CAP_SYS_PTRACE): keyjard holds every password it was asked for in its memory.
static inline int keyjar_set_not_dumpable(void) { return prctl(PR_SET_DUMPABLE, 0, 0, 0, 0); }
