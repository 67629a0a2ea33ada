/* Protected GEMM on the CPU backend: zero false positives over random inputs of wide range
 * and heavy cancellation; single errors detected, located, corrected; several errors per
 * row reported or recomputed; full checksums; checksum faults; non-finite inputs; argument
 * errors. Every randomized part prints its seed. */
#include <math.h>
#include <string.h>

#include "testutil.h"

typedef struct {
    tu_rng_t *rng;
    abft_hook_site_t site;
    int which;
    int nflips;
    int64_t rows[4], cols[4];
    int bits[4];
    double after[4]; /* the values the flips produced */
    int fired;
} flip_hook_t;

/* Flip the chosen bits at the chosen elements when the chosen site comes by. */
static abft_status_t flip_hook(void *user, abft_hook_site_t site, int which, char prec, void *ptr,
                               int64_t rows, int64_t cols, int64_t ld) {
    flip_hook_t *f = (flip_hook_t *)user;
    if (site != f->site || which != f->which) return ABFT_STATUS_SUCCESS;
    for (int t = 0; t < f->nflips; ++t) {
        int64_t i = f->rows[t] % rows, j = f->cols[t] % cols;
        if (prec == 'd')
            f->after[t] = ((double *)ptr)[i + j * ld] =
                tu_flip_d(((double *)ptr)[i + j * ld], f->bits[t]);
        else
            f->after[t] = ((float *)ptr)[i + j * ld] =
                tu_flip_s(((float *)ptr)[i + j * ld], f->bits[t]);
    }
    f->fired++;
    return ABFT_STATUS_SUCCESS;
}

typedef struct {
    int prec; /* 0 d, 1 s */
    int ta, tb;
    int64_t m, n, k, lda, ldb, ldc;
    double alpha, beta;
    void *A, *B, *C, *C0, *G; /* C0: the input C; G: the fault-free result */
} problem_t;

static size_t es(const problem_t *p) { return p->prec ? sizeof(float) : sizeof(double); }

static void *alloc_fill(tu_rng_t *r, const problem_t *p, tu_kind_t kind, int64_t rows,
                        int64_t cols, int64_t ld) {
    int64_t cnt = ld * (cols > 0 ? cols : 1);
    if (p->prec) {
        float *x = tu_alloc_s(cnt);
        tu_fill_s(r, kind, rows, cols, x, ld);
        return x;
    }
    double *x = tu_alloc_d(cnt);
    tu_fill_d(r, kind, rows, cols, x, ld);
    return x;
}

static void problem_make(tu_rng_t *r, problem_t *p, tu_kind_t kind) {
    int64_t ar = p->ta ? p->k : p->m, ac = p->ta ? p->m : p->k;
    int64_t br = p->tb ? p->n : p->k, bc = p->tb ? p->k : p->n;
    p->lda = ar + tu_int(r, 0, 3);
    p->ldb = br + tu_int(r, 0, 3);
    p->ldc = p->m + tu_int(r, 0, 3);
    if (p->lda < 1) p->lda = 1;
    if (p->ldb < 1) p->ldb = 1;
    if (p->ldc < 1) p->ldc = 1;
    p->A = alloc_fill(r, p, kind, ar, ac, p->lda);
    p->B = alloc_fill(r, p, kind, br, bc, p->ldb);
    p->C0 = alloc_fill(r, p, kind, p->m, p->n, p->ldc);
    size_t bytes = es(p) * (size_t)(p->ldc * (p->n > 0 ? p->n : 1));
    p->C = malloc(bytes);
    p->G = malloc(bytes);
    memcpy(p->C, p->C0, bytes);
}

static void problem_free(problem_t *p) {
    free(p->A), free(p->B), free(p->C), free(p->C0), free(p->G);
}

static void problem_reset(problem_t *p) {
    memcpy(p->C, p->C0, es(p) * (size_t)(p->ldc * (p->n > 0 ? p->n : 1)));
}

static abft_status_t run(abft_handle_t h, problem_t *p, void *C, abft_report_t *rep) {
    if (p->prec)
        return abft_sgemm(h, p->ta, p->tb, p->m, p->n, p->k, (float)p->alpha, p->A, p->lda, p->B,
                          p->ldb, (float)p->beta, C, p->ldc, rep);
    return abft_dgemm(h, p->ta, p->tb, p->m, p->n, p->k, p->alpha, p->A, p->lda, p->B, p->ldb,
                      p->beta, C, p->ldc, rep);
}

static double elem(const problem_t *p, const void *X, int64_t i) {
    return p->prec ? (double)((const float *)X)[i] : ((const double *)X)[i];
}

/* Element (i, l) of op(A) and (l, j) of op(B). */
static double opA(const problem_t *p, int64_t i, int64_t l) {
    return elem(p, p->A, p->ta ? l + i * p->lda : i + l * p->lda);
}
static double opB(const problem_t *p, int64_t l, int64_t j) {
    return elem(p, p->B, p->tb ? j + l * p->ldb : l + j * p->ldb);
}

/* Max over elements of |X - golden| / (the row's bound): <= 1 means X is as close to the
 * fault-free result as the checksums can tell. The checksums see a row as a whole, so an
 * undetected or corrected element is only guaranteed to within the row's bound, about
 * (k + n + 3)·u times the row sum of |alpha||A||B| + |beta||C0| (and |C| for fp64 sums). */
