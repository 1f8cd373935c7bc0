// The floor for any request/reply over a Unix socket on this machine: a socketpair ping-pong
// of 300-byte messages between two processes, 20,000 round trips, with both processes on the
// same CPU and then on two different CPUs. On a virtual machine the second is several times
// the first: waking a thread on an idle vCPU takes an inter-processor interrupt.
// Run: gcc -O2 scripts/socket-roundtrip-floor.c -o /tmp/floor && /tmp/floor
#define _GNU_SOURCE
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec * 1e9 + t.tv_nsec; }
static int compare(const void *a, const void *b) { double x = *(const double *)a, y = *(const double *)b; return x < y ? -1 : x > y; }
static void pin(int cpu) { cpu_set_t set; CPU_ZERO(&set); CPU_SET(cpu, &set); sched_setaffinity(0, sizeof set, &set); }

static void measure(const char *label, int clientCPU, int serverCPU) {
    enum { N = 20000 };
    static double samples[N];
    int pair[2];
    char buffer[512] = {0};
    socketpair(AF_UNIX, SOCK_STREAM, 0, pair);
    pid_t child = fork();
    if (child == 0) {
        pin(serverCPU);
        close(pair[0]);
        while (read(pair[1], buffer, 300) > 0) write(pair[1], buffer, 300);
        _exit(0);
    }
    close(pair[1]);
    pin(clientCPU);
    for (int i = 0; i < N; i++) {
        double start = now();
        write(pair[0], buffer, 300);
        int got = 0;
        while (got < 300) got += read(pair[0], buffer + got, 300 - got);
        samples[i] = now() - start;
    }
    close(pair[0]);
    waitpid(child, NULL, 0);
    qsort(samples, N, sizeof(double), compare);
    printf("unix socket RTT, %s: median %.1f us p99 %.1f us\n", label, samples[N / 2] / 1e3, samples[N * 99 / 100] / 1e3);
}

int main(void) {
    measure("same CPU", 0, 0);
    if (sysconf(_SC_NPROCESSORS_ONLN) > 1) measure("two CPUs", 0, 1);
    return 0;
}
