/* abft CUDA backend, LU kernels (kernels/abft_lu_kernels.h): cuSOLVER getrf (optionally
 * without synchronising: global pivots and the info accumulated on the device), cuBLAS trsm,
 * a split-k triangular tall-and-skinny product over an LU array, row interchanges (composed
 * on the host into one gather, or on the device from device pivots), small fp64 helpers. cuBLAS/cuSOLVER stream and pointer mode are saved and
 * restored around every call (the handles may be borrowed). */
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cusolverDn.h>

#include <limits.h>
#include <stdlib.h>
#include <vector>

#include "abft_cuda_blas.cuh"
#include "abft_cuda_common.cuh"
#include "abft_lu_kernels.h"

namespace {

bool fits_int(int64_t v) { return v >= 0 && v <= INT_MAX; }

abft_status_t blas_status(cublasStatus_t s) {
    if (s == CUBLAS_STATUS_SUCCESS) return ABFT_STATUS_SUCCESS;
    return s == CUBLAS_STATUS_ALLOC_FAILED ? ABFT_STATUS_ALLOC_FAILED : ABFT_STATUS_CUBLAS_ERROR;
}
abft_status_t solver_status(cusolverStatus_t s) {
    if (s == CUSOLVER_STATUS_SUCCESS) return ABFT_STATUS_SUCCESS;
    return s == CUSOLVER_STATUS_ALLOC_FAILED ? ABFT_STATUS_ALLOC_FAILED
                                             : ABFT_STATUS_CUSOLVER_ERROR;
}

template <typename T> __device__ __forceinline__ double ld(const T *A, int64_t idx) {
    return (double)__ldg(A + idx);
}

__device__ __forceinline__ double wgt(const double *X, int64_t ldx, int64_t woff, int64_t l,
                                      int q) {
    if (X != nullptr) return X[l + q * ldx];
    return q == 0 ? 1.0 : (double)(l + 1 + woff);
}

/* Split-k triangular product, stage 1: block (bx, by) = TRI_R rows x one column chunk,
 * the chunk's columns dealt round-robin to TRI_S column lanes (thread = row + TRI_R·lane,
 * so a warp reads 32 consecutive rows of one column). The lanes' sums are added in lane
 * order in shared memory and written to part[by][4][rows]. A short-wide block (a panel's
 * rows of U) gets many chunks, a tall one many row blocks: both fill the GPU. */
constexpr int TRI_R = 64, TRI_S = 4, TRI_THREADS = TRI_R * TRI_S;

template <typename T>
__global__ void __launch_bounds__(TRI_THREADS)
tri_partial(int uplo, int64_t rows, int64_t cols, const T *A, int64_t lda, const double *X,
            int64_t ldx, const double *Xa, int64_t ldxa, int64_t woff, int64_t chunk,
            double *part) {
    __shared__ double red[TRI_S - 1][4][TRI_R];
    const int r = threadIdx.x % TRI_R, lane = threadIdx.x / TRI_R;
    const int64_t i = (int64_t)blockIdx.x * TRI_R + r;
    const int64_t j0 = (int64_t)blockIdx.y * chunk;
    const int64_t j1 = j0 + chunk < cols ? j0 + chunk : cols;
    double s0 = 0, s1 = 0, a0 = 0, a1 = 0;
    if (i < rows) {
        int64_t jb = j0, je = j1;
        if (uplo == 0) jb = i > j0 ? i : j0;     /* U: j >= i */
        else je = i < j1 ? i : j1;               /* L: j < i */
#pragma unroll 4
        for (int64_t j = jb + lane; j < je; j += TRI_S) {
            double v = ld(A, i + j * lda);
            double x0 = wgt(X, ldx, woff, j, 0), x1 = wgt(X, ldx, woff, j, 1);
            double y0 = Xa != nullptr ? Xa[j] : fabs(x0);
            double y1 = Xa != nullptr ? Xa[j + ldxa] : fabs(x1);
            s0 = fma(v, x0, s0);
            s1 = fma(v, x1, s1);
            a0 = fma(fabs(v), y0, a0);
            a1 = fma(fabs(v), y1, a1);
        }
    }
    if (lane > 0) {
        red[lane - 1][0][r] = s0;
        red[lane - 1][1][r] = s1;
        red[lane - 1][2][r] = a0;
        red[lane - 1][3][r] = a1;
    }
    __syncthreads();
    if (lane == 0 && i < rows) {
        for (int l = 0; l < TRI_S - 1; ++l) {
            s0 += red[l][0][r];
            s1 += red[l][1][r];
            a0 += red[l][2][r];
            a1 += red[l][3][r];
        }
        double *pp = part + (size_t)blockIdx.y * 4 * rows;
        pp[i] = s0;
        pp[i + rows] = s1;
        pp[i + 2 * rows] = a0;
        pp[i + 3 * rows] = a1;
    }
}

/* Stage 2: one warp per row; lane l adds the chunks l, l + 32, ... in order, then a fixed
 * shuffle tree (deterministic), then L's unit diagonal. */
__global__ void tri_reduce(int uplo, int64_t rows, int64_t cols, int64_t nchunks,
                           const double *part, const double *X, int64_t ldx, const double *Xa,
                           int64_t ldxa, int64_t woff, double *Y, int64_t ldy, double *Ya,
                           int64_t ldya) {
    const int64_t i = ((int64_t)blockIdx.x * blockDim.x + threadIdx.x) / 32;
    const int lane = threadIdx.x & 31;
    if (i >= rows) return; /* uniform across the warp */
    double s[4] = {0, 0, 0, 0};
    for (int64_t c = lane; c < nchunks; c += 32)
        for (int q = 0; q < 4; ++q) s[q] += part[(size_t)c * 4 * rows + q * rows + i];
    for (int o = 16; o > 0; o >>= 1)
        for (int q = 0; q < 4; ++q) s[q] += __shfl_down_sync(0xffffffffu, s[q], o);
    if (lane != 0) return;
    if (uplo == 1 && i < cols) {
        double x0 = wgt(X, ldx, woff, i, 0), x1 = wgt(X, ldx, woff, i, 1);
        s[0] += x0;
        s[1] += x1;
        s[2] += Xa != nullptr ? Xa[i] : fabs(x0);
        s[3] += Xa != nullptr ? Xa[i + ldxa] : fabs(x1);
    }
    Y[i] = s[0];
    Y[i + ldy] = s[1];
    if (Ya != nullptr) {
        Ya[i] = s[2];
        Ya[i + ldya] = s[3];
    }
}

/* Transposed: one warp per column (dot products down the column). */
template <typename T>
__global__ void tri_trans(int uplo, int64_t rows, int64_t cols, const T *A, int64_t lda,
                          const double *X, int64_t ldx, const double *Xa, int64_t ldxa,
                          int64_t woff, double *Y, int64_t ldy, double *Ya, int64_t ldya) {
    const int64_t j = ((int64_t)blockIdx.x * blockDim.x + threadIdx.x) / 32;
    const int lane = threadIdx.x & 31;
    if (j >= cols) return;
    int64_t r0 = uplo == 0 ? 0 : j + 1;
    int64_t r1 = uplo == 0 ? (j + 1 < rows ? j + 1 : rows) : rows;
    double s0 = 0, s1 = 0, a0 = 0, a1 = 0;
    for (int64_t i = r0 + lane; i < r1; i += 32) {
        double v = ld(A, i + j * lda);
        double x0 = wgt(X, ldx, woff, i, 0), x1 = wgt(X, ldx, woff, i, 1);
        s0 = fma(v, x0, s0);
        s1 = fma(v, x1, s1);
        a0 = fma(fabs(v), Xa != nullptr ? Xa[i] : fabs(x0), a0);
        a1 = fma(fabs(v), Xa != nullptr ? Xa[i + ldxa] : fabs(x1), a1);
    }
    for (int o = 16; o > 0; o >>= 1) {
        s0 += __shfl_down_sync(0xffffffffu, s0, o);
        s1 += __shfl_down_sync(0xffffffffu, s1, o);
        a0 += __shfl_down_sync(0xffffffffu, a0, o);
        a1 += __shfl_down_sync(0xffffffffu, a1, o);
    }
    if (lane == 0) {
        if (uplo == 1 && j < rows) {
            double x0 = wgt(X, ldx, woff, j, 0), x1 = wgt(X, ldx, woff, j, 1);
            s0 += x0;
            s1 += x1;
            a0 += Xa != nullptr ? Xa[j] : fabs(x0);
            a1 += Xa != nullptr ? Xa[j + ldxa] : fabs(x1);
        }
        Y[j] = s0;
        Y[j + ldy] = s1;
        if (Ya != nullptr) {
            Ya[j] = a0;
            Ya[j + ldya] = a1;
        }
    }
}

template <typename T>
abft_status_t tri_run(const abft_kctx_t *ctx, const abft_lu_tri_args_t *a) {
    cudaStream_t s = abft_cuda_stream(ctx);
    const T *A = (const T *)a->A;
    if (a->trans) {
        if (a->cols == 0) return ABFT_STATUS_SUCCESS;
        int64_t threads = a->cols * 32;
        tri_trans<T><<<(unsigned)((threads + 255) / 256), 256, 0, s>>>(
            a->uplo, a->rows, a->cols, A, a->lda, a->X, a->ldx, a->Xabs, a->ldxabs, a->woff,
            a->Y, a->ldy, a->Yabs, a->ldyabs);
        ABFT_CUDA_LAUNCHED();
        return ABFT_STATUS_SUCCESS;
    }
    if (a->rows == 0) return ABFT_STATUS_SUCCESS;
    /* Split the columns so that about 2048 blocks are in flight (132 SMs x 8 blocks of 256
     * threads: a panel's few rows need many chunks, the full matrix has enough row blocks),
     * chunks of at least 64 columns (16 per lane); the partial buffer is nchunks·4·rows
     * doubles. */
    const int64_t rblocks = (a->rows + TRI_R - 1) / TRI_R;
    if (rblocks > 0x7fffffff) return ABFT_STATUS_NOT_SUPPORTED;
    int64_t nchunks = (2048 + rblocks - 1) / rblocks;
    const int64_t maxchunks = (a->cols + 63) / 64;
    if (nchunks > maxchunks) nchunks = maxchunks;
    if (nchunks < 1) nchunks = a->cols > 0 ? 1 : 0;
    const int64_t chunk = nchunks > 0 ? (a->cols + nchunks - 1) / nchunks : 0;
    if (chunk > 0) nchunks = (a->cols + chunk - 1) / chunk;
    double *part = nullptr;
    if (nchunks > 0) {
        void *p = nullptr;
        ABFT_TRY_STATUS(abft_cuda_scratch(ctx, (size_t)nchunks * 4 * (size_t)a->rows * sizeof(double), &p));
        part = (double *)p;
        dim3 grid((unsigned)rblocks, (unsigned)nchunks);
        tri_partial<T><<<grid, TRI_THREADS, 0, s>>>(a->uplo, a->rows, a->cols, A, a->lda, a->X,
                                                    a->ldx, a->Xabs, a->ldxabs, a->woff, chunk,
                                                    part);
        ABFT_CUDA_LAUNCHED();
    }
    const int64_t rthreads = a->rows * 32;
    tri_reduce<<<(unsigned)((rthreads + 255) / 256), 256, 0, s>>>(
        a->uplo, a->rows, a->cols, nchunks, part, a->X, a->ldx, a->Xabs, a->ldxabs, a->woff,
        a->Y, a->ldy, a->Yabs, a->ldyabs);
    ABFT_CUDA_LAUNCHED();
    return ABFT_STATUS_SUCCESS;
}

/* dst = src + off (int -> int64); with acc != nullptr, the info folded into *acc as
 * abft_lu_getrf_args_t says. */
__global__ void ipiv_widen(int64_t k, const int *src, int64_t *dst, int64_t off, const int *info,
                           int64_t *acc) {
    int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < k) dst[i] = (int64_t)src[i] + off;
    if (i == 0 && acc != nullptr) {
        const int v = *info;
        if (v < 0) *acc = -1;
        else if (v > 0 && *acc == 0) *acc = (int64_t)v + off;
    }
}

