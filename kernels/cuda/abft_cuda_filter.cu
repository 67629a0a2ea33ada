/* abft CUDA backend: the tight bound's filter (abft_tight_args_t.filter; docs/bound.md, "Two
 * stages"): for each row i of C = op(A)·op(B) and weight column q, the parts of the full
 * tight pass (abft_cuda_tight.cu) that need no class weights, windows, lane orders or
 * guards, computed in fp32 arithmetic:
 *
 *   T(i, q) = lambda·|alpha|·sqrt(u^2·((sum_{t sampled} sum_{r<16} x_tr^2 + F)/32
 *                                      + Ws·sum_l a_il^2·B2_l) + u_chk^2·sum_l a_il^2·Yb_l^2)
 *
 * with x_tr the running sums of a_il·Z_lr along l (Z = op(B)·diag(w)·G, the first
 * ABFT_TIGHT_FILTER_Q = 16 of the natural order's 32 draws G), their squares taken at every
 * ABFT_TIGHT_FILTER_S-th term of each half and at its end (abft_tight_filter_sample), F the
 * final roundings (2·x^2 at the split and at the end), Ws = 121 (the short nodes with
 * classes of one) and B2_l = sum_j w_j^2·b_lj^2 estimated by ABFT_TIGHT_FILTER_SHORT times
 * the mean of Z_lr^2. The CPU filter (kernels/cpu/abft_cpu_tight.c) computes the same in
 * fp64 and is its oracle. An estimate kept below the full pass's part (a subset of its
 * terms): the protocol accepts a row whose residual is within it and otherwise runs the full
 * pass and takes the larger of the two; tests/gpu/test_tight_gpu.c checks it below the full
 * pass. Five launches:
 *
 *   gw_kernel      Gw (n x 32, data precision): G and diag(w)·G;
 *   (cuBLAS)       Zt = Gw^T·op(B)^T (32 x k): one read of op(B);
 *   aux_kernel     per term l: the mean of Z_lr^2 per weight column, and Yb_l^2;
 *   scan_kernel    per 256 rows and segment of l: 8 warps, each 8 sketch columns of 128 rows,
 *                  a lane 4 rows; each segment's running sums from zero, their sampled sum
 *                  and sum of squares (cnt samples: sum (X0 + y)^2 = cnt·X0^2 + 2·X0·sum y
 *                  + sum y^2), so that segments run in parallel and combine exactly;
 *   combine_kernel per row and sketch column: the segments in order; then per row, T. */
#include <cuda_runtime.h>
#include <math.h>
#include <stdint.h>

#include "abft_cuda_common.cuh"
#include "abft_cuda_tuning.h"
#include "abft_tight_common.h"

extern "C" abft_status_t abft_cuda_gemm(const abft_kctx_t *ctx, const abft_gemm_args_t *a);

