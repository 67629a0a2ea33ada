/* The tight bound mode on the CUDA backend (docs/bound.md, "Tight mode"):
 *   1. the GPU tight pass against the CPU one (the oracle) on the same inputs: the same rows
 *      sent to the worst case, the same T elsewhere up to the summation order of the sketch
 *      (relative 1e-9), over awkward shapes, transposes, padding and the data that exercise
 *      the class weights and both guards (the long-sum guard from k = 1025 in fp32); beyond
 *      the long-sum guard's table, every row to the worst case;
 *   2. clean fp32 and fp64 products over the space through the public API: none flagged;
 *   3. a change of 1e-3 (fp32) or 1e-11 (fp64) of a row's RMS in one element, which the
 *      worst case misses at n = 384, detected and corrected;
 *   4. the compensated fp64 checksum sums (tsmm with comp, which the fp64 tight mode uses)
 *      against the CPU backend's;
 *   5. signs alternating along k at shapes where cuBLAS's fp32 GEMM splits k in slices
 *      (1024 x 1024 x 8192 and 16384 on an H100): clean, none flagged.
 * Test 1 runs each case with no lane order, the CUDA backend's list (4 slices of 8-term
 * tiles) or the CPU backend's (8 and 16 lanes of one term).
 * Exits 77 without a GPU. Randomized: the seed is printed. */
#include <cuda_runtime.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "abft_internal.h"
#include "abft_tight_common.h"
#include "testutil.h"
#include "testutil_cuda.h"
#include "tight_guard_case.h"

enum { K_UNIFORM, K_POSITIVE, K_REPEATED, K_CONSTANT, K_PERIODIC, K_DISCRETE, K_SHARED,
       K_FEWSET, K_DOMINANT, K_PAIRS, K_MIXCOL, K_MIXALONG, K_COUNT };
static const char *kname[K_COUNT] = {"uniform",     "positive",      "repeated", "constant",
                                     "periodic",    "discrete",      "shared rows",
                                     "twelve values", "dominant first", "cancelling pairs",
                                     "mixed-sign tails by column", "mixed-sign tails along l"};
/* the small entries of K_DOMINANT and K_PAIRS: op(A)'s other entries are g_eps·U(0, 1) */
static double g_eps = 3e-8;

/* Logical op(A) (m x k) and op(B) (k x n) of a kind, column-major with ld = rows. */
static void fill(tu_rng_t *r, int kind, int isb, int64_t rows, int64_t cols, double *X) {
    for (int64_t j = 0; j < cols; ++j)
        for (int64_t i = 0; i < rows; ++i) {
            const int64_t l = isb ? i : j;
            double v;
            switch (kind) {
            case K_UNIFORM: v = tu_range(r, -1.0, 1.0); break;
            case K_POSITIVE: v = tu_range(r, 0.0, 1.0); break;
            case K_REPEATED: v = isb && j > 0 ? X[i] : tu_range(r, -1.0, 1.0); break;
            case K_CONSTANT: v = isb ? 1.0 : 0.1; break;
            case K_PERIODIC: v = isb ? 1.0 : 0.1 * (1.0 + (double)(l % 3) / 3.0); break;
            case K_DISCRETE:
                v = isb ? (tu_next(r) & 1 ? 0.1 : 0.3) * (tu_next(r) & 1 ? 1.0 : -1.0)
                        : tu_range(r, -1.0, 1.0);
                break;
            case K_SHARED: v = isb && j > 0 && i < rows / 2 ? X[i] : tu_range(r, -1.0, 1.0); break;
            case K_DOMINANT: /* a first term 1, the others far below its spacing in fp32 */
                v = isb ? tu_range(r, 0.5, 1.0) : l == 0 ? 1.0 : g_eps * tu_range(r, 0.0, 1.0);
                break;
            case K_PAIRS: /* (+1, -1) at l = q - 1, q (q = 64, 128, ...) on equal rows of op(B):
                           * cancelled in the natural order, not in a k-block that starts at q */
                if (isb)
                    v = l % 64 == 0 && l > 0 ? X[i - 1 + j * rows] : tu_range(r, 0.5, 1.0);
                else
                    v = l > 0 && l % 64 == 63 ? 1.0 : l > 0 && l % 64 == 0 ? -1.0
                                                       : g_eps * tu_range(r, 0.0, 1.0);
                break;
            case K_MIXCOL:   /* a first term 1 or -2 (by column), then 0.75·2^-23 of either
                              * sign: rounding up where the sum is 1, absorbed where it is -2,
                              * both erring upwards while the signed sum cancels (fp32) */
            case K_MIXALONG: /* a first term 1, then +0.56 and -0.42 of 2^-23 alternating along
                              * l: rounding up, absorbed, both erring upwards (fp32) */
                if (!isb)
                    v = l == 0 ? 1.0
                               : 0x1p-10 * tu_range(r, kind == K_MIXCOL ? 0.8 : 0.95, 1.2);
                else if (l == 0)
                    v = kind == K_MIXCOL && j % 2 ? -2.0 : 1.0;
                else if (kind == K_MIXCOL)
                    v = (j % 2 ? -0.75 : 0.75) * 0x1p-13 * tu_range(r, 0.97, 1.03);
                else
                    v = 0x1p-13 * (l % 2 ? tu_range(r, 0.54, 0.58) : -tu_range(r, 0.40, 0.44));
                break;
            default: /* odd rows of op(A) and odd columns of op(B) from 12 positive values (rich
                      * on 16-term blocks, repeated along long sums), the others uniform */
                v = (isb ? j : i) % 2 ? 0.5 + (double)tu_int(r, 0, 11) / 12.0 : tu_range(r, -1.0, 1.0);
                break;
            }
            X[i + j * rows] = v;
        }
}