/* Row permutation as a gather: A(rows[t], c) = old A(src[t], c) for t < cnt. Two phases
 * through a buffer (in place). */
template <typename T>
__global__ void perm_read(int64_t cnt, int64_t cols, const T *A, int64_t lda,
                          const int64_t *src, T *buf) {
    int64_t t = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    int64_t c = blockIdx.y + (int64_t)gridDim.y * blockIdx.z;
    if (t < cnt && c < cols) buf[t + c * cnt] = A[src[t] + c * lda];
}
template <typename T>
__global__ void perm_write(int64_t cnt, int64_t cols, T *A, int64_t lda, const int64_t *dst,
                           const T *buf) {
    int64_t t = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    int64_t c = blockIdx.y + (int64_t)gridDim.y * blockIdx.z;
    if (t < cnt && c < cols) A[dst[t] + c * lda] = buf[t + c * cnt];
}

template <typename T>
abft_status_t laswp_run(const abft_kctx_t *ctx, const abft_lu_laswp_args_t *a) {
    if (a->cols == 0 || a->k2 <= a->k1) return ABFT_STATUS_SUCCESS;
    /* Compose the swaps on the host over the rows they touch. */
    std::vector<int64_t> rows, src;
    auto find = [&](int64_t r) -> int64_t {
        for (size_t t = 0; t < rows.size(); ++t)
            if (rows[t] == r) return (int64_t)t;
        rows.push_back(r);
        src.push_back(r);
        return (int64_t)rows.size() - 1;
    };
    for (int64_t i = a->k1; i < a->k2; ++i) {
        int64_t p = a->ipiv[i] - 1 - a->ipiv_off;
        if (p == i) continue;
        int64_t ti = find(i), tp = find(p);
        int64_t tmp = src[ti];
        src[ti] = src[tp];
        src[tp] = tmp;
    }
    int64_t cnt = (int64_t)rows.size();
    if (cnt == 0) return ABFT_STATUS_SUCCESS;
    void *p = nullptr;
    size_t idx_bytes = 2 * (size_t)cnt * sizeof(int64_t);
    size_t buf_bytes = (size_t)cnt * (size_t)a->cols * sizeof(T);
    ABFT_TRY_STATUS(abft_cuda_scratch(ctx, idx_bytes + buf_bytes, &p));
    int64_t *d_rows = (int64_t *)p, *d_src = d_rows + cnt;
    T *buf = (T *)(d_src + cnt);
    cudaStream_t s = abft_cuda_stream(ctx);
    std::vector<int64_t> both(2 * (size_t)cnt);
    for (int64_t t = 0; t < cnt; ++t) {
        both[t] = rows[t];
        both[cnt + t] = src[t];
    }
    ABFT_CUDA_TRY(cudaMemcpyAsync(d_rows, both.data(), idx_bytes, cudaMemcpyHostToDevice, s));
    unsigned gy = (unsigned)(a->cols < 65535 ? a->cols : 65535);
    unsigned gz = (unsigned)((a->cols + gy - 1) / gy);
    dim3 grid((unsigned)((cnt + 127) / 128), gy, gz);
    perm_read<T><<<grid, 128, 0, s>>>(cnt, a->cols, (const T *)a->A, a->lda, d_src, buf);
    ABFT_CUDA_LAUNCHED();
    perm_write<T><<<grid, 128, 0, s>>>(cnt, a->cols, (T *)a->A, a->lda, d_rows, buf);
    ABFT_CUDA_LAUNCHED();
    /* The host vector may die now: an H2D copy from pageable memory returns only after the
     * source has been staged. */
    return ABFT_STATUS_SUCCESS;
}

