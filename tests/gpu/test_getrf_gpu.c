/* Protected LU on the CUDA backend against the CPU backend (the oracle): same pivots,
 * factors to a precision-tied tolerance, no false positives, faults in the factors and
 * between panels corrected on the device. Exits 77 without a GPU. */
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <math.h>
#include <string.h>

#include "abft_lu_kernels.h"
#include "testutil.h"

static const char *NAME = "test_getrf_gpu";

typedef struct flip {
    int site, which;
    int64_t i, j;
    int bit, fired;
} flip_t;

/* ptr is device memory on the CUDA backend */
static abft_status_t flip_hook(void *user, abft_hook_site_t site, int which, char prec, void *ptr,
                               int64_t rows, int64_t cols, int64_t ld) {
    flip_t *f = (flip_t *)user;
    if ((int)site != f->site || which != f->which || f->fired || f->i >= rows || f->j >= cols)
        return ABFT_STATUS_SUCCESS;
    size_t off = (size_t)(f->i + f->j * ld);
    if (prec == 'd') {
        double v;
        cudaMemcpy(&v, (double *)ptr + off, 8, cudaMemcpyDeviceToHost);
        v = tu_flip_d(v, f->bit);
        cudaMemcpy((double *)ptr + off, &v, 8, cudaMemcpyHostToDevice);
    } else {
        float v;
        cudaMemcpy(&v, (float *)ptr + off, 4, cudaMemcpyDeviceToHost);
        v = tu_flip_s(v, f->bit);
        cudaMemcpy((float *)ptr + off, &v, 4, cudaMemcpyHostToDevice);
    }
    f->fired = 1;
    return ABFT_STATUS_SUCCESS;
}

static int64_t g_panel_nb = 0, g_recomputed = 0, g_la = 0;