/* op(X) stored with transpose t in ld ldm, as floats */
static void store(int t, int64_t rows, int64_t cols, const double *X, float *M, int64_t ldm) {
    for (int64_t j = 0; j < cols; ++j)
        for (int64_t i = 0; i < rows; ++i)
            M[t ? (size_t)(j + i * ldm) : (size_t)(i + j * ldm)] = (float)X[i + j * rows];
}

/* 1. GPU tight pass against the CPU's */
static void test_pass(abft_handle_t h, tu_rng_t *r) {
    /* m, n, k and the split along k (-1: none or k/2, drawn). Beyond fp32's k·u = 2^-14
     * (k > 1024) the long-sum guard runs. The last three have n >= 256, where the sketch's
     * blocks split j into slices, beside whole 32-term tiles of the row scan's fast path
     * (a split at 512 or 992: a tile that starts at the split takes the general path) */
    static const int64_t shapes[][4] = {{1, 1, 1, -1},       {17, 5, 33, -1},     {100, 64, 300, -1},
                                        {257, 129, 64, -1},  {64, 300, 17, -1},   {3, 40, 1000, -1},
                                        {40, 30, 3000, -1},  {33, 7, 5000, -1},   {40, 512, 1024, 512},
                                        {40, 300, 2000, 992}, {33, 257, 130, -1}};
    int checked = 0;
    double filter_lo = INFINITY, filter_hi = 0.0;
    int64_t risky_long = 0; /* rows the CPU sent to the worst case beyond k·u = 2^-14 */
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; ++s)
        for (int kind = 0; kind < K_COUNT; ++kind) {
            const int64_t m = shapes[s][0], n = shapes[s][1], k = shapes[s][2];
            const int ta = (int)tu_int(r, 0, 1), tb = (int)tu_int(r, 0, 1);
            const int64_t ar = ta ? k : m, ac = ta ? m : k, br = tb ? n : k, bc = tb ? k : n;
            const int64_t lda = ar + tu_int(r, 0, 3), ldb = br + tu_int(r, 0, 3);
            double *X = tu_alloc_d(m * k), *Y = tu_alloc_d(k * n);
            fill(r, kind, 0, m, k, X);
            fill(r, kind, 1, k, n, Y);
            float *A = tu_alloc_s(lda * ac), *B = tu_alloc_s(ldb * bc);
            store(ta, m, k, X, A, lda);
            store(tb, k, n, Y, B, ldb);
            double *yb = tu_alloc_d(2 * k), *Tc = tu_alloc_d(2 * m), *Tg = tu_alloc_d(2 * m);
            for (int64_t l = 0; l < k; ++l) { /* any Yb: the same for both */
                yb[l] = tu_range(r, -5.0, 5.0);
                yb[l + k] = tu_range(r, -50.0, 50.0);
            }
            abft_tight_args_t a = {ABFT_PREC_S, ta, tb, m, n, k, A, lda, B, ldb, yb, k, -1.5,
                                   0x1p-24, 0x1p-53, 12.5, Tc, m, NULL,
                                   shapes[s][3] >= 0 ? shapes[s][3] : (int64_t)tu_int(r, 0, 1) * (k / 2),
                                   0, {{0, 0}}, 0};
            /* the lane orders: none, the CUDA backend's, the CPU backend's */
            const int lists = (int)((s + (size_t)kind) % 3);
            if (lists == 1) a.nord = 1, a.ord[0] = (abft_tight_order_t){4, 8};
            if (lists == 2)
                a.nord = 2, a.ord[0] = (abft_tight_order_t){8, 1}, a.ord[1] = (abft_tight_order_t){16, 1};
            int64_t nr = 0;
            a.nrisky = &nr;
            abft_kctx_t none;
            memset(&none, 0, sizeof none);
            TU_CHECK_STATUS(abft_cpu_tight(&none, &a), ABFT_STATUS_SUCCESS);
            a.nrisky = NULL;
            if (k > 1024) risky_long += nr;
            void *dA, *dB, *dY, *dT;
            TU_CUDA_OK(cudaMalloc(&dA, sizeof(float) * (size_t)(lda * ac)));
            TU_CUDA_OK(cudaMalloc(&dB, sizeof(float) * (size_t)(ldb * bc)));
            TU_CUDA_OK(cudaMalloc(&dY, sizeof(double) * (size_t)(2 * k)));
            TU_CUDA_OK(cudaMalloc(&dT, sizeof(double) * (size_t)(2 * m)));
            TU_CUDA_OK(cudaMemcpy(dA, A, sizeof(float) * (size_t)(lda * ac), cudaMemcpyHostToDevice));
            TU_CUDA_OK(cudaMemcpy(dB, B, sizeof(float) * (size_t)(ldb * bc), cudaMemcpyHostToDevice));
            TU_CUDA_OK(cudaMemcpy(dY, yb, sizeof(double) * (size_t)(2 * k), cudaMemcpyHostToDevice));
            abft_tight_args_t g = a;
            g.A = dA, g.B = dB, g.Yb = (const double *)dY, g.T = (double *)dT;
            TU_CHECK_STATUS(abft_cuda_tight(&h->kctx, &g), ABFT_STATUS_SUCCESS);
            TU_CUDA_OK(cudaDeviceSynchronize());
            TU_CUDA_OK(cudaMemcpy(Tg, dT, sizeof(double) * (size_t)(2 * m), cudaMemcpyDeviceToHost));
            int bad = 0;
            for (int64_t i = 0; i < 2 * m && !bad; ++i) {
                const double x = Tc[i], y = Tg[i];
                const int ok = (x < 0.0 && y < 0.0) ||
                               (x >= 0.0 && y >= 0.0 && fabs(x - y) <= 1e-9 * fmax(x, y));
                if (!ok) {
                    bad = 1;
                    TU_CHECK(ok, "%s %lldx%lldx%lld t%d%d: T[%lld] cpu %.17g gpu %.17g", kname[kind],
                             (long long)m, (long long)n, (long long)k, ta, tb, (long long)i, x, y);
                }
            }
            ++checked;
            /* the filter (two stages): the GPU's fp32 estimate against the CPU's fp64 one, and
             * the CPU's below the full pass's wherever that keeps the tight bound */
            double *Tf = tu_alloc_d(2 * m);
            abft_tight_args_t fc = a;
            fc.filter = 1, fc.T = Tf;
            TU_CHECK_STATUS(abft_cpu_tight(&none, &fc), ABFT_STATUS_SUCCESS);
            abft_tight_args_t fg = g;
            fg.filter = 1;
            TU_CHECK_STATUS(abft_cuda_tight(&h->kctx, &fg), ABFT_STATUS_SUCCESS);
            TU_CUDA_OK(cudaDeviceSynchronize());
            TU_CUDA_OK(cudaMemcpy(Tg, dT, sizeof(double) * (size_t)(2 * m), cudaMemcpyDeviceToHost));
            /* the GPU estimates the short nodes' sum_j w_j^2·b_lj^2 by a quarter of the
             * sketch's own mean square (the CPU sums it): below the CPU's filter but for
             * fp32's rounding (at most sqrt(1/4) of it, less the sketch's chi-square noise,
             * where the short nodes are all), and never above the full pass */
            for (int64_t i = 0; i < 2 * m; ++i) {
                const double x = Tf[i], y = Tg[i];
                if (y / fmax(x, 1e-300) > filter_hi) filter_hi = y / fmax(x, 1e-300);
                if (x > 0.0 && y / x < filter_lo) filter_lo = y / x;
                TU_CHECK(x >= 0.0 && y >= 0.0 && y <= 1.02 * x && y >= 0.3 * x,
                         "filter %s %lldx%lldx%lld t%d%d: T[%lld] cpu %.9g gpu %.9g", kname[kind],
                         (long long)m, (long long)n, (long long)k, ta, tb, (long long)i, x, y);
                TU_CHECK(!(Tc[i] >= 0.0) || y <= Tc[i],
                         "GPU filter %s %lldx%lldx%lld: T[%lld] %.17g above the full pass's %.17g",
                         kname[kind], (long long)m, (long long)n, (long long)k, (long long)i, y,
                         Tc[i]);
                TU_CHECK(!(Tc[i] >= 0.0) || x <= Tc[i],
                         "filter %s %lldx%lldx%lld: T[%lld] %.17g above the full pass's %.17g",
                         kname[kind], (long long)m, (long long)n, (long long)k, (long long)i, x,
                         Tc[i]);
            }
            free(Tf);
            cudaFree(dA), cudaFree(dB), cudaFree(dY), cudaFree(dT);
            free(X), free(Y), free(A), free(B), free(yb), free(Tc), free(Tg);
        }
    printf("tight pass: %d cases, GPU against CPU; %lld rows to the worst case beyond k = 1024; "
           "filter: GPU (fp32) over CPU from %.3g to %.3g, never above the full pass\n",
           checked, (long long)risky_long, filter_lo, filter_hi);
    TU_CHECK(risky_long > 0, "no case sent a row to the worst case beyond k = 1024");
}

