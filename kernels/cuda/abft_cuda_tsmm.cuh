/* abft CUDA backend: tall-and-skinny kernels (TSM2R family), written once as templates on
 * the data type T (float, double), the bucket CB of the small dimension c (2, 4, 8, 16; the
 * columns q >= c of a bucket are masked with zero weights) and ABS (whether |A|·Xabs is
 * accumulated from the same loads). Instantiated in abft_cuda_tsmm.cu. Private.
 *
 * Why this shape: on the H100 one thread per row leaves far too few
 * bytes in flight, so the long dimension is split, both inside a block (column groups whose
 * sums meet in shared memory) and across blocks (blockIdx.y slices whose partials a second
 * kernel adds in a fixed order). Nothing uses floating-point atomics: the result is a
 * deterministic function of the inputs and the launch shape, which depends only on the sizes
 * and the device, so golden runs and campaign runs agree bit for bit.
 *
 * Loads are 16 bytes (double2 / float4) when the base pointer and lda allow it, with
 * ABFT_CUDA_UNROLL of them issued before the first is consumed; otherwise (misaligned base,
 * odd lda, the ragged last rows) the same elements are loaded one by one. Accumulation is in
 * fp64 for both data types. All offsets are 64-bit. */
#ifndef ABFT_CUDA_TSMM_CUH
#define ABFT_CUDA_TSMM_CUH

#include <cuda_runtime.h>
#include <stdint.h>

#include <type_traits>

#include "abft_cuda_common.cuh"
#include "abft_cuda_tuning.h"