/* ---- row interchanges with the pivots in device memory ------------------------------ */

/* Compose the interchanges i = k1..k2-1 (partner p_i = ipiv[i] - 1 - off) on the device,
 * one block. The candidates for a changed row are the rows k1..k2-1 and the partners; a
 * partner inside k1..k2-1 or equal to an earlier partner is dropped (each destination once).
 * The source of destination d is found by following d backwards through the swaps (the
 * candidates are independent: one thread each, over the pivots in order). Kept pairs with
 * source != destination go to dst[] / src[] in candidate order (a block scan); *count gets
 * their number.
 * The partners are staged in shared memory (SW_COMPOSE_TILE at a time, the whole panel at
 * once when k2 - k1 <= SW_COMPOSE_TILE, i.e. nb <= 1024): every thread of the walk reads the
 * same entry (a broadcast) and the loads do not depend on the walk, so the loop runs at
 * shared-memory issue rate instead of one L1 round trip per pivot. Wider panels walk the
 * tiles from the last down, reloading them for each round of candidates. When every index
 * fits (always in the online LU, whose m is a cuSOLVER int) the walk runs in 32 bits. */
constexpr int SW_COMPOSE_THREADS = 512;
constexpr int SW_COMPOSE_TILE = 1024;

__global__ void __launch_bounds__(SW_COMPOSE_THREADS)
swap_compose(int64_t k1, int64_t k2, const int64_t *ipiv, int64_t off, int64_t *dst,
             int64_t *src, int64_t *count) {
    __shared__ int warp_cnt[SW_COMPOSE_THREADS / 32];
    __shared__ int64_t piv[SW_COMPOSE_TILE]; /* partners of pivots t0 .. t0 + tile - 1 */
    __shared__ int piv32[SW_COMPOSE_TILE];   /* the same in 32 bits (narrow) */
    const int64_t w = k2 - k1, ncand = 2 * w;
    const int lane = threadIdx.x & 31, wid = threadIdx.x >> 5;
    const int64_t ntile = (w + SW_COMPOSE_TILE - 1) / SW_COMPOSE_TILE;
    /* narrow: one tile, and every row index the walk can meet (the rows k1..k2-1 and the
     * partners) in [0, INT_MAX]: the walk runs on 32-bit integers (half the instructions
     * of the 64-bit compares and selects; the loop is issue-bound, one block) */
    bool narrow = false;
    if (ntile == 1) {
        int bad = k2 > INT_MAX;
        for (int64_t t = threadIdx.x; t < w; t += SW_COMPOSE_THREADS) {
            const int64_t p = ipiv[k1 + t] - 1 - off;
            piv[t] = p;
            piv32[t] = (int)p;
            bad |= p < 0 || p > INT_MAX;
        }
        narrow = !__syncthreads_or(bad);
    }
    int64_t base = 0;
    for (int64_t c0 = 0; c0 < ncand; c0 += SW_COMPOSE_THREADS) {
        const int64_t t = c0 + threadIdx.x;
        const bool act = t < ncand;
        bool keep = false;
        int64_t d = 0, pos = 0, i0 = -1; /* i0: the pivot index whose partner this is */
        if (act) {
            if (t < w) {
                d = k1 + t;
            } else {
                i0 = k1 + (t - w);
                d = ipiv[i0] - 1 - off;
            }
            keep = t < w || d < k1 || d >= k2;
            pos = d;
        }
        /* tiles from the last: pivots t0 .. t1 - 1 (global indices k1 + t0 ..) */
        for (int64_t q = ntile - 1; q >= 0; --q) {
            const int64_t t0 = q * SW_COMPOSE_TILE;
            const int64_t t1 = t0 + SW_COMPOSE_TILE < w ? t0 + SW_COMPOSE_TILE : w;
            if (ntile > 1) {
                __syncthreads(); /* the previous tile is no longer read */
                for (int64_t u = t0 + threadIdx.x; u < t1; u += SW_COMPOSE_THREADS)
                    piv[u - t0] = ipiv[k1 + u] - 1 - off;
                __syncthreads();
            }
            if (keep && narrow) { /* t0 = 0, t1 = w, all indices fit */
                const int ik1 = (int)k1, id = (int)d, ii0 = (int)i0;
                int ipos = (int)pos;
#pragma unroll 8
                for (int u = (int)w - 1; u >= 0; --u) {
                    const int i = ik1 + u, p = piv32[u];
                    if (ipos == i) ipos = p;
                    else if (ipos == p) ipos = i;
                    if (i < ii0 && p == id) keep = false; /* an earlier partner: a repeat */
                }
                pos = ipos;
            } else if (keep) {
#pragma unroll 8
                for (int64_t u = t1 - 1; u >= t0; --u) {
                    const int64_t i = k1 + u, p = piv[u - t0];
                    if (pos == i) pos = p;
                    else if (pos == p) pos = i;
                    if (i < i0 && p == d) keep = false; /* an earlier partner: a repeat */
                }
            }
        }
        keep = keep && pos != d;
        const unsigned ballot = __ballot_sync(0xffffffffu, keep);
        if (lane == 0) warp_cnt[wid] = __popc(ballot);
        __syncthreads();
        int before = 0, total = 0;
        for (int q = 0; q < SW_COMPOSE_THREADS / 32; ++q) {
            if (q < wid) before += warp_cnt[q];
            total += warp_cnt[q];
        }
        if (keep) {
            const int64_t at = base + before + __popc(ballot & ((1u << lane) - 1u));
            dst[at] = d;
            src[at] = pos;
        }
        base += total;
        __syncthreads(); /* warp_cnt is rewritten next round */
    }
    if (threadIdx.x == 0) *count = base;
}