static void one(abft_handle_t hc, abft_handle_t hg, tu_rng_t *r, char prec, int online,
                int64_t m, int64_t n, int64_t nb, flip_t *f) {
    int64_t lda = m + 3, k = m < n ? m : n;
    size_t es = prec == 'd' ? 8 : 4, bytes = (size_t)(lda * n) * es;
    double *Ad = tu_alloc_d(lda * n);
    tu_fill_d(r, TU_UNIFORM, m, n, Ad, lda);
    void *Ac = malloc(bytes), *Ag = malloc(bytes);
    for (int64_t i = 0; i < lda * n; ++i) {
        if (prec == 'd') ((double *)Ac)[i] = Ad[i]; else ((float *)Ac)[i] = (float)Ad[i];
    }
    memcpy(Ag, Ac, bytes);
    void *dA;
    int64_t *dp, *pc = (int64_t *)malloc((size_t)k * 8), *pg = (int64_t *)malloc((size_t)k * 8);
    cudaMalloc(&dA, bytes);
    cudaMalloc((void **)&dp, (size_t)k * 8);
    cudaMemcpy(dA, Ag, bytes, cudaMemcpyHostToDevice);
    abft_lu_options_t opt = {nb, 1, g_panel_nb, g_la};
    abft_report_t rc, rg;
    int64_t ic, ig;
    abft_status_t sc, sg;
    if (prec == 'd') {
        sc = online ? abft_dgetrf_online(hc, m, n, Ac, lda, pc, &opt, &ic, &rc) : abft_dgetrf(hc, m, n, Ac, lda, pc, &ic, &rc);
        if (f) abft_set_hook(hg, flip_hook, f);
        sg = online ? abft_dgetrf_online(hg, m, n, dA, lda, dp, &opt, &ig, &rg) : abft_dgetrf(hg, m, n, dA, lda, dp, &ig, &rg);
    } else {
        sc = online ? abft_sgetrf_online(hc, m, n, Ac, lda, pc, &opt, &ic, &rc) : abft_sgetrf(hc, m, n, Ac, lda, pc, &ic, &rc);
        if (f) abft_set_hook(hg, flip_hook, f);
        sg = online ? abft_sgetrf_online(hg, m, n, dA, lda, dp, &opt, &ig, &rg) : abft_sgetrf(hg, m, n, dA, lda, dp, &ig, &rg);
    }
    abft_set_hook(hg, NULL, NULL);
    cudaMemcpy(Ag, dA, bytes, cudaMemcpyDeviceToHost);
    cudaMemcpy(pg, dp, (size_t)k * 8, cudaMemcpyDeviceToHost);
    TU_CHECK(sc == ABFT_STATUS_SUCCESS && sg == ABFT_STATUS_SUCCESS, "%c %s %lldx%lld: cpu %s gpu %s",
             prec, online ? "online" : "offline", (long long)m, (long long)n, abft_status_name(sc),
             abft_status_name(sg));
    TU_CHECK(rc.detected == 0, "cpu false positive");
    if (f == NULL) {
        TU_CHECK(rg.detected == 0, "%c %s %lldx%lld: gpu false positive, max_ratio %g", prec,
                 online ? "online" : "offline", (long long)m, (long long)n, rg.max_ratio);
    } else {
        TU_CHECK(f->fired && rg.detected > 0 && rg.corrected + rg.recomputed >= 1 &&
                     rg.uncorrectable == 0,
                 "%c %s: gpu flip (%lld,%lld) bit %d site %d: detected %lld corrected %lld "
                 "recomputed %lld", prec, online ? "online" : "offline", (long long)f->i,
                 (long long)f->j, f->bit, f->site, (long long)rg.detected,
                 (long long)rg.corrected, (long long)rg.recomputed);
        g_recomputed += rg.recomputed;
    }
    int same = 1;
    for (int64_t i = 0; i < k; ++i) same &= pc[i] == pg[i];
    /* fp64, and runs with a fault: the GPU's pivots and factors are LAPACK's. A clean fp32
     * run is held to LU's own guarantee instead (below): even with the same pivots the fp32
     * factors of an ill-conditioned matrix can differ from LAPACK's by more than any fixed
     * tolerance (seed 9337965071501820, s online 700x700: the same pivots, factors 1.2e-3
     * apart, the same on every replay). */
    if (prec == 'd' || f != NULL) {
        TU_CHECK(same, "%c %s %lldx%lld: pivots differ cpu/gpu", prec, online ? "online" : "offline",
                 (long long)m, (long long)n);
        double num = 0, den = 0;
        for (int64_t j = 0; j < n; ++j)
            for (int64_t i = 0; i < m; ++i) {
                double a = prec == 'd' ? ((double *)Ac)[i + j * lda] : ((float *)Ac)[i + j * lda];
                double b = prec == 'd' ? ((double *)Ag)[i + j * lda] : ((float *)Ag)[i + j * lda];
                num = fmax(num, fabs(a - b));
                den = fmax(den, fabs(a));
            }
        double tol = (prec == 'd' ? 1e-10 : 1e-3);
        TU_CHECK(num <= tol * den, "%c %s %lldx%lld: factors differ cpu/gpu by %g", prec,
                 online ? "online" : "offline", (long long)m, (long long)n, num / den);
    } else {
        /* fp32: a near tie in a pivot column can go either way under different (equally
         * valid) rounding in LAPACK and cuSOLVER, and the factors differ by the conditioning
         * of the steps. Either way the GPU factors must be a backward-stable LU of P·A with
         * the GPU's pivots: |P·A - L·U| <= 4·k·u·(|L||U|). */
        for (int64_t i = 0; i < k; ++i)
            TU_CHECK(pg[i] - 1 >= i && pg[i] - 1 < m, "gpu pivot %lld out of range at %lld",
                     (long long)pg[i], (long long)i);
        double *A0 = tu_alloc_d(lda * n), *F = tu_alloc_d(lda * n);
        for (int64_t t = 0; t < lda * n; ++t) {
            A0[t] = (double)(float)Ad[t];
            F[t] = (double)((const float *)Ag)[t];
        }
        const double worst = tu_lu_backward(m, n, A0, F, lda, pg, 0x1p-24) / 4.0;
        if (!same)
            printf("s %s %lldx%lld: pivots differ from LAPACK's (a near tie); GPU backward "
                   "error %.3g of 4ku|L||U|\n", online ? "online" : "offline", (long long)m,
                   (long long)n, worst);
        TU_CHECK(worst <= 1.0, "fp32 GPU factors not a backward-stable LU of P·A: %g", worst);
        free(A0);
        free(F);
    }
    cudaFree(dA);
    cudaFree(dp);
    free(Ad);
    free(Ac);
    free(Ag);
    free(pc);
    free(pg);
}

/* ---- the LU ops of the online driver, CUDA against the CPU oracle ------------------------ */

typedef struct gctx {
    abft_kctx_t ctx;
    abft_buffer_t scratch;
} gctx_t;

static void *dput(const void *h, size_t bytes) {
    void *d = NULL;
    cudaMalloc(&d, bytes > 0 ? bytes : 16);
    if (bytes) cudaMemcpy(d, h, bytes, cudaMemcpyHostToDevice);
    return d;
}

/* 1-based pivots + off for rows k1..k2-1 of an m-row matrix: a quarter each p = i, a repeat
 * of an earlier partner, any row (also above k1), a row >= i (as getrf makes them); sparse:
 * p = i for 7 in 8 of them (a long panel with a short list of changed rows). */
