/* The input fault after encoding that turns its row's guard in the tight mode's second stage
 * (docs/bound.md, "Two stages"), built once for tests/cpu/test_tight.c and
 * tests/gpu/test_tight_gpu.c: fp64, m x k A (column-major, lda = m) and
 * k x n B (ldb = k), row 0 of A with 8 distinct magnitudes at the guard's quantization on
 * its first block of 16 terms, one at a bin's bottom (A(0, 12..13)) and one at the next
 * bin's top (A(0, 14)), B two-valued there. Returns the change of A(0, 14) that merges the
 * two: it drops the row's count to 7, which sends the row to the worst case in a full pass
 * that reads it. */
#ifndef ABFT_TIGHT_GUARD_CASE_H
#define ABFT_TIGHT_GUARD_CASE_H

#include <stdint.h>
#include <string.h>

#include "abft_tight_common.h"
#include "testutil.h"

static inline double tu_bits_to_d(uint64_t b) {
    double x;
    memcpy(&x, &b, sizeof x);
    return x;
}

static inline double tu_guard_case(int64_t m, int64_t n, int64_t k, double *A, double *B) {
    const int r = abft_tight_qbits(0x1p-53, k), drop = 52 - r;
    tu_rng_t rg;
    tu_rng_init(&rg, 7);
    for (int64_t x = 0; x < m * k; ++x) A[x] = tu_range(&rg, 1.0, 2.0);
    for (int64_t j = 0; j < n; ++j) {
        const double c = tu_range(&rg, 1.0, 2.0);
        for (int64_t l = 0; l < k; ++l)
            B[l + j * k] = l < 16 ? c * ((tu_next(&rg) & 1) ? 1.5 : 1.0) : tu_range(&rg, 1.0, 2.0);
    }
    double w[8];
    for (int q = 0; q < 7; ++q) w[q] = tu_range(&rg, 1.0, 2.0);
    const uint64_t key = abft_tight_qkey(w[6], r);
    w[6] = tu_bits_to_d((key << drop) - (1ull << (drop - 1)));          /* a bin's bottom */
    w[7] = tu_bits_to_d(((key + 1) << drop) + (1ull << (drop - 1)) - 1); /* the next one's top */
    for (int q = 0; q < 7; ++q) A[0 + (2 * q) * m] = A[0 + (2 * q + 1) * m] = w[q];
    A[0 + 14 * m] = w[7];
    A[0 + 15 * m] = w[0];
    return w[6] - w[7];
}

#endif
