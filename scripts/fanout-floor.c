// The floor for a change reaching many subscribers on this machine, with nothing in the way:
// one writer sends a 300-byte message to each of N Unix sockets (every SPACING µs, 500 times),
// and each subscriber, blocked in read(), stamps its arrival against the send time.
//
//   gcc -O2 -pthread scripts/fanout-floor.c -o /tmp/fanout && /tmp/fanout [MODE] [SPACING_US]
//
// MODE:
//   threads    100 subscriber threads in one process, a message every 2 ms (the first version)
//   processes  99 subscriber processes, a message every 3 ms: the shape of `keyjar-bench client`
//   futex      99 processes woken by one futex broadcast on shared memory (no socket per
//              subscriber): how much of the cost is the writer's wake-up of each socket
//
// It prints the median and p99 over all subscribers, the median by place in the writer's order
// (the first subscriber is written to first), and the CPU each side spends per change.
// `keyjar-bench client` compiles and runs it (processes mode) right after its own fan-out.
#include <linux/futex.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

enum { MAX = 100, EVENTS = 500 };
static int subscribers, spacing;
static int sockets[MAX][2];
static double *sent, *latency, *cpu;  // shared between processes
static volatile uint32_t *word;       // futex mode: the change counter

static double clock_ns(clockid_t id) { struct timespec t; clock_gettime(id, &t); return t.tv_sec * 1e9 + t.tv_nsec; }
static double now(void) { return clock_ns(CLOCK_MONOTONIC); }
static int compare(const void *a, const void *b) { double x = *(const double *)a, y = *(const double *)b; return x < y ? -1 : x > y; }
static void *shared(size_t bytes) { return mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0); }

static void subscribe_socket(long index, clockid_t clock) {
    char buffer[300];
    double start = clock_ns(clock);
    for (int event = 0; event < EVENTS; event++) {
        for (int got = 0; got < 300;) {
            ssize_t count = read(sockets[index][1], buffer + got, 300 - got);
            if (count <= 0) return;
            got += (int)count;
        }
        latency[index * EVENTS + event] = now() - sent[event];
    }
    cpu[index] = clock_ns(clock) - start;
}

static void subscribe_futex(long index) {
    double start = clock_ns(CLOCK_PROCESS_CPUTIME_ID);
    uint32_t seen = 0;
    for (int event = 0; event < EVENTS; event++) {
        while (__atomic_load_n(word, __ATOMIC_ACQUIRE) == seen) syscall(SYS_futex, word, FUTEX_WAIT, seen, NULL, NULL, 0);
        seen++;
        latency[index * EVENTS + event] = now() - sent[event];
    }
    cpu[index] = clock_ns(CLOCK_PROCESS_CPUTIME_ID) - start;
}

static void *thread_main(void *argument) { subscribe_socket((long)argument, CLOCK_THREAD_CPUTIME_ID); return NULL; }

int main(int argc, char **argv) {
    const char *mode = argc > 1 ? argv[1] : "processes";
    int threads = strcmp(mode, "threads") == 0, futex = strcmp(mode, "futex") == 0;
    if (!threads && !futex && strcmp(mode, "processes") != 0) { fprintf(stderr, "usage: %s [threads|processes|futex] [spacing_us]\n", argv[0]); return 2; }
    subscribers = threads ? 100 : 99;
    spacing = argc > 2 ? atoi(argv[2]) : threads ? 2000 : 3000;
    sent = shared(sizeof(double) * EVENTS);
    latency = shared(sizeof(double) * EVENTS * MAX);
    cpu = shared(sizeof(double) * MAX);
    word = shared(4096);
    for (int i = 0; i < subscribers; i++) socketpair(AF_UNIX, SOCK_STREAM, 0, sockets[i]);
    pthread_t handles[MAX];
    for (long i = 0; i < subscribers; i++) {
        if (threads) { pthread_create(&handles[i], NULL, thread_main, (void *)i); continue; }
        if (fork() == 0) {
            if (futex) subscribe_futex(i); else subscribe_socket(i, CLOCK_PROCESS_CPUTIME_ID);
            _exit(0);
        }
    }
    usleep(300000);
    char message[300];
    memset(message, 'x', sizeof message);
    double writerStart = clock_ns(CLOCK_THREAD_CPUTIME_ID);
    for (int event = 0; event < EVENTS; event++) {
        sent[event] = now();
        if (futex) {
            __atomic_add_fetch(word, 1, __ATOMIC_RELEASE);
            syscall(SYS_futex, word, FUTEX_WAKE, INT32_MAX, NULL, NULL, 0);
        } else {
            for (int i = 0; i < subscribers; i++) write(sockets[i][0], message, sizeof message);
        }
        usleep(spacing);
    }
    double writerCPU = clock_ns(CLOCK_THREAD_CPUTIME_ID) - writerStart;
    if (threads) for (int i = 0; i < subscribers; i++) pthread_join(handles[i], NULL);
    while (wait(NULL) > 0) {}

    static double all[MAX * EVENTS], column[EVENTS];
    int count = subscribers * EVENTS;
    memcpy(all, latency, sizeof(double) * count);
    qsort(all, count, sizeof(double), compare);
    double subscriberCPU = 0;
    for (int i = 0; i < subscribers; i++) subscriberCPU += cpu[i];
    printf("%s: %d subscribers, a change every %d us: median %.0f us, p99 %.0f us; writer %.1f us CPU per change, "
           "each subscriber %.1f us\n", mode, subscribers, spacing, all[count / 2] / 1e3, all[count * 99 / 100] / 1e3,
           writerCPU / EVENTS / 1e3, subscriberCPU / subscribers / EVENTS / 1e3);
    printf("median by place in the writer's order:");
    for (int place = 0; place < subscribers; place += subscribers / 10) {
        memcpy(column, latency + place * EVENTS, sizeof column);
        qsort(column, EVENTS, sizeof(double), compare);
        printf(" #%d %.0f", place, column[EVENTS / 2] / 1e3);
    }
    printf(" (us)\n");
    // The place `keyjar-bench client` calls B (its peers.count / 2), for its ratio.
    memcpy(column, latency + (subscribers / 2) * EVENTS, sizeof column);
    qsort(column, EVENTS, sizeof(double), compare);
    printf("place #%d (the middle): median %.0f us\n", subscribers / 2, column[EVENTS / 2] / 1e3);
    return 0;
}