static void random_pivots(tu_rng_t *r, int64_t m, int64_t k1, int64_t k2, int64_t off,
                          int sparse, int64_t *ipiv) {
    for (int64_t i = k1; i < k2; ++i) {
        int64_t p, kind = tu_int(r, 0, 3);
        if (sparse && tu_int(r, 0, 7) != 0) kind = 0;
        if (kind == 0) p = i;
        else if (kind == 1 && i > k1) p = ipiv[tu_int(r, k1, i - 1)] - 1 - off;
        else if (kind == 2) p = tu_int(r, 0, m - 1);
        else p = tu_int(r, i, m - 1);
        ipiv[i] = p + 1 + off;
    }
}

/* The number of rows the interchanges k1..k2-1 change (the length of the device's list). */
static int64_t changed_rows(int64_t m, int64_t k1, int64_t k2, const int64_t *ipiv, int64_t off) {
    int64_t *perm = (int64_t *)malloc((size_t)m * sizeof(int64_t)), cnt = 0;
    for (int64_t i = 0; i < m; ++i) perm[i] = i;
    for (int64_t i = k1; i < k2; ++i) {
        const int64_t p = ipiv[i] - 1 - off, t = perm[i];
        perm[i] = perm[p];
        perm[p] = t;
    }
    for (int64_t i = 0; i < m; ++i) cnt += perm[i] != i;
    free(perm);
    return cnt;
}

/* laswp with device pivots (composed on the device; the shared-memory and the global-buffer
 * paths) and with host pivots, skip range, X2: bitwise the CPU's. */
static void test_laswp_op(gctx_t *g, tu_rng_t *r) {
    abft_kctx_t cpu = {NULL, NULL, NULL, NULL, -1};
    int runs = 0, bad = 0;
    /* device runs by swap_apply's path (kernels/cuda/abft_cuda_lu.cu): the register path
     * (list <= 512 rows) launched per 8-column group (2(k2-k1) <= 512) or grid-stride (longer
     * panel, short list), with a short last group of A's columns (na % 8 != 0), with X2; the
     * shared-memory path (list > 512, 2(k2-k1) <= 2048); the global fallback (2(k2-k1) >
     * 2048, also swap_compose's tiled pivots: k2 - k1 > 1024) */
    int n_reg = 0, n_reg_stride = 0, n_reg_tail = 0, n_reg_x2 = 0, n_smem = 0, n_glob = 0;
    for (int t = 0; t < 160; ++t) {
        const int wide = t % 10 == 9; /* > 1024 swaps: the global fallback */
        const int mid = t % 10 == 4;  /* 600..1000 swaps: the shared-memory path */
        const int sparse = t % 10 == 7 || t % 10 == 1; /* 300..600, few changed rows */
        const int64_t w_lo = wide ? 1030 : mid ? 600 : sparse ? 300 : 0;
        const int64_t w_hi = wide ? 1300 : mid ? 1000 : sparse ? 600 : 300;
        const int64_t m = w_lo > 0 ? tu_int(r, w_lo + 100, 2 * w_hi) : tu_int(r, 1, 1200);
        const int64_t cols = tu_int(r, 1, t % 3 == 0 ? 2000 : 300), lda = m + tu_int(r, 0, 3);
        const int64_t k1 = tu_int(r, 0, m - w_lo - (w_lo > 0 ? 0 : 1));
        const int64_t k2 = k1 + tu_int(r, w_lo, m - k1 < w_hi ? m - k1 : w_hi);
        const int64_t off = tu_int(r, 0, 2) * 256, cols2 = tu_int(r, 0, 4);
        int64_t skip0 = 0, skip1 = 0;
        if (tu_int(r, 0, 1)) {
            skip0 = tu_int(r, 0, cols);
            skip1 = tu_int(r, skip0, cols + 2);
        }
        const int dev = t % 4 != 3, sp = (int)tu_int(r, 0, 1);
        const size_t es = sp ? 4 : 8, bytes = (size_t)(lda * cols) * es;
        int64_t *ipiv = (int64_t *)malloc((size_t)m * sizeof(int64_t));
        random_pivots(r, m, k1, k2, off, sparse, ipiv);
        char *A = (char *)malloc(bytes), *G = (char *)malloc(bytes);
        double *X = tu_alloc_d(m * (cols2 + 1)), *XG = tu_alloc_d(m * (cols2 + 1));
        for (int64_t q = 0; q < lda * cols; ++q) {
            if (sp) ((float *)A)[q] = (float)q;
            else ((double *)A)[q] = (double)q;
        }
        for (int64_t q = 0; q < m * cols2; ++q) X[q] = -(double)q;
        void *dA = dput(A, bytes), *dX = dput(X, (size_t)(m * cols2) * 8);
        void *dp = dput(ipiv, (size_t)m * 8);
        abft_lu_laswp_args_t a = {sp ? ABFT_PREC_S : ABFT_PREC_D, 0, cols, A, lda, k1, k2, ipiv,
                                  off, dev, skip0, skip1, cols2 > 0 ? X : NULL, cols2, m};
        abft_lu_laswp_args_t b = a;
        b.A = dA;
        b.X2 = cols2 > 0 ? (double *)dX : NULL;
        if (dev) b.ipiv = (const int64_t *)dp;
        TU_CHECK_STATUS(abft_cpu_lu_laswp(&cpu, &a), ABFT_STATUS_SUCCESS);
        TU_CHECK_STATUS(abft_cuda_lu_laswp(&g->ctx, &b), ABFT_STATUS_SUCCESS);
        TU_CHECK_STATUS(abft_cuda_sync(&g->ctx), ABFT_STATUS_SUCCESS);
        cudaMemcpy(G, dA, bytes, cudaMemcpyDeviceToHost);
        cudaMemcpy(XG, dX, (size_t)(m * cols2) * 8, cudaMemcpyDeviceToHost);
        int ok = memcmp(A, G, bytes) == 0 && memcmp(X, XG, (size_t)(m * cols2) * 8) == 0;
        TU_CHECK(ok, "laswp %lldx%lld rows %lld..%lld off %lld skip %lld..%lld cols2 %lld %c dev %d",
                 (long long)m, (long long)cols, (long long)k1, (long long)k2, (long long)off,
                 (long long)skip0, (long long)skip1, (long long)cols2, sp ? 's' : 'd', dev);
        bad += !ok;
        ++runs;
        if (dev) {
            const int64_t cnt = changed_rows(m, k1, k2, ipiv, off);
            int64_t na = cols;
            if (skip1 > skip0 && skip0 < cols) na -= (skip1 < cols ? skip1 : cols) - skip0;
            if (cnt > 0 && cnt <= 512 && na + cols2 > 0) {
                ++n_reg;
                n_reg_stride += 2 * (k2 - k1) > 512;
                n_reg_tail += na % 8 != 0;
                n_reg_x2 += cols2 > 0;
            }
            if (cnt > 512 && na + cols2 > 0) {
                if (2 * (k2 - k1) <= 2048) ++n_smem;
                else ++n_glob;
            }
        }
        cudaFree(dA);
        cudaFree(dX);
        cudaFree(dp);
        free(ipiv);
        free(A);
        free(G);
        free(X);
        free(XG);
    }
    printf("laswp op: %d/%d random pivot sets as the CPU's (device paths: register %d, of them "
           "grid-stride %d, short last group %d, with X2 %d; shared %d; global %d)\n",
           runs - bad, runs, n_reg, n_reg_stride, n_reg_tail, n_reg_x2, n_smem, n_glob);
    TU_CHECK(n_reg_stride > 0 && n_reg_tail > 0 && n_reg_x2 > 0 && n_smem > 0 && n_glob > 0,
             "laswp op: every swap_apply path reached");
}