namespace {

constexpr int Q = ABFT_TIGHT_Q;   /* the full pass's sketch columns per weight column */
constexpr int QF = ABFT_TIGHT_FILTER_Q; /* the filter's: the first QF of those */
constexpr int NC = 2 * QF;        /* e, then w */
constexpr int CPW = 8;            /* sketch columns per thread */
constexpr int CG = NC / CPW;      /* column groups: a warp each */
constexpr int RG = 2;             /* row groups: a warp each */
/* rows per thread: 4 (one block of 8 warps per SM: 794 us for the fp32 scan at 8192 under
 * ncu, 837 us with 2 rows and two blocks per SM); per block RG·32·RPT */
constexpr int RPT = 4;
constexpr int FL = 16;            /* terms per tile */
constexpr int FT = CG * RG * 32;  /* threads per block */
constexpr int NOUT = 3 * NC + 4;  /* per row and segment: y_end, sum y, sum y^2; 4 sums */
constexpr int S = ABFT_TIGHT_FILTER_S; /* the squares' stride */
static_assert(FL % S == 0, "a tile holds whole groups of S terms");
static_assert(FT == 256 && CG == 4, "scan_kernel: 8 warps, a column group each for the 4 aux sums");

struct fparams {
    int64_t m, k, lda, ldt;
    int transa;
    const void *A;
    const void *Zt; /* 64 x k, data precision */
    const float4 *aux;
    float *out;     /* nseg x NOUT x m */
    int64_t ks, nseg1, nseg, L;
    double *T;
    double lambda, alpha, u, u_chk;
};

/* Segment s: [b, e) of l, never across the split ks. */
__host__ __device__ inline void seg_bounds(const fparams &p, int64_t s, int64_t *b, int64_t *e) {
    if (s < p.nseg1) {
        *b = s * p.L;
        *e = *b + p.L < p.ks ? *b + p.L : p.ks;
    } else {
        *b = p.ks + (s - p.nseg1) * p.L;
        *e = *b + p.L < p.k ? *b + p.L : p.k;
    }
}

template <typename T>
__global__ void gw_kernel(T *G, int64_t n) {
    const int64_t x = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    if (x >= n * NC) return;
    const int64_t j = x % n;
    const int c = (int)(x / n);
    const double g = abft_tight_gauss_lane(j, c % QF, 0);
    G[x] = (T)(c < QF ? g : (double)(j + 1) * g);
}

/* The short nodes' sum_j w_j^2·b_lj^2 estimated by the mean of Z_lr^2 over the 32 draws:
 * unbiased, but up to about twice the exact sum for some rows (a row of op(B) held by one
 * column j sees its 32 draws' mean square); taken at a quarter, so that it stays below the
 * exact sum the full pass uses (a mean square of 32 normal draws above 4 has probability
 * below 1e-15), and the filter below the full pass (a review found it up to 1.125 times
 * above, undeflated). */
constexpr float SHORT_SCALE = (float)ABFT_TIGHT_FILTER_SHORT;

template <typename T>
__global__ void aux_kernel(const T *Zt, const double *Yb, int64_t ldyb, int64_t k, float4 *aux) {
    const int64_t l = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    if (l >= k) return;
    float z0 = 0.0f, z1 = 0.0f;
    for (int c = 0; c < QF; ++c) {
        const float a = (float)Zt[(size_t)l * NC + c], b = (float)Zt[(size_t)l * NC + QF + c];
        z0 = fmaf(a, a, z0), z1 = fmaf(b, b, z1);
    }
    const float y0 = (float)Yb[l], y1 = (float)Yb[l + ldyb];
    aux[l] = make_float4(SHORT_SCALE * z0 / QF, SHORT_SCALE * z1 / QF, y0 * y0, y1 * y1);
}

/* One block: RPT·32 rows of op(A) and one segment of l; warp w the sketch columns
 * 8w..8w+7, lane the rows lane + 32·r (r < RPT), so each thread keeps RPT x 8 running sums
 * (32 independent chains). op(A)'s tile and Zt's are staged through shared memory, the next
 * tile prefetched into registers while the current one is summed. Every S-th term (and at
 * the segment's last) the running sums' squares are taken (abft_tight_filter_sample: the
 * segments start at multiples of S within their half). */
template <int RPT>
struct tile_regs { /* converted to fp32 as loaded */
    float a[RG * 32 * RPT * FL / FT];
    float z[FL * NC / FT];
    float4 x;
};

template <typename T, int RPT>
__device__ __forceinline__ void tile_load(const fparams &p, int64_t i0, int64_t l0, int lim,
                                          tile_regs<RPT> &r) {
    constexpr int FR = RG * 32 * RPT;
    const T *A = (const T *)p.A, *Zt = (const T *)p.Zt;
#pragma unroll
    for (int q = 0; q < FR * FL / FT; ++q) { /* op(A)'s tile, coalesced either way */
        const int v = threadIdx.x + q * FT;
        const int rr = p.transa ? v / FL : v % FR, ll = p.transa ? v % FL : v / FR;
        const int64_t gi = i0 + rr, gl = l0 + ll;
        T a = (T)0;
        if (gi < p.m && ll < lim)
            a = p.transa ? A[(size_t)gl + (size_t)gi * p.lda] : A[(size_t)gi + (size_t)gl * p.lda];
        r.a[q] = (float)a;
    }
#pragma unroll
    for (int q = 0; q < FL * NC / FT; ++q) { /* Zt's columns l0.., contiguous */
        const int v = threadIdx.x + q * FT, ll = v / NC;
        r.z[q] = ll < lim ? (float)Zt[(size_t)l0 * NC + (size_t)v] : 0.0f;
    }
    if (threadIdx.x < FL)
        r.x = (int)threadIdx.x < lim ? p.aux[l0 + threadIdx.x] : make_float4(0, 0, 0, 0);
}

template <typename T, bool SPLIT, int RPT>
__global__ void __launch_bounds__(FT, RPT > 2 ? 1 : 2) scan_kernel(fparams p) {
    constexpr int FR = RG * 32 * RPT;
    __shared__ float As[FL][FR + 1];
    __shared__ __align__(16) float Zs[FL][NC];
    __shared__ float4 Xs[FL];
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const int cg = warp % CG, rg = warp / CG, row0 = rg * 32 * RPT + lane;
    const int64_t i0 = (int64_t)blockIdx.x * FR;
    int64_t b, e;
    seg_bounds(p, blockIdx.y, &b, &e);
    float x[RPT][CPW], s1[RPT][CPW], s2[RPT][CPW], ax[RPT];
#pragma unroll
    for (int r = 0; r < RPT; ++r) {
        ax[r] = 0.0f;
#pragma unroll
        for (int c = 0; c < CPW; ++c) x[r][c] = s1[r][c] = s2[r][c] = 0.0f;
    }
    tile_regs<RPT> nx;
    int lim = e - b < FL ? (int)(e - b) : FL;
    tile_load<T, RPT>(p, i0, b, lim, nx);
    for (int64_t l0 = b; l0 < e; l0 += FL) {
#pragma unroll
        for (int q = 0; q < FR * FL / FT; ++q) {
            const int v = threadIdx.x + q * FT;
            const int rr = p.transa ? v / FL : v % FR, ll = p.transa ? v % FL : v / FR;
            As[ll][rr] = nx.a[q];
        }
#pragma unroll
        for (int q = 0; q < FL * NC / FT; ++q) {
            const int v = threadIdx.x + q * FT;
            Zs[v / NC][v % NC] = nx.z[q];
        }
        if (threadIdx.x < FL) Xs[threadIdx.x] = nx.x;
        __syncthreads();
        const int cur = lim;
        if (l0 + FL < e) {
            lim = e - (l0 + FL) < FL ? (int)(e - (l0 + FL)) : FL;
            tile_load<T, RPT>(p, i0, l0 + FL, lim, nx);
        }
#pragma unroll
        for (int g = 0; g < FL; g += S) {
            if (g >= cur) break; /* past the segment's end: no sample (cur is the block's) */
#pragma unroll
            for (int s = 0; s < S; ++s) { /* terms past the end hold zeros */
                const int ll = g + s;
                const float4 za = *reinterpret_cast<const float4 *>(&Zs[ll][cg * CPW]);
                const float4 zb = *reinterpret_cast<const float4 *>(&Zs[ll][cg * CPW + 4]);
                const float z[CPW] = {za.x, za.y, za.z, za.w, zb.x, zb.y, zb.z, zb.w};
                const float4 xs = Xs[ll];
                const float w = cg == 0 ? xs.x : cg == 1 ? xs.y : cg == 2 ? xs.z : xs.w;
#pragma unroll
                for (int r = 0; r < RPT; ++r) {
                    const float a = As[ll][row0 + 32 * r];
#pragma unroll
                    for (int c = 0; c < CPW; ++c) x[r][c] = fmaf(a, z[c], x[r][c]);
                    ax[r] = fmaf(a * a, w, ax[r]);
                }
            }
#pragma unroll
            for (int r = 0; r < RPT; ++r)
#pragma unroll
                for (int c = 0; c < CPW; ++c) {
                    if (SPLIT) s1[r][c] += x[r][c];
                    s2[r][c] = fmaf(x[r][c], x[r][c], s2[r][c]);
                }
        }
        __syncthreads();
    }
#pragma unroll
    for (int r = 0; r < RPT; ++r) {
        const int64_t i = i0 + row0 + 32 * r;
        if (i >= p.m) break;
        float *o = p.out + (size_t)blockIdx.y * NOUT * (size_t)p.m + (size_t)i;
#pragma unroll
        for (int c = 0; c < CPW; ++c) {
            const int cc = cg * CPW + c;
            o[(size_t)cc * p.m] = x[r][c];
            if (SPLIT) o[(size_t)(NC + cc) * p.m] = s1[r][c];
            o[(size_t)(2 * NC + cc) * p.m] = s2[r][c];
        }
        o[(size_t)(3 * NC + cg) * p.m] = ax[r];
    }
}

/* CR rows a block, a thread per row and sketch column (the segments in order; the threads
 * of columns 0..3 also sum the 4 aux sums), their sums merged in shared memory, then T. */
constexpr int CR = 32;
__global__ void __launch_bounds__(CR * NC) combine_kernel(fparams p) {
    __shared__ double red[3][NC][CR + 1];
    const int r = threadIdx.x % CR, c = threadIdx.x / CR; /* c: the sketch column */
    const int64_t i = (int64_t)blockIdx.x * CR + r;
    const size_t st = NOUT * (size_t)p.m;
    double acc = 0.0, f = 0.0, ax = 0.0;
    if (i < p.m) {
        const float *o = p.out + (size_t)i;
        double X0 = 0.0;
        for (int64_t s = 0; s < p.nseg; ++s) {
            int64_t b, e;
            seg_bounds(p, s, &b, &e);
            if (s == p.nseg1 && p.ks > 0) f += 2.0 * X0 * X0; /* the first half's result */
            const double y = o[s * st + (size_t)c * p.m], s2 = o[s * st + (size_t)(2 * NC + c) * p.m];
            const double s1 = p.nseg > 1 ? (double)o[s * st + (size_t)(NC + c) * p.m] : 0.0;
            const double v = (double)((e - b + S - 1) / S) * X0 * X0 + 2.0 * X0 * s1 + s2;
            acc += v > 0.0 ? v : 0.0;
            X0 += y;
            if (c < 4) ax += o[s * st + (size_t)(3 * NC + c) * p.m];
        }
        f += 2.0 * X0 * X0;
    }
    red[0][c][r] = acc, red[1][c][r] = f, red[2][c][r] = ax;
    __syncthreads();
    if (c > 0 || i >= p.m) return;
    double V[2] = {0, 0}, F[2] = {0, 0};
    for (int q = 0; q < NC; ++q) V[q / QF] += red[0][q][r], F[q / QF] += red[1][q][r];
    const double ws = 1.0 + (double)(ABFT_TIGHT_WIN * (ABFT_TIGHT_WIN - 1) / 2);
    for (int q = 0; q < 2; ++q) {
        const double Vq = p.u * p.u * ((V[q] + F[q]) / Q + ws * red[2][q][r]) +
                          p.u_chk * p.u_chk * red[2][2 + q][r];
        const double t = p.lambda * fabs(p.alpha) * sqrt(Vq);
        p.T[i + q * p.ldt] = t < INFINITY ? t : 0.0; /* not finite: the full pass decides */
    }
}

inline size_t align256(size_t b) { return (b + 255) / 256 * 256; }

template <typename T>
abft_status_t run_filter(const abft_kctx_t *ctx, const abft_tight_args_t *a) {
    const int64_t m = a->m, n = a->n, k = a->k;
    cudaStream_t st = abft_cuda_stream(ctx);
    fparams p;
    p.m = m, p.k = k, p.lda = a->lda, p.ldt = a->ldt, p.transa = a->transa, p.A = a->A;
    p.ks = a->ksplit > 0 && a->ksplit < k ? a->ksplit : 0;
    p.T = a->T, p.lambda = a->lambda, p.alpha = a->alpha, p.u = a->u, p.u_chk = a->u_chk;
    /* segments of l (multiples of FL, so of S): at least two blocks per SM in all (one is
     * resident at a time), the count whose last wave is fullest among up to twice that */
    int sms = 1;
    (void)abft_cuda_tune_get(ctx->device, &sms);
    const int64_t FR = RG * 32 * RPT;
    const int64_t rb = (m + FR - 1) / FR, tiles = (k + FL - 1) / FL;
    int64_t want = (2 * (int64_t)sms + rb - 1) / rb;
    want = want < 1 ? 1 : want > tiles ? tiles : want;
    double best = -1.0;
    for (int64_t w = want; w <= 2 * want && w <= tiles; ++w) {
        const int64_t L = ((k + w - 1) / w + FL - 1) / FL * FL;
        const int64_t n1 = p.ks > 0 ? (p.ks + L - 1) / L : 0;
        const int64_t ns = n1 + (k - p.ks + L - 1) / L, blocks = rb * ns;
        const double fill = (double)blocks / (double)(((blocks + sms - 1) / sms) * sms);
        if (fill > best + 0.02) best = fill, p.L = L, p.nseg1 = n1, p.nseg = ns;
    }
    const size_t bytes = align256(sizeof(T) * (size_t)n * NC) + align256(sizeof(T) * (size_t)k * NC) +
                         align256(sizeof(float4) * (size_t)k) +
                         align256(sizeof(float) * (size_t)p.nseg * NOUT * (size_t)m);
    void *mem = NULL;
    ABFT_TRY_STATUS(abft_cuda_scratch(ctx, bytes, &mem));
    char *q = (char *)mem;
    T *G = (T *)q;
    q += align256(sizeof(T) * (size_t)n * NC);
    T *Zt = (T *)q;
    q += align256(sizeof(T) * (size_t)k * NC);
    float4 *aux = (float4 *)q;
    q += align256(sizeof(float4) * (size_t)k);
    p.out = (float *)q;
    p.Zt = Zt, p.aux = aux;
    gw_kernel<T><<<(unsigned)((n * NC + 255) / 256), 256, 0, st>>>(G, n);
    ABFT_CUDA_LAUNCHED();
    /* Zt = Gw^T·op(B)^T (64 x k) through the context's cuBLAS handle (its math mode: an
     * estimate, whatever the mode) */
    abft_gemm_args_t g = {a->prec, 1, !a->transb, NC, k, n, 1.0, 0.0, G, n, a->B, a->ldb, Zt, NC};
    ABFT_TRY_STATUS(abft_cuda_gemm(ctx, &g));
    aux_kernel<T><<<(unsigned)((k + 255) / 256), 256, 0, st>>>(Zt, a->Yb, a->ldyb, k, aux);
    ABFT_CUDA_LAUNCHED();
    const dim3 grid((unsigned)rb, (unsigned)p.nseg);
    if (p.nseg > 1) scan_kernel<T, true, RPT><<<grid, FT, 0, st>>>(p);
    else scan_kernel<T, false, RPT><<<grid, FT, 0, st>>>(p);
    ABFT_CUDA_LAUNCHED();
    combine_kernel<<<(unsigned)((m + CR - 1) / CR), CR * NC, 0, st>>>(p);
    ABFT_CUDA_LAUNCHED();
    return ABFT_STATUS_SUCCESS;
}

} // namespace

/* Called by abft_cuda_tight for a->filter (m, n, k > 0 there). */
extern "C" abft_status_t abft_cuda_tight_filter(const abft_kctx_t *ctx, const abft_tight_args_t *a) {
    if (a->prec == ABFT_PREC_D) return run_filter<double>(ctx, a);
    return run_filter<float>(ctx, a);
}
