/* abft CUDA backend: compensated checksum sums (Dot2) for fp64 data, the tsmm and dual ops
 * with comp set (kernels/abft_kernels.h). The tight bound mode needs them: the rounding of a
 * plain fp64 checksum sum is first order beside an fp64 GEMM's rounding error, that of a
 * compensated one second order.
 *
 * Each weight column's sum is carried as an unevaluated pair (hi, lo): every product x·w
 * is split exactly into p + pe (an FMA), every addition hi + p into s + e (TwoSum, exact),
 * and the errors pe, e are summed into lo; pairs from different threads or chunks merge by
 * a TwoSum of their hi parts, the lo parts and that error added into lo. So
 * sum x·w = hi + (exact sum of the error terms) whatever the order of the merges, and the
 * result fl(hi + lo) is within u·|sum| + gamma_(2L)^2·sum|x·w| of the exact sum (L terms:
 * the error terms' sum has at most 2L terms, each of them at most u times a partial sum,
 * bounded as for any summation order). The absolute companions are plain sums.
 *
 * Two kernels: the chunk kernels (rows: one thread per row of M and chunk of its columns;
 * cols: one block per column of M and chunk of its rows, merged through shuffles and shared
 * memory) write (hi, lo, |.|) per chunk into the scratch, and combine_kernel merges the
 * chunks in order. Up to 4 weight columns (the two checksum weights and the random
 * checksum's two). */
#include <cuda_runtime.h>
#include <math.h>
#include <stdint.h>

#include "abft_cuda_common.cuh"