/* 1b. beyond the long-sum guard's table (k > 126991 in fp32): every row to the worst case */
static void test_too_long(abft_handle_t h, tu_rng_t *r) {
    const int64_t m = 3, n = 2, k = 130000;
    float *A = tu_alloc_s(m * k), *B = tu_alloc_s(k * n);
    for (int64_t x = 0; x < m * k; ++x) A[x] = (float)tu_range(r, -1.0, 1.0);
    for (int64_t x = 0; x < k * n; ++x) B[x] = (float)tu_range(r, -1.0, 1.0);
    double *yb = tu_alloc_d(2 * k), T[6];
    for (int64_t l = 0; l < 2 * k; ++l) yb[l] = 1.0;
    void *dA, *dB, *dY, *dT;
    TU_CUDA_OK(cudaMalloc(&dA, sizeof(float) * (size_t)(m * k)));
    TU_CUDA_OK(cudaMalloc(&dB, sizeof(float) * (size_t)(k * n)));
    TU_CUDA_OK(cudaMalloc(&dY, sizeof(double) * (size_t)(2 * k)));
    TU_CUDA_OK(cudaMalloc(&dT, sizeof T));
    TU_CUDA_OK(cudaMemcpy(dA, A, sizeof(float) * (size_t)(m * k), cudaMemcpyHostToDevice));
    TU_CUDA_OK(cudaMemcpy(dB, B, sizeof(float) * (size_t)(k * n), cudaMemcpyHostToDevice));
    TU_CUDA_OK(cudaMemcpy(dY, yb, sizeof(double) * (size_t)(2 * k), cudaMemcpyHostToDevice));
    abft_tight_args_t g = {ABFT_PREC_S, 0, 0, m, n, k, dA, m, dB, k, (const double *)dY, k, 1.0,
                           0x1p-24, 0x1p-53, 12.5, (double *)dT, m, NULL, 0, 0, {{0, 0}}, 0};
    TU_CHECK_STATUS(abft_cuda_tight(&h->kctx, &g), ABFT_STATUS_SUCCESS);
    TU_CUDA_OK(cudaMemcpy(T, dT, sizeof T, cudaMemcpyDeviceToHost));
    for (int x = 0; x < 6; ++x) TU_CHECK(T[x] == -1.0, "k = %lld: T[%d] = %g, not the worst case", (long long)k, x, T[x]);
    cudaFree(dA), cudaFree(dB), cudaFree(dY), cudaFree(dT);
    free(A), free(B), free(yb);
}

