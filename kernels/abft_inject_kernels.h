/* abft: the bit-flip kernel signatures, implemented by kernels/cpu/abft_cpu_inject.c and
 * kernels/cuda/abft_cuda_inject.cu. Private header: never installed.
 *
 * A firing turns a stream of 32-bit random words (xoshiro256** on the CPU, cuRAND Philox
 * on the GPU) into positions and bits with the inline mapping below, shared by both
 * backends so that they agree on what a draw means, then flips the bits in place and
 * records the old and new words. Arguments are checked by inject/ before the call. */
#ifndef ABFT_INJECT_KERNELS_H
#define ABFT_INJECT_KERNELS_H

#include <stddef.h>
#include <stdint.h>

#include "abft_kernels.h"

#ifdef __CUDACC__
#define ABFT_INJECT_HD __host__ __device__ static inline
#else
#define ABFT_INJECT_HD static inline
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* Largest elements per firing (matches ABFT_INJECT_MAX_ELEMS). */
#define ABFT_INJECT_KMAX 64
/* Random words one element consumes: two for the 64-bit position, one for the bit. */
#define ABFT_INJECT_WORDS_PER_ELEM 3

/* One flip as the kernels record it. */
typedef struct abft_inject_rec {
    int64_t row, col;
    int32_t bit, width;
    uint64_t old_bits, new_bits;
} abft_inject_rec_t;

typedef struct abft_inject_args {
    abft_prec_t prec;       /* word size: 8 (D) or 4 (S) bytes */
    void *ptr;              /* rows x cols, leading dimension ld, backend memory */
    int64_t rows, cols, ld;
    int64_t row, col;       /* fixed row / column, or -1 for uniform */
    int32_t bit_lo, bit_hi; /* the first flipped bit is uniform in [bit_lo, bit_hi] */
    int32_t width;          /* 1 or 2 */
    int32_t nelems;         /* 1..ABFT_INJECT_KMAX, <= number of candidates */
    uint64_t seed;          /* seed of this firing's draw stream */
    abft_inject_rec_t *rec; /* host memory, nelems records out */
    void **state;           /* backend state kept between firings (the CUDA generator and
                               device buffers); *state == NULL at first use */
} abft_inject_args_t;

/* Map the draws of element e (words w[3e..3e+2]) to a candidate position and a bit. Taken
 * positions (taken[0..e-1], candidate indices) move to the next free one, wrapping, so the
 * elements are distinct without drawing again. */
ABFT_INJECT_HD void abft_inject_map(const uint32_t *w, int e, const int64_t *taken,
                                    int64_t ncand, int32_t bit_lo, int32_t bit_hi,
                                    int32_t width, int32_t nbits, int64_t *cand,
                                    int32_t *bit) {
    uint64_t r64 = ((uint64_t)w[3 * e] << 32) | (uint64_t)w[3 * e + 1];
    int64_t c = (int64_t)(r64 % (uint64_t)ncand);
    for (int again = 1; again;) {
        again = 0;
        for (int t = 0; t < e; ++t)
            if (taken[t] == c) {
                c = (c + 1) % ncand;
                again = 1;
                break;
            }
    }
    int32_t b = bit_lo + (int32_t)(w[3 * e + 2] % (uint32_t)(bit_hi - bit_lo + 1));
    if (b > nbits - width) b = nbits - width;
    *cand = c;
    *bit = b;
}

/* Candidate index -> (row, col): candidates run column-major over the free dimensions. */
ABFT_INJECT_HD void abft_inject_pos(int64_t cand, int64_t rows, int64_t row, int64_t col,
                                    int64_t *i, int64_t *j) {
    int64_t nr = row < 0 ? rows : 1;
    *i = row < 0 ? cand % nr : row;
    *j = col < 0 ? cand / nr : col;
}

ABFT_INJECT_HD int64_t abft_inject_ncand(int64_t rows, int64_t cols, int64_t row, int64_t col) {
    return (row < 0 ? rows : 1) * (col < 0 ? cols : 1);
}

ABFT_INJECT_HD uint64_t abft_inject_mask(int32_t bit, int32_t width) {
    return (((uint64_t)1 << width) - 1) << bit;
}

/* ---- CPU backend ----------------------------------------------------------------------- */
abft_status_t abft_cpu_inject(const abft_kctx_t *ctx, const abft_inject_args_t *a);
/* Release what abft_cpu_inject kept in *state (nothing today). */
void abft_cpu_inject_release(void *state);
/* The CPU draw stream: n words of xoshiro256** seeded through splitmix64 from seed. */
void abft_cpu_inject_words(uint64_t seed, uint32_t *w, int n);

/* ---- CUDA backend (present when ABFT_HAVE_CUDA) ---------------------------------------- */
/* cuRAND Philox draws on ctx->stream, a one-thread kernel maps and flips, the records come
 * back to host memory; synchronizes the stream before returning. */
abft_status_t abft_cuda_inject(const abft_kctx_t *ctx, const abft_inject_args_t *a);
/* Destroy the generator and device buffers kept in state. */
void abft_cuda_inject_release(void *state);

#ifdef __cplusplus
}
#endif
#endif /* ABFT_INJECT_KERNELS_H */
