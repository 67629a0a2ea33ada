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

typedef struct abft_cuda_tune {
    int cc_major_min; /* key: compute capability major >= this */
    int sms_min;      /* key: multiprocessor count >= this */
    /* trans = N (row checksums): lanes along rows per column group; the block holds
     * 256 / lanes column groups whose partial sums are combined in shared memory. */
    int rows_lanes_d, rows_lanes_s;
    /* trans = T (column checksums): lanes along rows per column (<= 32). */
    int cols_lanes_d, cols_lanes_s;
    /* Blocks per multiprocessor the split along the long dimension aims for. */
    int blocks_per_sm;
    /* Smallest slice of the long dimension one block takes when it is split. */
    int min_split;
} abft_cuda_tune_t;

/* The table row for the current device (cached per device ordinal), with any override set
 * by abft_cuda_tune_override applied. */
const abft_cuda_tune_t *abft_cuda_tune_get(int device, int *sm_count);
/* Benchmarks only: replace the fields of the active row that are > 0 in `t`
 * (NULL clears every override). Not thread-safe; not part of the library's API. */
void abft_cuda_tune_override(const abft_cuda_tune_t *t);

#ifdef __cplusplus
}
#endif
#endif /* ABFT_CUDA_TUNING_H */