/* Apply the composed list in place. Columns 0..na-1 are the columns of A outside
 * [skip0, skip1) (type T), then ncols2 columns of the fp64 X2.
 *
 * Register path (cnt <= SW_APPLY_REG = 512, always the case for panels of nb <= 256: the list
 * has at most 2·nb entries): thread t owns list entries t and t + 256 (their dst / src in
 * registers, no shared memory); a block takes SW_APPLY_CB = 8 adjacent columns per step (a
 * group: A's columns and X2's columns form separate groups, the last of each may be short),
 * issues its up to 2 x 8 independent loads of the sources, one barrier, the 16 stores, one
 * barrier (a destination row of one entry is the source row of another in the same column).
 * Groups go to blocks in grid-stride order; when the host knows the list is short (2·(k2-k1)
 * <= 512) it launches one block per group.
 *
 * Otherwise block b owns whole columns (b, b + gridDim.x, ...): it reads the sources of all
 * its column's changed rows into buf, waits, writes them to the destinations. With smem, the
 * list and buf live in shared memory (cap entries each), else the list is read from global
 * memory and buf is this block's cap doubles of gbuf.
 *
 * Expected time of the register path (H100, n = 8192 fp64, nb = 256: cnt ~ 512, 8192
 * columns). Per column the list's 256 panel rows are contiguous (dst of the first half, src
 * of the partners: 2 KiB = 64 sectors read + 64 written) and the <= 256 partner rows are
 * scattered (one 32-byte sector each, read, then written back: the read leaves the sector in
 * L2, so 256 sectors from and 256 to DRAM). About 20 KiB of DRAM traffic per column, 168 MB
 * per panel: 55 us at 3 TB/s, ~60-70 us at the 2.4-2.8 TB/s that half-random 32-byte sector
 * traffic reaches. Loads in flight: 1025 blocks of 256 threads, at least 3 blocks (768
 * threads) resident per SM by registers, 16 independent loads each between barriers: >= 12 K
 * loads per SM in flight vs ~1 K needed (Little: ~3 MB over 132 SMs at ~1 us latency, ~20
 * bytes of DRAM traffic per load), where ~2 loads per thread between barriers were
 * latency-bound: this path should be bandwidth-bound, ~65 us per panel. */