namespace {

constexpr int DC = 4;      /* weight columns at most */
constexpr int NT = 256;    /* threads per block */
constexpr int NPART = 3;   /* hi, lo, |.| per chunk, output and column */
constexpr int RU = 8;      /* rows_chunk_kernel: loads issued ahead of their sums */

struct dot2_job {
    const double *M;
    int64_t ldm, rows, cols; /* M stored rows x cols */
    int trans;               /* 0: Y = M·X (sums along a row), 1: Y = M^T·X (down a column) */
    int c;
    const double *X, *Xabs; /* NULL: the implicit weights [1, t+1] (X) or |X| (Xabs) */
    int64_t ldx, ldxabs;
    int64_t nchunk, chunk; /* the summed index in nchunk chunks of chunk */
    double *part;          /* nchunk x out x c x NPART */
    int abs;
};

/* hi + lo += x·w, both roundings' errors kept (no contraction: every step rounded alone) */
__device__ __forceinline__ void dot2_step(double &hi, double &lo, double x, double w) {
    const double p = __dmul_rn(x, w), pe = __fma_rn(x, w, -p);
    const double s = __dadd_rn(hi, p), z = __dsub_rn(s, hi);
    const double e = __dadd_rn(__dsub_rn(hi, __dsub_rn(s, z)), __dsub_rn(p, z));
    hi = s;
    lo = __dadd_rn(lo, __dadd_rn(pe, e));
}
/* (hi, lo) += (h2, l2) */
__device__ __forceinline__ void dot2_merge(double &hi, double &lo, double h2, double l2) {
    const double s = __dadd_rn(hi, h2), z = __dsub_rn(s, hi);
    const double e = __dadd_rn(__dsub_rn(hi, __dsub_rn(s, z)), __dsub_rn(h2, z));
    hi = s;
    lo = __dadd_rn(lo, __dadd_rn(l2, e));
}

__device__ __forceinline__ double weight(const dot2_job &j, int64_t t, int q) {
    return j.X != NULL ? j.X[t + q * j.ldx] : (q == 0 ? 1.0 : (double)(t + 1));
}
__device__ __forceinline__ double weight_abs(const dot2_job &j, int64_t t, int q) {
    return j.Xabs != NULL ? j.Xabs[t + q * j.ldxabs] : fabs(weight(j, t, q));
}

/* term t of the sum (the entry x of M) into every weight column's pair and |.| sum */
__device__ __forceinline__ void add_term(const dot2_job &j, double x, int64_t t, double *hi,
                                         double *lo, double *ab) {
#pragma unroll
    for (int q = 0; q < DC; ++q)
        if (q < j.c) {
            dot2_step(hi[q], lo[q], x, weight(j, t, q));
            if (j.abs) ab[q] += fabs(x) * weight_abs(j, t, q);
        }
}

__device__ __forceinline__ void store(const dot2_job &j, int64_t s, int64_t o, int64_t out,
                                      const double *hi, const double *lo, const double *ab) {
    double *d = j.part + ((size_t)s * (size_t)out + (size_t)o) * (size_t)j.c * NPART;
#pragma unroll
    for (int q = 0; q < DC; ++q) /* unrolled: the pairs stay in registers */
        if (q < j.c) d[q * NPART] = hi[q], d[q * NPART + 1] = lo[q], d[q * NPART + 2] = ab[q];
}

/* trans = 0: thread i sums row i over the columns of chunk blockIdx.y (adjacent threads read
 * adjacent rows: coalesced in column-major storage). */
__global__ void __launch_bounds__(NT) rows_chunk_kernel(dot2_job j) {
    const int64_t i = (int64_t)blockIdx.x * NT + threadIdx.x, s = blockIdx.y;
    if (i >= j.rows) return;
    double hi[DC] = {0, 0, 0, 0}, lo[DC] = {0, 0, 0, 0}, ab[DC] = {0, 0, 0, 0};
    const int64_t t0 = s * j.chunk, t1 = t0 + j.chunk < j.cols ? t0 + j.chunk : j.cols;
    int64_t t = t0;
    for (; t + RU <= t1; t += RU) { /* RU loads in flight, then the terms in order */
        double x[RU];
#pragma unroll
        for (int u = 0; u < RU; ++u) x[u] = j.M[i + (t + u) * j.ldm];
#pragma unroll
        for (int u = 0; u < RU; ++u) add_term(j, x[u], t + u, hi, lo, ab);
    }
    for (; t < t1; ++t) add_term(j, j.M[i + t * j.ldm], t, hi, lo, ab);
    store(j, s, i, j.rows, hi, lo, ab);
}

/* trans = 1: block (column v, chunk blockIdx.y), its threads striding down the rows of the
 * chunk, then merged: lanes by shuffles, warps in shared memory, in a fixed order. */
__global__ void __launch_bounds__(NT) cols_chunk_kernel(dot2_job j) {
    __shared__ double sh[NT / 32][DC][NPART];
    const int64_t v = blockIdx.x, s = blockIdx.y;
    double hi[DC] = {0, 0, 0, 0}, lo[DC] = {0, 0, 0, 0}, ab[DC] = {0, 0, 0, 0};
    const int64_t t0 = s * j.chunk, t1 = t0 + j.chunk < j.rows ? t0 + j.chunk : j.rows;
    for (int64_t t = t0 + threadIdx.x; t < t1; t += NT) add_term(j, j.M[t + v * j.ldm], t, hi, lo, ab);
#pragma unroll
    for (int q = 0; q < DC; ++q)
        for (int off = 16; off >= 1; off /= 2) {
            const double h2 = __shfl_down_sync(0xffffffffu, hi[q], off);
            const double l2 = __shfl_down_sync(0xffffffffu, lo[q], off);
            const double a2 = __shfl_down_sync(0xffffffffu, ab[q], off);
            dot2_merge(hi[q], lo[q], h2, l2);
            ab[q] += a2;
        }
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    if (lane == 0)
        for (int q = 0; q < DC; ++q) sh[warp][q][0] = hi[q], sh[warp][q][1] = lo[q], sh[warp][q][2] = ab[q];
    __syncthreads();
    if (threadIdx.x == 0) {
        for (int w = 1; w < NT / 32; ++w)
            for (int q = 0; q < DC; ++q) {
                dot2_merge(sh[0][q][0], sh[0][q][1], sh[w][q][0], sh[w][q][1]);
                sh[0][q][2] += sh[w][q][2];
            }
        double h[DC], l[DC], a[DC];
        for (int q = 0; q < DC; ++q) h[q] = sh[0][q][0], l[q] = sh[0][q][1], a[q] = sh[0][q][2];
        store(j, s, v, j.cols, h, l, a);
    }
}

/* Y(o, q) = fl(hi + lo) over the chunks merged in order; Yabs their plain sum. */
__global__ void combine_kernel(dot2_job j, int64_t out, double *Y, int64_t ldy, double *Yabs,
                               int64_t ldyabs) {
    const int64_t t = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= out * j.c) return;
    const int64_t o = t % out;
    const int q = (int)(t / out);
    double hi = 0.0, lo = 0.0, ab = 0.0;
    for (int64_t s = 0; s < j.nchunk; ++s) {
        const double *d = j.part + (((size_t)s * (size_t)out + (size_t)o) * (size_t)j.c + q) * NPART;
        dot2_merge(hi, lo, d[0], d[1]);
        ab += d[2];
    }
    /* where the plain sum is not finite (an Inf or NaN input, an overflow), the plain sum,
     * as the CPU backend gives it */
    Y[o + q * ldy] = isfinite(hi) ? __dadd_rn(hi, lo) : hi;
    if (Yabs != NULL) Yabs[o + q * ldyabs] = ab;
}

