// The floor for keyjard's acknowledged Set-Cookie on this machine, written in C with nothing in
// the way: a server process waits in epoll, reads a ~200-byte request, commits one cookie row
// and one change-log row to SQLite exactly as keyjard does (same schema, WAL,
// synchronous=NORMAL, no automatic checkpoints), and answers; a client process does ping-pong.
// Run three times each way: with two vCPUs the result depends on whether the scheduler puts
// both processes on one CPU.
// Run: gcc -O2 scripts/acked-write-floor.c -lsqlite3 -o /tmp/acked && /tmp/acked [awake]
// (`keyjar-bench service` compiles and runs it with `awake` after its own acknowledged writes.)
// With `awake` the client does what Keyjar's clients do: for up to 250 us after sending it reads
// without blocking, yielding the CPU between tries, and only then sleeps in read().
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <sched.h>

static int awake;

static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec * 1e9 + t.tv_nsec; }
static int compare(const void *a, const void *b) { double x = *(const double *)a, y = *(const double *)b; return x < y ? -1 : x > y; }

static const char *schema =
    "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; PRAGMA wal_autocheckpoint=0;"
    "CREATE TABLE change_log (sequence INTEGER PRIMARY KEY, event TEXT NOT NULL, recorded REAL NOT NULL);"
    "CREATE TABLE cookie (name TEXT NOT NULL, value TEXT NOT NULL, domain TEXT NOT NULL, host_only INTEGER NOT NULL,"
    " path TEXT NOT NULL, expires REAL, secure INTEGER NOT NULL, http_only INTEGER NOT NULL, same_site TEXT NOT NULL,"
    " creation REAL NOT NULL, last_access REAL NOT NULL, PRIMARY KEY (name, domain, host_only, path)) WITHOUT ROWID;";

static void serve(int fd, const char *path) {
    sqlite3 *db;
    sqlite3_stmt *begin, *upsert, *log, *commit;
    unlink(path);
    sqlite3_open(path, &db);
    sqlite3_exec(db, schema, 0, 0, 0);
    sqlite3_prepare_v2(db, "BEGIN IMMEDIATE", -1, &begin, 0);
    sqlite3_prepare_v2(db, "INSERT OR REPLACE INTO cookie VALUES (?, ?, ?, 1, '/', 1.8e9, 1, 0, 'Lax', 1.7e9, 1.7e9)", -1, &upsert, 0);
    sqlite3_prepare_v2(db, "INSERT INTO change_log (event, recorded) VALUES (?, 1.7e9)", -1, &log, 0);
    sqlite3_prepare_v2(db, "COMMIT", -1, &commit, 0);
    int poller = epoll_create1(0);
    struct epoll_event interest = {.events = EPOLLIN, .data.fd = fd}, ready;
    epoll_ctl(poller, EPOLL_CTL_ADD, fd, &interest);
    char request[1024], name[32], value[32], domain[32], event[320];
    memset(event, 'x', 300);
    event[300] = 0;
    for (int i = 0;; i++) {
        if (epoll_wait(poller, &ready, 1, -1) < 1) continue;
        if (read(fd, request, sizeof request) <= 0) break;
        snprintf(name, sizeof name, "c%d", i % 2000);
        snprintf(value, sizeof value, "value%d", i);
        snprintf(domain, sizeof domain, "www.s%d.test", i % 2000);
        sqlite3_step(begin); sqlite3_reset(begin);
        sqlite3_bind_text(upsert, 1, name, -1, SQLITE_TRANSIENT);
        sqlite3_bind_text(upsert, 2, value, -1, SQLITE_TRANSIENT);
        sqlite3_bind_text(upsert, 3, domain, -1, SQLITE_TRANSIENT);
        sqlite3_step(upsert); sqlite3_reset(upsert);
        sqlite3_bind_text(log, 1, event, -1, SQLITE_TRANSIENT);
        sqlite3_step(log); sqlite3_reset(log);
        sqlite3_step(commit); sqlite3_reset(commit);
        write(fd, request, 90);
    }
    sqlite3_close(db);
    unlink(path);
}

int main(int argc, char **argv) {
    awake = argc > 1 && strcmp(argv[1], "awake") == 0;
    enum { N = 22000, WARMUP = 2000 };
    static double samples[N];
    char path[64], buffer[1024];
    snprintf(path, sizeof path, "/tmp/acked-write-floor-%d.sqlite3", (int)getpid());
    int pair[2];
    socketpair(AF_UNIX, SOCK_STREAM, 0, pair);
    pid_t child = fork();
    if (child == 0) {
        close(pair[0]);
        serve(pair[1], path);
        _exit(0);
    }
    close(pair[1]);
    memset(buffer, 'y', 200);
    for (int i = 0; i < N; i++) {
        double start = now();
        write(pair[0], buffer, 200);
        int got = 0;
        for (double until = now() + 250e3; awake && now() < until; sched_yield())
            if (recv(pair[0], buffer, sizeof buffer, MSG_DONTWAIT) > 0) { got = 1; break; }
        if (!got) read(pair[0], buffer, sizeof buffer);
        samples[i] = now() - start;
    }
    close(pair[0]);
    waitpid(child, NULL, 0);
    qsort(samples + WARMUP, N - WARMUP, sizeof(double), compare);
    double *kept = samples + WARMUP;
    int count = N - WARMUP;
    printf("acknowledged one-cookie commit, C over a Unix socket%s: median %.1f us p99 %.1f us p99.9 %.1f us\n",
           awake ? " (client awake)" : "", kept[count / 2] / 1e3, kept[count * 99 / 100] / 1e3, kept[count * 999 / 1000] / 1e3);
    return 0;
}