constexpr int SW_APPLY_THREADS = 256;
constexpr int SW_APPLY_ROWS = 2;  /* list entries per thread in the register path */
constexpr int SW_APPLY_CB = 8;    /* columns per barrier pair in the register path */
constexpr int64_t SW_APPLY_REG = (int64_t)SW_APPLY_THREADS * SW_APPLY_ROWS;

/* Columns c0 .. c0 + nc - 1 (nc <= SW_APPLY_CB; column c at M + (c < skip0 ? c : c + skipw)
 * · ld) of the register path; entry r of this thread: source s[r] -> destination d[r]
 * (s[r] < 0: none). Contains two block barriers: all threads of the block call it alike. */
template <typename E>
__device__ __forceinline__ void swap_cols_reg(E *M, int64_t ld, int64_t c0, int64_t nc,
                                              int64_t skip0, int64_t skipw,
                                              const int64_t (&s)[SW_APPLY_ROWS],
                                              const int64_t (&d)[SW_APPLY_ROWS]) {
    E *col[SW_APPLY_CB];
    E v[SW_APPLY_ROWS][SW_APPLY_CB];
#pragma unroll
    for (int j = 0; j < SW_APPLY_CB; ++j) {
        const int64_t c = c0 + (j < nc ? j : 0);
        col[j] = M + (size_t)(c < skip0 ? c : c + skipw) * (size_t)ld;
    }
    /* unconditional loads (no branch between them): a missing entry reads row 0, a column
     * past nc column c0 again; neither is stored */
#pragma unroll
    for (int j = 0; j < SW_APPLY_CB; ++j)
#pragma unroll
        for (int r = 0; r < SW_APPLY_ROWS; ++r) v[r][j] = col[j][s[r] >= 0 ? s[r] : 0];
    __syncthreads();
#pragma unroll
    for (int j = 0; j < SW_APPLY_CB; ++j)
#pragma unroll
        for (int r = 0; r < SW_APPLY_ROWS; ++r)
            if (j < nc && s[r] >= 0) col[j][d[r]] = v[r][j];
    __syncthreads(); /* the next group's loads come after every store of this one */
}

template <typename T>
__global__ void __launch_bounds__(SW_APPLY_THREADS)
swap_apply(const int64_t *gdst, const int64_t *gsrc, const int64_t *count, int64_t cap,
           int smem, T *A, int64_t lda, int64_t na, int64_t skip0, int64_t skip1, double *X2,
           int64_t ldx2, int64_t ncols2, double *gbuf) {
    extern __shared__ double sh[];
    const int64_t cnt = *count;
    if (cnt == 0) return;
    if (cnt <= SW_APPLY_REG) {
        int64_t s[SW_APPLY_ROWS], d[SW_APPLY_ROWS];
#pragma unroll
        for (int r = 0; r < SW_APPLY_ROWS; ++r) {
            const int64_t t = threadIdx.x + (int64_t)r * SW_APPLY_THREADS;
            s[r] = t < cnt ? gsrc[t] : -1;
            d[r] = t < cnt ? gdst[t] : -1;
        }
        const int64_t ga = (na + SW_APPLY_CB - 1) / SW_APPLY_CB;
        const int64_t ng = ga + (ncols2 + SW_APPLY_CB - 1) / SW_APPLY_CB;
        for (int64_t g = blockIdx.x; g < ng; g += gridDim.x) {
            if (g < ga) {
                const int64_t c0 = g * SW_APPLY_CB, r = na - c0;
                swap_cols_reg<T>(A, lda, c0, r < SW_APPLY_CB ? r : SW_APPLY_CB, skip0,
                                 skip1 - skip0, s, d);
            } else {
                const int64_t c0 = (g - ga) * SW_APPLY_CB, r = ncols2 - c0;
                swap_cols_reg<double>(X2, ldx2, c0, r < SW_APPLY_CB ? r : SW_APPLY_CB, INT64_MAX,
                                      0, s, d);
            }
        }
        return;
    }
    const int64_t *dst = gdst, *src = gsrc;
    double *buf = smem ? nullptr : gbuf + (size_t)blockIdx.x * (size_t)cap;
    if (smem) {
        int64_t *sdst = (int64_t *)sh, *ssrc = sdst + cap;
        for (int64_t t = threadIdx.x; t < cnt; t += SW_APPLY_THREADS) {
            sdst[t] = gdst[t];
            ssrc[t] = gsrc[t];
        }
        dst = sdst;
        src = ssrc;
        buf = (double *)(ssrc + cap);
        __syncthreads();
    }
    const int64_t total = na + ncols2;
    for (int64_t c = blockIdx.x; c < total; c += gridDim.x) {
        if (c < na) {
            T *col = A + (size_t)(c < skip0 ? c : c + (skip1 - skip0)) * (size_t)lda;
            T *b = (T *)buf;
            for (int64_t t = threadIdx.x; t < cnt; t += SW_APPLY_THREADS) b[t] = col[src[t]];
            __syncthreads();
            for (int64_t t = threadIdx.x; t < cnt; t += SW_APPLY_THREADS) col[dst[t]] = b[t];
        } else {
            double *col = X2 + (size_t)(c - na) * (size_t)ldx2;
            for (int64_t t = threadIdx.x; t < cnt; t += SW_APPLY_THREADS) buf[t] = col[src[t]];
            __syncthreads();
            for (int64_t t = threadIdx.x; t < cnt; t += SW_APPLY_THREADS) col[dst[t]] = buf[t];
        }
        __syncthreads(); /* buf is rewritten for the next column */
    }
}