static double worst_vs_golden(const problem_t *p, const void *X) {
    double u = p->prec ? 0x1p-24 : 0x1p-53;
    double worst = 0.0;
    for (int64_t i = 0; i < p->m; ++i) {
        double rowsum = 0.0;
        for (int64_t j = 0; j < p->n; ++j) {
            double ab = 0.0;
            for (int64_t l = 0; l < p->k; ++l) ab += fabs(opA(p, i, l) * opB(p, l, j));
            rowsum += fabs(p->alpha) * ab + fabs(p->beta) * fabs(elem(p, p->C0, i + j * p->ldc)) +
                      fabs(elem(p, p->G, i + j * p->ldc));
        }
        double t = 4.0 * (double)(p->k + p->n + 3) * u * rowsum + 1e-300;
        for (int64_t j = 0; j < p->n; ++j) {
            double d = fabs(elem(p, X, i + j * p->ldc) - elem(p, p->G, i + j * p->ldc));
            if (!(d <= t * 1e6)) return INFINITY; /* far outside: a wrong value */
            if (d / t > worst) worst = d / t;
        }
    }
    return worst;
}

static void golden(abft_handle_t h, problem_t *p) {
    abft_report_t rep;
    problem_reset(p);
    abft_status_t st = run(h, p, p->C, &rep);
    TU_CHECK(st == ABFT_STATUS_SUCCESS && rep.detected == 0,
             "golden run: %s detected=%lld max_ratio=%g", abft_status_name(st),
             (long long)rep.detected, rep.max_ratio);
    memcpy(p->G, p->C, es(p) * (size_t)(p->ldc * (p->n > 0 ? p->n : 1)));
}

/* ---- zero false positives ------------------------------------------------------------- */
static void test_clean(abft_handle_t h, tu_rng_t *r) {
    const int64_t sizes[] = {0, 1, 7, 33};
    int64_t trials = 0, fps = 0;
    double worst_ratio = 0.0;
    for (int prec = 0; prec < 2; ++prec)
        for (int kind = 0; kind < 3; ++kind)
            for (int ta = 0; ta < 2; ++ta)
                for (int tb = 0; tb < 2; ++tb)
                    for (int s = 0; s < 12; ++s) {
                        problem_t p = {0};
                        p.prec = prec, p.ta = ta, p.tb = tb;
                        p.m = sizes[tu_int(r, 0, 3)] + tu_int(r, 0, 40);
                        p.n = sizes[tu_int(r, 0, 3)] + tu_int(r, 0, 40);
                        p.k = s == 0 ? 0 : sizes[tu_int(r, 0, 3)] + tu_int(r, 0, 300);
                        p.alpha = s % 3 == 0 ? 1.0 : tu_range(r, -2, 2);
                        p.beta = s % 2 == 0 ? 0.0 : tu_range(r, -2, 2);
                        problem_make(r, &p, (tu_kind_t)kind);
                        abft_report_t rep;
                        abft_status_t st = run(h, &p, p.C, &rep);
                        TU_CHECK(st == ABFT_STATUS_SUCCESS, "%s", abft_status_name(st));
                        ++trials;
                        if (rep.detected != 0) {
                            ++fps;
                            fprintf(stderr,
                                    "false positive: prec=%d kind=%d ta=%d tb=%d m=%lld n=%lld "
                                    "k=%lld ratio=%g\n", prec, kind, ta, tb, (long long)p.m,
                                    (long long)p.n, (long long)p.k, rep.max_ratio);
                        }
                        if (rep.max_ratio > worst_ratio) worst_ratio = rep.max_ratio;
                        problem_free(&p);
                    }
    /* one large case: over 1000 in two dimensions */
    for (int prec = 0; prec < 2; ++prec) {
        problem_t p = {0};
        p.prec = prec, p.ta = 1, p.tb = 0, p.m = 1037, p.n = 1029, p.k = 64, p.alpha = 1.5,
        p.beta = -0.5;
        problem_make(r, &p, TU_CANCEL);
        abft_report_t rep;
        TU_CHECK_STATUS(run(h, &p, p.C, &rep), ABFT_STATUS_SUCCESS);
        ++trials;
        fps += rep.detected != 0;
        if (rep.max_ratio > worst_ratio) worst_ratio = rep.max_ratio;
        problem_free(&p);
    }
    printf("clean products: %lld trials, %lld false positives, largest residual/bound %.3g\n",
           (long long)trials, (long long)fps, worst_ratio);
    TU_CHECK(fps == 0, "%lld false positives", (long long)fps);
}