namespace abft_cuda {

constexpr int NT = ABFT_CUDA_THREADS;
constexpr int UNR = ABFT_CUDA_UNROLL;

/* Elements of T in one 16-byte load. */
template <typename T>
struct vec_width {
    static constexpr int value = 16 / (int)sizeof(T);
};

/* Rows one thread owns in the row-oriented kernels: a full 16-byte vector unless the
 * accumulators (R x CB, twice with ABS) would pass 64 doubles, then fewer. */
template <typename T, int CB, bool ABS, int SCALE>
struct rows_per_thread {
    static constexpr int RMAX = vec_width<T>::value;
    static constexpr int NACC = CB * (ABS ? 2 : 1) * SCALE;
    static constexpr int value = RMAX * NACC <= 64 ? RMAX : (RMAX / 2) * NACC <= 64 ? RMAX / 2 : 1;
};

/* ---- loads ----------------------------------------------------------------------------- */

/* R contiguous elements at p, as one load of R*sizeof(T) bytes (p aligned to that). */
template <typename T, int R>
__device__ __forceinline__ void load_vec(const T *__restrict__ p, T (&v)[R]) {
    if constexpr (R * sizeof(T) == 16 && sizeof(T) == 8) {
        double2 x = __ldg(reinterpret_cast<const double2 *>(p));
        v[0] = x.x;
        v[1] = x.y;
    } else if constexpr (R * sizeof(T) == 16 && sizeof(T) == 4) {
        float4 x = __ldg(reinterpret_cast<const float4 *>(p));
        v[0] = x.x;
        v[1] = x.y;
        v[2] = x.z;
        v[3] = x.w;
    } else if constexpr (R == 2 && sizeof(T) == 4) {
        float2 x = __ldg(reinterpret_cast<const float2 *>(p));
        v[0] = x.x;
        v[1] = x.y;
    } else {
#pragma unroll
        for (int r = 0; r < R; ++r) v[r] = __ldg(p + r);
    }
}

/* The first `nvalid` of R elements at p one by one (any alignment), zeros after. */
template <typename T, int R>
__device__ __forceinline__ void load_part(const T *__restrict__ p, int nvalid, T (&v)[R]) {
#pragma unroll
    for (int r = 0; r < R; ++r) v[r] = r < nvalid ? __ldg(p + r) : T(0);
}

/* ---- parameters ---------------------------------------------------------------------- */

struct tsmm_params {
    const void *A;
    int64_t m, n, lda;
    const double *X;
    int64_t ldx;
    const double *Xa;
    int64_t ldxa;
    int implicit; /* X == NULL: weights [1, j+1] */
    int c;
    int lanes;     /* rows kernel: lanes along rows per column group; cols kernel: per column */
    int64_t chunk; /* slice of the long dimension per blockIdx.y */
    int stage;     /* columns (rows kernel) / rows (cols kernel) per pass, X staged for them
                    * (implicit cols kernel: nothing staged, the whole slice) */
    int vec_ok;    /* base pointer and lda allow the wide loads */
    double *Y;
    int64_t ldy;
    double *Ya;
    int64_t ldya;
    double *part; /* partials [split][c or 2c][len] when gridDim.y > 1 */
    unsigned *count; /* arrival counters, one per tile (blockIdx.x), or NULL: split_finish */
};

struct dual_params {
    const void *M;
    int64_t m, n, ldm;
    const double *X;
    int64_t ldx;
    const double *Xa;
    int64_t ldxa;
    int implicit_x, c1;
    const double *Z;
    int64_t ldz;
    const double *Za;
    int64_t ldza;
    int implicit_z, c2;
    int64_t chunk; /* columns per blockIdx.y */
    int stage;     /* columns per pass */
    int vec_ok;
    double *P;
    int64_t ldp;
    double *Pa;
    int64_t ldpa;
    double *Q;
    int64_t ldq;
    double *Qa;
    int64_t ldqa;
    double *part_p; /* [split][2*c1][m] when gridDim.y > 1 */
    double *part_q; /* [row tile][2*c2][n] when gridDim.x > 1 */
};

/* ---- adding the split partials in a fixed order ---------------------------------------
 * A job: len outputs per column o of NOc = c·(1 + abs), each the sum over S partials
 * part[sp][o][i], sp = 0, 1, ..., S-1 in this order, written to Y (o < c) or Ya. */
struct reduce_job {
    const double *part; /* [S][NOc][len] */
    int S;
    int64_t len;
    int c, abs; /* NOc = c * (1 + abs) */
    double *Y;
    int64_t ldy;
    double *Ya; /* may be NULL: the abs half is then dropped */
    int64_t ldya;
};

/* The job of a tall-and-skinny launch split S ways: len outputs per column into Y (and Ya
 * when abs). */
__host__ __device__ __forceinline__ reduce_job tsmm_job(const tsmm_params &p, int S,
                                                         int64_t len, bool abs) {
    return reduce_job{p.part, S, len, p.c, abs ? 1 : 0, p.Y, p.ldy, p.Ya, p.ldya};
}

/* Outputs [lo, hi) of job j, e = the output's index in the range (all NOc columns). L2:
 * read the partials through L2 only (__ldcg: the in-kernel reduction reads what other
 * blocks of the same launch wrote); the separate launch reads them as plain loads. */
template <bool L2>
__device__ __forceinline__ void reduce_outputs(const reduce_job &j, int64_t lo, int64_t hi,
                                               int64_t e) {
    const int64_t w = hi - lo;
    const int o = (int)(e / w);
    const int64_t i = lo + (e - (int64_t)o * w);
    const int NOc = j.c * (j.abs ? 2 : 1);
    const size_t stride = (size_t)NOc * (size_t)j.len;
    const double *q = j.part + (size_t)o * (size_t)j.len + i;
    double s = 0.0;
    int sp = 0;
    if constexpr (!L2) {
        /* the separate launch: its threads do nothing else, so each has RB loads in flight
         * at once (the sum is still taken in slice order) */
        constexpr int RB = 8;
        for (; sp + RB <= j.S; sp += RB) {
            double v[RB];
#pragma unroll
            for (int u = 0; u < RB; ++u) v[u] = q[(size_t)(sp + u) * stride];
#pragma unroll
            for (int u = 0; u < RB; ++u) s += v[u];
        }
    }
    for (; sp < j.S; ++sp) s += L2 ? __ldcg(q + (size_t)sp * stride) : q[(size_t)sp * stride];
    if (o < j.c)
        j.Y[i + o * j.ldy] = s;
    else if (j.Ya != NULL)
        j.Ya[i + (o - j.c) * j.ldya] = s;
}

/* The split reduction inside the kernel that wrote the partials, for one group of blocks
 * (the S slices of one tile): every block, once its partials for outputs [lo, hi) are
 * written, counts itself in; the last to arrive adds the group's partials in slice order,
 * as the separate reduce_kernel does (the same bits), and sets the counter back to zero for
 * the next launch. Called by every thread of the block, after its last partial store.
 * Used by the rows and cols kernels when that block's share is small (run_tsmm: at most
 * FUSE_LOADS partial loads), since it runs on one SM at the end; larger ones, and the dual
 * kernel's, go to reduce_kernel. */
constexpr int64_t FUSE_LOADS = 8192;
__device__ __forceinline__ void split_finish(unsigned *count, const reduce_job &j, int64_t lo,
                                             int64_t hi) {
    __shared__ int last;
    __threadfence(); /* this thread's partials are visible device-wide before it counts */
    __syncthreads();
    if (threadIdx.x == 0) {
        const unsigned before = atomicAdd(count, 1u);
        last = before + 1u == (unsigned)j.S;
        if (last) *count = 0u; /* every block of the group has arrived */
    }
    __syncthreads();
    if (!last) return;
    __threadfence(); /* the other blocks' partials, read through L2 (__ldcg) */
    const int NOc = j.c * (j.abs ? 2 : 1);
    for (int64_t e = threadIdx.x; e < (hi - lo) * NOc; e += NT)
        reduce_outputs<true>(j, lo, hi, e);
}

/* Weight (l, q) of an explicit X or of the implicit V = [1, l+1]; 0 for q >= c. */
__device__ __forceinline__ double weight_at(const double *X, int64_t ldx, int implicit, int c,
                                            int64_t l, int q) {
    if (q >= c) return 0.0;
    if (implicit) return q == 0 ? 1.0 : (double)(l + 1);
    return X[l + (int64_t)q * ldx];
}
__device__ __forceinline__ double weight_abs_at(const double *Xa, int64_t ldxa, double w, int c,
                                                int64_t l, int q) {
    if (q >= c) return 0.0;
    if (Xa != NULL) return Xa[l + (int64_t)q * ldxa];
    return fabs(w);
}

/* ---- weights of the row sweep -----------------------------------------------------------
 * The row sweep (rows kernel, and the P side of the dual kernel) asks a weight source for
 * the weights (q, q+1) of column jb + u of the current stage, w() for A·X and wa() for
 * |A|·Xa. Three sources, one sweep:
 *   staged_weights:   X (and Xa) for the stage's columns in shared memory as [j][q], one
 *                     16-byte broadcast read giving two weights;
 *   implicit_weights: V = [1, l+1] (c = 2, |V| = V) computed in registers from the column
 *                     index l = col0 + jb + u (exact below 2^53), once per column for all R
 *                     rows and both outputs; no staging, no barriers, half the live registers
 *                     of the fp32 kernel with |A|. The weight 1 is applied as x + s
 *                     (unit0: nvcc does not fold fma(x, 1, s), and the DFMA costs
 *                     registers), which is the same operation: both sources give the same
 *                     bits for the same launch shape;
 *   global_weights:   an explicit X of c = 2 read from global memory (below). */
template <int CB>
struct staged_weights {
    static constexpr bool unit0 = false; /* w(q = 0).x is 1 for every column */
    const double *xs, *xas;
    __device__ __forceinline__ double2 w(int jb, int u, int q) const {
        const double *xr = xs + (jb + u) * CB;
        return *reinterpret_cast<const double2 *>(xr + q);
    }
    __device__ __forceinline__ double2 wa(int jb, int u, int q) const {
        const double *xa = xas + (jb + u) * CB;
        return *reinterpret_cast<const double2 *>(xa + q);
    }
};

struct implicit_weights {
    static constexpr bool unit0 = true;
    int64_t col0; /* global index of the stage's first column */
    __device__ __forceinline__ double2 w(int jb, int u, int q) const {
        return make_double2(1.0, (double)(col0 + jb + 1) + (double)u);
    }
    __device__ __forceinline__ double2 wa(int jb, int u, int q) const { return w(jb, u, q); }
};

/* global_weights: an explicit X of c = 2 (and Xa, or |X| when XA is false) read where it
 * lies, through the read-only path: the lanes of a column group ask for the same word, so a
 * warp's weight load is one or two L1 wavefronts after the first touch. Nothing staged: no
 * barriers and no block without loads of A in flight while X is copied (the staged source
 * copies `stage` columns with one dependent L2 round trip per 256 weights). The same weights
 * as the staged source, 0 past the stage's end, in the same FMAs: the same bits. */
template <bool XA>
struct global_weights {
    static constexpr bool unit0 = false;
    const double *x0, *x1, *xa0, *xa1; /* column 0 and 1 of X and Xa at the stage's start */
    int ns;                            /* columns in the stage */
    __device__ __forceinline__ double2 w(int jb, int u, int) const {
        const int j = jb + u;
        if (j >= ns) return make_double2(0.0, 0.0);
        return make_double2(__ldg(x0 + j), __ldg(x1 + j));
    }
    __device__ __forceinline__ double2 wa(int jb, int u, int q) const {
        if constexpr (!XA) {
            const double2 v = w(jb, u, q);
            return make_double2(fabs(v.x), fabs(v.y));
        } else {
            const int j = jb + u;
            if (j >= ns) return make_double2(0.0, 0.0);
            return make_double2(__ldg(xa0 + j), __ldg(xa1 + j));
        }
    }
};

/* acc[r][q] += v[r]·w(q) and acca[r][q] += |v[r]|·wa(q) for one loaded column. */
template <typename T, int CB, bool ABS, int R, class W>
__device__ __forceinline__ void accumulate_rows(const T (&v)[R], const W &wt, int jb, int u,
                                                double (&acc)[R][CB],
                                                double (&acca)[ABS ? R : 1][CB]) {
#pragma unroll
    for (int q = 0; q < CB; q += 2) {
        const double2 w = wt.w(jb, u, q);
        double2 wa;
        if constexpr (ABS) wa = wt.wa(jb, u, q);
#pragma unroll
        for (int r = 0; r < R; ++r) {
            const double x = (double)v[r];
            if (W::unit0 && q == 0)
                acc[r][q] += x;
            else
                acc[r][q] = fma(x, w.x, acc[r][q]);
            acc[r][q + 1] = fma(x, w.y, acc[r][q + 1]);
            if constexpr (ABS) {
                const double ax = fabs(x);
                if (W::unit0 && q == 0)
                    acca[r][q] += ax;
                else
                    acca[r][q] = fma(ax, wa.x, acca[r][q]);
                acca[r][q + 1] = fma(ax, wa.y, acca[r][q + 1]);
            }
        }
    }
}

/* ---- trans = N: Y = A·X (row checksums) ------------------------------------------------
 * Block: `lanes` threads along rows (R rows each, so a tile of lanes*R rows) times
 * G = NT/lanes column groups. Group g takes columns g*U, g*U + G*U, ... of the block's slice
 * [k0, k1), U at a time; the weights come from a weight source (above): X staged for `stage`
 * columns at a time, or the implicit V. The G partial sums of each row meet in shared
 * memory, summed in group order. */
/* NS steps of a group's columns are loaded before the first is summed (NS·UNR loads in
 * flight); the steps are summed in their order, a step past the stage not at all: the same
 * operations in the same order as NS = 1. */
template <typename T, int CB, bool ABS, int R, bool VEC, class W, int NS = 1>
__device__ __forceinline__ void rows_body(const T *__restrict__ base, int64_t lda, int jb0,
                                          int ns, int jstep, const W &wt, int nvalid,
                                          double (&acc)[R][CB],
                                          double (&acca)[ABS ? R : 1][CB]) {
    for (int jb = jb0; jb < ns; jb += NS * jstep) {
        T v[NS][UNR][R];
#pragma unroll
        for (int t = 0; t < NS; ++t)
#pragma unroll
            for (int u = 0; u < UNR; ++u) {
                const int j = jb + t * jstep + u;
                if (j < ns) {
                    const T *pa = base + (int64_t)j * lda;
                    if (VEC)
                        load_vec<T, R>(pa, v[t][u]);
                    else
                        load_part<T, R>(pa, nvalid, v[t][u]);
                } else {
#pragma unroll
                    for (int r = 0; r < R; ++r) v[t][u][r] = T(0);
                }
            }
#pragma unroll
        for (int t = 0; t < NS; ++t)
            if (t == 0 || jb + t * jstep < ns)
#pragma unroll
                for (int u = 0; u < UNR; ++u)
                    accumulate_rows<T, CB, ABS, R>(v[t][u], wt, jb + t * jstep, u, acc, acca);
    }
}

/* ---- asynchronous staging (cp.async, sm_80 and later) -----------------------------------
 * copy8: 8 bytes from global src to shared dst without passing through registers; with
 * ok = false the 8 bytes are zero (src is not read). wait_all_but_latest: this thread's
 * copies of every committed group but the latest have landed. Before sm_80: plain loads. */
__device__ __forceinline__ void copy8_async(double *dst, const double *src, bool ok) {
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 800
    const unsigned d = (unsigned)__cvta_generic_to_shared(dst);
    asm volatile("cp.async.ca.shared.global [%0], [%1], 8, %2;\n" ::"r"(d), "l"(src),
                 "r"(ok ? 8 : 0)
                 : "memory");
#else
    *dst = ok ? *src : 0.0;
#endif
}
__device__ __forceinline__ void copies_commit() {
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 800
    asm volatile("cp.async.commit_group;\n" ::: "memory");
#endif
}
__device__ __forceinline__ void wait_all_but_latest() {
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 800
    asm volatile("cp.async.wait_group 1;\n" ::: "memory");
#endif
}

/* Weights for the rows (cols kernel) or columns (rows kernel) l = s0 .. s0+ns-1 of X
 * (ns <= S) into one buffer of two parts, X then Xa, each S x CB with weight (q, l - s0) at
 * q·qs + (l - s0)·ls: [q][S] for the cols kernel (qs = S, ls = 1), [l][q] for the rows
 * kernel (qs = 1, ls = CB), zeros past ns and c. Explicit X and Xa by asynchronous copies;
 * an implicit X (with an explicit Xa) computed and stored; |X| where ABS has no Xa is taken
 * after the copies land (abs_from_staged). Commits the copies as one group. */
template <int CB, bool ABS>
__device__ __forceinline__ void stage_async(const tsmm_params &p, double *buf, int S, int64_t s0,
                                            int ns, int qs, int ls) {
    double *bufa = buf + (size_t)S * CB;
    for (int idx = threadIdx.x; idx < S * CB; idx += NT) {
        const int q = idx / S, r = idx - q * S, d = q * qs + r * ls;
        const bool ok = q < p.c && r < ns;
        const int64_t i = s0 + r;
        if (p.implicit)
            buf[d] = ok ? weight_at(p.X, p.ldx, 1, p.c, i, q) : 0.0;
        else
            copy8_async(buf + d, ok ? p.X + i + (int64_t)q * p.ldx : p.X, ok);
        if (ABS && p.Xa != NULL)
            copy8_async(bufa + d, ok ? p.Xa + i + (int64_t)q * p.ldxa : p.Xa, ok);
    }
    copies_commit();
}
/* After the wait: |X| for this thread's own elements (their X copies are its own). */
template <int CB>
__device__ __forceinline__ void abs_from_staged(double *buf, int S, int qs, int ls) {
    double *bufa = buf + (size_t)S * CB;
    for (int idx = threadIdx.x; idx < S * CB; idx += NT) {
        const int q = idx / S, d = q * qs + (idx - q * S) * ls;
        bufa[d] = fabs(buf[d]);
    }
}

/* Weight source of a kernel instance (template WS): X staged in shared memory (any c), the
 * implicit V, an explicit X of c = 2 read from global memory (rows kernel, c-bucket 2 only),
 * or X staged in shared memory by asynchronous copies one stage ahead (both kernels). */
constexpr int WS_STAGED = 0, WS_IMPLICIT = 1, WS_GLOBAL = 2, WS_ASYNC = 3;

/* Blocks per SM that ptxas must leave room for: 4 for the implicit instances; for the
 * explicit fp32 c = 2 instance with |A| (the protected GEMM's pass over A in fp32) 3 at 4
 * rows per thread (90 -> 80 registers, 2 -> 3 blocks, no spill; asking for 4 spills 76
 * bytes), 4 at 2 rows (64 registers; the async instance without spills). */
template <typename T, int CB, bool ABS, int WS, int RR>
constexpr int rows_min_blocks() {
    return WS == WS_IMPLICIT ? 4 : (sizeof(T) == 4 && ABS && CB == 2) ? (RR == 2 ? 4 : 3) : 0;
}

/* The fp32 instances at 2 rows per thread with asynchronous staging (RR = 2: the row
 * checksums' pass over A) load 2 steps of their columns before summing the first: 64 bytes
 * in flight per thread instead of 32, at no register cost (64, no spills), for a pass that
 * waits on global loads; the same operations in the same order, so the same bits
 * (bench/NOTES-encode.md v13). */
constexpr int ROWS_R2_STEPS = 2;
/* RR > 0: rows per thread forced (fp32 c = 2 with |A| and explicit X: 2, see run_tsmm). */
template <typename T, int CB, bool ABS, int WS = WS_STAGED, int RR = 0>
__global__ void __launch_bounds__(NT, rows_min_blocks<T, CB, ABS, WS, RR>())
    tsmm_n_kernel(const tsmm_params p) {
    abft_pdl_enter();
    static_assert(WS == WS_STAGED || WS == WS_ASYNC || CB == 2,
                  "implicit and global weights are two columns");
    constexpr int R = RR > 0 ? RR : rows_per_thread<T, CB, ABS, 1>::value;
    constexpr int NO = CB * (ABS ? 2 : 1);
    extern __shared__ double smem[];
    const T *__restrict__ A = static_cast<const T *>(p.A);
    const int tid = threadIdx.x;
    const int lanes = p.lanes;
    const int rv = tid % lanes, g = tid / lanes, G = NT / lanes;
    const int TR = lanes * R;
    const int64_t row0 = (int64_t)blockIdx.x * TR + (int64_t)rv * R;
    const int64_t k0 = (int64_t)blockIdx.y * p.chunk;
    const int64_t k1 = min(p.n, k0 + p.chunk);
    const int64_t left = p.m - row0;
    const int nvalid = left <= 0 ? 0 : (left >= R ? R : (int)left);
    const bool full = nvalid == R && p.vec_ok;

    double acc[R][CB];
    double acca[ABS ? R : 1][CB];
#pragma unroll
    for (int r = 0; r < R; ++r)
#pragma unroll
        for (int q = 0; q < CB; ++q) acc[r][q] = 0.0;
#pragma unroll
    for (int r = 0; r < (ABS ? R : 1); ++r)
#pragma unroll
        for (int q = 0; q < CB; ++q) acca[r][q] = 0.0;

    const int KS = p.stage;
    double *xs = smem;
    double *xas = smem + (size_t)KS * CB;
    if constexpr (WS == WS_ASYNC) {
        /* As in the cols kernel: two buffers, the next stage's copies in flight while this
         * stage is summed (layout [j][q], the staged source's). */
        const size_t SB = (size_t)KS * NO;
        const bool absx = ABS && p.Xa == NULL;
        if (k0 < k1) stage_async<CB, ABS>(p, smem, KS, k0, (int)min((int64_t)KS, k1 - k0), 1, CB);
        int b = 0;
        for (int64_t s0 = k0; s0 < k1; s0 += KS, b ^= 1) {
            const int ns = (int)min((int64_t)KS, k1 - s0);
            double *cur = smem + b * SB;
            if (s0 + KS < k1)
                stage_async<CB, ABS>(p, smem + (b ^ 1) * SB, KS, s0 + KS,
                                     (int)min((int64_t)KS, k1 - s0 - KS), 1, CB);
            else
                copies_commit();
            wait_all_but_latest();
            if (absx) abs_from_staged<CB>(cur, KS, 1, CB);
            __syncthreads();
            if (nvalid > 0) {
                const T *base = A + row0 + s0 * p.lda;
                const staged_weights<CB> wt{cur, cur + (size_t)KS * CB};
                constexpr int NSR = RR == 2 ? ROWS_R2_STEPS : 1;
                if (full)
                    rows_body<T, CB, ABS, R, true, staged_weights<CB>, NSR>(
                        base, p.lda, g * UNR, ns, G * UNR, wt, nvalid, acc, acca);
                else
                    rows_body<T, CB, ABS, R, false, staged_weights<CB>, NSR>(
                        base, p.lda, g * UNR, ns, G * UNR, wt, nvalid, acc, acca);
            }
            __syncthreads();
        }
    } else {
        for (int64_t s0 = k0; s0 < k1; s0 += KS) {
            const int ns = (int)min((int64_t)KS, k1 - s0);
            if constexpr (WS != WS_STAGED) {
                if (nvalid > 0) {
                    const T *base = A + row0 + s0 * p.lda;
                    auto sweep = [&](const auto &wt) {
                        if (full)
                            rows_body<T, CB, ABS, R, true>(base, p.lda, g * UNR, ns, G * UNR, wt,
                                                           nvalid, acc, acca);
                        else
                            rows_body<T, CB, ABS, R, false>(base, p.lda, g * UNR, ns, G * UNR, wt,
                                                            nvalid, acc, acca);
                    };
                    if constexpr (WS == WS_IMPLICIT) {
                        sweep(implicit_weights{s0});
                    } else {
                        const double *x0 = p.X + s0, *x1 = p.X + p.ldx + s0;
                        if constexpr (ABS) {
                            if (p.Xa != NULL)
                                sweep(global_weights<true>{x0, x1, p.Xa + s0, p.Xa + p.ldxa + s0,
                                                           ns});
                            else
                                sweep(global_weights<false>{x0, x1, x0, x1, ns});
                        } else {
                            sweep(global_weights<false>{x0, x1, x0, x1, ns});
                        }
                    }
                }
                continue;
            }
            __syncthreads();
            for (int idx = tid; idx < KS * CB; idx += NT) {
                const int q = idx / KS, j = idx - q * KS;
                double w = 0.0, wa = 0.0;
                if (j < ns) {
                    w = weight_at(p.X, p.ldx, p.implicit, p.c, s0 + j, q);
                    if (ABS) wa = weight_abs_at(p.Xa, p.ldxa, w, p.c, s0 + j, q);
                }
                xs[j * CB + q] = w;
                if (ABS) xas[j * CB + q] = wa;
            }
            __syncthreads();
            if (nvalid > 0) {
                const T *base = A + row0 + s0 * p.lda;
                const staged_weights<CB> wt{xs, xas};
                if (full)
                    rows_body<T, CB, ABS, R, true>(base, p.lda, g * UNR, ns, G * UNR, wt,
                                                   nvalid, acc, acca);
                else
                    rows_body<T, CB, ABS, R, false>(base, p.lda, g * UNR, ns, G * UNR, wt,
                                                    nvalid, acc, acca);
            }
        }
    }

    /* Combine the G column groups: QB outputs per pass through shared memory. */
    constexpr int QBM = ABFT_CUDA_SMEM_BYTES / (8 * NT * R);
    constexpr int QB = QBM < NO ? QBM : NO;
    const bool split = gridDim.y > 1;
    const int NOc = p.c * (ABS ? 2 : 1);
    double *red = smem;
#pragma unroll
    for (int o0 = 0; o0 < NO; o0 += QB) {
        __syncthreads();
#pragma unroll
        for (int ob = 0; ob < QB; ++ob) {
            const int o = o0 + ob;
            if (o < NO) {
#pragma unroll
                for (int r = 0; r < R; ++r) {
                    double val;
                    if constexpr (ABS)
                        val = o < CB ? acc[r][o % CB] : acca[r][o % CB];
                    else
                        val = acc[r][o % CB];
                    red[((size_t)ob * G + g) * TR + rv * R + r] = val;
                }
            }
        }
        __syncthreads();
        for (int e = tid; e < QB * TR; e += NT) {
            const int ob = e / TR, rr = e - ob * TR, o = o0 + ob;
            const int q = o % CB, isabs = o / CB;
            const int64_t row = (int64_t)blockIdx.x * TR + rr;
            if (o < NO && q < p.c && row < p.m) {
                double s = 0.0;
                for (int gg = 0; gg < G; ++gg) s += red[((size_t)ob * G + gg) * TR + rr];
                if (!split) {
                    if (isabs)
                        p.Ya[row + q * p.ldya] = s;
                    else
                        p.Y[row + q * p.ldy] = s;
                } else {
                    const int oc = isabs ? p.c + q : q;
                    p.part[((size_t)blockIdx.y * NOc + oc) * (size_t)p.m + row] = s;
                }
            }
        }
    }
    if (split && p.count != NULL) {
        const int64_t lo = (int64_t)blockIdx.x * TR;
        split_finish(p.count + blockIdx.x, tsmm_job(p, (int)gridDim.y, p.m, ABS), lo,
                     min(p.m, lo + TR));
    }
}

/* ---- trans = T: Y = A^T·X (column checksums) -------------------------------------------
 * Block: NT/lanes columns, `lanes` threads down each column, each loading R contiguous rows
 * (16 bytes), U loads in flight; the weights come from a weight source of the column sweep
 * (below). The lanes of a column meet by a butterfly of shuffles at the end (fixed order).
 *
 * Weights of the column sweep: for load u of the pass at rb (the stage's rows r .. r+R-1,
 * r = rb + (u·lanes + l)·R) and output q the sweep takes a handle hq = col(rb, u, r, q)
 * (cola(...) for |A|^T·Xa), and from it the weights of the rows r + rr and r + rr + 1,
 * pair(hq, rr). Two sources, one sweep:
 *   staged_col_weights:   X (and Xa) for `stage` rows in shared memory as [q][i], so the
 *                         lanes of a column read neighbouring 16-byte words and the columns
 *                         of the block share them (broadcast); hq is a pointer;
 *   implicit_col_weights: V = [1, i+1] (c = 2, |V| = V) from the row index i of the matrix
 *                         passed: hq (asked for q = 1 only) is the weight of the load's first
 *                         row as a double, from the thread's first row of the stage by sums
 *                         of integers (exact below 2^53); no staging, no barriers, no LDS in
 *                         the loop. The weight 1 is applied as x + s (unit0, as in the row
 *                         sweep: nvcc does not fold fma(x, 1, s)), the same operation, so
 *                         both sources give the same bits for the same launch shape.
 * The staged source forms its addresses as the sweep did before it had sources (per output,
 * from r): a per-load handle in between (the same values) moved ptxas's register counts of
 * the general |A| kernels by -10..+12 (fp64 c = 4: 80 -> 92, 3 -> 2 blocks per SM). */
template <int CB>
struct staged_col_weights {
    static constexpr bool unit0 = false;
    const double *xs, *xas; /* [q][RS] */
    int RS;
    __device__ __forceinline__ const double *col(int, int, int r, int q) const {
        return xs + (size_t)q * RS + r;
    }
    __device__ __forceinline__ const double *cola(int, int, int r, int q) const {
        return xas + (size_t)q * RS + r;
    }
    __device__ __forceinline__ double2 pair(const double *xq, int rr) const {
        return *reinterpret_cast<const double2 *>(xq + rr);
    }
};

struct implicit_col_weights {
    static constexpr bool unit0 = true;
    double first; /* (double)(s0 + l·R + 1): the weight of the thread's first row in the stage */
    double ustep; /* (double)(lanes·R): rows from one load of a pass to the next */
    __device__ __forceinline__ double col(int rb, int u, int, int) const {
        const double b = first + (double)rb;
        return u == 0 ? b : fma((double)u, ustep, b);
    }
    __device__ __forceinline__ double cola(int rb, int u, int r, int q) const {
        return col(rb, u, r, q);
    }
    __device__ __forceinline__ double2 pair(double h, int rr) const {
        return make_double2(rr == 0 ? h : h + (double)rr, h + (double)(rr + 1));
    }
};

/* One step of the column sweep: UNR loads of R rows per lane from row rb (cols_load), then
 * their products (cols_sum). WHOLE: every load of the step lies inside the stage and may be
 * a wide one (no per-load tests). */
template <typename T, bool VEC, bool WHOLE, int R>
__device__ __forceinline__ void cols_load(const T *__restrict__ col, int rb, int ns, int lanes,
                                          int l, T (&v)[UNR][R]) {
#pragma unroll
    for (int u = 0; u < UNR; ++u) {
        const int r = rb + (u * lanes + l) * R;
        if constexpr (WHOLE) {
            load_vec<T, R>(col + r, v[u]);
        } else {
            const int nval = ns - r >= R ? R : (ns - r > 0 ? ns - r : 0);
            if (VEC && nval == R)
                load_vec<T, R>(col + r, v[u]);
            else
                load_part<T, R>(col + r, nval, v[u]);
        }
    }
}

template <typename T, int CB, bool ABS, int R, class W>
__device__ __forceinline__ void cols_sum(const T (&v)[UNR][R], int rb, int lanes, int l,
                                         const W &wt, double (&acc)[CB], double (&acca)[CB]) {
#pragma unroll
    for (int u = 0; u < UNR; ++u) {
        const int r = rb + (u * lanes + l) * R;
#pragma unroll
        for (int q = 0; q < CB; ++q) {
            if (W::unit0 && q == 0) {
#pragma unroll
                for (int rr = 0; rr < R; ++rr) acc[q] += (double)v[u][rr];
                if constexpr (ABS) {
#pragma unroll
                    for (int rr = 0; rr < R; ++rr) acca[q] += fabs((double)v[u][rr]);
                }
                continue;
            }
            const auto xq = wt.col(rb, u, r, q);
#pragma unroll
            for (int rr = 0; rr < R; rr += 2) {
                const double2 w = wt.pair(xq, rr);
                acc[q] = fma((double)v[u][rr], w.x, acc[q]);
                acc[q] = fma((double)v[u][rr + 1], w.y, acc[q]);
            }
            if constexpr (ABS) {
                const auto xa = wt.cola(rb, u, r, q);
#pragma unroll
                for (int rr = 0; rr < R; rr += 2) {
                    const double2 w = wt.pair(xa, rr);
                    acca[q] = fma(fabs((double)v[u][rr]), w.x, acca[q]);
                    acca[q] = fma(fabs((double)v[u][rr + 1]), w.y, acca[q]);
                }
            }
        }
    }
}

/* NS steps from row rb: all loaded before the first is summed; a step past the stage is not
 * summed (the same operations in the same order for any NS). */
template <typename T, int CB, bool ABS, bool VEC, bool WHOLE, int R, class W, int NS>
__device__ __forceinline__ void cols_steps(const T *__restrict__ col, int rb, int step, int ns,
                                           int lanes, int l, const W &wt, double (&acc)[CB],
                                           double (&acca)[CB]) {
    T v[NS][UNR][R];
#pragma unroll
    for (int t = 0; t < NS; ++t)
        cols_load<T, VEC, WHOLE, R>(col, rb + t * step, ns, lanes, l, v[t]);
#pragma unroll
    for (int t = 0; t < NS; ++t)
        if (WHOLE || t == 0 || rb + t * step < ns)
            cols_sum<T, CB, ABS, R>(v[t], rb + t * step, lanes, l, wt, acc, acca);
}

/* The sweep of a stage of ns rows, NS steps at a time. fp32: whole steps first (VEC), then
 * the last, partial one, the same operations in the same order either way (the same bits);
 * the whole-step loop needs no per-load tests (half the instructions per element), while
 * for fp64 the second loop costs more registers or spills than it saves, so fp64 keeps one
 * loop (bench/NOTES-encode.md v12). */
template <typename T, int CB, bool ABS, bool VEC, int R, class W, int NS = 1>
__device__ __forceinline__ void cols_body(const T *__restrict__ col, int ns, int lanes, int l,
                                          const W &wt, double (&acc)[CB], double (&acca)[CB]) {
    const int step = UNR * lanes * R;
    int rb = 0;
    if constexpr (VEC && sizeof(T) == 4)
        for (; rb + NS * step <= ns; rb += NS * step)
            cols_steps<T, CB, ABS, VEC, true, R, W, NS>(col, rb, step, ns, lanes, l, wt, acc,
                                                        acca);
    for (; rb < ns; rb += NS * step)
        cols_steps<T, CB, ABS, VEC, false, R, W, NS>(col, rb, step, ns, lanes, l, wt, acc, acca);
}

/* WS: WS_STAGED (X, Xa staged per stage while the block waits), WS_IMPLICIT (V = [1, i+1],
 * c-bucket 2 only, computed from the row index), WS_ASYNC (two buffers of p.stage rows: the
 * next stage is copied while this one is summed; same weights, same order, same bits). */
/* Blocks per SM asked of ptxas for the cols kernel: the async c = 2 instances would take
 * 58-88 registers, one block per SM fewer than the staged ones, which costs more than the
 * asynchronous copies gain; bounded at 4 they spill 8-24 bytes, none of it in the loop over
 * A (ptxas -v, cuobjdump; CUDA 13.0, sm_90). (fp32 with |A| has only the 2-row instance.) */
template <typename T, int CB, bool ABS, int WS, int RR>
constexpr int cols_min_blocks() {
    return WS == WS_ASYNC && CB == 2 ? 4 : 0;
}

/* The fp32 cols instance of c = 2 with |A|, 2 rows per lane and asynchronous staging (the
 * full checksums' second read of B) loads 2 steps before summing the first (the same bits):
 * more bytes in flight for a pass that waits on global loads. The fp64 instance keeps one
 * step: two raise its spills (8 -> 48 bytes) and slow it (bench/NOTES-encode.md v13). */
template <typename T, int CB, bool ABS, int RR>
constexpr int cols_async_steps() {
    return sizeof(T) == 4 && CB == 2 && ABS && RR == 2 ? 2 : 1;
}
/* RR > 0: rows per lane forced (fp32 c = 2 with |A| and explicit X: 2, see run_tsmm). */
template <typename T, int CB, bool ABS, int WS = WS_STAGED, int RR = 0>
__global__ void __launch_bounds__(NT, cols_min_blocks<T, CB, ABS, WS, RR>())
    tsmm_t_kernel(const tsmm_params p) {
    abft_pdl_enter();
    constexpr bool IMPL = WS == WS_IMPLICIT;
    static_assert(!IMPL || CB == 2, "implicit weights are two columns");
    static_assert(WS != WS_GLOBAL, "no global weight source in the cols kernel");
    constexpr int R = RR > 0 ? RR : vec_width<T>::value;
    extern __shared__ double smem[];
    const T *__restrict__ A = static_cast<const T *>(p.A);
    const int tid = threadIdx.x;
    const int lanes = p.lanes;
    const int l = tid % lanes, jc = tid / lanes, NC = NT / lanes;
    const int64_t j = (int64_t)blockIdx.x * NC + jc;
    const bool colok = j < p.n;
    const int64_t i0 = (int64_t)blockIdx.y * p.chunk;
    const int64_t i1 = min(p.m, i0 + p.chunk);
    const int RS = p.stage;
    double *xs = smem;
    double *xas = smem + (size_t)RS * CB;
    double acc[CB], acca[CB];
#pragma unroll
    for (int q = 0; q < CB; ++q) acc[q] = acca[q] = 0.0;

    if constexpr (WS == WS_ASYNC) {
        /* Buffer b of two at smem + b·SB. Each pass: copies of the next stage go out, this
         * stage's (committed one pass earlier) are awaited, a barrier publishes them, the
         * stage is summed, and a second barrier frees its buffer for the pass after next. */
        const size_t SB = (size_t)RS * CB * (ABS ? 2 : 1);
        const bool absx = ABS && p.Xa == NULL;
        if (i0 < i1) stage_async<CB, ABS>(p, smem, RS, i0, (int)min((int64_t)RS, i1 - i0), RS, 1);
        int b = 0;
        for (int64_t s0 = i0; s0 < i1; s0 += RS, b ^= 1) {
            const int ns = (int)min((int64_t)RS, i1 - s0);
            double *cur = smem + b * SB;
            if (s0 + RS < i1)
                stage_async<CB, ABS>(p, smem + (b ^ 1) * SB, RS, s0 + RS,
                                     (int)min((int64_t)RS, i1 - s0 - RS), RS, 1);
            else
                copies_commit(); /* an empty group: the wait below always spares one */
            wait_all_but_latest();
            if (absx) abs_from_staged<CB>(cur, RS, RS, 1);
            __syncthreads();
            if (colok) {
                const T *col = A + j * p.lda + s0;
                const staged_col_weights<CB> wt{cur, cur + (size_t)RS * CB, RS};
                constexpr int NSC = cols_async_steps<T, CB, ABS, RR>();
                if (p.vec_ok)
                    cols_body<T, CB, ABS, true, R, staged_col_weights<CB>, NSC>(
                        col, ns, lanes, l, wt, acc, acca);
                else
                    cols_body<T, CB, ABS, false, R, staged_col_weights<CB>, NSC>(
                        col, ns, lanes, l, wt, acc, acca);
            }
            __syncthreads();
        }
    } else {
        for (int64_t s0 = i0; s0 < i1; s0 += RS) {
            const int ns = (int)min((int64_t)RS, i1 - s0);
            if constexpr (IMPL) {
                if (colok) {
                    const T *col = A + j * p.lda + s0;
                    /* s0 counts from the first row of the matrix passed (i0 = the slice's first
                     * row): the weight of row i is i + 1. */
                    const implicit_col_weights wt{(double)(s0 + (int64_t)l * R + 1),
                                                  (double)(lanes * R)};
                    if (p.vec_ok)
                        cols_body<T, CB, ABS, true, R>(col, ns, lanes, l, wt, acc, acca);
                    else
                        cols_body<T, CB, ABS, false, R>(col, ns, lanes, l, wt, acc, acca);
                }
                continue;
            }
            __syncthreads();
            for (int idx = tid; idx < RS * CB; idx += NT) {
                const int q = idx / RS, r = idx - q * RS;
                double w = 0.0, wa = 0.0;
                if (r < ns) {
                    w = weight_at(p.X, p.ldx, p.implicit, p.c, s0 + r, q);
                    if (ABS) wa = weight_abs_at(p.Xa, p.ldxa, w, p.c, s0 + r, q);
                }
                xs[idx] = w;
                if (ABS) xas[idx] = wa;
            }
            __syncthreads();
            if (colok) {
                const T *col = A + j * p.lda + s0;
                const staged_col_weights<CB> wt{xs, xas, RS};
                if (p.vec_ok)
                    cols_body<T, CB, ABS, true, R>(col, ns, lanes, l, wt, acc, acca);
                else
                    cols_body<T, CB, ABS, false, R>(col, ns, lanes, l, wt, acc, acca);
            }
        }
    }
    for (int off = lanes / 2; off >= 1; off /= 2) {
#pragma unroll
        for (int q = 0; q < CB; ++q) {
            acc[q] += __shfl_xor_sync(0xffffffffu, acc[q], off);
            if (ABS) acca[q] += __shfl_xor_sync(0xffffffffu, acca[q], off);
        }
    }
    if (l == 0 && colok) {
        const bool split = gridDim.y > 1;
        const int NOc = p.c * (ABS ? 2 : 1);
#pragma unroll
        for (int q = 0; q < CB; ++q) {
            if (q < p.c) {
                if (!split) {
                    p.Y[j + q * p.ldy] = acc[q];
                    if (ABS) p.Ya[j + q * p.ldya] = acca[q];
                } else {
                    p.part[((size_t)blockIdx.y * NOc + q) * (size_t)p.n + j] = acc[q];
                    if (ABS)
                        p.part[((size_t)blockIdx.y * NOc + p.c + q) * (size_t)p.n + j] = acca[q];
                }
            }
        }
    }
    if (gridDim.y > 1 && p.count != NULL) {
        /* NT / lanes is NC; naming NC here made ptxas spill in the explicit fp32 kernel */
        const int64_t lo = (int64_t)blockIdx.x * (NT / p.lanes);
        split_finish(p.count + blockIdx.x, tsmm_job(p, (int)gridDim.y, p.n, ABS), lo,
                     min(p.n, lo + NT / p.lanes));
    }
}

/* ---- weights of the dual kernel's Q side (M^T·Z) ----------------------------------------
 * Each thread needs Z for its own R rows, for every column of its sweep: z(r, q) and
 * za(r, q) (|M|^T·Za). Explicit Z (and Za, or |Z|) are read once into registers
 * (R x CB doubles, twice with ABS: 32 registers at fp32 c = 2 with |M|); the implicit
 * V = [1, i+1] is one double, the first row's index, and z(r, 1) = that + r. As on the row
 * side the weight 1 is applied as an addition (unit0), the same operation as fma(x, 1, s). */
template <int R, int CB, bool ABS>
struct register_zweights {
    static constexpr bool unit0 = false;
    double zv[R][CB], zav[ABS ? R : 1][CB];
    __device__ __forceinline__ void load(const dual_params &p, int64_t row0, int nvalid) {
#pragma unroll
        for (int r = 0; r < R; ++r)
#pragma unroll
            for (int q = 0; q < CB; ++q) {
                const bool ok = r < nvalid;
                const double zw =
                    ok ? weight_at(p.Z, p.ldz, p.implicit_z, p.c2, row0 + r, q) : 0.0;
                zv[r][q] = zw;
                if constexpr (ABS)
                    zav[r][q] = ok ? weight_abs_at(p.Za, p.ldza, zw, p.c2, row0 + r, q) : 0.0;
            }
    }
    __device__ __forceinline__ double z(int r, int q) const { return zv[r][q]; }
    __device__ __forceinline__ double za(int r, int q) const {
        if constexpr (ABS)
            return zav[r][q];
        else
            return zav[0][q];
    }
};

struct implicit_zweights {
    static constexpr bool unit0 = true;
    double zb; /* (double)(row0 + 1): the weight z(r, 1) of the thread's first row */
    __device__ __forceinline__ void load(const dual_params &, int64_t row0, int) {
        zb = (double)(row0 + 1);
    }
    __device__ __forceinline__ double z(int r, int q) const {
        return q == 0 ? 1.0 : zb + (double)r;
    }
    __device__ __forceinline__ double za(int r, int q) const { return z(r, q); }
};

/* Implicit sides of the dual kernel (template flag, c-bucket 2 only): X (P side), Z (Q). */
constexpr int DUAL_IMPL_X = 1, DUAL_IMPL_Z = 2;

/* Resident blocks per SM asked of ptxas (__launch_bounds__ minimum) for the implicit-weight
 * instances, from ptxas -v (CUDA 13.0, sm_90): fp64 4 (56-64
 * registers, no spills); fp32 without |M| and Z implicit 3 (80 registers, no spills; at 4
 * they spill 28-48 bytes, and with only X implicit 8 bytes already at 3); fp32 with |M| 2
 * (R = 4 rows of P and Q accumulators; left unbounded, the lane-ordered loop took 136
 * registers for the explicit instance, one block per SM, a launch shape different from the
 * implicit ones; bounded, 122-128 registers, 4-8 bytes spilled outside the column loop).
 * fp32 instances without |M| and Z explicit: X implicit 2, none 0. 0: no bound. */
template <typename T, bool ABS, int IMPL>
constexpr int dual_min_blocks() {
    return sizeof(T) == 8 ? (IMPL == 0 ? 0 : 4)
                          : ABS ? 2 : (IMPL & DUAL_IMPL_Z) ? 3 : IMPL == 0 ? 0 : 2;
}

/* ---- fused dual: P = M·X and Q = M^T·Z from one read of M -----------------------------
 * Block: 8 warps stacked along rows (NT*R rows), each warp sweeping every column of the
 * block's slice U at a time; lane group perm = (lane / 8) % 4 takes the U columns of a step
 * in the order u ^ perm (see the reduce-scatter below). P accumulates in registers as in the
 * rows kernel, from the same weight sources (no cross-thread sum needed: each thread owns
 * its rows; a step's columns are added in the lane's order). For Q each thread holds Z for
 * its rows (registers, or the implicit V from the row index); the per-column products are
 * summed across the warp by shuffles and across the 8 warps in shared memory, in fixed
 * order. Row tiles (blockIdx.x) then give partials of Q, column slices (blockIdx.y)
 * partials of P. The whole steps of full row groups load through a pointer carried from
 * step to step, with no per-column tests. IMPL: DUAL_IMPL_X / DUAL_IMPL_Z bits, the sides
 * whose weights are the implicit V = [1, l+1] with |V| = V (no staging of X, no Z
 * registers). */
template <typename T, int CB, bool ABS, int IMPL = 0>
__global__ void __launch_bounds__(NT, dual_min_blocks<T, ABS, IMPL>())
    dual_kernel(const dual_params p) {
    abft_pdl_enter();
    static_assert(IMPL == 0 || CB == 2, "implicit weights are two columns");
    constexpr bool IX = (IMPL & DUAL_IMPL_X) != 0, IZ = (IMPL & DUAL_IMPL_Z) != 0;
    constexpr int R = rows_per_thread<T, CB, ABS, 2>::value;
    constexpr int NO = CB * (ABS ? 2 : 1);
    constexpr int NW = NT / 32;
    using ZW = typename std::conditional<IZ, implicit_zweights,
                                         register_zweights<R, CB, ABS>>::type;
    extern __shared__ double smem[];
    const T *__restrict__ M = static_cast<const T *>(p.M);
    const int tid = threadIdx.x, lane = tid & 31, w = tid >> 5;
    const int64_t TR = (int64_t)NT * R;
    const int64_t row0 = (int64_t)blockIdx.x * TR + (int64_t)tid * R;
    const int64_t k0 = (int64_t)blockIdx.y * p.chunk;
    const int64_t k1 = min(p.n, k0 + p.chunk);
    const int64_t left = p.m - row0;
    const int nvalid = left <= 0 ? 0 : (left >= R ? R : (int)left);
    const bool full = nvalid == R && p.vec_ok;

    ZW zw;
    zw.load(p, row0, nvalid);
    double acc[R][CB], acca[ABS ? R : 1][CB];
#pragma unroll
    for (int r = 0; r < R; ++r)
#pragma unroll
        for (int q = 0; q < CB; ++q) {
            acc[r][q] = 0.0;
            if constexpr (ABS) acca[r][q] = 0.0;
        }

    const int KS = p.stage;
    double *xs = smem;                             /* [KS][CB] */
    double *xas = xs + (size_t)KS * CB;            /* [KS][CB] when ABS */
    double *qs = xs + (size_t)KS * CB * (ABS ? 2 : 1); /* [NW][NO][KS] */
    const int NOq = p.c2 * (ABS ? 2 : 1);
    const int c2 = p.c2;
    const int64_t ldm = p.ldm;
    /* The lane's order of the UNR columns of a step (see the reduce-scatter below). */
    const int perm = (lane >> 3) & (UNR - 1);
    double *const qlane = qs + (size_t)w * NO * KS + perm; /* + o·KS + jb */
    int64_t coff[UNR]; /* element offsets of the lane's columns from column jb */
#pragma unroll
    for (int u = 0; u < UNR; ++u) coff[u] = (int64_t)(u ^ perm) * ldm;
    const int64_t step = (int64_t)UNR * ldm;
    for (int64_t s0 = k0; s0 < k1; s0 += KS) {
        const int ns = (int)min((int64_t)KS, k1 - s0);
        __syncthreads(); /* the previous stage's qs (and xs) are consumed */
        if constexpr (!IX) {
            for (int idx = tid; idx < KS * CB; idx += NT) {
                const int q = idx / KS, j = idx - q * KS;
                double wv = 0.0, wa = 0.0;
                if (j < ns) {
                    wv = weight_at(p.X, p.ldx, p.implicit_x, p.c1, s0 + j, q);
                    if (ABS) wa = weight_abs_at(p.Xa, p.ldxa, wv, p.c1, s0 + j, q);
                }
                xs[j * CB + q] = wv;
                if (ABS) xas[j * CB + q] = wa;
            }
            __syncthreads();
        }
        using XW = typename std::conditional<IX, implicit_weights, staged_weights<CB>>::type;
        XW xw;
        if constexpr (IX)
            xw = implicit_weights{s0};
        else
            xw = staged_weights<CB>{xs, xas};
        const T *base = M + row0 + s0 * ldm;
        const T *pj = base; /* column jb */
        for (int jb = 0; jb < ns; jb += UNR, pj += step) {
            /* v[u]: column jb + (u ^ perm) of the thread's rows */
            T v[UNR][R];
            if (full && jb + UNR <= ns) {
#pragma unroll
                for (int u = 0; u < UNR; ++u) load_vec<T, R>(pj + coff[u], v[u]);
            } else {
#pragma unroll
                for (int u = 0; u < UNR; ++u) {
                    const int j = jb + (u ^ perm);
                    if (j < ns && nvalid > 0) {
                        const T *pa = pj + coff[u];
                        if (full)
                            load_vec<T, R>(pa, v[u]);
                        else
                            load_part<T, R>(pa, nvalid, v[u]);
                    } else {
#pragma unroll
                        for (int r = 0; r < R; ++r) v[u][r] = T(0);
                    }
                }
            }
#pragma unroll
            for (int u = 0; u < UNR; ++u)
                accumulate_rows<T, CB, ABS, R>(v[u], xw, jb, u ^ perm, acc, acca);
            /* Q: each column's products over the thread's rows, then over the warp by a
             * reduce-scatter of the UNR (= 4) columns: 2 + 1 + 1 + 1 + 1 shuffles per
             * output instead of 4 x 5. The lane's column order (u ^ perm) makes the value
             * kept and the value sent the same registers in every lane (no selects): at
             * xor 16, t[0..1] are the columns this lane keeps and t[2..3] the ones its
             * partner keeps; at xor 8 likewise a0 and a1. The lanes of group perm end with
             * column jb + perm's sum. */
            static_assert(UNR == 4, "the reduce-scatter below is written for 4 columns");
#pragma unroll
            for (int o = 0; o < NO; ++o) {
                const int q = o % CB;
                if (q < c2) {
                    const bool isabs = ABS && o >= CB;
                    double t[UNR];
#pragma unroll
                    for (int u = 0; u < UNR; ++u) {
                        t[u] = 0.0;
#pragma unroll
                        for (int r = 0; r < R; ++r) {
                            const double x = isabs ? fabs((double)v[u][r]) : (double)v[u][r];
                            if (ZW::unit0 && q == 0)
                                t[u] += x;
                            else
                                t[u] = fma(x, isabs ? zw.za(r, q) : zw.z(r, q), t[u]);
                        }
                    }
                    const double a0 = t[0] + __shfl_xor_sync(0xffffffffu, t[2], 16);
                    const double a1 = t[1] + __shfl_xor_sync(0xffffffffu, t[3], 16);
                    double b = a0 + __shfl_xor_sync(0xffffffffu, a1, 8);
                    b += __shfl_xor_sync(0xffffffffu, b, 4);
                    b += __shfl_xor_sync(0xffffffffu, b, 2);
                    b += __shfl_xor_sync(0xffffffffu, b, 1);
                    if ((lane & 7) == 0) qlane[(size_t)o * KS + jb] = b;
                }
            }
        }
        __syncthreads();
        const bool qsplit = gridDim.x > 1;
        for (int e = tid; e < NO * ns; e += NT) {
            const int o = e / ns, jl = e - o * ns;
            const int q = o % CB, isabs = o / CB;
            if (q < p.c2) {
                double s = 0.0;
#pragma unroll
                for (int ww = 0; ww < NW; ++ww) s += qs[((size_t)ww * NO + o) * KS + jl];
                const int64_t j = s0 + jl;
                if (!qsplit) {
                    if (isabs) {
                        if (p.Qa != NULL) p.Qa[j + q * p.ldqa] = s;
                    } else {
                        p.Q[j + q * p.ldq] = s;
                    }
                } else {
                    const int oc = isabs ? p.c2 + q : q;
                    p.part_q[((size_t)blockIdx.x * NOq + oc) * (size_t)p.n + j] = s;
                }
            }
        }
    }

    /* P: each thread owns its rows outright. */
    const bool psplit = gridDim.y > 1;
    const int NOp = p.c1 * (ABS ? 2 : 1);
#pragma unroll
    for (int r = 0; r < R; ++r) {
        if (r < nvalid) {
            const int64_t row = row0 + r;
#pragma unroll
            for (int q = 0; q < CB; ++q) {
                if (q < p.c1) {
                    if (!psplit) {
                        p.P[row + q * p.ldp] = acc[r][q];
                        if constexpr (ABS)
                            if (p.Pa != NULL) p.Pa[row + q * p.ldpa] = acca[r][q];
                    } else {
                        p.part_p[((size_t)blockIdx.y * NOp + q) * (size_t)p.m + row] = acc[r][q];
                        if constexpr (ABS)
                            p.part_p[((size_t)blockIdx.y * NOp + p.c1 + q) * (size_t)p.m + row] =
                                acca[r][q];
                    }
                }
            }
        }
    }
}

/* ---- second stage: the split partials of whole jobs in a separate launch -------------- */
__global__ void __launch_bounds__(NT) reduce_kernel(const reduce_job a, const reduce_job b,
                                                    int64_t blocks_a) {
    abft_pdl_enter();
    /* one call per job, so that each reads its job from the parameter space (selecting a
     * reference to one of them put both on the stack) */
    const bool first = (int64_t)blockIdx.x < blocks_a;
    const int64_t blk = first ? (int64_t)blockIdx.x : (int64_t)blockIdx.x - blocks_a;
    const int64_t idx = blk * NT + threadIdx.x;
    if (first) {
        if (idx < a.len * a.c * (a.abs ? 2 : 1)) reduce_outputs<false>(a, 0, a.len, idx);
    } else {
        if (idx < b.len * b.c * (b.abs ? 2 : 1)) reduce_outputs<false>(b, 0, b.len, idx);
    }
}

} /* namespace abft_cuda */

#endif /* ABFT_CUDA_TSMM_CUH */
