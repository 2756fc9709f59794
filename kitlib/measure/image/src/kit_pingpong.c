/*
 * kit-pingpong: how fast one CPU can wake a process on another and be woken back. Two processes,
 * each pinned to its own CPU, pass one byte back and forth over a pair of pipes; every pass puts
 * the sender to sleep and wakes the receiver on the other CPU (on a virtual machine, an
 * inter-processor interrupt through the hypervisor). A client-server benchmark (Redis, a round
 * trip over a socket) lives on exactly this path, which a busy host slows while leaving arithmetic
 * (LINPACK) and memory bandwidth (STREAM) as they were.
 *
 * usage: kit-pingpong ROUND_TRIPS CPU_A CPU_B
 * CPU_A and CPU_B may be the same CPU (a one-CPU machine): the passes are then context switches.
 * A warm-up of a tenth of ROUND_TRIPS (at least 100) goes before the timed ones.
 * Output: `key value` lines ending in `end`, written only when every pass carried its byte.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef KIT_SOURCE_DIGEST
#define KIT_SOURCE_DIGEST "unknown"
#endif

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static int pin(int cpu) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    return sched_setaffinity(0, sizeof set, &set);
}

/* One byte each way; 0 when both passes completed. */
static int pass(int out, int in, int first) {
    char byte = 'k';
    if (first && write(out, &byte, 1) != 1) return -1;
    if (read(in, &byte, 1) != 1) return -1;
    if (!first && write(out, &byte, 1) != 1) return -1;
    return 0;
}

static long parse_count(const char *text, long low, long high) {
    char *end;
    errno = 0;
    long value = strtol(text, &end, 10);
    if (errno || *end || value < low || value > high) return -1;
    return value;
}

int main(int argc, char **argv) {
    if (argc != 4) {
        fprintf(stderr, "usage: kit-pingpong ROUND_TRIPS CPU_A CPU_B\n");
        return 2;
    }
    long trips = parse_count(argv[1], 100, 100000000);
    long cpu_a = parse_count(argv[2], 0, CPU_SETSIZE - 1), cpu_b = parse_count(argv[3], 0, CPU_SETSIZE - 1);
    if (trips < 0 || cpu_a < 0 || cpu_b < 0) {
        fprintf(stderr, "kit-pingpong: 100 <= ROUND_TRIPS <= 1e8 and CPUs are numbers below %d\n", CPU_SETSIZE);
        return 2;
    }
    long warmup = trips / 10 > 100 ? trips / 10 : 100;
    int there[2], back[2];
    if (pipe(there) || pipe(back)) {
        perror("kit-pingpong: pipe");
        return 1;
    }
    pid_t child = fork();
    if (child < 0) {
        perror("kit-pingpong: fork");
        return 1;
    }
    if (child == 0) { /* the echo: reads a byte, sends it back, until the pipe closes */
        close(there[1]);
        close(back[0]);
        if (pin((int)cpu_b)) _exit(3);
        while (pass(back[1], there[0], 0) == 0) {
        }
        _exit(0);
    }
    close(there[0]);
    close(back[1]);
    int failed = pin((int)cpu_a) != 0;
    for (long i = 0; !failed && i < warmup; i++) failed = pass(there[1], back[0], 1) != 0;
    double started = now();
    for (long i = 0; !failed && i < trips; i++) failed = pass(there[1], back[0], 1) != 0;
    double seconds = now() - started;
    close(there[1]);
    int status = 0;
    if (waitpid(child, &status, 0) != child || !WIFEXITED(status) || WEXITSTATUS(status) != 0) failed = 1;
    if (failed || seconds <= 0) {
        fprintf(stderr, "kit-pingpong: a pass failed or the echo on CPU %ld could not run\n", cpu_b);
        return 1;
    }
    printf("kit-pingpong source %s\n", KIT_SOURCE_DIGEST);
    printf("cpus %ld %ld\n", cpu_a, cpu_b);
    printf("round_trips %ld\n", trips);
    printf("seconds %.6f\n", seconds);
    printf("round_trips_per_s %.1f\n", trips / seconds);
    printf("end\n");
    return 0;
}
