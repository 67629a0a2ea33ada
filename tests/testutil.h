/* abft test utilities: seeded random inputs (the seed is printed so a failure replays),
 * assertions that print both values, a bit flipper, and the GPU skip. */
#ifndef ABFT_TESTUTIL_H
#define ABFT_TESTUTIL_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "abft/abft.h"

#ifdef __cplusplus
extern "C" {
#endif

extern int tu_failures;

/* Seed from ABFT_TEST_SEED or the clock; printed as "seed: N" with the test name. */
uint64_t tu_seed(const char *test_name);
typedef struct { uint64_t s; } tu_rng_t;
void tu_rng_init(tu_rng_t *r, uint64_t seed);
uint64_t tu_next(tu_rng_t *r);
double tu_uniform(tu_rng_t *r);                /* [0, 1) */
double tu_range(tu_rng_t *r, double lo, double hi);
int64_t tu_int(tu_rng_t *r, int64_t lo, int64_t hi); /* inclusive */

/* Fill a rows x cols matrix (leading dimension ld; padding gets a sentinel) with values of
 * the given kind. */
typedef enum {
    TU_UNIFORM = 0,    /* uniform in [-1, 1] */
    TU_WIDE = 1,       /* sign * 10^U(-8, 8): wide dynamic range */
    TU_CANCEL = 2,     /* pairs of large values of opposite sign plus small ones */
    TU_POSITIVE = 3    /* uniform in [0.5, 1.5] */
} tu_kind_t;
void tu_fill_d(tu_rng_t *r, tu_kind_t kind, int64_t rows, int64_t cols, double *A, int64_t ld);
void tu_fill_s(tu_rng_t *r, tu_kind_t kind, int64_t rows, int64_t cols, float *A, int64_t ld);
double *tu_alloc_d(int64_t count); /* never NULL (aborts the test when out of memory) */
float *tu_alloc_s(int64_t count);

/* Flip bit `bit` of an fp64 / fp32 value. */
double tu_flip_d(double v, int bit);
float tu_flip_s(float v, int bit);

/* A hook (abft_hook_fn) that flips bit `bit` of element (i, j) the first time `site` comes
 * by (with `which`, or any `which` when it is -1) on host memory, and records the values. */
typedef struct tu_flip {
    int site, which;
    int64_t i, j;
    int bit;
    int fired;
    double before, after;
} tu_flip_t;
abft_status_t tu_flip_hook(void *user, abft_hook_site_t site, int which, char prec, void *ptr,
                           int64_t rows, int64_t cols, int64_t ld);

/* max |A - B| / max |B| over two m x n matrices with leading dimension ld */
double tu_rel_diff(int64_t m, int64_t n, const double *A, const double *B, int64_t ld);
/* Backward error of an LU factorization F (L unit lower, U upper, LAPACK layout, m x n, ld)
 * with 1-based pivots ipiv of the matrix A0 (ld): the largest |P·A0 - L·U|(i, j) over
 * k·u·(|L||U|)(i, j) + tiny, k = min(m, n), u the unit roundoff of the factorization
 * (2^-53, or 2^-24 for fp32 data given here in double). A value <= 4 is the bound a
 * backward-stable LU meets whatever its blocking. */
double tu_lu_backward(int64_t m, int64_t n, const double *A0, const double *F, int64_t ld,
                      const int64_t *ipiv, double u);

/* Whether the report of a GEMM with one element of C corrupted (m x n, beta) ended as
 * documented (docs/bound.md, "Confirm"): with beta != 0 nothing can recompute the element
 * and only a recomputation confirms a correction, so every flagged entry is reported and
 * nothing written; otherwise the element is corrected, or, when the error is too close to
 * the noise to be located unambiguously (|d|/t <= 8(len + 1)), recomputed or reported. */
int tu_single_fault_resolved(double beta, int64_t m, int64_t n, const abft_report_t *rep);

/* Exit 77 (skipped) when no GPU or no CUDA backend; otherwise return. */
void tu_require_gpu(void);

/* Print the summary line and return the exit code. */
int tu_finish(const char *test_name);

#define TU_CHECK(cond, ...)                                                     \
    do {                                                                        \
        if (!(cond)) {                                                          \
            ++tu_failures;                                                      \
            fprintf(stderr, "%s:%d: check failed: %s: ", __FILE__, __LINE__, #cond); \
            fprintf(stderr, __VA_ARGS__);                                       \
            fprintf(stderr, "\n");                                              \
        }                                                                       \
    } while (0)

#define TU_CHECK_STATUS(expr, expected)                                         \
    do {                                                                        \
        abft_status_t tu_st_ = (expr);                                          \
        if (tu_st_ != (expected)) {                                             \
            ++tu_failures;                                                      \
            fprintf(stderr, "%s:%d: %s returned %s, expected %s\n", __FILE__, __LINE__, #expr, \
                    abft_status_name(tu_st_), abft_status_name(expected));      \
        }                                                                       \
    } while (0)

#ifdef __cplusplus
}
#endif
#endif
