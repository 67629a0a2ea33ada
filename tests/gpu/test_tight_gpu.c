/* The tight bound mode on the CUDA backend (docs/bound.md, "Tight mode"):
 *   1. the GPU tight pass against the CPU one (the oracle) on the same inputs: the same rows
 *      sent to the worst case, the same T elsewhere up to the summation order of the sketch
 *      (relative 1e-9), over awkward shapes, transposes, padding and the data that exercise
 *      the class weights and both guards (the long-sum guard from k = 1025 in fp32); beyond
 *      the long-sum guard's table, every row to the worst case;
 *   2. clean fp32 products over the space through the public API: none flagged;
 *   3. a change of 1e-3 of a row's RMS in one element, which the worst case misses at
 *      n = 384, detected and corrected;
 *   4. fp64 data in the tight mode: NOT_SUPPORTED, C untouched.
 * Exits 77 without a GPU. Randomized: the seed is printed. */
#include <cuda_runtime.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "abft_internal.h"
#include "testutil.h"
#include "testutil_cuda.h"

enum { K_UNIFORM, K_POSITIVE, K_REPEATED, K_CONSTANT, K_PERIODIC, K_DISCRETE, K_SHARED,
       K_FEWSET, K_COUNT };
static const char *kname[K_COUNT] = {"uniform",  "positive",    "repeated",
                                     "constant", "periodic",    "discrete",
                                     "shared rows", "twelve values"};

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
    /* the last two beyond fp32's k·u = 2^-14, where the long-sum guard runs */
    static const int64_t shapes[][3] = {{1, 1, 1},     {17, 5, 33},   {100, 64, 300},
                                        {257, 129, 64}, {64, 300, 17}, {3, 40, 1000},
                                        {40, 30, 3000}, {33, 7, 5000}};
    int checked = 0;
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
                                   (int64_t)tu_int(r, 0, 1) * (k / 2)};
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
            cudaFree(dA), cudaFree(dB), cudaFree(dY), cudaFree(dT);
            free(X), free(Y), free(A), free(B), free(yb), free(Tc), free(Tg);
        }
    printf("tight pass: %d cases, GPU against CPU; %lld rows to the worst case beyond k = 1024\n",
           checked, (long long)risky_long);
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
                           0x1p-24, 0x1p-53, 12.5, (double *)dT, m, NULL, 0};
    TU_CHECK_STATUS(abft_cuda_tight(&h->kctx, &g), ABFT_STATUS_SUCCESS);
    TU_CUDA_OK(cudaMemcpy(T, dT, sizeof T, cudaMemcpyDeviceToHost));
    for (int x = 0; x < 6; ++x) TU_CHECK(T[x] == -1.0, "k = %lld: T[%d] = %g, not the worst case", (long long)k, x, T[x]);
    cudaFree(dA), cudaFree(dB), cudaFree(dY), cudaFree(dT);
    free(A), free(B), free(yb);
}

typedef struct prob {
    int64_t m, n, k, lda, ldb, ldc;
    int ta, tb;
    float *A, *B, *C;     /* host */
    void *dA, *dB, *dC;   /* device */
} prob_t;