typedef struct prob {
    int dp; /* fp64 data (else fp32) */
    int64_t m, n, k, lda, ldb, ldc;
    int ta, tb;
    void *A, *B, *C;    /* host */
    void *dA, *dB, *dC; /* device */
} prob_t;

static size_t esz(const prob_t *p) { return p->dp ? sizeof(double) : sizeof(float); }

/* op(X) (rows x cols, column-major) stored with transpose t in ld ldm as the problem's type */
static void *stored(const prob_t *p, int t, int64_t rows, int64_t cols, const double *X, int64_t ldm) {
    const int64_t sc = t ? rows : cols;
    void *M = malloc(esz(p) * (size_t)(ldm * sc + 1));
    TU_CHECK(M != NULL, "out of host memory");
    if (p->dp) {
        double *D = (double *)M;
        for (int64_t j = 0; j < cols; ++j)
            for (int64_t i = 0; i < rows; ++i)
                D[t ? (size_t)(j + i * ldm) : (size_t)(i + j * ldm)] = X[i + j * rows];
    } else {
        store(t, rows, cols, X, (float *)M, ldm);
    }
    return M;
}

static void *upload(const prob_t *p, const void *H, int64_t count) {
    void *d = NULL;
    TU_CUDA_OK(cudaMalloc(&d, esz(p) * (size_t)(count + 1)));
    TU_CUDA_OK(cudaMemcpy(d, H, esz(p) * (size_t)count, cudaMemcpyHostToDevice));
    return d;
}

static void make(prob_t *p, int dp, tu_rng_t *r, int kind, int64_t m, int64_t n, int64_t k,
                 int ta, int tb, int64_t pad) {
    p->dp = dp, p->m = m, p->n = n, p->k = k, p->ta = ta, p->tb = tb;
    const int64_t ar = ta ? k : m, ac = ta ? m : k, br = tb ? n : k, bc = tb ? k : n;
    p->lda = ar + pad, p->ldb = br + pad, p->ldc = m + pad;
    double *X = tu_alloc_d(m * k + 1), *Y = tu_alloc_d(k * n + 1), *Z = tu_alloc_d(p->ldc * n + 1);
    fill(r, kind, 0, m, k, X);
    fill(r, kind, 1, k, n, Y);
    for (int64_t i = 0; i < p->ldc * n; ++i) Z[i] = tu_range(r, -1.0, 1.0);
    p->A = stored(p, ta, m, k, X, p->lda);
    p->B = stored(p, tb, k, n, Y, p->ldb);
    p->C = stored(p, 0, p->ldc, n, Z, p->ldc);
    p->dA = upload(p, p->A, p->lda * ac);
    p->dB = upload(p, p->B, p->ldb * bc);
    p->dC = upload(p, p->C, p->ldc * n);
    free(X), free(Y), free(Z);
}
static void release(prob_t *p) {
    free(p->A), free(p->B), free(p->C);
    cudaFree(p->dA), cudaFree(p->dB), cudaFree(p->dC);
}

static abft_status_t gemm(abft_handle_t h, const prob_t *p, double alpha, double beta,
                          abft_report_t *rep) {
    const abft_operation_t ta = (abft_operation_t)p->ta, tb = (abft_operation_t)p->tb;
    if (p->dp)
        return abft_dgemm(h, ta, tb, p->m, p->n, p->k, alpha, (const double *)p->dA, p->lda,
                          (const double *)p->dB, p->ldb, beta, (double *)p->dC, p->ldc, rep);
    return abft_sgemm(h, ta, tb, p->m, p->n, p->k, (float)alpha, (const float *)p->dA, p->lda,
                      (const float *)p->dB, p->ldb, (float)beta, (float *)p->dC, p->ldc, rep);
}

