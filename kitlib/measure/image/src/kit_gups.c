/*
 * kit-gups: HPC Challenge RandomAccess as its specification defines it. A table of 2^m 64-bit
 * words, T[i] = i, receives 4 * 2^m updates T[r & (2^m - 1)] ^= r, where r runs through the
 * sequence of the primitive polynomial x^63 + x^2 + x + 1 over GF(2) (r <- 2r, XOR 7 when the top
 * bit was set). The sequence is cut into independent streams, each started at its own offset by
 * jumping ahead (squaring the multiply-by-x map), 128 streams per thread advanced in lock-step, so
 * each thread has 128 updates in flight as the specification's look-ahead allows. Threads share the
 * table without locks; the specification accepts up to 1% of wrong entries from such races.
 *
 * Verification replays every update with atomic XOR (which restores T[i] = i where the timed run
 * was exact) and counts the entries that differ.
 *
 * usage: kit-gups LOG2_TABLE_WORDS [UPDATES_PER_WORD]
 * UPDATES_PER_WORD is 4 in the specification (the default); fewer make a shorter run of the same
 * access pattern, and the output says how many were made.
 * Output: `key value` lines ending in `end`; GUP/s = updates / seconds / 1e9.
 */
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifndef KIT_SOURCE_DIGEST
#define KIT_SOURCE_DIGEST "unknown"
#endif

#define POLY 0x0000000000000007ULL
#define PERIOD 1317624576693539401LL
#define LANES 128

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static inline uint64_t step(uint64_t r) { return (r << 1) ^ (((int64_t)r < 0) ? POLY : 0); }

/* The element n of the sequence that starts at 1 (n reduced modulo its period). */
static uint64_t start_at(int64_t n) {
    while (n < 0) n += PERIOD;
    while (n > PERIOD) n -= PERIOD;
    if (n == 0) return 1;
    uint64_t squares[64], t = 1;
    for (int i = 0; i < 64; i++) { /* squares[i] = x^(2i) */
        squares[i] = t;
        t = step(step(t));
    }
    int i = 62;
    while (i >= 0 && !((n >> i) & 1)) i--;
    uint64_t r = 2;
    while (i > 0) {
        uint64_t s = 0;
        for (int j = 0; j < 64; j++)
            if ((r >> j) & 1) s ^= squares[j];
        r = s;
        i--;
        if ((n >> i) & 1) r = step(r);
    }
    return r;
}

/* Apply `per_lane` updates of each of the thread's LANES streams; atomic for the verification. */
static void updates(uint64_t *table, uint64_t mask, int64_t first_stream, int64_t per_lane, int atomic) {
    uint64_t r[LANES];
    for (int j = 0; j < LANES; j++) r[j] = start_at((first_stream + j) * per_lane);
    for (int64_t i = 0; i < per_lane; i++) {
        for (int j = 0; j < LANES; j++) {
            r[j] = step(r[j]);
            if (atomic)
                __atomic_fetch_xor(&table[r[j] & mask], r[j], __ATOMIC_RELAXED);
            else
                table[r[j] & mask] ^= r[j];
        }
    }
}

int main(int argc, char **argv) {
    if (argc != 2 && argc != 3) {
        fprintf(stderr, "usage: kit-gups LOG2_TABLE_WORDS [UPDATES_PER_WORD]\n");
        return 2;
    }
    char *end, *end2 = "";
    long m = strtol(argv[1], &end, 10);
    long per_word = argc == 3 ? strtol(argv[2], &end2, 10) : 4;
    if (*end || *end2 || m < 10 || m > 40 || per_word < 1 || per_word > 4) {
        fprintf(stderr, "kit-gups: LOG2_TABLE_WORDS must be 10..40, UPDATES_PER_WORD 1..4\n");
        return 2;
    }
    const uint64_t words = 1ULL << m, mask = words - 1;
    uint64_t *table = NULL;
    if (posix_memalign((void **)&table, 2 * 1024 * 1024, words * sizeof(uint64_t)) != 0) {
        fprintf(stderr, "kit-gups: cannot allocate %llu words\n", (unsigned long long)words);
        return 2;
    }
    const int threads = omp_get_max_threads();
    const int64_t streams = (int64_t)LANES * threads;
    const int64_t per_lane = (int64_t)(per_word * words) / streams;
    const int64_t total = per_lane * streams;

#pragma omp parallel for schedule(static)
    for (uint64_t i = 0; i < words; i++) table[i] = i;

    double t = now();
#pragma omp parallel
    updates(table, mask, (int64_t)omp_get_thread_num() * LANES, per_lane, 0);
    double seconds = now() - t;

    double v = now();
#pragma omp parallel
    updates(table, mask, (int64_t)omp_get_thread_num() * LANES, per_lane, 1);
    double verify_seconds = now() - v;
    uint64_t errors = 0;
#pragma omp parallel for reduction(+ : errors) schedule(static)
    for (uint64_t i = 0; i < words; i++) errors += (table[i] != i);

    printf("kit-gups source %s\n", KIT_SOURCE_DIGEST);
    printf("table_words %llu\n", (unsigned long long)words);
    printf("table_bytes %llu\n", (unsigned long long)(words * sizeof(uint64_t)));
    printf("threads %d\n", threads);
    printf("updates_per_word %ld\n", per_word);
    printf("updates %lld\n", (long long)total);
    printf("seconds %.6f\n", seconds);
    printf("gups %.9f\n", (double)total / seconds / 1e9);
    printf("verify_seconds %.6f\n", verify_seconds);
    printf("errors %llu\n", (unsigned long long)errors);
    printf("error_fraction %.9f\n", (double)errors / (double)words);
    if ((double)errors > 0.01 * (double)words) {
        printf("validation failed\n");
        return 1;
    }
    printf("validation ok\n");
    printf("end\n");
    return 0;
}