/* ---- single errors --------------------------------------------------------------------- */
static void test_single(abft_handle_t h, tu_rng_t *r, abft_checksum_kind_t kind) {
    abft_set_checksum_kind(h, kind);
    int64_t corrected = 0, masked = 0, trials = 0;
    for (int prec = 0; prec < 2; ++prec)
        for (int t = 0; t < 40; ++t) {
            problem_t p = {0};
            p.prec = prec, p.ta = t & 1, p.tb = (t >> 1) & 1;
            p.m = tu_int(r, 1, 60), p.n = tu_int(r, 1, 60), p.k = tu_int(r, 2, 80);
            p.alpha = tu_range(r, 0.5, 2.0);
            p.beta = t % 3 == 0 ? tu_range(r, -1, 1) : 0.0;
            problem_make(r, &p, (tu_kind_t)(t % 3));
            golden(h, &p);
            flip_hook_t f = {0};
            f.site = (t % 4 == 3) ? ABFT_SITE_MID_GEMM : ABFT_SITE_AFTER_GEMM;
            f.nflips = 1;
            f.rows[0] = tu_int(r, 0, p.m - 1);
            f.cols[0] = tu_int(r, 0, p.n - 1);
            int nbits = prec ? 32 : 64;
            /* a high bit: an exponent bit or the top mantissa bits, never a tiny change */
            f.bits[0] = (int)tu_int(r, nbits - 12, nbits - 2);
            abft_set_hook(h, flip_hook, &f);
            problem_reset(&p);
            abft_report_t rep;
            abft_status_t st = run(h, &p, p.C, &rep);
            abft_set_hook(h, NULL, NULL);
            ++trials;
            TU_CHECK(st == ABFT_STATUS_SUCCESS, "%s", abft_status_name(st));
            TU_CHECK(f.fired == 1, "hook fired %d times", f.fired);
            double w = worst_vs_golden(&p, p.C);
            if (rep.detected == 0) {
                /* the flip changed nothing measurable: then the result must be as good */
                ++masked;
                TU_CHECK(w <= 1.0, "undetected and wrong (SDC): prec=%d bit=%d worst=%g", prec,
                         f.bits[0], w);
                problem_free(&p);
                continue;
            }
            /* Detected: resolved as documented, never anything else (corrected at the
             * injected place: checked below). */
            TU_CHECK(tu_single_fault_resolved(p.beta, p.m, p.n, &rep),
                     "prec=%d t=%d bit=%d at (%lld,%lld): detected=%lld corrected=%lld "
                     "uncorrectable=%lld recomputed=%lld ratio=%g", prec, t, f.bits[0],
                     (long long)f.rows[0], (long long)f.cols[0], (long long)rep.detected,
                     (long long)rep.corrected, (long long)rep.uncorrectable,
                     (long long)rep.recomputed, rep.nfaults ? rep.faults[0].ratio : -1.0);
            if (rep.corrected == 1) {
                ++corrected;
                TU_CHECK(rep.faults[0].row == f.rows[0] && rep.faults[0].col == f.cols[0],
                         "located (%lld,%lld), injected (%lld,%lld)",
                         (long long)rep.faults[0].row, (long long)rep.faults[0].col,
                         (long long)f.rows[0], (long long)f.cols[0]);
            }
            if (rep.uncorrectable > 0) {
                problem_free(&p);
                continue; /* reported to the caller: the row is known bad */
            }
            TU_CHECK(w <= 1.0, "corrected result off golden: %g x the row bound", w);
            problem_free(&p);
        }
    printf("single errors (%s): %lld trials, %lld corrected, %lld masked\n",
           kind == ABFT_CHECKSUM_FULL ? "full" : "row", (long long)trials, (long long)corrected,
           (long long)masked);
    TU_CHECK(corrected >= trials / 3, "too few corrections: %lld of %lld", (long long)corrected,
             (long long)trials);
    abft_set_checksum_kind(h, ABFT_CHECKSUM_ROW);
}

/* Flip bit `bit` of element t of one of the problem's matrices (undoes itself). */
static void flip_elem(const problem_t *p, void *X, int64_t t, int bit) {
    if (p->prec)
        ((float *)X)[t] = tu_flip_s(((float *)X)[t], bit);
    else
        ((double *)X)[t] = tu_flip_d(((double *)X)[t], bit);
}