/* 2. clean products: none flagged (fp32, or fp64 with dp) */
static void test_clean(abft_handle_t h, tu_rng_t *r, int dp, int count) {
    static const float alphas[] = {1.0f, -0.7f, 3.5f}, betas[] = {0.0f, 1.0f, -0.3f};
    double worst = 0.0;
    char where[160] = "none";
    for (int t = 0; t < count; ++t) {
        const int kind = t % K_COUNT;
        int64_t m = tu_int(r, 1, 120), n = tu_int(r, 1, 120), k = tu_int(r, 1, 300);
        if (t % 10 == 9) m = n = 256, k = t % 20 == 19 ? 3000 : 1024;
        const int ta = (int)tu_int(r, 0, 1), tb = (int)tu_int(r, 0, 1);
        const double alpha = alphas[tu_int(r, 0, 2)], beta = betas[tu_int(r, 0, 2)];
        abft_set_checksum_kind(h, t % 3 == 2 ? ABFT_CHECKSUM_FULL : ABFT_CHECKSUM_ROW);
        prob_t p;
        make(&p, dp, r, kind, m, n, k, ta, tb, tu_int(r, 0, 2));
        abft_report_t rep;
        abft_status_t st = gemm(h, &p, alpha, beta, &rep);
        TU_CHECK(st == ABFT_STATUS_SUCCESS && rep.detected == 0,
                 "fp%d %s %lldx%lldx%lld t%d%d alpha %g beta %g: %s, flagged %lld, ratio %g",
                 dp ? 64 : 32, kname[kind], (long long)m, (long long)n, (long long)k, ta, tb,
                 alpha, beta, abft_status_name(st), (long long)rep.detected, rep.max_ratio);
        if (st == ABFT_STATUS_SUCCESS && rep.max_ratio > worst) {
            worst = rep.max_ratio;
            snprintf(where, sizeof where, "%s %lldx%lldx%lld t%d%d alpha %g beta %g",
                     kname[kind], (long long)m, (long long)n, (long long)k, ta, tb, alpha, beta);
        }
        release(&p);
    }
    abft_set_checksum_kind(h, ABFT_CHECKSUM_ROW);
    printf("clean: %d fp%d products, largest residual/bound %.3g (%s)\n", count, dp ? 64 : 32,
           worst, where);
}

typedef struct add1 {
    int64_t i, j;
    double delta;
} add1_t;
static abft_status_t add1_fn(void *user, abft_hook_site_t site, int which, char prec, void *ptr,
                             int64_t rows, int64_t cols, int64_t ld) {
    add1_t *a = (add1_t *)user;
    (void)which, (void)rows, (void)cols;
    if (site != ABFT_SITE_AFTER_GEMM) return ABFT_STATUS_SUCCESS;
    const size_t es = prec == 'd' ? sizeof(double) : sizeof(float);
    char *e = (char *)ptr + es * (size_t)(a->i + a->j * ld);
    double v;
    float f;
    if (cudaMemcpy(prec == 'd' ? (void *)&v : (void *)&f, e, es, cudaMemcpyDeviceToHost) != cudaSuccess)
        return ABFT_STATUS_CUDA_ERROR;
    if (prec == 'd')
        v += a->delta;
    else
        f += (float)a->delta;
    if (cudaMemcpy(e, prec == 'd' ? (void *)&v : (void *)&f, es, cudaMemcpyHostToDevice) != cudaSuccess)
        return ABFT_STATUS_CUDA_ERROR;
    return ABFT_STATUS_SUCCESS;
}

/* 3. a small change detected: rel of a row's RMS in one element (uniform data in [-1, 1],
 * n = k = 384: RMS sqrt(n / 9)), which the worst case misses and the tight mode finds and
 * corrects */
static void test_detects(abft_handle_t h, tu_rng_t *r, int dp, double rel) {
    const int64_t n = 384;
    int seen[2] = {0, 0};
    uint64_t s = tu_next(r);
    for (int mode = 0; mode < 2; ++mode) {
        tu_rng_t q;
        tu_rng_init(&q, s);
        prob_t p;
        make(&p, dp, &q, K_UNIFORM, n, n, n, 0, 0, 0);
        abft_set_bound_mode(h, mode ? ABFT_BOUND_TIGHT : ABFT_BOUND_WORST_CASE, 1.0);
        add1_t a = {17, 101, rel * sqrt((double)n / 9.0)};
        abft_set_hook(h, add1_fn, &a);
        abft_report_t rep;
        TU_CHECK_STATUS(gemm(h, &p, 1.0, 0.0, &rep), ABFT_STATUS_SUCCESS);
        abft_set_hook(h, NULL, NULL);
        seen[mode] = rep.detected > 0;
        if (mode == 1)
            TU_CHECK(rep.detected > 0 && (rep.corrected == 1 || rep.recomputed == 1),
                     "fp%d tight: detected %lld corrected %lld recomputed %lld", dp ? 64 : 32,
                     (long long)rep.detected, (long long)rep.corrected, (long long)rep.recomputed);
        release(&p);
    }
    printf("fp%d, a change of %g of the RMS: worst case %s, tight %s\n", dp ? 64 : 32, rel,
           seen[0] ? "detected" : "missed", seen[1] ? "detected" : "missed");
    TU_CHECK(!seen[0], "the worst case saw it (the test's premise)");
    abft_set_bound_mode(h, ABFT_BOUND_TIGHT, 1.0);
}

/* 4. the compensated fp64 sums (tsmm with comp) against the CPU backend's (compensated too):
 * both within u·|s| + 2·gamma_(2L+2)^2·sum|x·w| of the exact sum, so within twice that of
 * each other; and on sums that cancel to far below their terms (where a plain fp64 sum
 * keeps nothing) the same result. Awkward shapes, padding, both orientations, the implicit
 * and explicit weights (c = 2 and 4), with and without the absolute companion. */
