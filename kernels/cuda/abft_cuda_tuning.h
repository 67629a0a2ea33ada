/* abft CUDA backend: tile parameters of the tall-and-skinny kernels, as data, in one place.
 *
 * Private header (kernels/cuda only, plus bench/bench_encode.cu's tile sweep and the kernel
 * test, which force a shape through abft_cuda_tune_override).
 * One row per device class, keyed by compute capability and multiprocessor count; the first
 * row whose key the device satisfies wins, the last row is the fallback. Numbers come from
 * bench/bench_encode.cu sweeps (bench/NOTES-encode.md keeps each measurement). */
#ifndef ABFT_CUDA_TUNING_H
#define ABFT_CUDA_TUNING_H

#ifdef __cplusplus
extern "C" {
#endif

/* Compile-time shape shared by every tall-and-skinny kernel: threads per block and the
 * number of independent 16-byte loads each thread issues before it consumes the first. */
#define ABFT_CUDA_THREADS 256
#define ABFT_CUDA_UNROLL 4
/* Dynamic shared memory budget of one block (X staging and the in-block reduction). */
#define ABFT_CUDA_SMEM_BYTES 32768

/* Launch shape of one kernel: lanes (rows kernel: lanes along rows per column group;
 * cols kernel: lanes down each column, <= 32; unused by the dual kernel) and the blocks per
 * multiprocessor that the split of the long dimension aims for. */
typedef struct abft_cuda_kshape {
    int lanes;
    int bps;
} abft_cuda_kshape_t;

/* Size classes by the bytes of the data matrix: 0 small (<= small_bytes: launch and tail
 * effects dominate), 1 medium, 2 large (> large_bytes). */
typedef struct abft_cuda_tune {
    int cc_major_min; /* key: compute capability major >= this */
    int sms_min;      /* key: multiprocessor count >= this */
    long long small_bytes, large_bytes;
    abft_cuda_kshape_t rows[2][3]; /* [0 fp64, 1 fp32][size class] */
    abft_cuda_kshape_t cols[2][3];
    abft_cuda_kshape_t dual[2][3];
    int min_split;      /* thinnest slice of the long dimension per block (tsmm) */
    int dual_min_split; /* the same for the dual kernel's column slices */
} abft_cuda_tune_t;

/* The table row for the device (cached per ordinal). */
const abft_cuda_tune_t *abft_cuda_tune_get(int device, int *sm_count);
/* The shape for a kernel (0 rows, 1 cols, 2 dual), precision (0 fp64, 1 fp32) and size,
 * with the override below applied. */
abft_cuda_kshape_t abft_cuda_tune_shape(const abft_cuda_tune_t *t, int kernel, int prec,
                                        double bytes);
/* Not part of the library's API; not thread-safe. bench_encode's tile sweep (the measurements
 * behind the table) and the kernel test (one launch shape for two kernel instances): force
 * lanes / bps (> 0) for every kernel and size; (0, 0, 0) clears. Only the numbers of the
 * table change: the same kernels, chosen by the same rules. */
void abft_cuda_tune_override(int rows_lanes, int cols_lanes, int bps);
/* The largest matrix whose pass kernels are launched with PDL. Overlapping a kernel's
 * launch and prologue with the tail of the one before saves a few microseconds per pass, which
 * matters only while a pass is short; on larger matrices the passes measured slower with
 * it, for reasons not established (bench/NOTES-gemm.md v9). */
#define ABFT_CUDA_PDL_MAX_BYTES (256.0 * (1 << 20))

#ifdef __cplusplus
}
#endif
#endif /* ABFT_CUDA_TUNING_H */