static void make(prob_t *p, tu_rng_t *r, int kind, int64_t m, int64_t n, int64_t k, int ta,
                 int tb, int64_t pad) {
    p->m = m, p->n = n, p->k = k, p->ta = ta, p->tb = tb;
    const int64_t ar = ta ? k : m, ac = ta ? m : k, br = tb ? n : k, bc = tb ? k : n;
    p->lda = ar + pad, p->ldb = br + pad, p->ldc = m + pad;
    double *X = tu_alloc_d(m * k + 1), *Y = tu_alloc_d(k * n + 1);
    fill(r, kind, 0, m, k, X);
    fill(r, kind, 1, k, n, Y);
    p->A = tu_alloc_s(p->lda * ac + 1), p->B = tu_alloc_s(p->ldb * bc + 1);
    p->C = tu_alloc_s(p->ldc * n + 1);
    store(ta, m, k, X, p->A, p->lda);
    store(tb, k, n, Y, p->B, p->ldb);
    for (int64_t i = 0; i < p->ldc * n; ++i) p->C[i] = (float)tu_range(r, -1.0, 1.0);
    TU_CUDA_OK(cudaMalloc(&p->dA, sizeof(float) * (size_t)(p->lda * ac + 1)));
    TU_CUDA_OK(cudaMalloc(&p->dB, sizeof(float) * (size_t)(p->ldb * bc + 1)));
    TU_CUDA_OK(cudaMalloc(&p->dC, sizeof(float) * (size_t)(p->ldc * n + 1)));
    TU_CUDA_OK(cudaMemcpy(p->dA, p->A, sizeof(float) * (size_t)(p->lda * ac), cudaMemcpyHostToDevice));
    TU_CUDA_OK(cudaMemcpy(p->dB, p->B, sizeof(float) * (size_t)(p->ldb * bc), cudaMemcpyHostToDevice));
    TU_CUDA_OK(cudaMemcpy(p->dC, p->C, sizeof(float) * (size_t)(p->ldc * n), cudaMemcpyHostToDevice));
    free(X), free(Y);
}
static void release(prob_t *p) {
    free(p->A), free(p->B), free(p->C);
    cudaFree(p->dA), cudaFree(p->dB), cudaFree(p->dC);
}

/* 2. clean products: none flagged */
static void test_clean(abft_handle_t h, tu_rng_t *r, int count) {
    static const float alphas[] = {1.0f, -0.7f, 3.5f}, betas[] = {0.0f, 1.0f, -0.3f};
    double worst = 0.0;
    for (int t = 0; t < count; ++t) {
        const int kind = t % K_COUNT;
        int64_t m = tu_int(r, 1, 120), n = tu_int(r, 1, 120), k = tu_int(r, 1, 300);
        if (t % 10 == 9) m = n = 256, k = t % 20 == 19 ? 3000 : 1024;
        const int ta = (int)tu_int(r, 0, 1), tb = (int)tu_int(r, 0, 1);
        const float alpha = alphas[tu_int(r, 0, 2)], beta = betas[tu_int(r, 0, 2)];
        abft_set_checksum_kind(h, t % 3 == 2 ? ABFT_CHECKSUM_FULL : ABFT_CHECKSUM_ROW);
        prob_t p;
        make(&p, r, kind, m, n, k, ta, tb, tu_int(r, 0, 2));
        abft_report_t rep;
        abft_status_t st = abft_sgemm(h, (abft_operation_t)ta, (abft_operation_t)tb, m, n, k,
                                      alpha, p.dA, p.lda, p.dB, p.ldb, beta, p.dC, p.ldc, &rep);
        TU_CHECK(st == ABFT_STATUS_SUCCESS && rep.detected == 0,
                 "%s %lldx%lldx%lld t%d%d alpha %g beta %g: %s, flagged %lld, ratio %g",
                 kname[kind], (long long)m, (long long)n, (long long)k, ta, tb, alpha, beta,
                 abft_status_name(st), (long long)rep.detected, rep.max_ratio);
        if (st == ABFT_STATUS_SUCCESS && rep.max_ratio > worst) worst = rep.max_ratio;
        release(&p);
    }
    abft_set_checksum_kind(h, ABFT_CHECKSUM_ROW);
    printf("clean: %d fp32 products, largest residual/bound %.3g\n", count, worst);
}

typedef struct add1 {
    int64_t i, j;
    float delta;
} add1_t;
static abft_status_t add1_fn(void *user, abft_hook_site_t site, int which, char prec, void *ptr,
                             int64_t rows, int64_t cols, int64_t ld) {
    add1_t *a = (add1_t *)user;
    (void)which, (void)rows, (void)cols, (void)prec;
    if (site != ABFT_SITE_AFTER_GEMM) return ABFT_STATUS_SUCCESS;
    float *e = (float *)ptr + a->i + a->j * ld, v;
    if (cudaMemcpy(&v, e, sizeof v, cudaMemcpyDeviceToHost) != cudaSuccess)
        return ABFT_STATUS_CUDA_ERROR;
    v += a->delta;
    if (cudaMemcpy(e, &v, sizeof v, cudaMemcpyHostToDevice) != cudaSuccess)
        return ABFT_STATUS_CUDA_ERROR;
    return ABFT_STATUS_SUCCESS;
}