static void test_dot2(abft_handle_t h, tu_rng_t *r) {
    static const int64_t shapes[][2] = {{0, 3}, {3, 0}, {1, 1}, {7, 1}, {1, 700}, {257, 33},
                                        {33, 257}, {3000, 5}, {5, 3000}, {1000, 1000}};
    int checked = 0;
    double worst = 0.0;
    for (size_t x = 0; x < sizeof shapes / sizeof shapes[0]; ++x)
        for (int v = 0; v < 4; ++v) {
            const int64_t rows = shapes[x][0], cols = shapes[x][1], ld = rows + tu_int(r, 0, 3) + (rows == 0);
            const int trans = v & 1, explicit_w = v >> 1, ab = (int)tu_int(r, 0, 1);
            const int64_t c = explicit_w ? 4 : 2, len = trans ? rows : cols, out = trans ? cols : rows;
            const int cancel = x % 2 == 1;
            double *M = tu_alloc_d(ld * cols + 1), *X = tu_alloc_d(len * c + 1);
            for (int64_t j = 0; j < cols; ++j)
                for (int64_t i = 0; i < ld; ++i) {
                    /* cancelling: pairs +-2^e·x that leave the small terms behind */
                    const int64_t t = trans ? i : j;
                    double y = tu_range(r, -1.0, 1.0);
                    if (cancel && t % 3 != 2) y = ldexp(t % 3 == 0 ? 1.0 : -1.0, 40) * (1.0 + (double)(t / 3 % 5));
                    M[i + j * ld] = y;
                }
            for (int64_t l = 0; l < len * c; ++l) X[l] = explicit_w ? tu_range(r, 0.5, 2.0) : 0.0;
            if (cancel && explicit_w) /* weights equal on each cancelling pair */
                for (int q = 0; q < c; ++q)
                    for (int64_t t = 0; t + 1 < len; t += 3) X[t + 1 + q * len] = X[t + q * len];
            double *Yc = tu_alloc_d(out * c + 1), *Yac = tu_alloc_d(out * c + 1);
            double *Yg = tu_alloc_d(out * c + 1), *Yag = tu_alloc_d(out * c + 1);
            abft_tsmm_args_t a = {ABFT_PREC_D, trans, rows, cols, c, M, ld, explicit_w ? X : NULL,
                                  len, NULL, 0, Yc, out, Yac, out, 1};
            abft_kctx_t none;
            memset(&none, 0, sizeof none);
            TU_CHECK_STATUS(abft_cpu_tsmm(&none, &a), ABFT_STATUS_SUCCESS);
            void *dM, *dX, *dY, *dYa;
            TU_CUDA_OK(cudaMalloc(&dM, sizeof(double) * (size_t)(ld * cols + 1)));
            TU_CUDA_OK(cudaMalloc(&dX, sizeof(double) * (size_t)(len * c + 1)));
            TU_CUDA_OK(cudaMalloc(&dY, sizeof(double) * (size_t)(out * c + 1)));
            TU_CUDA_OK(cudaMalloc(&dYa, sizeof(double) * (size_t)(out * c + 1)));
            TU_CUDA_OK(cudaMemcpy(dM, M, sizeof(double) * (size_t)(ld * cols), cudaMemcpyHostToDevice));
            TU_CUDA_OK(cudaMemcpy(dX, X, sizeof(double) * (size_t)(len * c), cudaMemcpyHostToDevice));
            abft_tsmm_args_t g = a;
            g.A = dM, g.X = explicit_w ? (const double *)dX : NULL, g.Y = (double *)dY;
            g.Yabs = ab ? (double *)dYa : NULL;
            TU_CHECK_STATUS(abft_cuda_tsmm(&h->kctx, &g), ABFT_STATUS_SUCCESS);
            TU_CUDA_OK(cudaDeviceSynchronize());
            TU_CUDA_OK(cudaMemcpy(Yg, dY, sizeof(double) * (size_t)(out * c), cudaMemcpyDeviceToHost));
            TU_CUDA_OK(cudaMemcpy(Yag, dYa, sizeof(double) * (size_t)(out * c), cudaMemcpyDeviceToHost));
            const double L = (double)len, gam = (2.0 * L + 2.0) * 0x1p-53 / (1.0 - (2.0 * L + 2.0) * 0x1p-53);
            int bad = 0;
            for (int64_t o = 0; o < out * c && !bad; ++o) {
                const double tol = 4.0 * 0x1p-53 * fabs(Yc[o]) + 4.0 * gam * gam * Yac[o] * 1.01;
                const double d = fabs(Yg[o] - Yc[o]);
                if (!(d <= tol)) {
                    bad = 1;
                    TU_CHECK(0, "dot2 %lldx%lld trans %d c %lld: Y[%lld] gpu %.17g cpu %.17g (tol %g)",
                             (long long)rows, (long long)cols, trans, (long long)c, (long long)o,
                             Yg[o], Yc[o], tol);
                }
                if (tol > 0.0 && d / tol > worst) worst = d / tol;
                if (ab && !(fabs(Yag[o] - Yac[o]) <= 1e-12 * Yac[o])) {
                    bad = 1;
                    TU_CHECK(0, "dot2 abs: Y[%lld] gpu %.17g cpu %.17g", (long long)o, Yag[o], Yac[o]);
                }
            }
            ++checked;
            cudaFree(dM), cudaFree(dX), cudaFree(dY), cudaFree(dYa);
            free(M), free(X), free(Yc), free(Yac), free(Yg), free(Yag);
        }
    printf("compensated fp64 sums: %d cases, GPU against CPU, largest difference / allowance %.3g\n",
           checked, worst);
}