/* getrf with ipiv_off and the device info over three panels (zero columns in the second
 * and the third), tri on short-wide and tall blocks, the axpy pair. */
static void test_other_ops(gctx_t *g, tu_rng_t *r) {
    abft_kctx_t cpu = {NULL, NULL, NULL, NULL, -1};
    const int64_t m = 700, w = 96, offs[3] = {0, 96, 192}, zero[3] = {-1, 40, 5};
    int64_t cinfo = 0, *dinfo = (int64_t *)dput(&cinfo, 8);
    for (int q = 0; q < 3; ++q) {
        double *A = tu_alloc_d(m * w), *G = tu_alloc_d(m * w);
        tu_fill_d(r, TU_UNIFORM, m, w, A, m);
        if (zero[q] >= 0)
            for (int64_t i = 0; i < m; ++i) A[i + zero[q] * m] = 0.0;
        double *dA = (double *)dput(A, (size_t)(m * w) * 8);
        int64_t pc[96], pg[96], *dp = (int64_t *)dput(pc, sizeof pc), hinfo = -7;
        abft_lu_getrf_args_t a = {ABFT_PREC_D, m, w, A, m, pc, &hinfo, NULL, offs[q], &cinfo};
        abft_lu_getrf_args_t b = {ABFT_PREC_D, m, w, dA, m, dp, &hinfo, NULL, offs[q], dinfo};
        TU_CHECK_STATUS(abft_cpu_lu_getrf(&cpu, &a), ABFT_STATUS_SUCCESS);
        TU_CHECK_STATUS(abft_cuda_lu_getrf(&g->ctx, &b), ABFT_STATUS_SUCCESS);
        TU_CHECK_STATUS(abft_cuda_sync(&g->ctx), ABFT_STATUS_SUCCESS);
        cudaMemcpy(pg, dp, sizeof pg, cudaMemcpyDeviceToHost);
        cudaMemcpy(G, dA, (size_t)(m * w) * 8, cudaMemcpyDeviceToHost);
        TU_CHECK(hinfo == -7, "getrf with dinfo wrote the host info");
        /* a zero column leaves the pivot choice in it to the implementation */
        const int same = memcmp(pc, pg, sizeof pc) == 0;
        TU_CHECK(same || zero[q] >= 0, "getrf panel %d: pivots cpu/gpu differ", q);
        double e = tu_rel_diff(m, w, G, A, m);
        TU_CHECK(!same || e < 1e-12, "getrf panel %d: factors cpu/gpu differ by %g", q, e);
        if (!same) printf("getrf panel %d (zero column): pivots differ from LAPACK's\n", q);
        cudaFree(dA);
        cudaFree(dp);
        free(A);
        free(G);
    }
    int64_t ginfo = -1;
    cudaMemcpy(&ginfo, dinfo, 8, cudaMemcpyDeviceToHost);
    TU_CHECK(cinfo == 96 + 40 + 1 && ginfo == cinfo, "accumulated info cpu %lld gpu %lld, want 137",
             (long long)cinfo, (long long)ginfo);
    cudaFree(dinfo);

    /* tri, non-transposed: short-wide (a panel's U rows), tall (the final check), ragged */
    const int64_t shapes[][3] = {{256, 8192, 0}, {256, 3000, 0}, {37, 1500, 0}, {3000, 700, 1},
                                 {2500, 2500, 0}, {5, 3, 1}, {1, 1, 0}, {200, 0, 1}};
    for (size_t t = 0; t < sizeof shapes / sizeof shapes[0]; ++t) {
        const int64_t rows = shapes[t][0], cols = shapes[t][1], lda = rows + 1;
        const int uplo = (int)shapes[t][2], explicit_x = (int)(t % 2);
        double *A = tu_alloc_d(lda * (cols + 1)), *Xw = tu_alloc_d(2 * (cols + 1));
        tu_fill_d(r, TU_UNIFORM, rows, cols, A, lda);
        for (int64_t j = 0; j < cols; ++j) {
            Xw[j] = tu_range(r, -1, 1);
            Xw[j + cols] = tu_range(r, -1, 1);
        }
        double *Yc = tu_alloc_d(4 * rows), *Yg = tu_alloc_d(4 * rows);
        double *dA = (double *)dput(A, (size_t)(lda * (cols + 1)) * 8);
        double *dX = (double *)dput(Xw, (size_t)(2 * (cols + 1)) * 8), *dY = NULL;
        cudaMalloc((void **)&dY, (size_t)(4 * rows) * 8);
        abft_lu_tri_args_t a = {ABFT_PREC_D, uplo, 0, rows, cols, A, lda, explicit_x ? Xw : NULL,
                                cols, NULL, 0, 3, Yc, rows, Yc + 2 * rows, rows};
        abft_lu_tri_args_t b = a;
        b.A = dA;
        b.X = explicit_x ? dX : NULL;
        b.Y = dY;
        b.Yabs = dY + 2 * rows;
        TU_CHECK_STATUS(abft_cpu_lu_tri(&cpu, &a), ABFT_STATUS_SUCCESS);
        TU_CHECK_STATUS(abft_cuda_lu_tri(&g->ctx, &b), ABFT_STATUS_SUCCESS);
        TU_CHECK_STATUS(abft_cuda_sync(&g->ctx), ABFT_STATUS_SUCCESS);
        cudaMemcpy(Yg, dY, (size_t)(4 * rows) * 8, cudaMemcpyDeviceToHost);
        /* both accumulate in fp64 in different orders: |gpu - cpu| <= 2 (len + 2) u (|T||X|)_i */
        double worst = 0.0;
        for (int64_t i = 0; i < rows; ++i)
            for (int q = 0; q < 2; ++q) {
                double tol = 2.0 * (double)(cols + 2) * 0x1p-53 * Yc[i + (2 + q) * rows];
                double e1 = fabs(Yg[i + q * rows] - Yc[i + q * rows]);
                double e2 = fabs(Yg[i + (2 + q) * rows] - Yc[i + (2 + q) * rows]);
                double e = fmax(e1, e2) / (tol > 0 ? tol : 1e-300);
                if (!(e <= worst)) worst = isnan(e) ? INFINITY : e;
            }
        TU_CHECK(worst <= 1.0, "tri %lldx%lld uplo %d x %d: gpu/cpu differ by %g of the tolerance",
                 (long long)rows, (long long)cols, uplo, explicit_x, worst);
        cudaFree(dA);
        cudaFree(dX);
        cudaFree(dY);
        free(A);
        free(Xw);
        free(Yc);
        free(Yg);
    }

    /* the axpy pair: bitwise */
    const int64_t n = 1000;
    double *H = tu_alloc_d(8 * n), *R = tu_alloc_d(8 * n);
    for (int64_t i = 0; i < 8 * n; ++i) H[i] = tu_range(r, -1, 1);
    double *dH = (double *)dput(H, (size_t)(8 * n) * 8);
    abft_lu_axpy_args_t a = {n - 3, 2, -1.0, H, n, H + 2 * n, n, 4.0, H + 4 * n, n, H + 6 * n, n};
    abft_lu_axpy_args_t b = {n - 3, 2, -1.0, dH, n, dH + 2 * n, n, 4.0, dH + 4 * n, n, dH + 6 * n, n};
    TU_CHECK_STATUS(abft_cpu_lu_axpy(&cpu, &a), ABFT_STATUS_SUCCESS);
    TU_CHECK_STATUS(abft_cuda_lu_axpy(&g->ctx, &b), ABFT_STATUS_SUCCESS);
    TU_CHECK_STATUS(abft_cuda_sync(&g->ctx), ABFT_STATUS_SUCCESS);
    cudaMemcpy(R, dH, (size_t)(8 * n) * 8, cudaMemcpyDeviceToHost);
    TU_CHECK(memcmp(H, R, (size_t)(8 * n) * 8) == 0, "axpy pair: gpu/cpu differ");
    cudaFree(dH);
    free(H);
    free(R);
}