/* ---- two errors in one row; a fault in B; checksum faults ----------------------------- */
static void test_multi(abft_handle_t h, tu_rng_t *r) {
    for (int prec = 0; prec < 2; ++prec) {
        problem_t p = {0};
        p.prec = prec, p.m = 40, p.n = 30, p.k = 50, p.alpha = 1.0, p.beta = 0.0;
        problem_make(r, &p, TU_POSITIVE);
        golden(h, &p);
        int hb = prec ? 29 : 61; /* a high exponent bit: a large change */
        flip_hook_t f = {0};
        f.site = ABFT_SITE_AFTER_GEMM;
        f.nflips = 2;
        f.rows[0] = f.rows[1] = 7;
        f.cols[0] = 3, f.cols[1] = 11;
        f.bits[0] = f.bits[1] = hb;

        /* row checksums, no recompute: reported uncorrectable, the row left as it was */
        abft_set_recompute(h, 0);
        abft_set_hook(h, flip_hook, &f);
        problem_reset(&p);
        abft_report_t rep;
        TU_CHECK_STATUS(run(h, &p, p.C, &rep), ABFT_STATUS_SUCCESS);
        TU_CHECK(rep.detected == 1 && rep.uncorrectable == 1 && rep.corrected == 0,
                 "two in a row: detected=%lld uncorrectable=%lld corrected=%lld",
                 (long long)rep.detected, (long long)rep.uncorrectable, (long long)rep.corrected);
        TU_CHECK(rep.nfaults >= 1 && rep.faults[0].row == 7 &&
                     rep.faults[0].action == ABFT_ACTION_UNCORRECTABLE,
                 "fault record row %lld action %d", (long long)rep.faults[0].row,
                 rep.faults[0].action);
        for (int t = 0; t < 2; ++t) {
            double got = elem(&p, p.C, 7 + f.cols[t] * p.ldc);
            TU_CHECK(got == f.after[t], "uncorrectable element changed: %.17g, flipped value %.17g",
                     got, f.after[t]);
        }

        /* row checksums with recompute (beta = 0, inputs intact): recomputed */
        abft_set_recompute(h, 1);
        f.fired = 0;
        problem_reset(&p);
        TU_CHECK_STATUS(run(h, &p, p.C, &rep), ABFT_STATUS_SUCCESS);
        TU_CHECK(rep.recomputed == 1 && rep.uncorrectable == 0,
                 "recompute: recomputed=%lld uncorrectable=%lld", (long long)rep.recomputed,
                 (long long)rep.uncorrectable);
        TU_CHECK(worst_vs_golden(&p, p.C) <= 1.0, "recomputed row off golden");

        /* full checksums: both located through their columns and corrected */
        abft_set_recompute(h, 0);
        abft_set_checksum_kind(h, ABFT_CHECKSUM_FULL);
        f.fired = 0;
        problem_reset(&p);
        TU_CHECK_STATUS(run(h, &p, p.C, &rep), ABFT_STATUS_SUCCESS);
        TU_CHECK(rep.corrected == 2 && rep.uncorrectable == 0,
                 "full: corrected=%lld uncorrectable=%lld detected=%lld", (long long)rep.corrected,
                 (long long)rep.uncorrectable, (long long)rep.detected);
        TU_CHECK(worst_vs_golden(&p, p.C) <= 1.0, "full-checksum correction off golden");

        /* full checksums: a corrupted row checksum is told apart from data */
        flip_hook_t g = {0};
        g.site = ABFT_SITE_CHECKSUM;
        g.which = 0;
        g.nflips = 1;
        g.rows[0] = 5, g.cols[0] = 1, g.bits[0] = 60;
        abft_set_hook(h, flip_hook, &g);
        problem_reset(&p);
        TU_CHECK_STATUS(run(h, &p, p.C, &rep), ABFT_STATUS_SUCCESS);
        TU_CHECK(rep.checksum_faults == 1 && rep.corrected == 0 && rep.uncorrectable == 0,
                 "checksum fault: checksum_faults=%lld corrected=%lld uncorrectable=%lld",
                 (long long)rep.checksum_faults, (long long)rep.corrected,
                 (long long)rep.uncorrectable);
        TU_CHECK(rep.nfaults == 1 && rep.faults[0].action == ABFT_ACTION_CHECKSUM_FAULT &&
                     rep.faults[0].row == 5, "checksum fault record: row %lld action %d",
                 (long long)rep.faults[0].row, rep.faults[0].action);
        TU_CHECK(worst_vs_golden(&p, p.C) <= 1.0, "data changed on a checksum fault");
        abft_set_checksum_kind(h, ABFT_CHECKSUM_ROW);

        /* row checksums: a corrupted checksum is detected, never "corrected" into the data */
        g.fired = 0;
        problem_reset(&p);
        TU_CHECK_STATUS(run(h, &p, p.C, &rep), ABFT_STATUS_SUCCESS);
        TU_CHECK(rep.detected == 1 && rep.corrected == 0,
                 "row checksum fault: detected=%lld corrected=%lld", (long long)rep.detected,
                 (long long)rep.corrected);
        TU_CHECK(worst_vs_golden(&p, p.C) <= 1.0, "data changed on a checksum fault");

        /* a fault in B after encoding spreads down one column of C: one error per row. The
         * checksums hold A·B as encoded, but recomputing an element from the inputs gives
         * the corrupted value: the fault is in the inputs, every row is reported and none
         * is "corrected" (beta = 0). */
        flip_hook_t b = {0};
        b.site = ABFT_SITE_AFTER_ENCODE;
        b.which = 1;
        b.nflips = 1;
        b.rows[0] = 4, b.cols[0] = 9, b.bits[0] = hb;
        abft_set_hook(h, flip_hook, &b);
        problem_reset(&p);
        TU_CHECK_STATUS(run(h, &p, p.C, &rep), ABFT_STATUS_SUCCESS);
        abft_set_hook(h, NULL, NULL);
        TU_CHECK(rep.detected == p.m && rep.corrected == 0 && rep.uncorrectable == p.m,
                 "fault in B: detected=%lld corrected=%lld uncorrectable=%lld (m=%lld)",
                 (long long)rep.detected, (long long)rep.corrected,
                 (long long)rep.uncorrectable, (long long)p.m);
        /* restore B for what follows */
        flip_elem(&p, p.B, 4 + 9 * p.ldb, hb);

        /* with beta != 0 there is nothing to recompute from, and two row residuals cannot
         * confirm a location: every row is reported, C untouched */
        p.beta = 0.5;
        b.fired = 0;
        abft_set_hook(h, flip_hook, &b);
        problem_reset(&p);
        TU_CHECK_STATUS(run(h, &p, p.C, &rep), ABFT_STATUS_SUCCESS);
        abft_set_hook(h, NULL, NULL);
        flip_elem(&p, p.B, 4 + 9 * p.ldb, hb);
        TU_CHECK(rep.detected == p.m && rep.corrected == 0 && rep.uncorrectable == p.m,
                 "fault in B, beta != 0: detected=%lld corrected=%lld (m=%lld)",
                 (long long)rep.detected, (long long)rep.corrected, (long long)p.m);
        golden(h, &p);
        p.beta = 0.0;

        /* a fault in A after encoding spreads along a row of C: detected, not corrected */
        b.which = 0;
        b.rows[0] = 6, b.cols[0] = 2, b.fired = 0;
        abft_set_hook(h, flip_hook, &b);
        abft_set_recompute(h, 1);
        problem_reset(&p);
        TU_CHECK_STATUS(run(h, &p, p.C, &rep), ABFT_STATUS_SUCCESS);
        abft_set_hook(h, NULL, NULL);
        TU_CHECK(rep.detected >= 1 && rep.uncorrectable >= 1 && rep.corrected == 0,
                 "fault in A: detected=%lld uncorrectable=%lld corrected=%lld",
                 (long long)rep.detected, (long long)rep.uncorrectable, (long long)rep.corrected);
        problem_free(&p);
    }
}

/* ---- a non-finite element produced in C (an exponent flip to Inf) --------------------- */
static void test_inf_in_c(abft_handle_t h, tu_rng_t *r) {
    problem_t p = {0};
    p.m = 20, p.n = 25, p.k = 30, p.alpha = 1.0, p.beta = 0.0;
    problem_make(r, &p, TU_POSITIVE);
    golden(h, &p);
    /* force an element into [1, 2) and set its top exponent bit: it becomes Inf/NaN */
    flip_hook_t f = {0};
    f.site = ABFT_SITE_AFTER_GEMM;
    f.nflips = 1;
    f.rows[0] = 3, f.cols[0] = 4, f.bits[0] = 62;
    abft_set_recompute(h, 0);
    abft_set_hook(h, flip_hook, &f);
    problem_reset(&p);
    abft_report_t rep;
    TU_CHECK_STATUS(run(h, &p, p.C, &rep), ABFT_STATUS_SUCCESS);
    abft_set_hook(h, NULL, NULL);
    double v = ((double *)p.G)[3 + 4 * p.ldc];
    if (tu_flip_d(v, 62) != tu_flip_d(v, 62) || isinf(tu_flip_d(v, 62)) ||
        fabs(tu_flip_d(v, 62)) > 1e300) {
        TU_CHECK(rep.detected == 1 && rep.corrected == 1, "huge/Inf element: detected=%lld corrected=%lld",
                 (long long)rep.detected, (long long)rep.corrected);
        TU_CHECK(worst_vs_golden(&p, p.C) <= 1.0, "Inf correction off golden");
    }
    abft_set_recompute(h, 1);
    problem_free(&p);
}