template <typename T>
abft_status_t laswp_dev_run(const abft_kctx_t *ctx, const abft_lu_laswp_args_t *a) {
    int64_t s0 = a->cols, s1 = a->cols; /* the skipped range, clipped */
    if (a->skip1 > a->skip0) {
        s0 = a->skip0 < a->cols ? a->skip0 : a->cols;
        s1 = a->skip1 < a->cols ? a->skip1 : a->cols;
    }
    const int64_t na = a->cols - (s1 - s0), n2 = a->X2 != nullptr ? a->cols2 : 0;
    if (a->k2 <= a->k1 || na + n2 == 0) return ABFT_STATUS_SUCCESS;
    const int64_t cap = 2 * (a->k2 - a->k1); /* at most this many changed rows */
    /* cap <= 512: the kernel surely takes its register path: no shared memory, one block per
     * group of SW_APPLY_CB columns (the hardware balances them). Otherwise the list length
     * is only known on the device: shared memory for the list (2 int64) and buf (one double)
     * per entry, within the 48 KiB every device gives without opting in, or the global
     * fallback; about 8 blocks per SM of an H100 (each block copies the list into shared
     * memory once, then loops over its columns). */
    const bool reg = cap <= SW_APPLY_REG;
    const size_t sbytes = (size_t)cap * 24;
    const int smem = !reg && sbytes <= 48 * 1024;
    int64_t grid = na + n2;
    if (reg) {
        grid = (na + SW_APPLY_CB - 1) / SW_APPLY_CB + (n2 + SW_APPLY_CB - 1) / SW_APPLY_CB;
        if (grid > (int64_t)1 << 20) grid = (int64_t)1 << 20;
    } else {
        const int64_t gmax = smem ? 1056 : 264;
        if (grid > gmax) grid = gmax;
    }
    size_t bytes = (2 * (size_t)cap + 1) * sizeof(int64_t);
    if (!reg && !smem) bytes += (size_t)grid * (size_t)cap * sizeof(double);
    void *p = nullptr;
    ABFT_TRY_STATUS(abft_cuda_scratch(ctx, bytes, &p));
    int64_t *dst = (int64_t *)p, *src = dst + cap, *count = src + cap;
    double *gbuf = !reg && !smem ? (double *)(count + 1) : nullptr;
    cudaStream_t s = abft_cuda_stream(ctx);
    swap_compose<<<1, SW_COMPOSE_THREADS, 0, s>>>(a->k1, a->k2, a->ipiv, a->ipiv_off, dst, src,
                                                  count);
    ABFT_CUDA_LAUNCHED();
    swap_apply<T><<<(unsigned)grid, SW_APPLY_THREADS, smem ? sbytes : 0, s>>>(
        dst, src, count, cap, smem, (T *)a->A, a->lda, na, s0, s1, a->X2, a->ldx2, n2, gbuf);
    ABFT_CUDA_LAUNCHED();
    return ABFT_STATUS_SUCCESS;
}

__global__ void gather_k(int64_t rows, int64_t c, const int64_t *perm, const double *X,
                         int64_t ldx, double *Y, int64_t ldy) {
    int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= rows) return;
    for (int64_t q = 0; q < c; ++q) Y[i + q * ldy] = X[perm[i] + q * ldx];
}

__global__ void axpy_k(int64_t rows, int64_t c, double alpha, const double *X, int64_t ldx,
                       double *Y, int64_t ldy, double alpha2, const double *X2, int64_t ldx2,
                       double *Y2, int64_t ldy2) {
    int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= rows) return;
    /* no contraction: the same rounding as the CPU */
    for (int64_t q = 0; q < c; ++q) Y[i + q * ldy] = __dadd_rn(Y[i + q * ldy], __dmul_rn(alpha, X[i + q * ldx]));
    if (X2 != nullptr)
        for (int64_t q = 0; q < c; ++q)
            Y2[i + q * ldy2] = __dadd_rn(Y2[i + q * ldy2], __dmul_rn(alpha2, X2[i + q * ldx2]));
}

} // namespace

extern "C" abft_status_t abft_cuda_lu_tri(const abft_kctx_t *ctx, const abft_lu_tri_args_t *a) {
    return a->prec == ABFT_PREC_D ? tri_run<double>(ctx, a) : tri_run<float>(ctx, a);
}

