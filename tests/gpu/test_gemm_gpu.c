/* Protected GEMM on the CUDA backend against the CPU backend: clean products of adversarial
 * inputs (zero false positives), faults in C after the GEMM, between the halves of a k-split
 * GEMM, in A or B after encoding and in the checksums; single errors corrected, the rest
 * reported; both precisions, all transposes, beta != 0, square and very rectangular shapes;
 * the device-side gate (non-finite inputs held back with C untouched, overflowing sums
 * released by the host's scan, its graph cache, a borrowed cuBLAS handle left as it was).
 * Exits 77 without a GPU. */
#include <cublas_v2.h>
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

/* One protected call of p with the flip f armed; the flip must have fired once. */
static void run_flip(abft_handle_t h, const prob_t *p, dev_flip_t *f, abft_report_t *rep) {
    abft_set_hook(h, dev_flip, f);
    TU_CHECK_STATUS(run(h, p, p->dA, p->dB, p->dC, rep), ABFT_STATUS_SUCCESS);
    abft_set_hook(h, NULL, NULL);
    TU_CHECK(f->fired == 1, "hook fired %d", f->fired);
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
                abft_report_t rep;
                run_flip(h, &p, &f, &rep);
                ++trials;
                /* an exponent flip of a value in [0.5, 1.5] that makes it huge (fp32 bit 30:
                 * x 2^128; fp64 bit 61: x 2^-512, a change of about the value itself, far
                 * above the fp64 bound): beyond any bound. (Clearing an fp32 exponent bit
                 * changes the value by about itself, which for fp32 at k, n ~ 300 can lie
                 * below the row's bound: masked, not a detection failure.) */
                TU_CHECK(rep.detected >= 1, "prec=%d site=%d t=%d: not detected", prec, s, t);
                n_det += rep.detected >= 1;
                if (s <= 1) {
                    /* resolved as documented (tu_single_fault_resolved) */
                    TU_CHECK(tu_single_fault_resolved(p.beta, p.m, p.n, &rep), "kind=%d prec=%d site=%d: corrected %lld uncorrectable %lld "
                             "recomputed %lld ratio %g", (int)kind, prec, s,
                             (long long)rep.corrected,
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

static void *dev_copy(const prob_t *p, const void *dev, int64_t ld, int64_t cols) {
    size_t bytes = es(p) * (size_t)(ld * (cols > 0 ? cols : 1));
    void *h = malloc(bytes);
    TU_CUDA_OK(cudaMemcpy(h, dev, bytes, cudaMemcpyDeviceToHost));
    return h;
}

static void set_elem(const prob_t *p, void *dev, int64_t off, double v) {
    if (p->prec) {
        float f = (float)v;
        TU_CUDA_OK(cudaMemcpy((float *)dev + off, &f, 4, cudaMemcpyHostToDevice));
    } else {
        TU_CUDA_OK(cudaMemcpy((double *)dev + off, &v, 8, cudaMemcpyHostToDevice));
    }
}

/* The protected GEMM's screen decides on the device whether the GEMM runs (a CUDA graph:
 * gate kernel, then the captured cuBLAS call under a conditional node). */
static void test_gate(abft_handle_t h, abft_handle_t hc, tu_rng_t *r) {
    /* 1. A NaN or Inf in A, B or the old C (beta != 0): NON_FINITE_INPUT with C untouched
     *    bit for bit, decided on the host (first call) and on the device (second); the next
     *    call on the repaired operands (the same graph) runs the GEMM. */
    int64_t held = 0;
    for (int kind = 0; kind < 2; ++kind)
        for (int prec = 0; prec < 2; ++prec)
            for (int which = 0; which < 4; ++which) {
                abft_set_checksum_kind(h, kind ? ABFT_CHECKSUM_FULL : ABFT_CHECKSUM_ROW);
                prob_t p = {0};
                p.prec = prec, p.ta = which & 1, p.tb = (which >> 1) & 1;
                p.m = tu_int(r, 130, 300), p.n = tu_int(r, 130, 300), p.k = tu_int(r, 60, 200);
                p.alpha = 1.25, p.beta = which >= 1 ? 0.5 : 0.0; /* B: both screens */
                make(r, &p, TU_UNIFORM);
                int64_t ar = p.ta ? p.k : p.m, ac = p.ta ? p.m : p.k;
                int64_t br = p.tb ? p.n : p.k, bc = p.tb ? p.k : p.n;
                void *X = which == 0 ? p.dA : which == 1 ? p.dB : p.dC;
                void *Xh = which == 0 ? p.hA : which == 1 ? p.hB : p.hC;
                int64_t rows = which == 0 ? ar : which == 1 ? br : p.m;
                int64_t cols = which == 0 ? ac : which == 1 ? bc : p.n;
                int64_t ld = which == 0 ? p.lda : which == 1 ? p.ldb : p.ldc;
                int64_t off = tu_int(r, 0, rows - 1) + tu_int(r, 0, cols - 1) * ld;
                set_elem(&p, X, off, (which & 1) ? -INFINITY : NAN);
                void *before = dev_copy(&p, p.dC, p.ldc, p.n);
                abft_report_t rep;
                /* the first call of a signature decides on the host, the second on the
                 * device (its graph built) */
                for (int rep_i = 0; rep_i < 2; ++rep_i) {
                    TU_CHECK_STATUS(run(h, &p, p.dA, p.dB, p.dC, &rep),
                                    ABFT_STATUS_NON_FINITE_INPUT);
                    TU_CHECK(rep.nonfinite_input == 1, "nonfinite_input not set");
                    void *after = dev_copy(&p, p.dC, p.ldc, p.n);
                    TU_CHECK(memcmp(before, after, es(&p) * (size_t)(p.ldc * p.n)) == 0,
                             "C changed on non-finite input (prec=%d which=%d kind=%d call %d)",
                             prec, which, kind, rep_i);
                    free(after);
                    ++held;
                }
                free(before);
                /* repaired: the same call again runs the GEMM (the counter was reset) */
                double v = p.prec ? ((float *)Xh)[off] : ((double *)Xh)[off];
                set_elem(&p, X, off, v);
                TU_CHECK_STATUS(run(h, &p, p.dA, p.dB, p.dC, &rep), ABFT_STATUS_SUCCESS);
                TU_CHECK(rep.detected == 0 && rep.nonfinite_input == 0, "after repair: %lld",
                         (long long)rep.detected);
                double w = gpu_vs_cpu(hc, &p, p.dC);
                TU_CHECK(w <= 1.0, "after repair: GPU differs from CPU %g", w);
                drop(&p);
            }
    abft_set_checksum_kind(h, ABFT_CHECKSUM_ROW);

    /* 2. Finite data whose absolute sums overflow (|A|·|B|·V = Inf, A·B = 0 exactly): the
     *    device holds the GEMM back, the host's scan finds every input finite, and the GEMM
     *    runs after all; the outcome is the CPU backend's. */
    {
        prob_t p = {0};
        p.prec = 0, p.m = 64, p.n = 64, p.k = 2, p.alpha = 1.0, p.beta = 0.0;
        p.lda = p.m, p.ldb = p.k, p.ldc = p.m;
        double *A = tu_alloc_d(p.m * 2), *B = tu_alloc_d(p.k * p.n), *C = tu_alloc_d(p.m * p.n);
        /* x·2080 (the weighted row sum of B) is finite, twice it is not */
        for (int64_t i = 0; i < p.m; ++i) A[i] = 6e304, A[i + p.m] = -6e304;
        for (int64_t i = 0; i < p.k * p.n; ++i) B[i] = 1.0;
        for (int64_t i = 0; i < p.m * p.n; ++i) C[i] = 7.0;
        p.hA = A, p.hB = B, p.hC = C;
        TU_CUDA_OK(cudaMalloc(&p.dA, 8 * (size_t)(p.m * 2)));
        TU_CUDA_OK(cudaMalloc(&p.dB, 8 * (size_t)(p.k * p.n)));
        TU_CUDA_OK(cudaMalloc(&p.dC, 8 * (size_t)(p.m * p.n)));
        TU_CUDA_OK(cudaMemcpy(p.dA, A, 8 * (size_t)(p.m * 2), cudaMemcpyHostToDevice));
        TU_CUDA_OK(cudaMemcpy(p.dB, B, 8 * (size_t)(p.k * p.n), cudaMemcpyHostToDevice));
        TU_CUDA_OK(cudaMemcpy(p.dC, C, 8 * (size_t)(p.m * p.n), cudaMemcpyHostToDevice));
        abft_report_t rg, rc;
        abft_status_t sg = run(h, &p, p.dA, p.dB, p.dC, &rg);
        double *Cc = tu_alloc_d(p.m * p.n);
        memcpy(Cc, C, 8 * (size_t)(p.m * p.n));
        abft_status_t sc = run(hc, &p, A, B, Cc, &rc);
        TU_CHECK(sg == ABFT_STATUS_SUCCESS && sc == ABFT_STATUS_SUCCESS, "overflow: %s / %s",
                 abft_status_name(sg), abft_status_name(sc));
        TU_CHECK(rg.nonfinite_input == 0 && rg.detected == rc.detected &&
                     rg.uncorrectable == rc.uncorrectable,
                 "overflow: GPU detected %lld uncorrectable %lld, CPU %lld %lld",
                 (long long)rg.detected, (long long)rg.uncorrectable, (long long)rc.detected,
                 (long long)rc.uncorrectable);
        double *Cg = (double *)dev_copy(&p, p.dC, p.ldc, p.n);
        int64_t zeros = 0;
        for (int64_t i = 0; i < p.m * p.n; ++i) zeros += Cg[i] == 0.0 && Cc[i] == 0.0;
        TU_CHECK(zeros == p.m * p.n, "overflow: the GEMM did not run (%lld of %lld zero)",
                 (long long)zeros, (long long)(p.m * p.n));
        printf("gate, overflowing sums of finite data: GEMM run after the host's scan, "
               "%lld rows reported (CPU %lld)\n", (long long)rg.detected, (long long)rc.detected);
        free(Cg), free(Cc);
        drop(&p);
    }

    /* 3. The graph cache (8 graphs, built from a signature's second call): 10 problems, 3
     *    rounds each, same operands; every call clean and equal to the CPU's result. */
    prob_t ps[10];
    for (int i = 0; i < 10; ++i) {
        prob_t p = {0};
        p.prec = i & 1, p.ta = (i >> 1) & 1, p.tb = i == 5;
        p.m = tu_int(r, 1, 400), p.n = tu_int(r, 1, 400), p.k = tu_int(r, 1, 400);
        p.alpha = tu_range(r, -2, 2), p.beta = 0.0;
        make(r, &p, TU_WIDE);
        ps[i] = p;
    }
    for (int round = 0; round < 3; ++round)
        for (int i = 0; i < 10; ++i) {
            abft_report_t rep;
            TU_CHECK_STATUS(run(h, &ps[i], ps[i].dA, ps[i].dB, ps[i].dC, &rep),
                            ABFT_STATUS_SUCCESS);
            TU_CHECK(rep.detected == 0, "cache round %d problem %d: detected %lld", round, i,
                     (long long)rep.detected);
            double w = gpu_vs_cpu(hc, &ps[i], ps[i].dC);
            TU_CHECK(w <= 1.0, "cache round %d problem %d: GPU differs from CPU %g", round, i, w);
        }
    for (int i = 0; i < 10; ++i) drop(&ps[i]);

    /* 4. Signatures that differ in one field only (alpha, beta, the C operand and its ld):
     *    each called often enough to have its graph, in an order where a key that ignored
     *    the field would run another signature's graph (the check below would flag it). */
    {
        prob_t q = {0};
        q.prec = 0, q.m = 150, q.n = 120, q.k = 90, q.alpha = 1.5, q.beta = 0.0;
        make(r, &q, TU_UNIFORM);
        void *C2 = NULL;
        int64_t ldc2 = q.ldc + 3;
        TU_CUDA_OK(cudaMalloc(&C2, 8 * (size_t)(ldc2 * q.n)));
        TU_CUDA_OK(cudaMemset(C2, 0, 8 * (size_t)(ldc2 * q.n)));
        const double alphas[2] = {1.5, -0.25}, betas[2] = {0.0, 0.5};
        static const int order[] = {0, 0, 1, 1, 0, 2, 2, 3, 3, 0, 1, 2, 3};
        for (size_t t = 0; t < sizeof order / sizeof order[0]; ++t) {
            const int v = order[t];
            prob_t w = q;
            w.alpha = alphas[v == 1];
            w.beta = betas[v == 2];
            if (v == 3) w.dC = C2, w.ldc = ldc2;
            abft_report_t rep;
            TU_CHECK_STATUS(run(h, &w, w.dA, w.dB, w.dC, &rep), ABFT_STATUS_SUCCESS);
            TU_CHECK(rep.detected == 0, "key field %d (call %zu): detected %lld", v, t,
                     (long long)rep.detected);
        }
        /* the last round's results against the CPU, one signature at a time */
        for (int v = 0; v < 4; ++v) {
            prob_t w = q;
            w.alpha = alphas[v == 1];
            w.beta = 0.0;
            if (v == 3) w.dC = C2, w.ldc = ldc2;
            if (v == 2) continue; /* beta != 0 reads the C it writes: checked by `detected` */
            abft_report_t rep;
            TU_CHECK_STATUS(run(h, &w, w.dA, w.dB, w.dC, &rep), ABFT_STATUS_SUCCESS);
            if (v == 3) {
                /* CPU reference on a zero C of the same ld */
                prob_t z = w;
                z.hC = calloc((size_t)(ldc2 * q.n), 8);
                double d = gpu_vs_cpu(hc, &z, w.dC);
                free(z.hC);
                TU_CHECK(d <= 1.0, "key field 3: GPU differs from CPU %g", d);
            } else {
                double d = gpu_vs_cpu(hc, &w, w.dC);
                TU_CHECK(d <= 1.0, "key field %d: GPU differs from CPU %g", v, d);
            }
        }
        TU_CUDA_OK(cudaFree(C2));
        drop(&q);
    }

    /* 5. A borrowed cuBLAS handle: its stream and pointer mode are as they were after calls
     *    that capture a GEMM (on the library's private handle); a changed setting (SM count
     *    target) is a new signature. */
    {
        cublasHandle_t cb = NULL;
        cudaStream_t other = NULL;
        TU_CHECK(cublasCreate(&cb) == CUBLAS_STATUS_SUCCESS, "cublasCreate");
        TU_CUDA_OK(cudaStreamCreate(&other));
        TU_CHECK(cublasSetStream(cb, other) == CUBLAS_STATUS_SUCCESS &&
                     cublasSetPointerMode(cb, CUBLAS_POINTER_MODE_DEVICE) == CUBLAS_STATUS_SUCCESS,
                 "cuBLAS setup");
        TU_CHECK_STATUS(abft_set_cublas_handle(h, cb), ABFT_STATUS_SUCCESS);
        prob_t p = {0};
        p.prec = 0, p.m = 257, p.n = 129, p.k = 300, p.alpha = 1.0, p.beta = 0.0;
        make(r, &p, TU_UNIFORM);
        for (int t = 0; t < 5; ++t) {
            if (t == 3) TU_CHECK(cublasSetSmCountTarget(cb, 8) == CUBLAS_STATUS_SUCCESS, "sm");
            abft_report_t rep;
            TU_CHECK_STATUS(run(h, &p, p.dA, p.dB, p.dC, &rep), ABFT_STATUS_SUCCESS);
            TU_CHECK(rep.detected == 0, "borrowed handle, call %d: detected %lld", t,
                     (long long)rep.detected);
            double w = gpu_vs_cpu(hc, &p, p.dC);
            TU_CHECK(w <= 1.0, "borrowed handle, call %d: GPU differs from CPU %g", t, w);
            cudaStream_t s_after = NULL;
            cublasPointerMode_t pm = CUBLAS_POINTER_MODE_HOST;
            TU_CHECK(cublasGetStream(cb, &s_after) == CUBLAS_STATUS_SUCCESS &&
                         cublasGetPointerMode(cb, &pm) == CUBLAS_STATUS_SUCCESS,
                     "cuBLAS getters");
            TU_CHECK(s_after == other && pm == CUBLAS_POINTER_MODE_DEVICE,
                     "borrowed handle, call %d: stream or pointer mode not restored", t);
        }
        drop(&p);
        TU_CHECK(cublasSetSmCountTarget(cb, 0) == CUBLAS_STATUS_SUCCESS, "sm");

        /* 6. The math mode is part of the signature: fp32 under TF32 (its graph built), then
         *    the default mode on the same operands must run an fp32 GEMM again. Error against
         *    an fp64 product: TF32 (11-bit significands) about 1e-3 here, fp32 about 1e-6. */
        prob_t f = {0};
        f.prec = 1, f.m = 256, f.n = 256, f.k = 512, f.alpha = 1.0, f.beta = 0.0;
        make(r, &f, TU_UNIFORM);
        double err[2] = {0.0, 0.0};
        float *got = (float *)malloc(4 * (size_t)(f.ldc * f.n));
        for (int mode = 0; mode < 2; ++mode) {
            TU_CHECK(cublasSetMathMode(cb, mode == 0 ? CUBLAS_TF32_TENSOR_OP_MATH
                                                     : CUBLAS_DEFAULT_MATH) ==
                         CUBLAS_STATUS_SUCCESS,
                     "math mode");
            for (int t = 0; t < 3; ++t) {
                abft_report_t rep;
                TU_CHECK_STATUS(run(h, &f, f.dA, f.dB, f.dC, &rep), ABFT_STATUS_SUCCESS);
                TU_CHECK(rep.detected == 0, "math mode %d: detected %lld", mode,
                         (long long)rep.detected);
            }
            TU_CUDA_OK(cudaMemcpy(got, f.dC, 4 * (size_t)(f.ldc * f.n), cudaMemcpyDeviceToHost));
            const float *fa = (const float *)f.hA, *fb = (const float *)f.hB;
            for (int64_t j = 0; j < f.n; ++j)
                for (int64_t i = 0; i < f.m; ++i) {
                    double ref = 0.0;
                    for (int64_t l = 0; l < f.k; ++l)
                        ref += (double)fa[i + l * f.lda] * (double)fb[l + j * f.ldb];
                    double e = fabs((double)got[i + j * f.ldc] - ref);
                    if (e > err[mode]) err[mode] = e;
                }
        }
        printf("gate, math mode in the signature: max error TF32 %.3g, default %.3g\n", err[0],
               err[1]);
        TU_CHECK(err[1] < 1e-4 && err[0] > 10.0 * err[1],
                 "math mode: TF32 error %g, default %g (a stale graph?)", err[0], err[1]);
        free(got);
        drop(&f);

        /* 7. TF32 at k >= 2048, where k·2^-11 >= 1: the bound models TF32 as shortened
         *    inputs with fp32 sums and stays finite; a clean product flags nothing. FP64
         *    fixed-point emulation is refused, C untouched. */
        prob_t tf = {0};
        tf.prec = 1, tf.m = 4096, tf.n = 4096, tf.k = 4096, tf.alpha = 1.0, tf.beta = 0.0;
        make(r, &tf, TU_UNIFORM);
        TU_CHECK(cublasSetMathMode(cb, CUBLAS_TF32_TENSOR_OP_MATH) == CUBLAS_STATUS_SUCCESS,
                 "math mode");
        abft_report_t rtf;
        TU_CHECK_STATUS(run(h, &tf, tf.dA, tf.dB, tf.dC, &rtf), ABFT_STATUS_SUCCESS);
        printf("TF32 sgemm 4096: detected %lld, max ratio %.3g, u %.3g\n",
               (long long)rtf.detected, rtf.max_ratio, rtf.unit_roundoff);
        TU_CHECK(rtf.detected == 0 && rtf.max_ratio < 1.0 && rtf.unit_roundoff == 0x1p-10,
                 "TF32 clean product: detected %lld, max ratio %g", (long long)rtf.detected,
                 rtf.max_ratio);
        drop(&tf);
        prob_t em = {0};
        em.prec = 0, em.m = 64, em.n = 48, em.k = 32, em.alpha = 1.0, em.beta = 0.5;
        make(r, &em, TU_UNIFORM);
        TU_CHECK(cublasSetMathMode(cb, CUBLAS_FP64_EMULATED_FIXEDPOINT_MATH) ==
                     CUBLAS_STATUS_SUCCESS,
                 "math mode");
        size_t cb_bytes = 8 * (size_t)(em.ldc * em.n);
        unsigned char *c0 = (unsigned char *)malloc(cb_bytes), *c1 = (unsigned char *)malloc(cb_bytes);
        TU_CUDA_OK(cudaMemcpy(c0, em.dC, cb_bytes, cudaMemcpyDeviceToHost));
        abft_report_t rem;
        memset(&rem, 0x5a, sizeof rem);
        abft_report_t rem0 = rem;
        TU_CHECK_STATUS(run(h, &em, em.dA, em.dB, em.dC, &rem), ABFT_STATUS_NOT_SUPPORTED);
        TU_CUDA_OK(cudaMemcpy(c1, em.dC, cb_bytes, cudaMemcpyDeviceToHost));
        TU_CHECK(memcmp(c0, c1, cb_bytes) == 0 && memcmp(&rem, &rem0, sizeof rem) == 0,
                 "FP64 emulation: C or the report was written");
        free(c0);
        free(c1);
        drop(&em);
        TU_CHECK(cublasSetMathMode(cb, CUBLAS_DEFAULT_MATH) == CUBLAS_STATUS_SUCCESS, "math");
        TU_CHECK_STATUS(abft_set_cublas_handle(h, NULL), ABFT_STATUS_SUCCESS);
        TU_CHECK(cublasDestroy(cb) == CUBLAS_STATUS_SUCCESS, "cublasDestroy");
        TU_CUDA_OK(cudaStreamDestroy(other));
    }
    printf("gate: %lld non-finite calls held back with C untouched; cache and borrowed handle "
           "checked\n", (long long)held);
}

/* The random checksum (abft_set_random_checksum) on the GPU: a flip in A after encoding,
 * with B a (1, -2, 1) stencil (the fixed weights' blind spot: docs/bound.md), is detected
 * and not corrected, in both precisions and every transpose. */
static void test_random_stencil(abft_handle_t h, tu_rng_t *r) {
    int64_t det = 0, trials = 0;
    for (int prec = 0; prec < 2; ++prec)
        for (int t = 0; t < 4; ++t) {
            prob_t p = {0};
            p.prec = prec, p.ta = t & 1, p.tb = (t >> 1) & 1;
            p.m = tu_int(r, 30, 200), p.n = tu_int(r, 30, 200), p.k = tu_int(r, 10, 100);
            p.alpha = 1.0, p.beta = 0.0;
            make(r, &p, TU_POSITIVE);
            /* op(B)(l, j) = 1, -2, 1 at j = l, l + 1, l + 2 */
            for (int64_t l = 0; l < p.k; ++l)
                for (int64_t j = 0; j < p.n; ++j) {
                    double v = j == l + 1 ? -2.0 : (j == l || j == l + 2) ? 1.0 : 0.0;
                    int64_t o = p.tb ? j + l * p.ldb : l + j * p.ldb;
                    if (prec) ((float *)p.hB)[o] = (float)v;
                    else ((double *)p.hB)[o] = v;
                }
            int64_t bcols = p.tb ? p.k : p.n;
            TU_CUDA_OK(cudaMemcpy(p.dB, p.hB, es(&p) * (size_t)(p.ldb * bcols),
                                  cudaMemcpyHostToDevice));
            /* A(i, l) with l + 2 < n: its row of op(B) is a whole stencil */
            int64_t l = tu_int(r, 0, (p.k < p.n - 2 ? p.k : p.n - 2) - 1);
            dev_flip_t f = {ABFT_SITE_AFTER_ENCODE, 0, p.ta ? l : tu_int(r, 0, p.m - 1),
                            p.ta ? tu_int(r, 0, p.m - 1) : l, prec ? 23 : 52, 0};
            abft_set_random_checksum(h, 1, (uint64_t)(1000 + 10 * prec + t));
            abft_report_t rep;
            run_flip(h, &p, &f, &rep);
            ++trials;
            TU_CHECK(rep.detected >= 1 && rep.corrected == 0,
                     "random checksum, stencil fault in A: prec=%d ta=%d tb=%d detected %lld "
                     "corrected %lld", prec, p.ta, p.tb, (long long)rep.detected,
                     (long long)rep.corrected);
            det += rep.detected >= 1;
            drop(&p);
        }
    abft_set_random_checksum(h, 0, 0);
    printf("GPU random checksum: stencil faults in A detected in %lld of %lld trials\n",
           (long long)det, (long long)trials);
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
    test_gate(h, hc, &r);
    test_clean(h, hc, &r, many ? 64 : 2000);
    test_faults(h, &r, ABFT_CHECKSUM_ROW);
    test_faults(h, &r, ABFT_CHECKSUM_FULL);
    /* the random checksum: no false alarm, every fault still handled, the blind spot seen */
    abft_set_random_checksum(h, 1, seed);
    test_clean(h, hc, &r, many ? 32 : 400);
    test_faults(h, &r, ABFT_CHECKSUM_ROW);
    test_faults(h, &r, ABFT_CHECKSUM_FULL);
    abft_set_random_checksum(h, 0, 0);
    test_random_stencil(h, &r);
    abft_destroy(hc);
    abft_destroy(h);
    return tu_finish("test_gemm_gpu");
}
