/* abft CUDA backend: the checksum comparison (residual against bound).
 *
 * (1) Each block counts its flagged entries and takes the max ratio of its chunk (one entry
 * per thread: each entry is a chain of dependent loads and two divisions, so the kernel
 * wants many threads, not many entries per thread); the per-block counts and maxima come to
 * the host through pinned memory and are added there in block order. (2) Only when something
 * was flagged and a list is asked for (the rare path, one more round trip), each block whose
 * first flagged entry can still be in the list finds its offset (sum of the counts before
 * it) and writes its flagged indices in ascending order by a block scan. Every operation is
 * spelled with explicit rounding
 * (__dmul_rn/__dadd_rn) so that no multiply-add is contracted: the flags and ratios are those
 * of the CPU oracle, bit for bit. */
#include <cuda_runtime.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "abft_cuda_common.cuh"

namespace {

constexpr int CMP_THREADS = 256;
constexpr int CMP_PER_THREAD = 1;
constexpr int CMP_CHUNK = CMP_THREADS * CMP_PER_THREAD;

struct cmp_params {
    int64_t n;
    const double *R, *Ra, *S, *Sa, *P, *Pa;
    int64_t ldr, ldra, lds, ldsa, ldp, ldpa;
    int use_p;
    double alpha, beta, coef_s, coef_r, abs_floor;
    const double *T; /* the tight bound's part from the inputs (NULL: not the tight mode) */
    int64_t ldt;
    double tcoef_s, tcoef_p, tcoef_r, tcoef_x, tscale;
};

/* Entry i: flagged in either column; *ratio gets max |d|/t (0/0 = 0, NaN -> +Inf). */
__device__ __forceinline__ bool cmp_entry(const cmp_params &p, int64_t i, double *ratio) {
    bool flagged = false;
    double mr = 0.0;
#pragma unroll
    for (int q = 0; q < 2; ++q) {
        const double as = __dmul_rn(p.alpha, p.S[i + q * p.lds]);
        const double sa = __dmul_rn(fabs(p.alpha), p.Sa[i + q * p.ldsa]);
        const double bp = p.use_p ? __dmul_rn(p.beta, p.P[i + q * p.ldp]) : 0.0;
        const double pa = p.use_p ? __dmul_rn(fabs(p.beta), p.Pa[i + q * p.ldpa]) : 0.0;
        const double s = __dadd_rn(as, bp), rv = p.R[i + q * p.ldr];
        const double ra = p.Ra[i + q * p.ldra];
        const double tt = p.T != NULL ? p.T[i + q * p.ldt] : -1.0;
        const double wc = __dadd_rn(
            __dadd_rn(__dmul_rn(p.coef_s, __dadd_rn(sa, pa)), __dmul_rn(p.coef_r, ra)),
            p.abs_floor);
        double t;
        if (tt >= 0.0) { /* the tight bound, in the CPU oracle's order, at most the worst case's */
            t = __dadd_rn(__dmul_rn(tt, p.tscale), __dmul_rn(p.tcoef_s, sa));
            t = __dadd_rn(t, __dmul_rn(p.tcoef_p, pa));
            t = __dadd_rn(t, __dmul_rn(p.tcoef_r, ra));
            t = __dadd_rn(t, __dmul_rn(p.tcoef_x,
                                       __dadd_rn(__dadd_rn(fabs(rv), fabs(as)), fabs(bp))));
            t = __dadd_rn(t, p.abs_floor);
            if (wc < t) t = wc;
        } else if (tt != tt) {
            t = NAN;
        } else {
            t = wc;
        }
        const double d = fabs(__dsub_rn(rv, s));
        /* an infinite bound (|C| or the encodings overflowed, an Inf in C) verifies nothing */
        if (!(d <= t) || isinf(t)) flagged = true;
        double r = d == 0.0 ? 0.0 : __ddiv_rn(d, t);
        if (isnan(r) || !(t < INFINITY)) r = INFINITY;
        if (r > mr) mr = r;
    }
    *ratio = mr;
    return flagged;
}

/* Counts and max ratio of one block of job p (block index b within the job). */
__device__ __forceinline__ void count_block(const cmp_params &p, int64_t b, int64_t *counts,
                                            double *maxes, int64_t *hcounts, double *hmaxes) {
    __shared__ int64_t scount[CMP_THREADS / 32];
    __shared__ double smax[CMP_THREADS / 32];
    const int64_t base = b * CMP_CHUNK;
    int64_t cnt = 0;
    double mr = 0.0;
    for (int k = 0; k < CMP_PER_THREAD; ++k) {
        const int64_t i = base + (int64_t)k * CMP_THREADS + threadIdx.x;
        if (i < p.n) {
            double r;
            cnt += cmp_entry(p, i, &r) ? 1 : 0;
            mr = fmax(mr, r);
        }
    }
    for (int off = 16; off >= 1; off /= 2) {
        cnt += __shfl_xor_sync(0xffffffffu, cnt, off);
        mr = fmax(mr, __shfl_xor_sync(0xffffffffu, mr, off));
    }
    const int w = threadIdx.x >> 5;
    if ((threadIdx.x & 31) == 0) {
        scount[w] = cnt;
        smax[w] = mr;
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        int64_t c = 0;
        double m = 0.0;
        for (int k = 0; k < CMP_THREADS / 32; ++k) {
            c += scount[k];
            m = fmax(m, smax[k]);
        }
        counts[blockIdx.x] = c;
        maxes[blockIdx.x] = m;
        if (hcounts != NULL) { /* the host's copy, in mapped pinned memory */
            hcounts[blockIdx.x] = c;
            hmaxes[blockIdx.x] = m;
        }
    }
}

/* Two jobs in one launch: blocks [0, blocks_a) count job a, the rest job b (one call per
 * job, so that each reads its job from the parameter space, as reduce_kernel does). */
__global__ void __launch_bounds__(CMP_THREADS) compare_count_kernel(const cmp_params a,
                                                                     const cmp_params b,
                                                                     int64_t blocks_a,
                                                                     int64_t *counts,
                                                                     double *maxes,
                                                                     int64_t *hcounts,
                                                                     double *hmaxes) {
    abft_pdl_enter();
    const int64_t blk = (int64_t)blockIdx.x;
    if (blk < blocks_a)
        count_block(a, blk, counts, maxes, hcounts, hmaxes);
    else
        count_block(b, blk - blocks_a, counts, maxes, hcounts, hmaxes);
}

__global__ void __launch_bounds__(CMP_THREADS) compare_list_kernel(const cmp_params p,
                                                                    const int64_t *counts,
                                                                    int64_t max_list,
                                                                    int64_t *list) {
    __shared__ int64_t sred[CMP_THREADS / 32];
    __shared__ int64_t s_offset;
    __shared__ int swarp[CMP_THREADS / 32];
    abft_pdl_enter();
    if (counts[blockIdx.x] == 0) return; /* uniform across the block */
    /* Offset of this block: the counts of the blocks before it (integers: any order). */
    int64_t o = 0;
    for (int64_t b = threadIdx.x; b < (int64_t)blockIdx.x; b += CMP_THREADS) o += counts[b];
    for (int off = 16; off >= 1; off /= 2) o += __shfl_xor_sync(0xffffffffu, o, off);
    const int w = threadIdx.x >> 5, lane = threadIdx.x & 31;
    if (lane == 0) sred[w] = o;
    __syncthreads();
    if (threadIdx.x == 0) {
        int64_t t = 0;
        for (int k = 0; k < CMP_THREADS / 32; ++k) t += sred[k];
        s_offset = t;
    }
    __syncthreads();
    int64_t offset = s_offset;
    if (offset >= max_list) return; /* uniform */
    const int64_t base = (int64_t)blockIdx.x * CMP_CHUNK;
    for (int k = 0; k < CMP_PER_THREAD; ++k) {
        const int64_t i = base + (int64_t)k * CMP_THREADS + threadIdx.x;
        double r;
        const bool f = i < p.n && cmp_entry(p, i, &r);
        const unsigned ballot = __ballot_sync(0xffffffffu, f);
        if (lane == 0) swarp[w] = __popc(ballot);
        __syncthreads();
        int before = 0, total = 0;
        for (int k2 = 0; k2 < CMP_THREADS / 32; ++k2) {
            if (k2 < w) before += swarp[k2];
            total += swarp[k2];
        }
        if (f) {
            const int64_t pos = offset + before + __popc(ballot & ((1u << lane) - 1u));
            if (pos < max_list) list[pos] = i;
        }
        offset += total;
        __syncthreads(); /* swarp is rewritten next round */
    }
}

static cmp_params cmp_job(const abft_compare_args_t *a) {
    cmp_params p;
    p.n = a->n;
    p.R = a->R;
    p.ldr = a->ldr;
    p.Ra = a->Ra;
    p.ldra = a->ldra;
    p.S = a->S;
    p.lds = a->lds;
    p.Sa = a->Sa;
    p.ldsa = a->ldsa;
    p.use_p = a->beta != 0.0 && a->P != NULL;
    p.P = p.use_p ? a->P : a->S;
    p.ldp = p.use_p ? a->ldp : a->lds;
    p.Pa = p.use_p ? a->Pa : a->Sa;
    p.ldpa = p.use_p ? a->ldpa : a->ldsa;
    p.alpha = a->alpha;
    p.beta = a->beta;
    p.coef_s = a->coef_s;
    p.coef_r = a->coef_r;
    p.abs_floor = a->abs_floor;
    p.T = a->T;
    p.ldt = a->ldt;
    p.tcoef_s = a->tcoef_s;
    p.tcoef_p = a->tcoef_p;
    p.tcoef_r = a->tcoef_r;
    p.tcoef_x = a->tcoef_x;
    p.tscale = a->tscale;
    return p;
}

} /* namespace */

