// prctl(2) is variadic, which Swift cannot call: one wrapper per use.
#include <sys/prctl.h>

// No core file, and no ptrace or /proc/PID/mem by another process of the user (only by a
// process with CAP_SYS_PTRACE): keyjard holds every password it was asked for in its memory.
static inline int keyjar_set_not_dumpable(void) { return prctl(PR_SET_DUMPABLE, 0, 0, 0, 0); }

// The calling thread's name, as ps and top show it (at most 15 bytes; longer is cut).
static inline int keyjar_set_thread_name(const char *name) { return prctl(PR_SET_NAME, name, 0, 0, 0); }

// Closing every descriptor from one on, in the child, as part of posix_spawn (glibc 2.34): a list
// of descriptors taken before the spawn misses one another thread opens meanwhile. Glibc's Swift
// module does not export it.
#include <spawn.h>
extern int posix_spawn_file_actions_addclosefrom_np(posix_spawn_file_actions_t *actions, int from);

// A pipe whose ends are close-on-exec from the start (pipe2 with O_CLOEXEC): set afterwards with
// fcntl, a child another thread starts meanwhile could inherit them. Not exported either.
extern int pipe2(int descriptors[2], int flags);

// The kernel's key retention service (keyrings(7)): add_key(2) and keyctl(2) are system calls
// glibc does not wrap (libkeyutils does; one library fewer for five calls).
#include <stddef.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/keyctl.h>
static inline long keyjar_add_key(const char *type, const char *description, const void *payload, size_t length,
                                  int keyring) {
    return syscall(SYS_add_key, type, description, payload, length, keyring);
}
static inline long keyjar_keyctl(int operation, unsigned long a2, unsigned long a3, unsigned long a4,
                                 unsigned long a5) {
    return syscall(SYS_keyctl, operation, a2, a3, a4, a5);
}

// `keyjar run --mask` relays the signals it is sent to the command it started. A handler can
// do nothing but write to a pipe (async-signal-safe), and Swift cannot give sigaction a
// handler that reads siginfo: this one writes the signal's number and whether a process sent
// it with kill(2) (si_code SI_USER, SI_QUEUE, SI_TKILL: not the terminal, which signals the
// whole foreground process group, the command with it, by itself).
#include <errno.h>
#include <signal.h>
static int keyjar_relay_pipe = -1;
static void keyjar_relay_handler(int number, siginfo_t *info, void *context) {
    (void)context;
    int saved = errno;
    unsigned char record[2] = {(unsigned char)number, (unsigned char)(info != NULL && info->si_code <= 0)};
    ssize_t ignored = write(keyjar_relay_pipe, record, sizeof record);
    (void)ignored;
    errno = saved;
}
static inline int keyjar_relay_signal(int number, int pipe_write_end) {
    keyjar_relay_pipe = pipe_write_end;
    struct sigaction action;
    sigemptyset(&action.sa_mask);
    action.sa_sigaction = keyjar_relay_handler;
    action.sa_flags = SA_SIGINFO | SA_RESTART;
    return sigaction(number, &action, NULL);
}
