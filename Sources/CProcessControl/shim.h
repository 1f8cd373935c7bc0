// prctl(2) is variadic, which Swift cannot call: one wrapper per use.
#include <sys/prctl.h>

// No core file, and no ptrace or /proc/PID/mem by another process of the user (only by a
// process with CAP_SYS_PTRACE): keyjard holds every password it was asked for in its memory.
static inline int keyjar_set_not_dumpable(void) { return prctl(PR_SET_DUMPABLE, 0, 0, 0, 0); }

// Closing every descriptor from one on, in the child, as part of posix_spawn (glibc 2.34): a list
// of descriptors taken before the spawn misses one another thread opens meanwhile. Glibc's Swift
// module does not export it.
#include <spawn.h>
extern int posix_spawn_file_actions_addclosefrom_np(posix_spawn_file_actions_t *actions, int from);

// A pipe whose ends are close-on-exec from the start (pipe2 with O_CLOEXEC): set afterwards with
// fcntl, a child another thread starts meanwhile could inherit them. Not exported either.
extern int pipe2(int descriptors[2], int flags);