/* Singular matrices online: the info accumulated on the device, as on the CPU. */
static void test_singular_online(abft_handle_t hc, abft_handle_t hg, tu_rng_t *r) {
    const int64_t n = 300, zc[3] = {150, 0, 299};
    for (int t = 0; t < 6; ++t) {
        double *A = tu_alloc_d(n * n), *G = tu_alloc_d(n * n);
        tu_fill_d(r, TU_UNIFORM, n, n, A, n);
        for (int64_t i = 0; i < n; ++i) A[i + zc[t % 3] * n] = 0.0;
        if (t >= 3) /* a second zero column further right: the first one counts */
            for (int64_t i = 0; i < n; ++i) A[i + (zc[t % 3] + 299) / 2 * n] = 0.0;
        double *dA = (double *)dput(A, (size_t)(n * n) * 8);
        int64_t *pc = (int64_t *)malloc((size_t)n * 8), *pg = (int64_t *)malloc((size_t)n * 8), *dp;
        cudaMalloc((void **)&dp, (size_t)n * 8);
        abft_lu_options_t opt = {64, 1, t % 2 ? 16 : 0};
        int64_t ic = -1, ig = -1;
        abft_report_t rc, rg;
        abft_status_t sc = abft_dgetrf_online(hc, n, n, A, n, pc, &opt, &ic, &rc);
        abft_status_t sg = abft_dgetrf_online(hg, n, n, dA, n, dp, &opt, &ig, &rg);
        cudaMemcpy(pg, dp, (size_t)n * 8, cudaMemcpyDeviceToHost);
        TU_CHECK(sc == ABFT_STATUS_SINGULAR && sg == ABFT_STATUS_SINGULAR && ic == ig &&
                     ic == zc[t % 3] + 1,
                 "singular (zero column %lld, panel_nb %lld): cpu %s info %lld, gpu %s info %lld",
                 (long long)zc[t % 3], (long long)opt.panel_nb, abft_status_name(sc),
                 (long long)ic, abft_status_name(sg), (long long)ig);
        if (memcmp(pc, pg, (size_t)n * 8) != 0) /* the pivot in a zero column: either */
            printf("singular (zero column %lld): pivots differ from LAPACK's\n", (long long)zc[t % 3]);
        TU_CHECK(rg.detected == 0, "singular: gpu false positive, max_ratio %g", rg.max_ratio);
        cudaFree(dA);
        cudaFree(dp);
        free(A);
        free(G);
        free(pc);
        free(pg);
    }
}

