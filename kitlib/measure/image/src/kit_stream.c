/*
 * kit-stream: the four STREAM kernels (Copy, Scale, Add, Triad) over three arrays of doubles,
 * timed as McCalpin's STREAM defines them: every kernel runs `ntimes` times, the first pass is a
 * warm-up and is not counted, a kernel's rate is bytes moved / its fastest pass, and the arrays'
 * final values are checked against the same recurrence computed on scalars.
 *
 * Bytes moved per element: Copy and Scale 16 (one read, one write), Add and Triad 24; write-allocate
 * traffic is not counted, as in STREAM. Threads (OpenMP) split each array in static blocks, and
 * the arrays are first touched by the threads that use them (right NUMA placement).
 *
 * usage: kit-stream ELEMENTS NTIMES
 * Output: `key value …` lines ending in `end`; every pass's time is printed so a reader can
 * see whether the kernel reached a steady state.
 */
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifndef KIT_SOURCE_DIGEST
#define KIT_SOURCE_DIGEST "unknown"
#endif

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static double *array(long n) {
    void *p = NULL;
    if (posix_memalign(&p, 2 * 1024 * 1024, (size_t)n * sizeof(double)) != 0) {
        fprintf(stderr, "kit-stream: cannot allocate %ld doubles\n", n);
        exit(2);
    }
    return p;
}

static int check(const char *name, const double *v, long n, double expected) {
    double worst = 0.0;
    for (long j = 0; j < n; j++) {
        double err = fabs(v[j] - expected) / fabs(expected);
        if (err > worst) worst = err;
    }
    if (worst > 1e-13) {
        printf("validation failed array %s relative_error %.3e\n", name, worst);
        return 1;
    }
    return 0;
}

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: kit-stream ELEMENTS NTIMES\n");
        return 2;
    }
    char *end1, *end2;
    long n = strtol(argv[1], &end1, 10);
    long ntimes = strtol(argv[2], &end2, 10);
    if (*end1 || *end2 || n < 1000 || ntimes < 2 || ntimes > 1000) {
        fprintf(stderr, "kit-stream: ELEMENTS >= 1000 and 2 <= NTIMES <= 1000\n");
        return 2;
    }
    double *a = array(n), *b = array(n), *c = array(n);
    const double q = 3.0;
    static const char *names[4] = {"Copy", "Scale", "Add", "Triad"};
    const double bytes[4] = {16.0 * n, 16.0 * n, 24.0 * n, 24.0 * n};
    double *times = calloc((size_t)(4 * ntimes), sizeof(double));
    if (!times) return 2;

#pragma omp parallel for schedule(static)
    for (long j = 0; j < n; j++) {
        a[j] = 1.0;
        b[j] = 2.0;
        c[j] = 0.0;
    }
#pragma omp parallel for schedule(static)
    for (long j = 0; j < n; j++) a[j] = 2.0 * a[j];

    for (long k = 0; k < ntimes; k++) {
        double t = now();
#pragma omp parallel for schedule(static)
        for (long j = 0; j < n; j++) c[j] = a[j];
        times[0 * ntimes + k] = now() - t;

        t = now();
#pragma omp parallel for schedule(static)
        for (long j = 0; j < n; j++) b[j] = q * c[j];
        times[1 * ntimes + k] = now() - t;

        t = now();
#pragma omp parallel for schedule(static)
        for (long j = 0; j < n; j++) c[j] = a[j] + b[j];
        times[2 * ntimes + k] = now() - t;

        t = now();
#pragma omp parallel for schedule(static)
        for (long j = 0; j < n; j++) a[j] = b[j] + q * c[j];
        times[3 * ntimes + k] = now() - t;
    }

    /* the same recurrence on scalars */
    double ea = 2.0, eb = 2.0, ec = 0.0;
    for (long k = 0; k < ntimes; k++) {
        ec = ea;
        eb = q * ec;
        ec = ea + eb;
        ea = eb + q * ec;
    }
    int bad = check("a", a, n, ea) + check("b", b, n, eb) + check("c", c, n, ec);

    printf("kit-stream source %s\n", KIT_SOURCE_DIGEST);
    printf("elements %ld\n", n);
    printf("bytes_per_array %ld\n", n * (long)sizeof(double));
    printf("threads %d\n", omp_get_max_threads());
    printf("ntimes %ld\n", ntimes);
    for (int i = 0; i < 4; i++) {
        double best = times[i * ntimes + 1], worst = best, sum = 0.0;
        for (long k = 1; k < ntimes; k++) {
            double t = times[i * ntimes + k];
            if (t < best) best = t;
            if (t > worst) worst = t;
            sum += t;
        }
        printf("kernel %s best_MBps %.1f avg_s %.6f min_s %.6f max_s %.6f\n", names[i], bytes[i] / best / 1e6,
               sum / (double)(ntimes - 1), best, worst);
        printf("passes %s", names[i]);
        for (long k = 0; k < ntimes; k++) printf(" %.6f", times[i * ntimes + k]);
        printf("\n");
    }
    if (bad) return 1;
    printf("validation ok\n");
    printf("end\n");
    return 0;
}
