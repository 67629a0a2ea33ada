/* Protected GEMM on the CUDA backend against the CPU backend: clean products of adversarial
 * inputs (zero false positives), faults in C after the GEMM, between the halves of a k-split
 * GEMM, in A or B after encoding and in the checksums; single errors corrected, the rest
 * reported; both precisions, all transposes, beta != 0, square and very rectangular shapes.
 * Exits 77 without a GPU. */
#include <cuda_runtime.h>
#include <math.h>
#include <string.h>

#include "testutil.h"
#include "testutil_cuda.h"


typedef struct {
    abft_hook_site_t site;
    int which;
    int64_t row, col;
    int bit;
    int fired;
} dev_flip_t;

/* The hook gets device pointers: flip one bit through a host round trip. */
static abft_status_t dev_flip(void *user, abft_hook_site_t site, int which, char prec, void *ptr,
                              int64_t rows, int64_t cols, int64_t ld) {
    dev_flip_t *f = (dev_flip_t *)user;
    if (site != f->site || which != f->which) return ABFT_STATUS_SUCCESS;
    int64_t i = f->row % rows, j = f->col % cols;
    size_t es = prec == 'd' ? 8 : 4;
    char *p = (char *)ptr + es * (size_t)(i + j * ld);
    if (prec == 'd') {
        double v;
        TU_CUDA_OK(cudaMemcpy(&v, p, 8, cudaMemcpyDeviceToHost));
        v = tu_flip_d(v, f->bit);
        TU_CUDA_OK(cudaMemcpy(p, &v, 8, cudaMemcpyHostToDevice));
    } else {
        float v;
        TU_CUDA_OK(cudaMemcpy(&v, p, 4, cudaMemcpyDeviceToHost));
        v = tu_flip_s(v, f->bit);
        TU_CUDA_OK(cudaMemcpy(p, &v, 4, cudaMemcpyHostToDevice));
    }
    f->fired++;
    return ABFT_STATUS_SUCCESS;
}

typedef struct {
    int prec, ta, tb;
    int64_t m, n, k, lda, ldb, ldc;
    double alpha, beta;
    void *hA, *hB, *hC;   /* host copies */
    void *dA, *dB, *dC;   /* device copies */
} prob_t;

static size_t es(const prob_t *p) { return p->prec ? 4 : 8; }

static void *fill(tu_rng_t *r, const prob_t *p, tu_kind_t kind, int64_t rows, int64_t cols,
                  int64_t ld, void **dev) {
    int64_t cnt = ld * (cols > 0 ? cols : 1);
    void *h;
    if (p->prec) {
        h = tu_alloc_s(cnt);
        tu_fill_s(r, kind, rows, cols, (float *)h, ld);
    } else {
        h = tu_alloc_d(cnt);
        tu_fill_d(r, kind, rows, cols, (double *)h, ld);
    }
    TU_CUDA_OK(cudaMalloc(dev, es(p) * (size_t)cnt));
    TU_CUDA_OK(cudaMemcpy(*dev, h, es(p) * (size_t)cnt, cudaMemcpyHostToDevice));
    return h;
}

static void make(tu_rng_t *r, prob_t *p, tu_kind_t kind) {
    int64_t ar = p->ta ? p->k : p->m, ac = p->ta ? p->m : p->k;
    int64_t br = p->tb ? p->n : p->k, bc = p->tb ? p->k : p->n;
    p->lda = (ar > 1 ? ar : 1) + tu_int(r, 0, 2);
    p->ldb = (br > 1 ? br : 1) + tu_int(r, 0, 2);
    p->ldc = (p->m > 1 ? p->m : 1) + tu_int(r, 0, 2);
    p->hA = fill(r, p, kind, ar, ac, p->lda, &p->dA);
    p->hB = fill(r, p, kind, br, bc, p->ldb, &p->dB);
    p->hC = fill(r, p, kind, p->m, p->n, p->ldc, &p->dC);
}

static void drop(prob_t *p) {
    free(p->hA), free(p->hB), free(p->hC);
    cudaFree(p->dA), cudaFree(p->dB), cudaFree(p->dC);
}

static abft_status_t run(abft_handle_t h, const prob_t *p, const void *A, const void *B, void *C,
                         abft_report_t *rep) {
    if (p->prec)
        return abft_sgemm(h, p->ta, p->tb, p->m, p->n, p->k, (float)p->alpha, A, p->lda, B,
                          p->ldb, (float)p->beta, C, p->ldc, rep);
    return abft_dgemm(h, p->ta, p->tb, p->m, p->n, p->k, p->alpha, A, p->lda, B, p->ldb,
                      p->beta, C, p->ldc, rep);
}

/* GPU result (device dC) against a CPU run on the host copies: max |diff| over the row scale
 * (k + n + 3)·u·rowsum(|C_cpu|) + tiny. */