/* Math modes (docs/lu.md, "Arithmetic"): under a TF32 cuBLAS math mode the online LU's
 * trsm/gemm, getrs's trsm and the recovery run on tensor cores; the bounds take u_in = 2^-10
 * (a clean online sgetrf at n = 1024 measured a residual of 0.04 of the fp32 bound: with
 * the TF32 arithmetic it is far below 1, and the report states u_in). FP64 fixed-point
 * emulation is not modelled: NOT_SUPPORTED, every output untouched. */
static void test_math_modes(abft_handle_t hg, tu_rng_t *r) {
    cublasHandle_t cb = NULL;
    if (cublasCreate(&cb) != CUBLAS_STATUS_SUCCESS) {
        TU_CHECK(0, "cublasCreate");
        return;
    }
    const int64_t n = 1024;
    float *A = tu_alloc_s(n * n), *B = tu_alloc_s(n);
    tu_fill_s(r, TU_UNIFORM, n, n, A, n);
    tu_fill_s(r, TU_UNIFORM, n, 1, B, n);
    void *dA, *dB;
    int64_t *dp, info = 0;
    cudaMalloc(&dA, (size_t)(n * n) * 8);
    cudaMalloc(&dB, (size_t)n * 8);
    cudaMalloc((void **)&dp, (size_t)n * 8);
    abft_report_t rep;
    TU_CHECK(cublasSetMathMode(cb, CUBLAS_TF32_TENSOR_OP_MATH) == CUBLAS_STATUS_SUCCESS, "TF32");
    TU_CHECK_STATUS(abft_set_cublas_handle(hg, cb), ABFT_STATUS_SUCCESS);
    for (int online = 0; online < 2; ++online) {
        cudaMemcpy(dA, A, (size_t)(n * n) * 4, cudaMemcpyHostToDevice);
        abft_status_t st = online ? abft_sgetrf_online(hg, n, n, (float *)dA, n, dp, NULL, &info, &rep)
                                  : abft_sgetrf(hg, n, n, (float *)dA, n, dp, &info, &rep);
        TU_CHECK(st == ABFT_STATUS_SUCCESS, "TF32 sgetrf online %d: %s", online,
                 abft_status_name(st));
        TU_CHECK(rep.detected == 0 && rep.max_ratio < 1.0,
                 "TF32 sgetrf online %d: detected %lld max_ratio %g", online,
                 (long long)rep.detected, rep.max_ratio);
        TU_CHECK(rep.unit_roundoff == 0x1p-10, "TF32 sgetrf online %d: unit_roundoff %g", online,
                 rep.unit_roundoff);
        printf("%s: TF32 sgetrf %s n = 1024: max_ratio %.3g (u %g)\n", NAME,
               online ? "online" : "offline", rep.max_ratio, rep.unit_roundoff);
    }
    cudaMemcpy(dB, B, (size_t)n * 4, cudaMemcpyHostToDevice);
    TU_CHECK_STATUS(abft_sgetrs(hg, ABFT_OP_N, n, 1, (const float *)dA, n, dp, (float *)dB, n, &rep),
                    ABFT_STATUS_SUCCESS);
    TU_CHECK(rep.detected == 0 && rep.unit_roundoff == 0x1p-10,
             "TF32 sgetrs: detected %lld unit_roundoff %g", (long long)rep.detected,
             rep.unit_roundoff);
#if defined(CUBLAS_VER_MAJOR) && CUBLAS_VER_MAJOR >= 13
    if (cublasSetMathMode(cb, CUBLAS_FP64_EMULATED_FIXEDPOINT_MATH) == CUBLAS_STATUS_SUCCESS) {
        double *Ad = tu_alloc_d(n * n), *back = tu_alloc_d(n * n);
        tu_fill_d(r, TU_UNIFORM, n, n, Ad, n);
        int64_t pin[4] = {7, 7, 7, 7}, pout[4];
        for (int c = 0; c < 3; ++c) {
            cudaMemcpy(dA, Ad, (size_t)(n * n) * 8, cudaMemcpyHostToDevice);
            cudaMemcpy(dp, pin, sizeof pin, cudaMemcpyHostToDevice);
            memset(&rep, 0xA5, sizeof rep);
            abft_report_t r0 = rep;
            info = 12345;
            abft_status_t st = c == 0   ? abft_dgetrf(hg, n, n, (double *)dA, n, dp, &info, &rep)
                               : c == 1 ? abft_dgetrf_online(hg, n, n, (double *)dA, n, dp, NULL,
                                                             &info, &rep)
                                        : abft_dgetrs(hg, ABFT_OP_N, 4, 1, (const double *)dA, n,
                                                      dp, (double *)dB, 4, &rep);
            TU_CHECK(st == ABFT_STATUS_NOT_SUPPORTED, "FP64 emulation case %d: %s", c,
                     abft_status_name(st));
            cudaMemcpy(back, dA, (size_t)(n * n) * 8, cudaMemcpyDeviceToHost);
            cudaMemcpy(pout, dp, sizeof pout, cudaMemcpyDeviceToHost);
            TU_CHECK(memcmp(back, Ad, (size_t)(n * n) * 8) == 0 && memcmp(pin, pout, sizeof pin) == 0 &&
                         info == 12345 && memcmp(&rep, &r0, sizeof rep) == 0,
                     "FP64 emulation case %d: an output was written", c);
        }
        free(Ad);
        free(back);
    }
#endif
    TU_CHECK_STATUS(abft_set_cublas_handle(hg, NULL), ABFT_STATUS_SUCCESS);
    cublasDestroy(cb);
    cudaFree(dA);
    cudaFree(dB);
    cudaFree(dp);
    free(A);
    free(B);
}