extern "C" abft_status_t abft_cuda_lu_getrf(const abft_kctx_t *ctx, const abft_lu_getrf_args_t *a) {
    const bool async = a->dinfo != nullptr;
    if (!async) *a->info = 0;
    int64_t k = a->m < a->n ? a->m : a->n;
    if (k == 0) return ABFT_STATUS_SUCCESS;
    if (!fits_int(a->m) || !fits_int(a->n) || !fits_int(a->lda)) return ABFT_STATUS_NOT_SUPPORTED;
    cusolverDnHandle_t hs = (cusolverDnHandle_t)ctx->solver;
    cudaStream_t s = abft_cuda_stream(ctx), old = nullptr;
    if (cusolverDnGetStream(hs, &old) != CUSOLVER_STATUS_SUCCESS) return ABFT_STATUS_CUSOLVER_ERROR;
    abft_status_t st = solver_status(cusolverDnSetStream(hs, s));
    int m = (int)a->m, n = (int)a->n, lda = (int)a->lda, lwork = 0;
    if (st == ABFT_STATUS_SUCCESS)
        st = solver_status(a->prec == ABFT_PREC_D
                               ? cusolverDnDgetrf_bufferSize(hs, m, n, (double *)a->A, lda, &lwork)
                               : cusolverDnSgetrf_bufferSize(hs, m, n, (float *)a->A, lda, &lwork));
    void *p = nullptr;
    size_t es = a->prec == ABFT_PREC_D ? 8 : 4;
    size_t wbytes = ((size_t)lwork * es + 255) / 256 * 256;
    if (st == ABFT_STATUS_SUCCESS)
        st = abft_cuda_scratch(ctx, wbytes + ((size_t)k + 1) * sizeof(int), &p);
    if (st == ABFT_STATUS_SUCCESS) {
        int *ip = (int *)((char *)p + wbytes), *dinfo = ip + k;
        st = solver_status(a->prec == ABFT_PREC_D
                               ? cusolverDnDgetrf(hs, m, n, (double *)a->A, lda, (double *)p, ip, dinfo)
                               : cusolverDnSgetrf(hs, m, n, (float *)a->A, lda, (float *)p, ip, dinfo));
        if (st == ABFT_STATUS_SUCCESS) {
            ipiv_widen<<<(unsigned)((k + 255) / 256), 256, 0, s>>>(k, ip, a->ipiv, a->ipiv_off,
                                                                  dinfo, a->dinfo);
            st = abft_cuda_status(cudaGetLastError());
        }
        /* the pivots and the info are adjacent: one transfer when the caller wants both */
        std::vector<int> hp(async ? 0 : a->hpiv != nullptr ? (size_t)k + 1 : 1);
        int *src = a->hpiv != nullptr ? ip : dinfo;
        if (st == ABFT_STATUS_SUCCESS && !async)
            st = abft_cuda_status(cudaMemcpyAsync(hp.data(), src, hp.size() * sizeof(int),
                                                  cudaMemcpyDeviceToHost, s));
        if (st == ABFT_STATUS_SUCCESS && !async) st = abft_cuda_status(cudaStreamSynchronize(s));
        if (st == ABFT_STATUS_SUCCESS && !async) {
            int hinfo = hp[hp.size() - 1];
            if (hinfo < 0) st = ABFT_STATUS_CUSOLVER_ERROR;
            else *a->info = hinfo;
            if (a->hpiv != nullptr)
                for (int64_t i = 0; i < k; ++i) a->hpiv[i] = hp[(size_t)i] + a->ipiv_off;
        }
    }
    cusolverStatus_t r = cusolverDnSetStream(hs, old);
    if (st == ABFT_STATUS_SUCCESS && r != CUSOLVER_STATUS_SUCCESS) st = ABFT_STATUS_CUSOLVER_ERROR;
    return st;
}

extern "C" abft_status_t abft_cuda_lu_laswp(const abft_kctx_t *ctx, const abft_lu_laswp_args_t *a) {
    const bool d = a->fp64 || a->prec == ABFT_PREC_D;
    if (a->dev_ipiv) return d ? laswp_dev_run<double>(ctx, a) : laswp_dev_run<float>(ctx, a);
    /* host pivots: each piece through the host-composed gather */
    abft_lu_laswp_args_t b = *a;
    b.skip0 = b.skip1 = 0;
    b.X2 = nullptr;
    if (a->skip1 > a->skip0 && a->skip0 < a->cols) {
        const int64_t s1 = a->skip1 < a->cols ? a->skip1 : a->cols;
        b.cols = a->skip0;
        ABFT_TRY_STATUS(d ? laswp_run<double>(ctx, &b) : laswp_run<float>(ctx, &b));
        b.cols = a->cols - s1;
        b.A = (char *)a->A + (size_t)s1 * (size_t)a->lda * (d ? 8 : 4);
    }
    ABFT_TRY_STATUS(d ? laswp_run<double>(ctx, &b) : laswp_run<float>(ctx, &b));
    if (a->X2 == nullptr) return ABFT_STATUS_SUCCESS;
    b.fp64 = 1;
    b.cols = a->cols2;
    b.A = a->X2;
    b.lda = a->ldx2;
    return laswp_run<double>(ctx, &b);
}

