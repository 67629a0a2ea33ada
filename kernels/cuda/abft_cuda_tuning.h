/* abft CUDA backend: tile parameters of the tall-and-skinny kernels, as data, in one place.
 *
 * Private header (kernels/cuda only, plus bench/bench_encode.cu which sweeps overrides).
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
 * with the benchmark override applied. */
abft_cuda_kshape_t abft_cuda_tune_shape(const abft_cuda_tune_t *t, int kernel, int prec,
                                        double bytes);
/* Benchmarks only (tile sweeps): force lanes / bps (> 0) for every kernel and size;
 * (0, 0, 0) clears. Not thread-safe; not part of the library's API. */
void abft_cuda_tune_override(int rows_lanes, int cols_lanes, int bps);
/* Benchmarks and tests only (A/B of one mechanism against the code it replaced, in one
 * run): a mask of the features below, all on by default. Not thread-safe; not API. */
#define ABFT_CUDA_FEAT_FUSE 1u    /* split reduction inside the tsmm kernels (split_finish);
                                   * off: the separate reduce launch */
#define ABFT_CUDA_FEAT_XGLOBAL 2u /* rows kernel, explicit X of c = 2: weights read from
                                   * global memory (global_weights); off: staged */
#define ABFT_CUDA_FEAT_XASYNC 4u /* staged weights (rows kernel: not global, not fp32 c = 2
                                   * with |A|; cols kernel: not from the index) copied
                                   * asynchronously one stage ahead; off: staged while the
                                   * block waits */
#define ABFT_CUDA_FEAT_GATE 8u   /* the protected GEMM's screen decided on the device (a graph
                                   * with a conditional node, abft_cuda_gate.cu); off: the
                                   * host's round trip before the GEMM */
#define ABFT_CUDA_FEAT_R2 16u    /* fp32, explicit c = 2 weights with |A|: 2 rows per thread
                                   * (float2) in the cols kernel, and in the rows kernel for A
                                   * of 64 MiB to 1.5 GiB (weights staged asynchronously);
                                   * off: 4 rows (rows kernel: staged while the block waits) */
#define ABFT_CUDA_FEAT_PDL 32u   /* the pass kernels launched with programmatic stream
                                   * serialization (abft_cuda_common.cuh) on cc >= 9.0; off:
                                   * ordinary stream launches */
#define ABFT_CUDA_FEAT_ALL 63u
/* The largest matrix whose pass kernels are launched with PDL. Overlapping a kernel's
 * launch and prologue with the tail of the one before saves a few microseconds per pass, which
 * matters only while a pass is short; on larger matrices the passes measured slower with
 * it, for reasons not established (bench/NOTES-gemm.md v9). */
#define ABFT_CUDA_PDL_MAX_BYTES (256.0 * (1 << 20))
void abft_cuda_tune_features(unsigned mask);
unsigned abft_cuda_tune_features_get(void);

#ifdef __cplusplus
}
#endif
#endif /* ABFT_CUDA_TUNING_H */
