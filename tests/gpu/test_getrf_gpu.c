/* Protected LU on the CUDA backend against the CPU backend (the oracle): same pivots,
 * factors to a precision-tied tolerance, no false positives, faults in the factors and
 * between panels corrected on the device. Exits 77 without a GPU. */
#include <cuda_runtime.h>
#include <math.h>
#include <string.h>

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

static int64_t g_panel_nb = 0, g_recomputed = 0;

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
    abft_lu_options_t opt = {nb, 1, g_panel_nb};
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
    if (same || prec == 'd' || f != NULL) {
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
         * valid) rounding in LAPACK and cuSOLVER. Then the GPU factors must still be a
         * backward-stable LU of P·A: check sampled rows of P·A - L·U against
         * 4·k·u·(|L||U|). */
        double *PA = tu_alloc_d(lda * n);
        for (int64_t t = 0; t < lda * n; ++t) PA[t] = (double)(float)Ad[t];
        for (int64_t i = 0; i < k; ++i) {
            int64_t piv = pg[i] - 1;
            TU_CHECK(piv >= i && piv < m, "gpu pivot %lld out of range at %lld", (long long)pg[i],
                     (long long)i);
            if (piv < i || piv >= m) break;
            for (int64_t j = 0; j < n; ++j) {
                double x = PA[i + j * lda];
                PA[i + j * lda] = PA[piv + j * lda];
                PA[piv + j * lda] = x;
            }
        }
        const float *F = (const float *)Ag;
        double worst = 0.0;
        for (int t = 0; t < 40; ++t) {
            int64_t i = tu_int(r, 0, m - 1);
            for (int64_t j = 0; j < n; ++j) {
                double lu = 0.0, alu = 0.0;
                int64_t lmax = i < j ? i : j;
                for (int64_t l = 0; l <= lmax && l < k; ++l) {
                    double L = l == i ? 1.0 : F[i + l * lda], U = F[l + j * lda];
                    lu += L * U;
                    alu += fabs(L * U);
                }
                double e = fabs(PA[i + j * lda] - lu) / (4.0 * (double)k * 0x1p-24 * alu + 1e-30);
                if (!(e <= worst)) worst = isnan(e) ? INFINITY : e;
            }
        }
        printf("s %s %lldx%lld: pivots differ from LAPACK's (a near tie); GPU backward error "
               "%.3g of 4ku|L||U|\n", online ? "online" : "offline", (long long)m, (long long)n,
               worst);
        TU_CHECK(worst <= 1.0, "fp32 GPU factors not a backward-stable LU of P·A: %g", worst);
        free(PA);
    }
    cudaFree(dA);
    cudaFree(dp);
    free(Ad);
    free(Ac);
    free(Ag);
    free(pc);
    free(pg);
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
    /* faults: in the factors (offline), between panels (online) */
    for (int t = 0; t < 6; ++t) {
        flip_t f = {ABFT_SITE_AFTER_LU, 0, tu_int(&r, 0, 299), tu_int(&r, 0, 299), (int)tu_int(&r, 52, 60), 0};
        one(hc, hg, &r, 'd', 0, 300, 300, 64, &f);
        flip_t g = {ABFT_SITE_LU_PANEL, 1, tu_int(&r, 128, 299), tu_int(&r, 128, 299), (int)tu_int(&r, 52, 60), 0};
        one(hc, hg, &r, 'd', 1, 300, 300, 64, &g);
    }
    /* the recovery copy: middling flips (which two checksums often cannot pin to one
     * element) are corrected or their row recomputed on the device */
    TU_CHECK_STATUS(abft_set_lu_recovery(hg, 1), ABFT_STATUS_SUCCESS);
    for (int t = 0; t < 16; ++t) {
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