/* An Inf written into A after encoding makes a row of C infinite: |C|·V overflows and the
 * bound with it, which must flag the row, not pass it. */
static abft_status_t set_inf_hook(void *user, abft_hook_site_t site, int which, char prec,
                                  void *ptr, int64_t rows, int64_t cols, int64_t ld) {
    (void)user, (void)rows, (void)cols;
    if (site == ABFT_SITE_AFTER_ENCODE && which == 0 && prec == 'd')
        ((double *)ptr)[2 + 3 * ld] = INFINITY;
    return ABFT_STATUS_SUCCESS;
}

static void test_inf_after_encode(abft_handle_t h, tu_rng_t *r) {
    problem_t p = {0};
    p.m = 12, p.n = 9, p.k = 6, p.alpha = 1.0, p.beta = 0.0;
    problem_make(r, &p, TU_POSITIVE);
    abft_set_hook(h, set_inf_hook, NULL);
    abft_report_t rep;
    TU_CHECK_STATUS(run(h, &p, p.C, &rep), ABFT_STATUS_SUCCESS);
    abft_set_hook(h, NULL, NULL);
    TU_CHECK(rep.detected == 1 && rep.uncorrectable == 1 && rep.corrected == 0,
             "Inf in A after encoding: detected=%lld uncorrectable=%lld corrected=%lld",
             (long long)rep.detected, (long long)rep.uncorrectable, (long long)rep.corrected);
    problem_free(&p);
}

/* ---- non-finite inputs: status, flag, C untouched ------------------------------------- */
static void test_nonfinite(abft_handle_t h, tu_rng_t *r) {
    for (int prec = 0; prec < 2; ++prec)
        for (int which = 0; which < 4; ++which) {
            problem_t p = {0};
            p.prec = prec, p.m = 9, p.n = 8, p.k = 7, p.alpha = 1.0;
            p.beta = which >= 2 ? 0.5 : 0.0;
            problem_make(r, &p, TU_UNIFORM);
            double bad = (which & 1) ? INFINITY : NAN;
            void *X = which == 0 ? p.A : which == 1 ? p.B : p.C;
            int64_t o = which == 0 ? 3 + 2 * p.lda : which == 1 ? 1 + 4 * p.ldb : 5 + 6 * p.ldc;
            if (prec)
                ((float *)X)[o] = (float)bad;
            else
                ((double *)X)[o] = bad;
            if (which >= 2) memcpy(p.C0, p.C, es(&p) * (size_t)(p.ldc * p.n));
            abft_report_t rep;
            TU_CHECK_STATUS(run(h, &p, p.C, &rep), ABFT_STATUS_NON_FINITE_INPUT);
            TU_CHECK(rep.nonfinite_input == 1, "nonfinite_input flag not set");
            TU_CHECK(memcmp(p.C, p.C0, es(&p) * (size_t)(p.ldc * p.n)) == 0, "C changed");
            problem_free(&p);
        }
    /* NaN in C with beta = 0: C is not an input, the call succeeds and overwrites it */
    problem_t p = {0};
    p.m = 5, p.n = 5, p.k = 5, p.alpha = 1.0, p.beta = 0.0;
    problem_make(r, &p, TU_UNIFORM);
    ((double *)p.C)[1 + 2 * p.ldc] = NAN;
    abft_report_t rep;
    TU_CHECK_STATUS(run(h, &p, p.C, &rep), ABFT_STATUS_SUCCESS);
    TU_CHECK(!isnan(((double *)p.C)[1 + 2 * p.ldc]) && rep.detected == 0,
             "beta=0 NaN in C: detected=%lld", (long long)rep.detected);
    problem_free(&p);
}