int main(void) {
    tu_require_gpu();
    tu_rng_t r;
    tu_rng_init(&r, tu_seed(NAME));
    abft_handle_t hc, hg;
    TU_CHECK_STATUS(abft_create(&hc, ABFT_BACKEND_CPU), ABFT_STATUS_SUCCESS);
    TU_CHECK_STATUS(abft_create(&hg, ABFT_BACKEND_CUDA), ABFT_STATUS_SUCCESS);
    const int64_t shapes[][2] = {{1, 1}, {37, 37}, {300, 300}, {513, 513}, {400, 250}, {250, 400}, {1500, 1500}};
    for (int p = 0; p < 2; ++p)
        for (int online = 0; online < 2; ++online)
            for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; ++s)
                one(hc, hg, &r, p ? 's' : 'd', online, shapes[s][0], shapes[s][1], 64, NULL);
    /* the recursive panel on the device */
    g_panel_nb = 16;
    for (int p = 0; p < 2; ++p)
        one(hc, hg, &r, p ? 's' : 'd', 1, 700, 700, 128, NULL);
    g_panel_nb = 0;
    /* one panel wider than 1024 columns: the device swaps through the global buffer */
    one(hc, hg, &r, 'd', 1, 1500, 1500, 1100, NULL);
    /* the LU ops against the CPU */
    gctx_t g;
    memset(&g, 0, sizeof g);
    g.ctx.scratch = &g.scratch;
    TU_CHECK_STATUS(abft_cuda_context_create(&g.ctx), ABFT_STATUS_SUCCESS);
    test_laswp_op(&g, &r);
    test_other_ops(&g, &r);
    if (g.scratch.ptr) abft_cuda_free(&g.ctx, g.scratch.ptr);
    TU_CHECK_STATUS(abft_cuda_context_destroy(&g.ctx, 1, 1), ABFT_STATUS_SUCCESS);
    test_singular_online(hc, hg, &r);
    test_math_modes(hg, &r);
    /* look-ahead on a caller's non-blocking stream (the second stream is ordered against it
     * by events only; the legacy stream orders nothing here): the factors as on the CPU */
    {
        cudaStream_t us;
        TU_CHECK(cudaStreamCreateWithFlags(&us, cudaStreamNonBlocking) == cudaSuccess,
                 "stream create");
        TU_CHECK_STATUS(abft_set_stream(hg, us), ABFT_STATUS_SUCCESS);
        for (int p = 0; p < 2; ++p) one(hc, hg, &r, p ? 's' : 'd', 1, 1000, 1000, 96, NULL);
        TU_CHECK_STATUS(abft_set_stream(hg, NULL), ABFT_STATUS_SUCCESS);
        cudaStreamDestroy(us);
    }
    /* faults: in the factors (offline), between panels (online); a correction needs the
     * recovery copy to confirm it (docs/lu.md) */
    TU_CHECK_STATUS(abft_set_lu_recovery(hg, 1), ABFT_STATUS_SUCCESS);
    for (int t = 0; t < 6; ++t) {
        flip_t f = {ABFT_SITE_AFTER_LU, 0, tu_int(&r, 0, 299), tu_int(&r, 0, 299), (int)tu_int(&r, 52, 60), 0};
        one(hc, hg, &r, 'd', 0, 300, 300, 64, &f);
        flip_t g = {ABFT_SITE_LU_PANEL, 1, tu_int(&r, 128, 299), tu_int(&r, 128, 299), (int)tu_int(&r, 52, 60), 0};
        one(hc, hg, &r, 'd', 1, 300, 300, 64, &g);
    }
    /* the same with look-ahead forced on (a hook turns the default off): a flip in the next
     * panel's columns (128..191) is corrected after that panel was factored on the second
     * stream, which then factors it again from its copy */
    g_la = 1;
    for (int t = 0; t < 8; ++t) {
        int64_t j = t < 4 ? tu_int(&r, 128, 191) : tu_int(&r, 192, 299);
        flip_t g = {ABFT_SITE_LU_PANEL, 1, tu_int(&r, 128, 299), j, (int)tu_int(&r, 52, 60), 0};
        one(hc, hg, &r, 'd', 1, 300, 300, 64, &g);
    }
    g_la = 0;
    /* the recovery copy: middling flips (which two checksums often cannot pin to one
     * element) are corrected or their row recomputed on the device. About one in eight of
     * them needs the copy: 64 trials leave (7/8)^64 < 1e-3 of a chance of no recompute. */
    for (int t = 0; t < 64; ++t) {
        int64_t i = tu_int(&r, 0, 299), j = tu_int(&r, 0, 299);
        flip_t f = {ABFT_SITE_AFTER_LU, 0, i, j, (int)tu_int(&r, 28, 50), 0};
        one(hc, hg, &r, 'd', t & 1, 300, 300, 64, &f);
    }
    TU_CHECK_STATUS(abft_set_lu_recovery(hg, 0), ABFT_STATUS_SUCCESS);
    printf("recovery copy: %lld rows recomputed on the device\n", (long long)g_recomputed);
    TU_CHECK(g_recomputed > 0, "the device recovery path was not exercised");
    abft_destroy(hc);
    abft_destroy(hg);
    return tu_finish(NAME);
}
