/*
 * kit-linpack: the shared-memory LINPACK benchmark (as Intel's optimized LINPACK runs it): solve a
 * dense N x N system A x = b by LU factorisation with partial pivoting (LAPACK dgesv, here from
 * OpenBLAS, threaded over the CPUs it may use), `trials` times on the same matrix, each trial on a
 * fresh copy. A trial's rate is (2/3 N^3 + 2 N^2) / its time; its solution is checked by the
 * scaled residual ||A x - b||_inf / (||A||_inf ||x||_inf N eps), which must stay below 16 (HPL's
 * threshold), or the run fails.
 *
 * usage: kit-linpack N TRIALS
 * Output: `key value …` lines, one `trial` line each, ending in `end`.
 */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifndef KIT_SOURCE_DIGEST
#define KIT_SOURCE_DIGEST "unknown"
#endif

extern void dgesv_(const int *n, const int *nrhs, double *a, const int *lda, int *ipiv, double *b, const int *ldb,
                   int *info);
extern void dgemv_(const char *trans, const int *m, const int *n, const double *alpha, const double *a,
                   const int *lda, const double *x, const int *incx, const double *beta, double *y, const int *incy);
extern char *openblas_get_config(void);
extern int openblas_get_num_threads(void);

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* A fixed generator (64-bit LCG), so every environment factorises the same matrix. */
static double uniform(uint64_t *state) {
    *state = *state * 6364136223846793005ULL + 1442695040888963407ULL;
    return (double)(*state >> 11) / 9007199254740992.0 - 0.5;
}

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: kit-linpack N TRIALS\n");
        return 2;
    }
    char *end1, *end2;
    long nl = strtol(argv[1], &end1, 10), trials = strtol(argv[2], &end2, 10);
    if (*end1 || *end2 || nl < 10 || nl > 200000 || trials < 1 || trials > 100) {
        fprintf(stderr, "kit-linpack: 10 <= N <= 200000 and 1 <= TRIALS <= 100\n");
        return 2;
    }
    const int n = (int)nl, one = 1;
    const size_t cells = (size_t)n * (size_t)n;
    double *a = malloc(cells * sizeof(double)), *lu = malloc(cells * sizeof(double));
    double *b = malloc((size_t)n * sizeof(double)), *x = malloc((size_t)n * sizeof(double));
    double *r = malloc((size_t)n * sizeof(double));
    int *ipiv = malloc((size_t)n * sizeof(int));
    if (!a || !lu || !b || !x || !r || !ipiv) {
        fprintf(stderr, "kit-linpack: cannot allocate a %d x %d matrix\n", n, n);
        return 2;
    }
    uint64_t state = 42;
    for (size_t i = 0; i < cells; i++) a[i] = uniform(&state);
    for (int i = 0; i < n; i++) b[i] = uniform(&state);
    double norm_a = 0.0;
    for (int i = 0; i < n; i++) {
        double row = 0.0;
        for (int j = 0; j < n; j++) row += fabs(a[(size_t)j * n + i]);
        if (row > norm_a) norm_a = row;
    }

    printf("kit-linpack source %s\n", KIT_SOURCE_DIGEST);
    printf("blas %s\n", openblas_get_config());
    printf("threads %d\n", openblas_get_num_threads());
    printf("n %d\n", n);
    printf("trials %ld\n", trials);
    const double flops = 2.0 / 3.0 * (double)n * n * n + 2.0 * (double)n * n;
    int failed = 0;
    for (long t = 1; t <= trials; t++) {
        memcpy(lu, a, cells * sizeof(double));
        memcpy(x, b, (size_t)n * sizeof(double));
        int info = 0;
        double start = now();
        dgesv_(&n, &one, lu, &n, ipiv, x, &n, &info);
        double seconds = now() - start;
        if (info != 0) {
            printf("trial %ld failed dgesv_info %d\n", t, info);
            return 1;
        }
        const double plus = 1.0, minus = -1.0;
        memcpy(r, b, (size_t)n * sizeof(double));
        dgemv_("N", &n, &n, &plus, a, &n, x, &one, &minus, r, &one); /* r = A x - b */
        double norm_r = 0.0, norm_x = 0.0;
        for (int i = 0; i < n; i++) {
            if (fabs(r[i]) > norm_r) norm_r = fabs(r[i]);
            if (fabs(x[i]) > norm_x) norm_x = fabs(x[i]);
        }
        double scaled = norm_r / (norm_a * norm_x * (double)n * DBL_EPSILON);
        int pass = scaled < 16.0;
        failed |= !pass;
        printf("trial %ld seconds %.6f gflops %.4f residual %.6e check %s\n", t, seconds, flops / seconds / 1e9,
               scaled, pass ? "pass" : "fail");
    }
    if (failed) return 1;
    printf("end\n");
    return 0;
}