/* ---- argument errors ------------------------------------------------------------------ */
static void test_args(abft_handle_t h) {
    double A[16], B[16], C[16], Csave[16];
    for (int i = 0; i < 16; ++i) A[i] = B[i] = C[i] = Csave[i] = i + 1;
    abft_report_t rep;
    const abft_status_t INV = ABFT_STATUS_INVALID_VALUE;
    TU_CHECK_STATUS(abft_dgemm(NULL, 0, 0, 2, 2, 2, 1, A, 2, B, 2, 0, C, 2, &rep),
                    ABFT_STATUS_NOT_INITIALIZED);
    TU_CHECK_STATUS(abft_dgemm(h, 0, 0, -1, 2, 2, 1, A, 2, B, 2, 0, C, 2, &rep), INV);
    TU_CHECK_STATUS(abft_dgemm(h, 0, 0, 2, -2, 2, 1, A, 2, B, 2, 0, C, 2, &rep), INV);
    TU_CHECK_STATUS(abft_dgemm(h, 0, 0, 2, 2, -3, 1, A, 2, B, 2, 0, C, 2, &rep), INV);
    TU_CHECK_STATUS(abft_dgemm(h, 0, 0, 3, 2, 2, 1, A, 2, B, 2, 0, C, 3, &rep), INV); /* lda<m */
    TU_CHECK_STATUS(abft_dgemm(h, 0, 0, 2, 2, 3, 1, A, 2, B, 2, 0, C, 2, &rep), INV); /* ldb<k */
    TU_CHECK_STATUS(abft_dgemm(h, 0, 0, 3, 2, 2, 1, A, 3, B, 2, 0, C, 2, &rep), INV); /* ldc<m */
    TU_CHECK_STATUS(abft_dgemm(h, 1, 0, 2, 2, 3, 1, A, 2, B, 3, 0, C, 2, &rep), INV); /* T: lda<k */
    TU_CHECK_STATUS(abft_dgemm(h, 0, 0, 2, 2, 2, 1, NULL, 2, B, 2, 0, C, 2, &rep), INV);
    TU_CHECK_STATUS(abft_dgemm(h, 0, 0, 2, 2, 2, 1, A, 2, NULL, 2, 0, C, 2, &rep), INV);
    TU_CHECK_STATUS(abft_dgemm(h, 0, 0, 2, 2, 2, 1, A, 2, B, 2, 0, NULL, 2, &rep), INV);
    TU_CHECK_STATUS(abft_dgemm(h, 2, 0, 2, 2, 2, 1, A, 2, B, 2, 0, C, 2, &rep), INV);
    TU_CHECK_STATUS(abft_dgemm(h, 0, 7, 2, 2, 2, 1, A, 2, B, 2, 0, C, 2, &rep), INV);
    TU_CHECK_STATUS(abft_dgemm(h, 0, 0, 2, 2, 2, NAN, A, 2, B, 2, 0, C, 2, &rep), INV);
    TU_CHECK_STATUS(abft_dgemm(h, 0, 0, 2, 2, 2, 1, A, 0, B, 2, 0, C, 2, &rep), INV);
    TU_CHECK(memcmp(C, Csave, sizeof C) == 0, "C changed by a rejected call");
    /* empty problems are fine, with NULL pointers too */
    TU_CHECK_STATUS(abft_dgemm(h, 0, 0, 0, 0, 0, 1, NULL, 1, NULL, 1, 0, NULL, 1, &rep),
                    ABFT_STATUS_SUCCESS);
    TU_CHECK_STATUS(abft_dgemm(h, 0, 0, 2, 2, 0, 1, NULL, 2, NULL, 1, 0, C, 2, NULL),
                    ABFT_STATUS_SUCCESS);
    TU_CHECK(C[0] == 0 && C[3] == 0, "k = 0, beta = 0 must give zeros: %g %g", C[0], C[3]);
    /* options */
    TU_CHECK_STATUS(abft_set_checksum_kind(h, (abft_checksum_kind_t)5), INV);
    TU_CHECK_STATUS(abft_set_bound_mode(h, (abft_bound_mode_t)9, 1.0), INV);
    TU_CHECK_STATUS(abft_set_bound_mode(h, ABFT_BOUND_PROBABILISTIC, 0.0), INV);
    TU_CHECK_STATUS(abft_set_bound_mode(h, ABFT_BOUND_PROBABILISTIC, NAN), INV);
    TU_CHECK_STATUS(abft_set_recompute(h, 3), INV);
    TU_CHECK_STATUS(abft_set_stream(h, (void *)&rep), INV);
    TU_CHECK_STATUS(abft_create(NULL, ABFT_BACKEND_CPU), INV);
    abft_handle_t h2 = NULL;
    TU_CHECK_STATUS(abft_create(&h2, (abft_backend_t)42), INV);
    TU_CHECK(h2 == NULL, "handle written on failure");
    TU_CHECK_STATUS(abft_destroy(NULL), ABFT_STATUS_SUCCESS);
    abft_checksum_kind_t kind;
    TU_CHECK_STATUS(abft_get_checksum_kind(h, &kind), ABFT_STATUS_SUCCESS);
    TU_CHECK(kind == ABFT_CHECKSUM_ROW, "kind %d", (int)kind);
    /* status names and messages come from one list */
    TU_CHECK(strcmp(abft_status_name(ABFT_STATUS_NON_FINITE_INPUT),
                    "ABFT_STATUS_NON_FINITE_INPUT") == 0, "name");
    TU_CHECK(strcmp(abft_status_name((abft_status_t)999), "ABFT_STATUS_<unknown>") == 0,
             "unknown name");
    TU_CHECK(strlen(abft_status_string(ABFT_STATUS_INVALID_VALUE)) > 10, "message");
    /* encoding argument errors */
    double R[8], K[8];
    TU_CHECK_STATUS(abft_dchecksum_rows(h, 2, 2, A, 1, R, 2, NULL, 0), INV);
    TU_CHECK_STATUS(abft_dchecksum_rows(h, 2, 2, A, 2, R, 1, NULL, 0), INV);
    TU_CHECK_STATUS(abft_dchecksum_cols(h, 2, 2, A, 2, K, 2, K, 2), INV); /* aliasing */
    TU_CHECK_STATUS(abft_dtsmm(h, ABFT_OP_N, 2, 2, 17, A, 2, B, 2, R, 2, NULL, 0, NULL, 0), INV);
    TU_CHECK_STATUS(abft_dtsmm(h, ABFT_OP_N, 2, 2, 0, A, 2, B, 2, R, 2, NULL, 0, NULL, 0), INV);
#if !ABFT_HAVE_CUDA
    abft_handle_t hc = NULL;
    TU_CHECK_STATUS(abft_create(&hc, ABFT_BACKEND_CUDA), ABFT_STATUS_NOT_SUPPORTED);
#endif
}

/* ---- review findings: overlap, huge finite inputs, report on errors -------------------- */
static abft_status_t failing_hook(void *user, abft_hook_site_t site, int which, char prec,
                                  void *ptr, int64_t rows, int64_t cols, int64_t ld) {
    (void)user, (void)which, (void)prec, (void)ptr, (void)rows, (void)cols, (void)ld;
    return site == ABFT_SITE_AFTER_GEMM ? ABFT_STATUS_EXECUTION_FAILED : ABFT_STATUS_SUCCESS;
}