/* One or two jobs: their counts in one launch and one synchronisation (the full checksums'
 * row and column sides), then the lists of the jobs that flagged something and want one. */
extern "C" abft_status_t abft_cuda_compare(const abft_kctx_t *ctx, const abft_compare_args_t *a,
                                           int njobs) {
    if (njobs < 1 || njobs > 2) return ABFT_STATUS_INTERNAL_ERROR;
    cudaStream_t st = abft_cuda_stream(ctx);
    cmp_params p[2];
    int64_t nb[2] = {0, 0}, nlist[2] = {0, 0};
    for (int j = 0; j < njobs; ++j) {
        *a[j].nflagged = 0;
        *a[j].max_ratio = 0.0;
        p[j] = cmp_job(&a[j]);
        nb[j] = a[j].n > 0 ? (a[j].n + CMP_CHUNK - 1) / CMP_CHUNK : 0;
        nlist[j] = a[j].max_list > 0 && a[j].n > 0 ? (a[j].max_list < a[j].n ? a[j].max_list : a[j].n) : 0;
    }
    const int64_t blocks = nb[0] + nb[1];
    if (blocks == 0) return ABFT_STATUS_SUCCESS;
    if (blocks > 0x7fffffff) return ABFT_STATUS_NOT_SUPPORTED;
    const size_t bytes = (size_t)blocks * 16 + (size_t)(nlist[0] + nlist[1]) * 8;
    void *scr = NULL, *hp = NULL, *hdev = NULL;
    ABFT_TRY_STATUS(abft_cuda_scratch(ctx, bytes, &scr));
    ABFT_TRY_STATUS(abft_cuda_pinned(ctx, (size_t)blocks * 16, &hp, &hdev));
    int64_t *d_counts = (int64_t *)scr;
    double *d_maxes = (double *)(d_counts + blocks);
    int64_t *d_list = (int64_t *)(d_maxes + blocks);

    /* Per-block counts and maxima to the host (written there by the kernel when the pinned
     * block is mapped, else copied), added there in block order. */
    int64_t *hd_counts = (int64_t *)hdev;
    ABFT_TRY_STATUS(abft_cuda_launch(ctx, true, compare_count_kernel, dim3((unsigned)blocks),
                                     CMP_THREADS, 0, p[0], njobs > 1 ? p[1] : p[0], nb[0],
                                     d_counts, d_maxes, hd_counts,
                                     hd_counts != NULL ? (double *)(hd_counts + blocks) : NULL));
    if (hd_counts == NULL)
        ABFT_CUDA_TRY(cudaMemcpyAsync(hp, d_counts, (size_t)blocks * 16, cudaMemcpyDeviceToHost, st));
    ABFT_CUDA_TRY(cudaStreamSynchronize(st));
    const int64_t *h = (const int64_t *)hp;
    const double *hm = (const double *)(h + blocks);
    int64_t total[2] = {0, 0}, ncopy[2] = {0, 0};
    double mr[2] = {0.0, 0.0};
    bool lists = false;
    for (int j = 0; j < njobs; ++j) {
        const int64_t b0 = j == 0 ? 0 : nb[0];
        for (int64_t b = b0; b < b0 + nb[j]; ++b) {
            total[j] += h[b];
            if (hm[b] > mr[j]) mr[j] = hm[b];
        }
        ncopy[j] = total[j] < nlist[j] ? total[j] : nlist[j];
        lists = lists || ncopy[j] > 0;
    }
    if (lists) {
        int64_t *dl = d_list;
        for (int j = 0; j < njobs; ++j) {
            if (ncopy[j] > 0) {
                ABFT_TRY_STATUS(abft_cuda_launch(ctx, true, compare_list_kernel, dim3((unsigned)nb[j]),
                                                 CMP_THREADS, 0, p[j],
                                                 (const int64_t *)(d_counts + (j == 0 ? 0 : nb[0])),
                                                 nlist[j], dl));
                ABFT_CUDA_TRY(cudaMemcpyAsync(a[j].list, dl, (size_t)ncopy[j] * 8,
                                              cudaMemcpyDeviceToHost, st));
            }
            dl += nlist[j];
        }
        ABFT_CUDA_TRY(cudaStreamSynchronize(st));
    }
    for (int j = 0; j < njobs; ++j) {
        *a[j].nflagged = total[j];
        *a[j].max_ratio = mr[j];
    }
    return ABFT_STATUS_SUCCESS;
}