/* Y (out x c) = op(M)·X compensated, Yabs = |op(M)|·Xabs plain (when Yabs != NULL). */
abft_status_t dot2_run(const abft_kctx_t *ctx, const double *M, int64_t ldm, int64_t rows,
                       int64_t cols, int trans, int64_t c, const double *X, int64_t ldx,
                       const double *Xabs, int64_t ldxabs, double *Y, int64_t ldy, double *Yabs,
                       int64_t ldyabs) {
    if (c < 1 || c > DC) return ABFT_STATUS_INVALID_VALUE;
    const int64_t out = trans ? cols : rows, len = trans ? rows : cols;
    if (out == 0) return ABFT_STATUS_SUCCESS;
    cudaStream_t st = abft_cuda_stream(ctx);
    if (len == 0) { /* empty sums */
        ABFT_CUDA_TRY(cudaMemset2DAsync(Y, sizeof(double) * (size_t)ldy, 0,
                                        sizeof(double) * (size_t)out, (size_t)c, st));
        if (Yabs != NULL)
            ABFT_CUDA_TRY(cudaMemset2DAsync(Yabs, sizeof(double) * (size_t)ldyabs, 0,
                                            sizeof(double) * (size_t)out, (size_t)c, st));
        return ABFT_STATUS_SUCCESS;
    }
    /* about four waves of blocks on a large GPU, chunks of at least NT terms */
    const int64_t want = 1056;
    const int64_t bx = trans ? cols : (rows + NT - 1) / NT;
    int64_t nchunk = (want + bx - 1) / bx, most = (len + NT - 1) / NT;
    if (nchunk > most) nchunk = most;
    if (nchunk < 1) nchunk = 1;
    if (nchunk > 65535) nchunk = 65535;
    const int64_t chunk = (len + nchunk - 1) / nchunk;
    nchunk = (len + chunk - 1) / chunk;
    if (bx > 0x7fffffff) return ABFT_STATUS_NOT_SUPPORTED;
    void *scr = NULL;
    ABFT_TRY_STATUS(abft_cuda_scratch(ctx, sizeof(double) * (size_t)(nchunk * out * c * NPART), &scr));
    dot2_job j = {M, ldm, rows, cols, trans, (int)c, X, Xabs, ldx, ldxabs, nchunk, chunk,
                  (double *)scr, Yabs != NULL};
    const dim3 grid((unsigned)bx, (unsigned)nchunk);
    if (trans)
        cols_chunk_kernel<<<grid, NT, 0, st>>>(j);
    else
        rows_chunk_kernel<<<grid, NT, 0, st>>>(j);
    ABFT_CUDA_LAUNCHED();
    combine_kernel<<<(unsigned)((out * c + 255) / 256), 256, 0, st>>>(j, out, Y, ldy, Yabs, ldyabs);
    ABFT_CUDA_LAUNCHED();
    return ABFT_STATUS_SUCCESS;
}

} // namespace

extern "C" abft_status_t abft_cuda_tsmm_dot2(const abft_kctx_t *ctx, const abft_tsmm_args_t *a) {
    return dot2_run(ctx, (const double *)a->A, a->lda, a->rows, a->cols, a->trans, a->c, a->X,
                    a->ldx, a->Xabs, a->ldxabs, a->Y, a->ldy, a->Yabs, a->ldyabs);
}

/* The dual op compensated: its two sides as two passes over M (two reads where the plain
 * dual kernel takes one; the CPU backend's dual does the same). */
extern "C" abft_status_t abft_cuda_dual_dot2(const abft_kctx_t *ctx, const abft_dual_args_t *a) {
    if (a->P != NULL)
        ABFT_TRY_STATUS(dot2_run(ctx, (const double *)a->M, a->ldm, a->rows, a->cols, 0, a->c1,
                                 a->X, a->ldx, a->Xabs, a->ldxabs, a->P, a->ldp, a->Pabs, a->ldpabs));
    if (a->Q != NULL)
        ABFT_TRY_STATUS(dot2_run(ctx, (const double *)a->M, a->ldm, a->rows, a->cols, 1, a->c2,
                                 a->Z, a->ldz, a->Zabs, a->ldzabs, a->Q, a->ldq, a->Qabs, a->ldqabs));
    return ABFT_STATUS_SUCCESS;
}