/* 5. Terms below the partial sums' spacing (fp32, through cuBLAS): rows of op(A) with a
 *    dominant first term and small positive ones after it (cuBLAS sums them in order onto
 *    the first: absorbed, an error of one sign per term), and cancelling pairs at multiples
 *    of 64 (cancelled in the natural order, not inside a split-k chunk or k-block that
 *    starts between them). No clean product flagged. */
static void test_small_terms(abft_handle_t h, tu_rng_t *r) {
    static const double eps[3] = {1e-7, 3e-8, 1e-8};
    static const int64_t shape[3][3] = {{64, 512, 1024}, {256, 256, 16384}, {64, 512, 65536}};
    double worst = 0.0;
    for (int c = 0; c < 18; ++c) {
        const int kind = c % 2 ? K_PAIRS : K_DOMINANT, s = (c / 2) % 3;
        g_eps = eps[c / 6];
        prob_t p;
        make(&p, 0, r, kind, shape[s][0], shape[s][1], shape[s][2], 0, 0, 0);
        abft_report_t rep;
        abft_status_t st = gemm(h, &p, 1.0, 0.0, &rep);
        TU_CHECK(st == ABFT_STATUS_SUCCESS && rep.detected == 0,
                 "%s %lldx%lldx%lld eps %g: %s, flagged %lld, ratio %g", kname[kind],
                 (long long)p.m, (long long)p.n, (long long)p.k, g_eps, abft_status_name(st),
                 (long long)rep.detected, rep.max_ratio);
        if (st == ABFT_STATUS_SUCCESS && rep.max_ratio > worst) worst = rep.max_ratio;
        release(&p);
    }
    g_eps = 3e-8;
    printf("small terms below the sums' spacing: 18 fp32 products, largest residual/bound %.3g\n",
           worst);
    /* mixed-sign tails whose errors share one sign (a signed estimate of the small terms let
     * them through); the checksums of rows and of columns */
    worst = 0.0;
    for (int c = 0; c < 8; ++c) {
        const int kind = c % 2 ? K_MIXALONG : K_MIXCOL;
        const int64_t k = (c / 2) % 2 ? 4096 : 1024;
        abft_set_checksum_kind(h, c >= 4 ? ABFT_CHECKSUM_FULL : ABFT_CHECKSUM_ROW);
        prob_t p;
        make(&p, 0, r, kind, 64, 256, k, 0, 0, 0);
        abft_report_t rep;
        abft_status_t st = gemm(h, &p, 1.0, 0.0, &rep);
        TU_CHECK(st == ABFT_STATUS_SUCCESS && rep.detected == 0,
                 "%s 64x256x%lld: %s, flagged %lld, ratio %g", kname[kind], (long long)k,
                 abft_status_name(st), (long long)rep.detected, rep.max_ratio);
        if (st == ABFT_STATUS_SUCCESS && rep.max_ratio > worst) worst = rep.max_ratio;
        release(&p);
    }
    abft_set_checksum_kind(h, ABFT_CHECKSUM_ROW);
    printf("mixed-sign small terms: 8 fp32 products, largest residual/bound %.3g\n", worst);
}

/* 5. signs alternating every T terms of k: a row of op(A) of +-(0.5 + 0.5·U), B of
 * 0.5 + 0.5·U. cuBLAS's fp32 split-k on an H100 (4 slices taking the k-tiles of 8 in turn)
 * gathers one sign per slice for T = 8 and 16; before the pass bounded that order, 70 to
 * 75 % of the rows were flagged at ratios up to 7.8 (1024 x 1024 x 16384). */
static void test_lane_orders(abft_handle_t h, tu_rng_t *r, int quick) {
    const int64_t m = 1024, n = 1024;
    double worst = 0.0;
    int count = 0;
    for (int dp = 0; dp < 2; ++dp)
        for (int64_t k = 8192; k <= 16384; k *= 2)
            for (int64_t T = 8; T <= 16; T *= 2) {
                if (quick && (dp || T == 16 || k == 8192)) continue;
                prob_t p = {0};
                p.dp = dp, p.m = m, p.n = n, p.k = k, p.lda = m, p.ldb = k, p.ldc = m;
                double *X = tu_alloc_d(m * k), *Y = tu_alloc_d(k * n), *Z = tu_alloc_d(m * n);
                for (int64_t l = 0; l < k; ++l)
                    for (int64_t i = 0; i < m; ++i)
                        X[i + l * m] = ((l / T) % 2 ? -1.0 : 1.0) * tu_range(r, 0.5, 1.0);
                for (int64_t x = 0; x < k * n; ++x) Y[x] = tu_range(r, 0.5, 1.0);
                for (int64_t x = 0; x < m * n; ++x) Z[x] = 0.0;
                p.A = stored(&p, 0, m, k, X, m);
                p.B = stored(&p, 0, k, n, Y, k);
                p.C = stored(&p, 0, m, n, Z, m);
                p.dA = upload(&p, p.A, m * k);
                p.dB = upload(&p, p.B, k * n);
                p.dC = upload(&p, p.C, m * n);
                abft_report_t rep;
                abft_status_t st = gemm(h, &p, 1.0, 0.0, &rep);
                TU_CHECK(st == ABFT_STATUS_SUCCESS && rep.detected == 0,
                         "signs alternating every %lld terms, %s 1024 x 1024 x %lld: status %s, "
                         "detected %lld, ratio %g", (long long)T, dp ? "fp64" : "fp32",
                         (long long)k, abft_status_name(st), (long long)rep.detected, rep.max_ratio);
                worst = fmax(worst, rep.max_ratio);
                ++count;
                release(&p);
                free(X), free(Y), free(Z);
            }
    printf("signs alternating along k: %d products, largest residual/bound %.3g\n", count, worst);
}

