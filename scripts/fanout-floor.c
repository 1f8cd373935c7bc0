// The floor for a change reaching 100 subscribers on this machine: one process writes a
// 300-byte message to each of 100 Unix sockets every 2 ms (500 times); another process has 100
// threads blocked in read(), one per socket, stamping each arrival against the send time.
// Run: gcc -O2 -pthread scripts/fanout-floor.c -o /tmp/fanout && /tmp/fanout
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

enum { SUBSCRIBERS = 100, EVENTS = 500 };
static int sockets[SUBSCRIBERS][2];
static double *sent;
static double latencies[SUBSCRIBERS][EVENTS];

static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec * 1e9 + t.tv_nsec; }
static int compare(const void *a, const void *b) { double x = *(const double *)a, y = *(const double *)b; return x < y ? -1 : x > y; }

static void *subscriber(void *argument) {
    long index = (long)argument;
    char buffer[300];
    for (int event = 0; event < EVENTS; event++) {
        int got = 0;
        while (got < 300) {
            ssize_t count = read(sockets[index][1], buffer + got, 300 - got);
            if (count <= 0) return NULL;
            got += (int)count;
        }
        latencies[index][event] = now() - sent[event];
    }
    return NULL;
}

int main(void) {
    sent = mmap(NULL, sizeof(double) * EVENTS, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    for (int i = 0; i < SUBSCRIBERS; i++) socketpair(AF_UNIX, SOCK_STREAM, 0, sockets[i]);
    pthread_t threads[SUBSCRIBERS];
    for (long i = 0; i < SUBSCRIBERS; i++) pthread_create(&threads[i], NULL, subscriber, (void *)i);
    usleep(100000);
    pid_t writer = fork();
    if (writer == 0) {
        char message[300];
        memset(message, 'x', sizeof message);
        for (int event = 0; event < EVENTS; event++) {
            sent[event] = now();
            for (int i = 0; i < SUBSCRIBERS; i++) write(sockets[i][0], message, sizeof message);
            usleep(2000);
        }
        _exit(0);
    }
    for (int i = 0; i < SUBSCRIBERS; i++) pthread_join(threads[i], NULL);
    waitpid(writer, NULL, 0);
    static double all[SUBSCRIBERS * EVENTS];
    int count = 0;
    for (int i = 0; i < SUBSCRIBERS; i++)
        for (int event = 0; event < EVENTS; event++) all[count++] = latencies[i][event];
    qsort(all, count, sizeof(double), compare);
    printf("a message reaching %d subscriber threads: median %.0f us p99 %.0f us\n", SUBSCRIBERS, all[count / 2] / 1e3,
           all[count * 99 / 100] / 1e3);
    return 0;
}