static double gpu_vs_cpu(abft_handle_t hc, prob_t *p, const void *dC_result) {
    size_t bytes = es(p) * (size_t)(p->ldc * (p->n > 0 ? p->n : 1));
    void *cpu = malloc(bytes), *gpu = malloc(bytes);
    memcpy(cpu, p->hC, bytes);
    abft_report_t rep;
    abft_status_t st = run(hc, p, p->hA, p->hB, cpu, &rep);
    TU_CHECK(st == ABFT_STATUS_SUCCESS && rep.detected == 0, "CPU reference: %s detected %lld",
             abft_status_name(st), (long long)rep.detected);
    TU_CUDA_OK(cudaMemcpy(gpu, dC_result, bytes, cudaMemcpyDeviceToHost));
    double u = p->prec ? 0x1p-24 : 0x1p-53, worst = 0.0;
    for (int64_t i = 0; i < p->m; ++i) {
        double rs = 0.0;
        for (int64_t j = 0; j < p->n; ++j) {
            int64_t o = i + j * p->ldc;
            rs += p->prec ? fabs(((float *)cpu)[o]) : fabs(((double *)cpu)[o]);
        }
        /* both results err by at most the GEMM bound; the row sum of |C| underestimates
         * |A||B| under cancellation, so scale by the worst case kind's margin */
        double t = 8.0 * (double)(p->k + p->n + 3) * u * (rs + 1e-30) * 1e3;
        for (int64_t j = 0; j < p->n; ++j) {
            int64_t o = i + j * p->ldc;
            double a = p->prec ? ((float *)cpu)[o] : ((double *)cpu)[o];
            double b = p->prec ? ((float *)gpu)[o] : ((double *)gpu)[o];
            double d = fabs(a - b) / t;
            if (!(d <= worst)) worst = isnan(d) ? INFINITY : d;
        }
    }
    free(cpu), free(gpu);
    return worst;
}

static void test_clean(abft_handle_t h, abft_handle_t hc, tu_rng_t *r, int64_t count) {
    int64_t fps = 0;
    double worst_ratio = 0.0;
    for (int64_t t = 0; t < count; ++t) {
        prob_t p = {0};
        p.prec = (int)(t & 1), p.ta = (int)((t >> 1) & 1), p.tb = (int)((t >> 2) & 1);
        int shape = (int)tu_int(r, 0, 3);
        if (shape == 0) { p.m = tu_int(r, 0, 70), p.n = tu_int(r, 0, 70), p.k = tu_int(r, 0, 70); }
        else if (shape == 1) { p.m = tu_int(r, 100, 400), p.n = tu_int(r, 100, 400), p.k = tu_int(r, 1, 600); }
        else if (shape == 2) { p.m = tu_int(r, 2000, 5000), p.n = tu_int(r, 1, 8), p.k = tu_int(r, 50, 300); }
        else { p.m = tu_int(r, 1, 8), p.n = tu_int(r, 1000, 3000), p.k = tu_int(r, 500, 2000); }
        p.alpha = (t % 3) ? tu_range(r, -2, 2) : 1.0;
        p.beta = (t % 4 == 1) ? tu_range(r, -1, 1) : 0.0;
        make(r, &p, (tu_kind_t)(t % 3));
        abft_report_t rep;
        abft_status_t st = run(h, &p, p.dA, p.dB, p.dC, &rep);
        TU_CHECK(st == ABFT_STATUS_SUCCESS, "%s", abft_status_name(st));
        if (rep.detected) {
            ++fps;
            fprintf(stderr, "false positive: prec=%d ta=%d tb=%d m=%lld n=%lld k=%lld ratio=%g\n",
                    p.prec, p.ta, p.tb, (long long)p.m, (long long)p.n, (long long)p.k,
                    rep.max_ratio);
        }
        if (rep.max_ratio > worst_ratio) worst_ratio = rep.max_ratio;
        if (t < 48) {
            double w = gpu_vs_cpu(hc, &p, p.dC);
            TU_CHECK(w <= 1.0, "GPU result differs from CPU: %g (prec=%d m=%lld n=%lld k=%lld)",
                     w, p.prec, (long long)p.m, (long long)p.n, (long long)p.k);
        }
        drop(&p);
    }
    printf("clean GPU products: %lld, false positives %lld, largest residual/bound %.3g\n",
           (long long)count, (long long)fps, worst_ratio);
    TU_CHECK(fps == 0, "%lld false positives", (long long)fps);
}