extern "C" abft_status_t abft_cuda_lu_trsm(const abft_kctx_t *ctx, const abft_lu_trsm_args_t *a) {
    if (a->m == 0 || a->n == 0) return ABFT_STATUS_SUCCESS;
    if (!fits_int(a->m) || !fits_int(a->n) || !fits_int(a->lda) || !fits_int(a->ldb))
        return ABFT_STATUS_NOT_SUPPORTED;
    cublasHandle_t hb = (cublasHandle_t)ctx->blas;
    abft_blas_saved sv;
    cublasStatus_t s = CUBLAS_STATUS_SUCCESS;
    if (!abft_blas_enter(hb, ctx, &sv, &s)) return ABFT_STATUS_CUBLAS_ERROR;
    cublasFillMode_t uplo = a->uplo ? CUBLAS_FILL_MODE_LOWER : CUBLAS_FILL_MODE_UPPER;
    cublasOperation_t tr = a->trans ? CUBLAS_OP_T : CUBLAS_OP_N;
    cublasDiagType_t dg = a->uplo ? CUBLAS_DIAG_UNIT : CUBLAS_DIAG_NON_UNIT;
    int m = (int)a->m, n = (int)a->n, lda = (int)a->lda, ldb = (int)a->ldb;
    if (s == CUBLAS_STATUS_SUCCESS) {
        if (a->prec == ABFT_PREC_D) {
            const double one = 1.0;
            s = cublasDtrsm(hb, CUBLAS_SIDE_LEFT, uplo, tr, dg, m, n, &one, (const double *)a->A,
                            lda, (double *)a->B, ldb);
        } else {
            const float one = 1.0f;
            s = cublasStrsm(hb, CUBLAS_SIDE_LEFT, uplo, tr, dg, m, n, &one, (const float *)a->A,
                            lda, (float *)a->B, ldb);
        }
    }
    return blas_status(abft_blas_leave(hb, &sv, s));
}

extern "C" abft_status_t abft_cuda_lu_gather(const abft_kctx_t *ctx, const abft_lu_gather_args_t *a) {
    if (a->rows == 0) return ABFT_STATUS_SUCCESS;
    gather_k<<<(unsigned)((a->rows + 255) / 256), 256, 0, abft_cuda_stream(ctx)>>>(
        a->rows, a->c, a->perm, a->X, a->ldx, a->Y, a->ldy);
    ABFT_CUDA_LAUNCHED();
    return ABFT_STATUS_SUCCESS;
}

extern "C" abft_status_t abft_cuda_lu_axpy(const abft_kctx_t *ctx, const abft_lu_axpy_args_t *a) {
    if (a->rows == 0) return ABFT_STATUS_SUCCESS;
    axpy_k<<<(unsigned)((a->rows + 255) / 256), 256, 0, abft_cuda_stream(ctx)>>>(
        a->rows, a->c, a->alpha, a->X, a->ldx, a->Y, a->ldy, a->alpha2, a->X2, a->ldx2, a->Y2,
        a->ldy2);
    ABFT_CUDA_LAUNCHED();
    return ABFT_STATUS_SUCCESS;
}

extern "C" abft_status_t abft_cuda_lu_get(const abft_kctx_t *ctx, const abft_lu_elem_args_t *a,
                                          double *v) {
    cudaStream_t s = abft_cuda_stream(ctx);
    size_t off = (size_t)a->i + (size_t)a->j * (size_t)a->lda;
    if (a->prec == ABFT_PREC_D) {
        ABFT_CUDA_TRY(cudaMemcpyAsync(v, (const double *)a->A + off, 8, cudaMemcpyDeviceToHost, s));
        ABFT_CUDA_TRY(cudaStreamSynchronize(s));
    } else {
        float f = 0;
        ABFT_CUDA_TRY(cudaMemcpyAsync(&f, (const float *)a->A + off, 4, cudaMemcpyDeviceToHost, s));
        ABFT_CUDA_TRY(cudaStreamSynchronize(s));
        *v = f;
    }
    return ABFT_STATUS_SUCCESS;
}

extern "C" abft_status_t abft_cuda_lu_set(const abft_kctx_t *ctx, const abft_lu_elem_args_t *a,
                                          double v) {
    cudaStream_t s = abft_cuda_stream(ctx);
    size_t off = (size_t)a->i + (size_t)a->j * (size_t)a->lda;
    if (a->prec == ABFT_PREC_D) {
        ABFT_CUDA_TRY(cudaMemcpyAsync((double *)a->A + off, &v, 8, cudaMemcpyHostToDevice, s));
    } else {
        float f = (float)v;
        ABFT_CUDA_TRY(cudaMemcpyAsync((float *)a->A + off, &f, 4, cudaMemcpyHostToDevice, s));
        ABFT_CUDA_TRY(cudaStreamSynchronize(s));
        return ABFT_STATUS_SUCCESS;
    }
    ABFT_CUDA_TRY(cudaStreamSynchronize(s));
    return ABFT_STATUS_SUCCESS;
}

extern "C" abft_status_t abft_cuda_solver_arith(void *solver, abft_prec_t prec, abft_arith_t *a) {
    if (solver == nullptr) return ABFT_STATUS_NOT_INITIALIZED;
    a->u_in = 0.0;
    a->u = prec == ABFT_PREC_D ? 0x1p-53 : 0x1p-24;
    a->eta = prec == ABFT_PREC_D ? 0x1p-1074 : 0x1p-149;
#if defined(CUSOLVER_VERSION) && CUSOLVER_VERSION >= 12000
    /* cuSOLVER 12 (CUDA 13) has math modes of its own: DEFAULT (IEEE), FP32 emulated with
     * BF16x9 (modelled as cuBLAS's: u = 2^-22), and in later releases FP64 emulated with
     * fixed point (bit 4), refused like cuBLAS's */
    cusolverMathMode_t mode = CUSOLVER_DEFAULT_MATH;
    if (cusolverDnGetMathMode((cusolverDnHandle_t)solver, &mode) != CUSOLVER_STATUS_SUCCESS)
        return ABFT_STATUS_CUSOLVER_ERROR;
    if (prec == ABFT_PREC_S && ((int)mode & (int)CUSOLVER_FP32_EMULATED_BF16X9_MATH) != 0)
        a->u = 0x1p-22;
    if (prec == ABFT_PREC_D && ((int)mode & 4) != 0) return ABFT_STATUS_NOT_SUPPORTED;
#endif
    return ABFT_STATUS_SUCCESS;
}