/* An input fault after encoding that turns its row's guard (docs/bound.md, "Two stages";
 * the CPU twin is in tests/cpu/test_tight.c): fp64, m = 4, n = k = 1024, row 0 of A with 8
 * distinct magnitudes at the guard's quantization on its first block of 16, one at a bin's
 * bottom and one at the next bin's top; B two-valued there. The hook merges the two after
 * encoding; the second stage's full pass then sends row 0 to the worst case, unless it
 * finds the row's checksum moved (side_changed), as it must. */
typedef struct enc1 {
    int64_t i, j;
    double delta;
    int fired;
} enc1_t;
static abft_status_t enc1_fn(void *user, abft_hook_site_t site, int which, char prec, void *ptr,
                             int64_t rows, int64_t cols, int64_t ld) {
    enc1_t *a = (enc1_t *)user;
    (void)rows, (void)cols;
    if (site != ABFT_SITE_AFTER_ENCODE || which != 0 || prec != 'd') return ABFT_STATUS_SUCCESS;
    double v, *e = (double *)ptr + (size_t)(a->i + a->j * ld);
    if (cudaMemcpy(&v, e, sizeof v, cudaMemcpyDeviceToHost) != cudaSuccess) return ABFT_STATUS_CUDA_ERROR;
    v += a->delta;
    if (cudaMemcpy(e, &v, sizeof v, cudaMemcpyHostToDevice) != cudaSuccess) return ABFT_STATUS_CUDA_ERROR;
    a->fired = 1;
    return ABFT_STATUS_SUCCESS;
}
static void test_guard_after_encoding(abft_handle_t h) {
    const int64_t m = 4, n = 1024, k = 1024;
    double *A = tu_alloc_d(m * k), *B = tu_alloc_d(k * n);
    const double delta = tu_guard_case(m, n, k, A, B);
    double *dA, *dB, *dC;
    TU_CUDA_OK(cudaMalloc((void **)&dA, sizeof(double) * (size_t)(m * k)));
    TU_CUDA_OK(cudaMalloc((void **)&dB, sizeof(double) * (size_t)(k * n)));
    TU_CUDA_OK(cudaMalloc((void **)&dC, sizeof(double) * (size_t)(m * n)));
    TU_CUDA_OK(cudaMemcpy(dA, A, sizeof(double) * (size_t)(m * k), cudaMemcpyHostToDevice));
    TU_CUDA_OK(cudaMemcpy(dB, B, sizeof(double) * (size_t)(k * n), cudaMemcpyHostToDevice));
    enc1_t f = {0, 14, delta, 0};
    abft_set_hook(h, enc1_fn, &f);
    abft_report_t rep;
    TU_CHECK_STATUS(abft_dgemm(h, ABFT_OP_N, ABFT_OP_N, m, n, k, 1.0, dA, m, dB, k, 0.0, dC, m, &rep),
                    ABFT_STATUS_SUCCESS);
    abft_set_hook(h, NULL, NULL);
    printf("guard turned by an input fault after encoding (change %.3g): detected %lld (ratio "
           "%.3g)\n", f.delta, (long long)rep.detected, rep.max_ratio);
    TU_CHECK(f.fired && rep.detected > 0, "the change after encoding passed (ratio %g): the "
             "second stage let it turn its row's guard", rep.max_ratio);
    cudaFree(dA), cudaFree(dB), cudaFree(dC);
    free(A), free(B);
}

int main(void) {
    tu_require_gpu();
    uint64_t seed = tu_seed("test_tight_gpu");
    tu_rng_t r;
    tu_rng_init(&r, seed);
    abft_handle_t h = NULL;
    TU_CHECK_STATUS(abft_create(&h, ABFT_BACKEND_CUDA), ABFT_STATUS_SUCCESS);
    TU_CHECK_STATUS(abft_set_bound_mode(h, ABFT_BOUND_TIGHT, 1.0), ABFT_STATUS_SUCCESS);
    test_pass(h, &r);
    test_too_long(h, &r);
    test_dot2(h, &r);
    const int quick = getenv("ABFT_TEST_QUICK") != NULL;
    test_clean(h, &r, 0, quick ? 40 : 400);
    test_clean(h, &r, 1, quick ? 40 : 400);
    test_detects(h, &r, 0, 1e-3);
    test_detects(h, &r, 1, 1e-11);
    test_small_terms(h, &r);
    test_guard_after_encoding(h);
    abft_set_checksum_kind(h, ABFT_CHECKSUM_ROW);
    test_lane_orders(h, &r, quick);
    abft_destroy(h);
    return tu_finish("test_tight_gpu");
}