static void test_faults(abft_handle_t h, tu_rng_t *r, abft_checksum_kind_t kind) {
    abft_set_checksum_kind(h, kind);
    static const abft_hook_site_t sites[] = {ABFT_SITE_AFTER_GEMM, ABFT_SITE_MID_GEMM,
                                             ABFT_SITE_AFTER_ENCODE, ABFT_SITE_AFTER_ENCODE,
                                             ABFT_SITE_CHECKSUM};
    int64_t n_det = 0, n_corr = 0, trials = 0;
    for (int prec = 0; prec < 2; ++prec)
        for (int s = 0; s < 5; ++s)
            for (int t = 0; t < 8; ++t) {
                prob_t p = {0};
                p.prec = prec, p.ta = t & 1, p.tb = (t >> 1) & 1;
                p.m = tu_int(r, 40, 300), p.n = tu_int(r, 40, 300), p.k = tu_int(r, 20, 300);
                p.alpha = 1.0, p.beta = t >= 6 ? 0.5 : 0.0;
                make(r, &p, TU_POSITIVE);
                dev_flip_t f = {sites[s], s == 3 ? 1 : 0, tu_int(r, 0, 1 << 20),
                                tu_int(r, 0, 1 << 20), prec ? 30 : 61, 0};
                if (s == 4) f.col = 0, f.bit = 61; /* the unweighted checksum (always fp64) */
                abft_set_hook(h, dev_flip, &f);
                abft_report_t rep;
                TU_CHECK_STATUS(run(h, &p, p.dA, p.dB, p.dC, &rep), ABFT_STATUS_SUCCESS);
                abft_set_hook(h, NULL, NULL);
                ++trials;
                TU_CHECK(f.fired == 1, "hook fired %d", f.fired);
                /* an exponent flip of a value in [0.5, 1.5] that makes it huge (fp32 bit 30:
                 * x 2^128; fp64 bit 61: x 2^-512, a change of about the value itself, far
                 * above the fp64 bound): beyond any bound. (Clearing an fp32 exponent bit
                 * changes the value by about itself, which for fp32 at k, n ~ 300 can lie
                 * below the row's bound: masked, not a detection failure.) */
                TU_CHECK(rep.detected >= 1, "prec=%d site=%d t=%d: not detected", prec, s, t);
                n_det += rep.detected >= 1;
                if (s <= 1) {
                    /* corrected, or (too close to the noise to be located unambiguously:
                     * |d|/t <= 8(len+1), docs/bound.md) recomputed or reported */
                    double lim = 8.0 * (double)((p.m > p.n ? p.m : p.n) + 1);
                    int ok = (rep.corrected == 1 && rep.uncorrectable == 0) ||
                             (rep.corrected == 0 && rep.nfaults > 0 && rep.faults[0].ratio <= lim);
                    TU_CHECK(ok, "prec=%d site=%d: corrected %lld uncorrectable %lld recomputed "
                             "%lld ratio %g", prec, s, (long long)rep.corrected,
                             (long long)rep.uncorrectable, (long long)rep.recomputed,
                             rep.nfaults ? rep.faults[0].ratio : -1.0);
                    n_corr += rep.corrected == 1;
                } else if (s == 4 && kind == ABFT_CHECKSUM_FULL) {
                    TU_CHECK(rep.checksum_faults == 1 && rep.corrected == 0,
                             "checksum fault: %lld", (long long)rep.checksum_faults);
                } else if (p.beta == 0.0) {
                    /* a fault in the inputs or a row checksum: reported, never corrected */
                    TU_CHECK(rep.corrected == 0 && rep.uncorrectable + rep.checksum_faults >= 1,
                             "prec=%d site=%d: corrected %lld uncorrectable %lld", prec, s,
                             (long long)rep.corrected, (long long)rep.uncorrectable);
                }
                drop(&p);
            }
    printf("GPU faults (%s): %lld trials, %lld detected, %lld corrected (C faults)\n",
           kind == ABFT_CHECKSUM_FULL ? "full" : "row", (long long)trials, (long long)n_det,
           (long long)n_corr);
    abft_set_checksum_kind(h, ABFT_CHECKSUM_ROW);
}

int main(void) {
    tu_require_gpu();
    uint64_t seed = tu_seed("test_gemm_gpu");
    tu_rng_t r;
    tu_rng_init(&r, seed);
    abft_handle_t h = NULL, hc = NULL;
    TU_CHECK_STATUS(abft_create(&h, ABFT_BACKEND_CUDA), ABFT_STATUS_SUCCESS);
    TU_CHECK_STATUS(abft_create(&hc, ABFT_BACKEND_CPU), ABFT_STATUS_SUCCESS);
    const char *many = getenv("ABFT_TEST_QUICK");
    test_clean(h, hc, &r, many ? 64 : 2000);
    test_faults(h, &r, ABFT_CHECKSUM_ROW);
    test_faults(h, &r, ABFT_CHECKSUM_FULL);
    abft_destroy(hc);
    abft_destroy(h);
    return tu_finish("test_gemm_gpu");
}