static void test_contract(abft_handle_t h) {
    /* C overlapping A or B: refused, nothing written */
    double X[64];
    for (int i = 0; i < 64; ++i) X[i] = i + 1;
    abft_report_t rep;
    TU_CHECK_STATUS(abft_dgemm(h, 0, 0, 2, 2, 2, 1.0, X, 2, X + 8, 2, 0.0, X, 2, &rep),
                    ABFT_STATUS_INVALID_VALUE);
    TU_CHECK_STATUS(abft_dgemm(h, 0, 0, 2, 2, 2, 1.0, X, 2, X + 8, 2, 0.0, X + 9, 2, &rep),
                    ABFT_STATUS_INVALID_VALUE);
    TU_CHECK(X[0] == 1 && X[9] == 10, "overlapping call wrote C");
    TU_CHECK_STATUS(abft_dgemm(h, 0, 0, 2, 2, 2, 1.0, X, 2, X + 8, 2, 0.0, X + 16, 2, &rep),
                    ABFT_STATUS_SUCCESS);

    /* huge finite inputs: |A|·(|B|·V) overflows, A·B does not. Not "non-finite": the GEMM
     * runs, and the rows it cannot verify are reported, never passed. */
    int64_t m = 64, n = 64, k = 4;
    double *A = tu_alloc_d(m * k), *B = tu_alloc_d(k * n), *C = tu_alloc_d(m * n);
    for (int64_t i = 0; i < m * k; ++i) A[i] = 1e153;
    for (int64_t i = 0; i < k * n; ++i) B[i] = 1e153;
    TU_CHECK_STATUS(abft_dgemm(h, 0, 0, m, n, k, 1.0, A, m, B, k, 0.0, C, m, &rep),
                    ABFT_STATUS_SUCCESS);
    TU_CHECK(fabs(C[5] / 4e306 - 1.0) < 1e-12 && fabs(C[m * n - 1] / 4e306 - 1.0) < 1e-12,
             "huge inputs: C = %g, expected 4e306", C[5]);
    TU_CHECK(rep.detected > 0 && rep.uncorrectable == rep.detected && rep.corrected == 0,
             "huge inputs: detected %lld uncorrectable %lld corrected %lld (rows with an "
             "infinite bound must be reported)", (long long)rep.detected,
             (long long)rep.uncorrectable, (long long)rep.corrected);

    /* an error status after the call started leaves the caller's report as it was */
    memset(&rep, 0, sizeof rep);
    rep.checked = 77;
    abft_set_hook(h, failing_hook, NULL);
    TU_CHECK_STATUS(abft_dgemm(h, 0, 0, m, n, k, 1e-300, A, m, B, k, 0.0, C, m, &rep),
                    ABFT_STATUS_EXECUTION_FAILED);
    abft_set_hook(h, NULL, NULL);
    TU_CHECK(rep.checked == 77, "report written on an error status");
    free(A), free(B), free(C);
}

/* ---- split form ----------------------------------------------------------------------- */
static void test_split(abft_handle_t h, tu_rng_t *r) {
    problem_t p = {0};
    p.m = 31, p.n = 17, p.k = 23, p.alpha = 2.0, p.beta = 1.0;
    problem_make(r, &p, TU_UNIFORM);
    abft_gemm_plan_t plan = NULL;
    TU_CHECK_STATUS(abft_gemm_plan_create(h, 'd', ABFT_OP_N, ABFT_OP_N, p.m, p.n, p.k, p.alpha,
                                          p.beta, &plan),
                    ABFT_STATUS_SUCCESS);
    abft_report_t rep;
    TU_CHECK_STATUS(abft_dgemm_verify(h, plan, NULL, 0, NULL, 0, p.C, p.ldc, &rep),
                    ABFT_STATUS_INVALID_VALUE); /* not encoded yet */
    TU_CHECK_STATUS(abft_dgemm_encode(h, plan, p.A, p.lda, p.B, p.ldb, p.C, p.ldc),
                    ABFT_STATUS_SUCCESS);
    /* the caller's own GEMM, done by hand here */
    double *C = (double *)p.C;
    double *C0 = (double *)malloc(sizeof(double) * (size_t)(p.ldc * p.n));
    TU_CHECK(C0 != NULL, "alloc");
    memcpy(C0, C, sizeof(double) * (size_t)(p.ldc * p.n));
    for (int64_t j = 0; j < p.n; ++j)
        for (int64_t i = 0; i < p.m; ++i) {
            double s = 0.0;
            for (int64_t l = 0; l < p.k; ++l) s += opA(&p, i, l) * opB(&p, l, j);
            C[i + j * p.ldc] = p.alpha * s + p.beta * C[i + j * p.ldc];
        }
    C[4 + 5 * p.ldc] += 1.0; /* a fault */
    TU_CHECK_STATUS(abft_dgemm_verify(h, plan, NULL, 0, NULL, 0, p.C, p.ldc, &rep),
                    ABFT_STATUS_SUCCESS);
    abft_report_t rep2;
    /* beta != 0: the encoding belonged to that GEMM's C; verifying again needs a new one */
    TU_CHECK_STATUS(abft_dgemm_verify(h, plan, NULL, 0, NULL, 0, p.C, p.ldc, &rep2),
                    ABFT_STATUS_INVALID_VALUE);
    /* row checksums, beta != 0, no A and B: nothing can confirm a location; reported,
     * the faulty element left as it was */
    double faulty = C[4 + 5 * p.ldc];
    TU_CHECK(rep.detected == 1 && rep.corrected == 0 && rep.uncorrectable == 1 &&
                 rep.faults[0].row == 4 && rep.faults[0].col == -1 &&
                 C[4 + 5 * p.ldc] == faulty,
             "split form (row): detected=%lld corrected=%lld at (%lld,%lld)",
             (long long)rep.detected, (long long)rep.corrected, (long long)rep.faults[0].row,
             (long long)rep.faults[0].col);
    /* full checksums: the row and the crossing column locate it, but nothing can recompute
     * it, and the crossing column alone does not confirm a correction: both entries
     * reported, the faulty element left as it was */
    abft_gemm_plan_t plan_full = NULL;
    TU_CHECK_STATUS(abft_set_checksum_kind(h, ABFT_CHECKSUM_FULL), ABFT_STATUS_SUCCESS);
    TU_CHECK_STATUS(abft_gemm_plan_create(h, 'd', ABFT_OP_N, ABFT_OP_N, p.m, p.n, p.k, p.alpha,
                                          p.beta, &plan_full),
                    ABFT_STATUS_SUCCESS);
    memcpy(C, C0, sizeof(double) * (size_t)(p.ldc * p.n));
    TU_CHECK_STATUS(abft_dgemm_encode(h, plan_full, p.A, p.lda, p.B, p.ldb, p.C, p.ldc),
                    ABFT_STATUS_SUCCESS);
    for (int64_t j = 0; j < p.n; ++j)
        for (int64_t i = 0; i < p.m; ++i) {
            double s = 0.0;
            for (int64_t l = 0; l < p.k; ++l) s += opA(&p, i, l) * opB(&p, l, j);
            C[i + j * p.ldc] = p.alpha * s + p.beta * C[i + j * p.ldc];
        }
    C[4 + 5 * p.ldc] += 1.0;
    faulty = C[4 + 5 * p.ldc];
    TU_CHECK_STATUS(abft_dgemm_verify(h, plan_full, NULL, 0, NULL, 0, p.C, p.ldc, &rep),
                    ABFT_STATUS_SUCCESS);
    TU_CHECK(rep.detected == 2 && rep.corrected == 0 && rep.uncorrectable == 2 &&
                 rep.nfaults == 2 && rep.faults[0].row == 4 && rep.faults[0].col == -1 &&
                 rep.faults[1].row == -1 && rep.faults[1].col == 5 &&
                 C[4 + 5 * p.ldc] == faulty,
             "split form (full): detected=%lld corrected=%lld uncorrectable=%lld",
             (long long)rep.detected, (long long)rep.corrected, (long long)rep.uncorrectable);
    TU_CHECK_STATUS(abft_gemm_plan_destroy(plan_full), ABFT_STATUS_SUCCESS);
    TU_CHECK_STATUS(abft_set_checksum_kind(h, ABFT_CHECKSUM_ROW), ABFT_STATUS_SUCCESS);
    free(C0);
    TU_CHECK_STATUS(abft_sgemm_encode(h, plan, NULL, 1, NULL, 1, NULL, 1),
                    ABFT_STATUS_INVALID_VALUE); /* precision mismatch */
    TU_CHECK_STATUS(abft_gemm_plan_destroy(plan), ABFT_STATUS_SUCCESS);
    TU_CHECK_STATUS(abft_gemm_plan_destroy(NULL), ABFT_STATUS_SUCCESS);
    /* beta = 0: C is not read before the GEMM and may be NULL at encode time */
    TU_CHECK_STATUS(abft_gemm_plan_create(h, 'd', ABFT_OP_N, ABFT_OP_N, p.m, p.n, p.k, 1.0, 0.0,
                                          &plan),
                    ABFT_STATUS_SUCCESS);
    TU_CHECK_STATUS(abft_dgemm_encode(h, plan, p.A, p.lda, p.B, p.ldb, NULL, p.ldc),
                    ABFT_STATUS_SUCCESS);
    TU_CHECK_STATUS(abft_dgemm_encode(h, plan, NULL, p.lda, p.B, p.ldb, NULL, p.ldc),
                    ABFT_STATUS_INVALID_VALUE);
    TU_CHECK_STATUS(abft_gemm_plan_destroy(plan), ABFT_STATUS_SUCCESS);
    problem_free(&p);
}

