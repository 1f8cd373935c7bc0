/*
 * A plain `swift test` runs the suite as scripts/test does: before the test process's main, it
 * re-executes itself inside a private D-Bus session (dbus-run-session) with a throwaway,
 * unlocked gnome-keyring as Secret Service, HOME and XDG_RUNTIME_DIR in a fresh temporary
 * directory, and KEYJAR_TEST_SECRET_SERVICE=private. Many tests store passwords in "the"
 * Secret Service and run keyjard in "the" user's directories: never a developer's own keyring
 * or home. Under scripts/test (which sets the variable) this does nothing.
 *
 * In C, as a constructor: the switch must happen before anything in the process reaches D-Bus
 * (libsecret keeps its first connection), which no test or trait can guarantee.
 */
#define _GNU_SOURCE
#include "CKeyjarTestSession.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *const script =
    "status=0\n"
    "echo -n throwaway | gnome-keyring-daemon --unlock --components=secrets >/dev/null\n"
    "if echo -n probe | secret-tool store --label='keyjar test probe' keyjar-probe 1; then\n"
    "    secret-tool clear keyjar-probe 1\n"
    "    \"$0\" \"$@\" || status=$?\n"
    "else\n"
    "    echo 'error: the private Secret Service for the tests did not start' >&2\n"
    "    status=1\n"
    "fi\n"
    "rm -rf \"$KEYJAR_TEST_SANDBOX\"\n"
    "exit $status\n";

int keyjar_test_session_is_private(void) {
    const char *value = getenv("KEYJAR_TEST_SECRET_SERVICE");
    return value != NULL && strcmp(value, "private") == 0;
}

__attribute__((constructor)) static void keyjar_test_session_enter(int argc, char **argv) {
    if (getenv("KEYJAR_TEST_SECRET_SERVICE") != NULL) return;
    char sandbox[] = "/tmp/keyjar-test.XXXXXX";
    if (mkdtemp(sandbox) == NULL) {
        perror("keyjar tests: a temporary directory");
        _exit(1);
    }
    char home[sizeof sandbox + 16], runtime[sizeof sandbox + 16], data[sizeof sandbox + 32];
    snprintf(home, sizeof home, "%s/home", sandbox);
    snprintf(runtime, sizeof runtime, "%s/runtime", sandbox);
    snprintf(data, sizeof data, "%s/home/.local/share", sandbox);
    if (mkdir(home, 0700) != 0 || mkdir(runtime, 0700) != 0) {
        perror("keyjar tests: the sandbox's directories");
        _exit(1);
    }
    setenv("HOME", home, 1);
    setenv("XDG_RUNTIME_DIR", runtime, 1);
    setenv("XDG_DATA_HOME", data, 1);
    unsetenv("XDG_CONFIG_HOME");
    unsetenv("XDG_CACHE_HOME");
    unsetenv("XDG_STATE_HOME");
    unsetenv("DBUS_SESSION_BUS_ADDRESS");
    setenv("KEYJAR_TEST_SANDBOX", sandbox, 1);
    setenv("KEYJAR_TEST_SECRET_SERVICE", "private", 1);

    char **arguments = calloc((size_t)argc + 8, sizeof *arguments);
    if (arguments == NULL) _exit(1);
    int count = 0;
    arguments[count++] = "dbus-run-session";
    arguments[count++] = "--";
    arguments[count++] = "/bin/sh";
    arguments[count++] = "-c";
    arguments[count++] = (char *)script;
    arguments[count++] = "/proc/self/exe";
    for (int index = 1; index < argc; index++) arguments[count++] = argv[index];
    arguments[count] = NULL;
    /* sh runs "$0": the test executable itself, by its real path, with its arguments. */
    char executable[4096];
    ssize_t length = readlink("/proc/self/exe", executable, sizeof executable - 1);
    if (length <= 0) {
        perror("keyjar tests: /proc/self/exe");
        _exit(1);
    }
    executable[length] = '\0';
    arguments[5] = executable;
    execvp("dbus-run-session", arguments);
    perror("keyjar tests: dbus-run-session (install dbus and gnome-keyring: scripts/install-dependencies)");
    _exit(1);
}
