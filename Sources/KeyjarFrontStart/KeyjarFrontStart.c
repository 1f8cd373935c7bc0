// keyjar's front hands most command lines to keyjar-full (FrontRoute, FullCommand). Handed
// over from Swift's main, a `keyjar fetch` first paid the front's whole start: its runtime's
// and Foundation's constructors, the arguments as Swift strings, the route (docs/performance.md,
// "The command"). This constructor runs before those (priority 101) and hands over at once
// every command line whose first word the front never runs. It only ever sends a command line
// to where FrontRoute would: a line it lets through is decided again by FrontRoute, and when
// keyjar-full cannot be started here, Swift's hand-over reports why.
#include "KeyjarFrontStart.h"

#include <limits.h>
#include <string.h>
#include <unistd.h>

/// The program's name without its directory.
static const char *program_name(const char *path) {
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

static const char *const front_words[] = {"cookie", "git-credential", "--version"};

int keyjar_front_may_run(int argc, char *const argv[]) {
    if (argc < 1 || argv[0] == NULL) return 1;
    if (strcmp(program_name(argv[0]), "git-credential-keyjar") == 0) return 1;
    if (argc < 2) return 0;
    for (size_t i = 0; i < sizeof front_words / sizeof front_words[0]; i++) {
        if (strcmp(argv[1], front_words[i]) == 0) return 1;
    }
    return 0;
}

// Only in a process called `keyjar`: whatever else links the front (its tests' runner) is left
// alone, and a front installed under another name hands over from Swift, later but the same.
__attribute__((constructor(101))) static void keyjar_front_start(int argc, char **argv, char **environment) {
    (void)environment;
    if (argc < 1 || argv[0] == NULL || strcmp(program_name(argv[0]), "keyjar") != 0) return;
    if (keyjar_front_may_run(argc, argv)) return;
    static const char full[] = "keyjar-full";
    char path[PATH_MAX];
    ssize_t length = readlink("/proc/self/exe", path, sizeof path - sizeof full);
    if (length <= 0) return;
    path[length] = '\0';
    char *directory_end = strrchr(path, '/');
    if (directory_end == NULL) return;
    memcpy(directory_end + 1, full, sizeof full);
    execv(path, argv);
}