/* ---- the probabilistic bound: measured false-positive rate ----------------------------- */
static void test_probabilistic(abft_handle_t h, tu_rng_t *r) {
    TU_CHECK_STATUS(abft_set_bound_mode(h, ABFT_BOUND_PROBABILISTIC, 4.0), ABFT_STATUS_SUCCESS);
    int64_t trials = 0, fps = 0;
    double worst = 0.0;
    for (int prec = 0; prec < 2; ++prec)
        for (int kind = 0; kind < 3; ++kind)
            for (int t = 0; t < 10; ++t) {
                problem_t p = {0};
                p.prec = prec, p.ta = t & 1, p.tb = (t >> 1) & 1;
                p.m = tu_int(r, 1, 80), p.n = tu_int(r, 1, 80), p.k = tu_int(r, 1, 400);
                p.alpha = 1.0, p.beta = t % 2 ? 0.7 : 0.0;
                problem_make(r, &p, (tu_kind_t)kind);
                abft_report_t rep;
                TU_CHECK_STATUS(run(h, &p, p.C, &rep), ABFT_STATUS_SUCCESS);
                ++trials;
                fps += rep.detected != 0;
                if (rep.max_ratio > worst) worst = rep.max_ratio;
                problem_free(&p);
            }
    printf("probabilistic bound (factor 4): %lld trials, %lld false positives, largest "
           "residual/bound %.3g\n", (long long)trials, (long long)fps, worst);
    TU_CHECK(fps == 0, "probabilistic mode: %lld false positives", (long long)fps);
    TU_CHECK_STATUS(abft_set_bound_mode(h, ABFT_BOUND_WORST_CASE, 1.0), ABFT_STATUS_SUCCESS);
}

int main(void) {
    uint64_t seed = tu_seed("test_gemm");
    tu_rng_t r;
    tu_rng_init(&r, seed);
    abft_handle_t h = NULL;
    TU_CHECK_STATUS(abft_create(&h, ABFT_BACKEND_CPU), ABFT_STATUS_SUCCESS);
    test_args(h);
    test_clean(h, &r);
    test_single(h, &r, ABFT_CHECKSUM_ROW);
    test_single(h, &r, ABFT_CHECKSUM_FULL);
    test_multi(h, &r);
    test_inf_in_c(h, &r);
    test_inf_after_encode(h, &r);
    test_nonfinite(h, &r);
    test_split(h, &r);
    test_contract(h);
    test_probabilistic(h, &r);
    TU_CHECK_STATUS(abft_destroy(h), ABFT_STATUS_SUCCESS);
    return tu_finish("test_gemm");
}