/* 3. a small change detected */
static void test_detects(abft_handle_t h, tu_rng_t *r) {
    const int64_t n = 384;
    int seen[2] = {0, 0};
    uint64_t s = tu_next(r);
    for (int mode = 0; mode < 2; ++mode) {
        tu_rng_t q;
        tu_rng_init(&q, s);
        prob_t p;
        make(&p, &q, K_UNIFORM, n, n, n, 0, 0, 0);
        abft_set_bound_mode(h, mode ? ABFT_BOUND_TIGHT : ABFT_BOUND_WORST_CASE, 1.0);
        add1_t a = {17, 101, (float)(1e-3 * sqrt((double)n / 9.0))};
        abft_set_hook(h, add1_fn, &a);
        abft_report_t rep;
        TU_CHECK_STATUS(abft_sgemm(h, ABFT_OP_N, ABFT_OP_N, n, n, n, 1.0f, p.dA, n, p.dB, n,
                                   0.0f, p.dC, n, &rep),
                        ABFT_STATUS_SUCCESS);
        abft_set_hook(h, NULL, NULL);
        seen[mode] = rep.detected > 0;
        if (mode == 1)
            TU_CHECK(rep.detected > 0 && (rep.corrected == 1 || rep.recomputed == 1),
                     "tight: detected %lld corrected %lld recomputed %lld",
                     (long long)rep.detected, (long long)rep.corrected, (long long)rep.recomputed);
        release(&p);
    }
    printf("a change of 1e-3 of the RMS: worst case %s, tight %s\n",
           seen[0] ? "detected" : "missed", seen[1] ? "detected" : "missed");
    TU_CHECK(!seen[0], "the worst case saw it (the test's premise)");
    abft_set_bound_mode(h, ABFT_BOUND_TIGHT, 1.0);
}

/* 4. fp64 data: refused, C untouched */
static void test_fp64(abft_handle_t h) {
    const int64_t n = 8;
    double A[64], B[64], C[64], C0[64];
    for (int i = 0; i < 64; ++i) A[i] = 0.5 + i, B[i] = 1.0 - 0.01 * i, C[i] = C0[i] = 7.0 + i;
    void *dA, *dB, *dC;
    TU_CUDA_OK(cudaMalloc(&dA, sizeof A));
    TU_CUDA_OK(cudaMalloc(&dB, sizeof B));
    TU_CUDA_OK(cudaMalloc(&dC, sizeof C));
    TU_CUDA_OK(cudaMemcpy(dA, A, sizeof A, cudaMemcpyHostToDevice));
    TU_CUDA_OK(cudaMemcpy(dB, B, sizeof B, cudaMemcpyHostToDevice));
    TU_CUDA_OK(cudaMemcpy(dC, C, sizeof C, cudaMemcpyHostToDevice));
    abft_report_t rep;
    TU_CHECK_STATUS(abft_dgemm(h, ABFT_OP_N, ABFT_OP_N, n, n, n, 1.0, dA, n, dB, n, 1.0, dC, n,
                               &rep),
                    ABFT_STATUS_NOT_SUPPORTED);
    TU_CUDA_OK(cudaMemcpy(C, dC, sizeof C, cudaMemcpyDeviceToHost));
    TU_CHECK(memcmp(C, C0, sizeof C) == 0, "C changed by a refused call");
    cudaFree(dA), cudaFree(dB), cudaFree(dC);
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
    test_clean(h, &r, getenv("ABFT_TEST_QUICK") ? 40 : 400);
    test_detects(h, &r);
    test_fp64(h);
    abft_destroy(h);
    return tu_finish("test_tight_gpu");
}
