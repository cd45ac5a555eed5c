// c2c: the round trip of one cache line between two CPUs of this machine, the floor under every
// hand-off between two carriers (GOMAXPROCS=2). Thread A on CPU 0 and thread B on CPU 1 take turns
// incrementing one shared word (A makes it odd, B even), spinning until it is their turn; each line
// printed is the mean round trip over 200,000 turns, four per second.
//
//   gcc -O2 -pthread bench/probes/c2c.c -o /tmp/c2c && /tmp/c2c 5     # seconds to run
//
// Both CPUs spin for the whole run: do not run it beside a benchmark.
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static _Alignas(64) atomic_long word;
enum { TURNS = 200000 };

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e9 + t.tv_nsec;
}

static void pin(int cpu) {
    cpu_set_t s;
    CPU_ZERO(&s);
    CPU_SET(cpu, &s);
    pthread_setaffinity_np(pthread_self(), sizeof s, &s);
}

static void *partner(void *unused) {
    (void) unused;
    pin(1);
    for (;;) {
        long v;
        while (((v = atomic_load_explicit(&word, memory_order_acquire)) & 1) == 0) {
            if (v < 0) {
                return NULL;
            }
        }
        atomic_store_explicit(&word, v + 1, memory_order_release);
    }
}

int main(int argc, char **argv) {
    int secs = argc > 1 ? atoi(argv[1]) : 5;
    pin(0);
    pthread_t t;
    pthread_create(&t, NULL, partner, NULL);
    long v = 0;
    for (int s = 0; s < secs * 4; s++) {
        double t0 = now();
        for (int i = 0; i < TURNS; i++) {
            atomic_store_explicit(&word, v + 1, memory_order_release);
            while (atomic_load_explicit(&word, memory_order_acquire) == v + 1) {
            }
            v += 2;
        }
        printf("%.0f ns\n", (now() - t0) / TURNS);
        fflush(stdout);
        struct timespec pause = {0, 50000000};
        nanosleep(&pause, NULL);
    }
    atomic_store(&word, -2);
    pthread_join(t, NULL);
    return 0;
}
