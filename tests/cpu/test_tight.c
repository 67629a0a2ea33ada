/* The tight bound mode (ABFT_BOUND_TIGHT, docs/bound.md "Tight mode") on the CPU backend:
 *   1. no clean product flagged, over the whole space: both precisions, every transpose,
 *      alpha and beta (0 included), shapes from 1, padding, row and full checksums, and
 *      data chosen to break the model's assumptions (constant, repeated columns, periodic
 *      rows, few values, sign-sorted rows, equal columns of opposite sign);
 *   2. the bound is far tighter than the worst case on ordinary data (the largest clean
 *      residual/bound at least 20 times the worst case's);
 *   3. a single-element change the worst case cannot see is detected and corrected;
 *   4. the mode's name and its range.
 * Randomized: the seed is printed. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "abft_internal.h"
#include "abft_tight_common.h"
#include "verify/abft_bound.h"
#include "testutil.h"
#include "tight_guard_case.h"

enum { KIND_UNIFORM, KIND_WIDE, KIND_POSITIVE, KIND_CONSTANT, KIND_REPEATED, KIND_PERIODIC,
       KIND_DISCRETE, KIND_SIGNSORT, KIND_OPPOSITE, KIND_COUNT };
static const char *kind_name[KIND_COUNT] = {"uniform",  "wide",     "positive",
                                            "constant", "repeated", "periodic",
                                            "discrete", "signsort", "opposite"};

/* op(A) is m x k, op(B) k x n; element (i, l) of op(A) sits at A[i + l·lda] (N) or
 * A[l + i·lda] (T). Fill by logical position. */
static void fill(tu_rng_t *r, int kind, int isb, int64_t rows, int64_t cols, double *X) {
    /* X logical rows x cols, column-major with ld = rows */
    for (int64_t j = 0; j < cols; ++j)
        for (int64_t i = 0; i < rows; ++i) {
            double v;
            const int64_t l = isb ? i : j; /* the inner index */
            switch (kind) {
            case KIND_UNIFORM: v = tu_range(r, -1.0, 1.0); break;
            case KIND_WIDE: v = tu_range(r, -1.0, 1.0) * pow(10.0, tu_range(r, -6.0, 6.0)); break;
            case KIND_POSITIVE: v = tu_range(r, 0.0, 1.0); break;
            case KIND_CONSTANT: v = isb ? 1.0 : 0.1; break;
            case KIND_REPEATED: v = isb && j > 0 ? X[i] : tu_range(r, -1.0, 1.0); break;
            case KIND_PERIODIC: v = isb ? 1.0 : 0.1 * (1.0 + (double)(l % 3) / 3.0); break;
            case KIND_DISCRETE:
                v = (tu_next(r) & 1 ? 0.1 : 0.3) * (tu_next(r) & 1 ? 1.0 : -1.0);
                break;
            case KIND_SIGNSORT:
                v = isb ? (l < rows / 2 ? 1.0 : -1.0) * tu_range(r, 0.5, 1.0)
                        : tu_range(r, 0.5, 1.0);
                break;
            default: /* half the columns of op(B) its first, half minus the first */
                v = isb && j > 0 ? (j % 2 ? -X[i] : X[i]) : tu_range(r, 0.0, 1.0);
                break;
            }
            X[i + j * rows] = v;
        }
}

/* Store logical X (rows x cols, ld rows) as op(M) with transpose t into M (ld ldm). */
static void store(int t, int64_t rows, int64_t cols, const double *X, double *M, int64_t ldm,
                  float *Ms) {
    for (int64_t j = 0; j < cols; ++j)
        for (int64_t i = 0; i < rows; ++i) {
            size_t o = t ? (size_t)(j + i * ldm) : (size_t)(i + j * ldm);
            if (M) M[o] = X[i + j * rows];
            if (Ms) Ms[o] = (float)X[i + j * rows];
        }
}

typedef struct prob {
    char prec;
    int ta, tb;
    int64_t m, n, k, lda, ldb, ldc;
    double alpha, beta;
    double *A, *B, *C;
    float *As, *Bs, *Cs;
} prob_t;

static void make(prob_t *p, tu_rng_t *r, char prec, int kind, int64_t m, int64_t n, int64_t k,
                 int ta, int tb, int64_t pad, double alpha, double beta) {
    memset(p, 0, sizeof *p);
    p->prec = prec, p->ta = ta, p->tb = tb, p->m = m, p->n = n, p->k = k;
    p->alpha = alpha, p->beta = beta;
    int64_t ar = ta ? k : m, ac = ta ? m : k, br = tb ? n : k, bc = tb ? k : n;
    p->lda = ar + pad, p->ldb = br + pad, p->ldc = m + pad;
    double *X = tu_alloc_d(m * k + 1), *Y = tu_alloc_d(k * n + 1), *W = tu_alloc_d(m * n + 1);
    fill(r, kind, 0, m, k, X);
    fill(r, kind, 1, k, n, Y);
    for (int64_t i = 0; i < m * n; ++i) W[i] = tu_range(r, -1.0, 1.0);
    if (prec == 'd') {
        p->A = tu_alloc_d(p->lda * ac + 1), p->B = tu_alloc_d(p->ldb * bc + 1);
        p->C = tu_alloc_d(p->ldc * n + 1);
        store(ta, m, k, X, p->A, p->lda, NULL);
        store(tb, k, n, Y, p->B, p->ldb, NULL);
        store(0, m, n, W, p->C, p->ldc, NULL);
    } else {
        p->As = tu_alloc_s(p->lda * ac + 1), p->Bs = tu_alloc_s(p->ldb * bc + 1);
        p->Cs = tu_alloc_s(p->ldc * n + 1);
        store(ta, m, k, X, NULL, p->lda, p->As);
        store(tb, k, n, Y, NULL, p->ldb, p->Bs);
        store(0, m, n, W, NULL, p->ldc, p->Cs);
    }
    free(X), free(Y), free(W);
}

static void release(prob_t *p) {
    free(p->A), free(p->B), free(p->C), free(p->As), free(p->Bs), free(p->Cs);
}

static abft_status_t run(abft_handle_t h, prob_t *p, abft_report_t *rep) {
    if (p->prec == 'd')
        return abft_dgemm(h, (abft_operation_t)p->ta, (abft_operation_t)p->tb, p->m, p->n, p->k,
                          p->alpha, p->A, p->lda, p->B, p->ldb, p->beta, p->C, p->ldc, rep);
    return abft_sgemm(h, (abft_operation_t)p->ta, (abft_operation_t)p->tb, p->m, p->n, p->k,
                      (float)p->alpha, p->As, p->lda, p->Bs, p->ldb, (float)p->beta, p->Cs,
                      p->ldc, rep);
}

/* 1. clean products over the space: none flagged */
static void test_clean(abft_handle_t h, uint64_t seed) {
    tu_rng_t r;
    tu_rng_init(&r, seed);
    static const double alphas[] = {1.0, -0.7, 3.5}, betas[] = {0.0, 1.0, -0.3};
    double worst = 0.0;
    int runs = 0;
    for (int kind = 0; kind < KIND_COUNT; ++kind)
        for (int rep_i = 0; rep_i < 12; ++rep_i) {
            char prec = rep_i % 2 ? 's' : 'd';
            int64_t m = tu_int(&r, 1, 70), n = tu_int(&r, 1, 70), k = tu_int(&r, 1, 90);
            if (rep_i >= 10) m = n = 160, k = 400; /* long enough for the along-l guard */
            int ta = (int)tu_int(&r, 0, 1), tb = (int)tu_int(&r, 0, 1);
            double alpha = alphas[tu_int(&r, 0, 2)], beta = betas[tu_int(&r, 0, 2)];
            abft_set_checksum_kind(h, rep_i % 3 == 2 ? ABFT_CHECKSUM_FULL : ABFT_CHECKSUM_ROW);
            prob_t p;
            make(&p, &r, prec, kind, m, n, k, ta, tb, tu_int(&r, 0, 3), alpha, beta);
            abft_report_t rep;
            abft_status_t st = run(h, &p, &rep);
            TU_CHECK(st == ABFT_STATUS_SUCCESS && rep.detected == 0,
                     "%s %c %lldx%lldx%lld t%d%d alpha %g beta %g: %s, %lld flagged, ratio %g",
                     kind_name[kind], prec, (long long)m, (long long)n, (long long)k, ta, tb,
                     alpha, beta, abft_status_name(st), (long long)rep.detected,
                     rep.max_ratio);
            if (st == ABFT_STATUS_SUCCESS && rep.max_ratio > worst) worst = rep.max_ratio;
            ++runs;
            release(&p);
        }
    abft_set_checksum_kind(h, ABFT_CHECKSUM_ROW);
    printf("clean: %d products, largest residual/bound %.3g\n", runs, worst);
}

/* The largest clean ratio of one n x n x n product of uniform data in a mode. */
static double clean_ratio(abft_handle_t h, char prec, int64_t n, abft_bound_mode_t mode,
                          uint64_t seed) {
    tu_rng_t r;
    tu_rng_init(&r, seed);
    prob_t p;
    make(&p, &r, prec, KIND_UNIFORM, n, n, n, 0, 0, 0, 1.0, 0.0);
    abft_set_bound_mode(h, mode, 1.0);
    abft_report_t rep;
    abft_status_t st = run(h, &p, &rep);
    TU_CHECK(st == ABFT_STATUS_SUCCESS && rep.detected == 0, "%c n %lld %s: %s, flagged %lld",
             prec, (long long)n, abft_bound_mode_name(mode), abft_status_name(st),
             (long long)rep.detected);
    release(&p);
    return rep.max_ratio;
}

/* 2. tightness against the worst case */
static void test_tightness(abft_handle_t h, uint64_t seed) {
    for (int pi = 0; pi < 2; ++pi) {
        char prec = pi ? 's' : 'd';
        double rt = clean_ratio(h, prec, 384, ABFT_BOUND_TIGHT, seed);
        double rw = clean_ratio(h, prec, 384, ABFT_BOUND_WORST_CASE, seed);
        printf("%c n 384 uniform: largest residual/bound tight %.3g, worst case %.3g\n", prec,
               rt, rw);
        TU_CHECK(rt >= 20.0 * rw && rt < 1.0, "%c: tight %g not 20x the worst case's %g", prec,
                 rt, rw);
    }
    abft_set_bound_mode(h, ABFT_BOUND_TIGHT, 1.0);
}

/* Adds delta to element (i, j) of the array a protected call hands its hook at `site`
 * (which: 0 = A at ABFT_SITE_AFTER_ENCODE; C at ABFT_SITE_AFTER_GEMM). */
typedef struct add1 {
    abft_hook_site_t site;
    int which;
    int64_t i, j;
    double delta;
    int fired;
} add1_t;
static abft_status_t add1_fn(void *user, abft_hook_site_t site, int which, char prec, void *ptr,
                             int64_t rows, int64_t cols, int64_t ld) {
    add1_t *a = (add1_t *)user;
    (void)rows, (void)cols;
    if (site != a->site || which != a->which) return ABFT_STATUS_SUCCESS;
    if (prec == 'd') ((double *)ptr)[a->i + a->j * ld] += a->delta;
    else ((float *)ptr)[a->i + a->j * ld] += (float)a->delta;
    a->fired = 1;
    return ABFT_STATUS_SUCCESS;
}

/* 3. a change of 1e-3 (fp32) or 1e-11 (fp64) of the row's RMS in one element: below the
 *    worst case's reach at n = 384, detected and corrected by the tight mode */
static void test_detects(abft_handle_t h, uint64_t seed) {
    for (int pi = 0; pi < 2; ++pi) {
        char prec = pi ? 's' : 'd';
        const int64_t n = 384;
        int seen[2] = {0, 0};
        for (int mode = 0; mode < 2; ++mode) {
            tu_rng_t r;
            tu_rng_init(&r, seed + 7);
            prob_t p;
            make(&p, &r, prec, KIND_UNIFORM, n, n, n, 0, 0, 0, 1.0, 0.0);
            abft_set_bound_mode(h, mode ? ABFT_BOUND_TIGHT : ABFT_BOUND_WORST_CASE, 1.0);
            /* the RMS of a row of C: about sqrt(k/9) for uniform [-1, 1] data */
            double rms = sqrt((double)n / 9.0);
            add1_t a = {ABFT_SITE_AFTER_GEMM, 0, 17, 101, (pi ? 1e-3 : 1e-11) * rms, 0};
            abft_set_hook(h, add1_fn, &a);
            abft_report_t rep;
            TU_CHECK_STATUS(run(h, &p, &rep), ABFT_STATUS_SUCCESS);
            abft_set_hook(h, NULL, NULL);
            seen[mode] = rep.detected > 0;
            if (mode == 1)
                TU_CHECK(rep.detected > 0 && (rep.corrected == 1 || rep.recomputed == 1),
                         "%c: tight mode: detected %lld corrected %lld recomputed %lld", prec,
                         (long long)rep.detected, (long long)rep.corrected,
                         (long long)rep.recomputed);
            release(&p);
        }
        printf("%c: a change of %s of the RMS: worst case %s, tight %s\n", prec,
               pi ? "1e-3" : "1e-11", seen[0] ? "detected" : "missed",
               seen[1] ? "detected" : "missed");
        TU_CHECK(!seen[0], "%c: the worst case saw it (the test's premise)", prec);
    }
    abft_set_bound_mode(h, ABFT_BOUND_TIGHT, 1.0);
}

/* 5. beta·C_old far above alpha·A·B with a long k: a BLAS that adds each block of k into C
 *    rounds every addition against the old C, and increments below its spacing round
 *    alike. Once flagged every row (found by review: m = 64, n = 8, k = 16384, fp32, C_old =
 *    1, A ~ 3e-4, B ~ 1e-4); the old C's share is now bounded linearly in k. */
static void test_big_old_c(abft_handle_t h, uint64_t seed) {
    tu_rng_t r;
    tu_rng_init(&r, seed + 11);
    const int64_t m = 64, n = 8, k = 16384;
    float *A = tu_alloc_s(m * k), *B = tu_alloc_s(k * n), *C = tu_alloc_s(m * n);
    double worst = 0.0;
    for (int rep = 0; rep < 4; ++rep) {
        for (int64_t i = 0; i < m * k; ++i) A[i] = (float)(3e-4 * tu_range(&r, 0.5, 1.5));
        for (int64_t i = 0; i < k * n; ++i) B[i] = (float)(1e-4 * tu_range(&r, 0.5, 1.5));
        for (int64_t i = 0; i < m * n; ++i) C[i] = rep % 2 ? 4.0f : 1.0f;
        abft_report_t rep_;
        abft_status_t st = abft_sgemm(h, ABFT_OP_N, ABFT_OP_N, m, n, k, 1.0f, A, m, B, k,
                                      rep % 2 ? 0.25f : 1.0f, C, m, &rep_);
        TU_CHECK(st == ABFT_STATUS_SUCCESS && rep_.detected == 0,
                 "large old C, rep %d: %s, flagged %lld, ratio %g", rep, abft_status_name(st),
                 (long long)rep_.detected, rep_.max_ratio);
        if (rep_.max_ratio > worst) worst = rep_.max_ratio;
    }
    printf("large old C, k = 16384: largest residual/bound %.3g\n", worst);
    free(A), free(B), free(C);
}

/* 6. Long sums of few values: fp32, k = 4096, rows of A drawn from 8 to 16 positive values
 *    (a different set per row), every column of B one positive value. The 16-term blocks'
 *    guard finds 8 or more values in a row's block and lets it through, yet sign-coherent
 *    products of so few values round alike over thousands of terms in a sum taken in order
 *    (measured up to twice the bound on single fp32 sums, bench/NOTES-bound.md; OpenBLAS's
 *    k-blocks restart its sums, so on the CPU the products stay within it anyway). The
 *    long-sum guard (a row and a column that both repeat their values 16 times on average)
 *    sends such rows to the worst case: checked on the pass itself, and no false alarm
 *    through the protected call. */
static void test_few_values(abft_handle_t h, uint64_t seed) {
    tu_rng_t r;
    tu_rng_init(&r, seed + 13);
    const int64_t m = 48, n = 8, k = 4096;
    float *A = tu_alloc_s(m * k), *B = tu_alloc_s(k * n), *C = tu_alloc_s(m * n);
    double worst = 0.0;
    int flagged = 0;
    for (int rep = 0; rep < 6; ++rep) {
        for (int64_t i = 0; i < m; ++i) {
            const int D = (int)tu_int(&r, 8, 16);
            double vals[16];
            const double base = tu_range(&r, 0.05, 0.15), width = tu_range(&r, 0.05, 0.25);
            for (int v = 0; v < D; ++v) vals[v] = base + width * tu_uniform(&r);
            for (int64_t l = 0; l < k; ++l) A[i + l * m] = (float)vals[tu_int(&r, 0, D - 1)];
        }
        for (int64_t j = 0; j < n; ++j) {
            const float c = (float)tu_range(&r, 0.5, 2.0);
            for (int64_t l = 0; l < k; ++l) B[l + j * k] = c;
        }
        /* the pass: every row to the worst case; and with one row made continuous, that
         * row kept */
        if (rep == 0) {
            for (int64_t l = 0; l < k; ++l) A[0 + l * m] = (float)tu_range(&r, 0.05, 0.4);
            double *yb = tu_alloc_d(2 * k), *T = tu_alloc_d(2 * m);
            for (int64_t l = 0; l < 2 * k; ++l) yb[l] = 1.0;
            abft_tight_args_t ta = {ABFT_PREC_S, 0, 0, m, n, k, A, m, B, k, yb, k, 1.0,
                                    0x1p-24, 0x1p-53, 12.5, T, m, NULL, 0, 0, {{0, 0}}};
            abft_kctx_t none;
            memset(&none, 0, sizeof none);
            TU_CHECK_STATUS(abft_cpu_tight(&none, &ta), ABFT_STATUS_SUCCESS);
            int sent = 0;
            for (int64_t i = 1; i < m; ++i) sent += T[i] < 0.0;
            TU_CHECK(sent == m - 1 && T[0] >= 0.0,
                     "few values: %d of %lld rows sent to the worst case, row 0 (continuous) "
                     "T = %g", sent, (long long)(m - 1), T[0]);
            free(yb), free(T);
        }
        abft_report_t rep_;
        abft_status_t st = abft_sgemm(h, ABFT_OP_N, ABFT_OP_N, m, n, k, 1.0f, A, m, B, k, 0.0f, C,
                                      m, &rep_);
        TU_CHECK(st == ABFT_STATUS_SUCCESS && rep_.detected == 0,
                 "few values, rep %d: %s, flagged %lld, ratio %g", rep, abft_status_name(st),
                 (long long)rep_.detected, rep_.max_ratio);
        flagged += rep_.detected != 0;
        if (rep_.max_ratio > worst) worst = rep_.max_ratio;
    }
    printf("few values, k = 4096: largest residual/bound %.3g\n", worst);
    free(A), free(B), free(C);
}

/* 4. the mode's name and range */
static void test_api(abft_handle_t h) {
    TU_CHECK(strcmp(abft_bound_mode_name(ABFT_BOUND_TIGHT), "tight") == 0, "name %s",
             abft_bound_mode_name(ABFT_BOUND_TIGHT));
    TU_CHECK_STATUS(abft_set_bound_mode(h, ABFT_BOUND_TIGHT, 2.0), ABFT_STATUS_SUCCESS);
    abft_bound_mode_t m;
    double f;
    TU_CHECK_STATUS(abft_get_bound_mode(h, &m, &f), ABFT_STATUS_SUCCESS);
    TU_CHECK(m == ABFT_BOUND_TIGHT && f == 2.0, "got mode %d factor %g", (int)m, f);
    TU_CHECK_STATUS(abft_set_bound_mode(h, (abft_bound_mode_t)3, 1.0), ABFT_STATUS_INVALID_VALUE);
    TU_CHECK(abft_last_invalid_argument() == 2, "position %d", abft_last_invalid_argument());
    TU_CHECK_STATUS(abft_set_bound_mode(h, ABFT_BOUND_TIGHT, 1.0), ABFT_STATUS_SUCCESS);
}

/* The rules the backends share: how checksums are summed per backend and precision, what
 * that does to the bound's second-order coefficients, and when the CUDA pass's shared-memory
 * tables hold a shape (abft_tight_tables_fit, checked here on the host at an H100's 227 KiB
 * per block: 13 bytes a column for the class table, 8·2^ceil(log2(2·(k/16 + 256))) bytes
 * for the long-sum guard's, which runs in fp32 beyond k = 1024 only). */
static void test_rules(abft_handle_t h) {
    TU_CHECK(abft_bound_tight_comp(ABFT_BACKEND_CPU, ABFT_PREC_D) == ABFT_TIGHT_COMP_SEQ &&
                 abft_bound_tight_comp(ABFT_BACKEND_CPU, ABFT_PREC_S) == ABFT_TIGHT_COMP_SEQ &&
                 abft_bound_tight_comp(ABFT_BACKEND_CUDA, ABFT_PREC_D) == ABFT_TIGHT_COMP_TREE &&
                 abft_bound_tight_comp(ABFT_BACKEND_CUDA, ABFT_PREC_S) == ABFT_TIGHT_COMP_PLAIN,
             "abft_bound_tight_comp");
    abft_arith_t g = abft_arith_native(ABFT_PREC_D);
    abft_gemm_tight_t t[3];
    for (int c = 0; c < 3; ++c) abft_bound_gemm_tight(h, &g, 4096, 4096, 4096, c, &t[c]);
    /* compensated: second order (gamma^2 ~ (n·u)^2), in a tree with twice the terms; plain:
     * the worst case's first-order gamma_n */
    TU_CHECK(t[ABFT_TIGHT_COMP_SEQ].coef_s < t[ABFT_TIGHT_COMP_TREE].coef_s &&
                 t[ABFT_TIGHT_COMP_TREE].coef_s <= 4.5 * t[ABFT_TIGHT_COMP_SEQ].coef_s &&
                 t[ABFT_TIGHT_COMP_TREE].coef_s < 1e-20 && t[ABFT_TIGHT_COMP_PLAIN].coef_s > 1e-13,
             "coef_s plain %g seq %g tree %g", t[0].coef_s, t[1].coef_s, t[2].coef_s);
    TU_CHECK(t[ABFT_TIGHT_COMP_SEQ].coef_r < t[ABFT_TIGHT_COMP_TREE].coef_r &&
                 t[ABFT_TIGHT_COMP_TREE].coef_r < t[ABFT_TIGHT_COMP_PLAIN].coef_r,
             "coef_r plain %g seq %g tree %g", t[0].coef_r, t[1].coef_r, t[2].coef_r);
    const size_t h100 = 232448;
    const double us = 0x1p-24, ud = 0x1p-53;
    TU_CHECK(abft_tight_tables_fit(17880, 1024, us, h100) && !abft_tight_tables_fit(17881, 1024, us, h100),
             "class table: 17880 columns fit 227 KiB, 17881 do not");
    TU_CHECK(abft_tight_tables_fit(100, 126991, us, h100) && !abft_tight_tables_fit(100, 126992, us, h100),
             "long-sum table: fp32 k = 126991 fits, 126992 does not");
    TU_CHECK(abft_tight_tables_fit(100, 1 << 20, ud, h100), "fp64: no long-sum table below k = 2^39");
    TU_CHECK(abft_tight_tables_fit(100, 1024, us, 48 * 1024) && !abft_tight_tables_fit(100, 65536, us, 48 * 1024),
             "48 KiB: fp32 k = 65536 needs 128 KiB");
}

/* 7. Terms below a partial sum's rounding spacing, and sums that cancel only in the natural
 *    order. fp32, m = 32, n = 512, B in [0.5, 1]. (a) Rows of A: a first entry 1, then
 *    k - 1 entries eps·U(0, 1): every later product is absorbed by (or rounds one step
 *    against) the dominant partial sum, an error of one sign per term that the model of
 *    independent roundings does not see (before the small-term allowance: every row
 *    flagged, ratio up to 11). (b) Pairs (+1, -1) at l = q - 1, q for every multiple q of 64,
 *    rows q - 1 and q of B equal, the rest of A eps·U(0, 1): the natural order's partial
 *    sums return to the small terms' after each pair, but a BLAS whose k-blocks start at q
 *    sums the small terms onto -1 (OpenBLAS's sgemm blocks are 320 here; before the block-
 *    safe node terms and the allowance: flagged, ratio up to 7.5 at k = 16384). */
static void test_small_terms(abft_handle_t h, uint64_t seed) {
    tu_rng_t r;
    tu_rng_init(&r, seed + 17);
    const int64_t m = 32, n = 512;
    const double eps[3] = {1e-7, 3e-8, 1e-8};
    double worst = 0.0;
    for (int c = 0; c < 6; ++c) {
        const int pairs = c >= 3;
        const int64_t k = pairs ? 16384 : 1024;
        float *A = tu_alloc_s(m * k), *B = tu_alloc_s(k * n), *C = tu_alloc_s(m * n);
        for (int64_t l = 0; l < k; ++l)
            for (int64_t i = 0; i < m; ++i)
                A[i + l * m] = (float)(!pairs && l == 0 ? 1.0 : eps[c % 3] * tu_range(&r, 0.0, 1.0));
        for (int64_t i = 0; i < k * n; ++i) B[i] = (float)tu_range(&r, 0.5, 1.0);
        for (int64_t q = 64; pairs && q < k; q += 64) {
            for (int64_t i = 0; i < m; ++i) A[i + (q - 1) * m] = 1.0f, A[i + q * m] = -1.0f;
            for (int64_t j = 0; j < n; ++j) B[q + j * k] = B[q - 1 + j * k];
        }
        abft_report_t rep_;
        abft_status_t st = abft_sgemm(h, ABFT_OP_N, ABFT_OP_N, m, n, k, 1.0f, A, m, B, k, 0.0f,
                                      C, m, &rep_);
        TU_CHECK(st == ABFT_STATUS_SUCCESS && rep_.detected == 0,
                 "small terms, %s, eps %g: %s, flagged %lld, ratio %g",
                 pairs ? "cancelling pairs" : "dominant first term", eps[c % 3],
                 abft_status_name(st), (long long)rep_.detected, rep_.max_ratio);
        if (rep_.max_ratio > worst) worst = rep_.max_ratio;
        free(A), free(B), free(C);
    }
    printf("small terms below the sums' spacing: largest residual/bound %.3g\n", worst);
}

/* Small terms of mixed sign whose errors share one sign: a first term fixes each column's
 * running sum (1 or -2: spacings 2^-23 and 2^-22), then products of about 0.75·2^-23 that
 * round up where the sum is 1 and are absorbed where it is -2 (errors +0.25 and +0.75 of
 * 2^-23, while their signed sum cancels over each pair of columns); or, along l, tails
 * alternating +0.56 and -0.42 spacings (rounding up, absorbed: both err upwards). A signed
 * estimate of the small terms let these through (residual/bound 1.3 to 4); the protocol's
 * per-entry allowance bounds them: none may be flagged. The columns' largest entries are
 * made equal (a 2 in the last row of op(B)) in half the cases, so that no table by
 * |b|/max|b| separates the two kinds of column. */
static void test_mixed_tails(abft_handle_t h, uint64_t seed) {
    tu_rng_t r;
    tu_rng_init(&r, seed + 23);
    abft_set_bound_mode(h, ABFT_BOUND_TIGHT, 1.0);
    const int64_t m = 16, n = 64;
    double worst = 0.0;
    for (int c = 0; c < 8; ++c) {
        const int64_t k = c & 1 ? 4096 : 1024;
        const int along = c & 2, equal = c & 4;
        const double cc = 0x1p-10, beta = (along ? 1.0 : 0.75) * 0x1p-23 / cc;
        float *A = tu_alloc_s(m * k), *B = tu_alloc_s(k * n), *C = tu_alloc_s(m * n);
        for (int64_t l = 0; l < k; ++l)
            for (int64_t i = 0; i < m; ++i)
                A[i + l * m] = (float)(l == 0 ? 1.0 : cc * tu_range(&r, along ? 0.95 : 0.8, 1.2));
        for (int64_t j = 0; j < n; ++j)
            for (int64_t l = 0; l < k; ++l) {
                const int neg = !along && j % 2;
                double v;
                if (l == 0)
                    v = neg ? -2.0 : 1.0;
                else if (along)
                    v = beta * (l % 2 ? tu_range(&r, 0.54, 0.58) : -tu_range(&r, 0.40, 0.44));
                else
                    v = (neg ? -beta : beta) * tu_range(&r, 0.97, 1.03);
                if (equal && l == k - 1) v = neg ? -2.0 : 2.0;
                B[l + j * k] = (float)v;
            }
        abft_report_t rep_;
        abft_status_t st = abft_sgemm(h, ABFT_OP_N, ABFT_OP_N, m, n, k, 1.0f, A, m, B, k, 0.0f,
                                      C, m, &rep_);
        TU_CHECK(st == ABFT_STATUS_SUCCESS && rep_.detected == 0,
                 "mixed-sign small terms, k %lld, %s%s: %s, flagged %lld, ratio %g",
                 (long long)k, along ? "alternating along l" : "by column",
                 equal ? ", equal column maxima" : "", abft_status_name(st),
                 (long long)rep_.detected, rep_.max_ratio);
        if (rep_.max_ratio > worst) worst = rep_.max_ratio;
        free(A), free(B), free(C);
    }
    printf("mixed-sign small terms: largest residual/bound %.3g\n", worst);
}

/* C after the GEMM replaced by one row (n values) in every row: what the checks see no
 * longer depends on how the BLAS ordered its sums for each row. */
static abft_status_t put_row(void *user, abft_hook_site_t site, int which, char prec, void *ptr,
                             int64_t rows, int64_t cols, int64_t ld) {
    const double *crow = (const double *)user;
    (void)which;
    if (site != ABFT_SITE_AFTER_GEMM) return ABFT_STATUS_SUCCESS;
    for (int64_t j = 0; j < cols; ++j)
        for (int64_t i = 0; i < rows; ++i) {
            if (prec == 'd')
                ((double *)ptr)[i + j * ld] = crow[j];
            else
                ((float *)ptr)[i + j * ld] = (float)crow[j];
        }
    return ABFT_STATUS_SUCCESS;
}

/* The per-entry allowance computed for many flagged rows at once (the other operand fetched
 * once, the rows in parallel) equals the one computed row by row: a product of m equal rows,
 * each absorbing its small terms (so every row is flagged against the pass's bound and
 * refined), with C set to one sequential sum per column in every row, reports the same
 * largest ratio for m = 2 (row by row) and m = 12 (at once), both precisions, op(A) = A and
 * A^T. */
static void test_small_batch(abft_handle_t h, uint64_t seed) {
    tu_rng_t r;
    tu_rng_init(&r, seed + 29);
    abft_set_bound_mode(h, ABFT_BOUND_TIGHT, 1.0);
    const int64_t n = 96, k = 700;
    for (int c = 0; c < 4; ++c) {
        const int dp = c & 1, ta = c >> 1;
        const double eps = dp ? 1e-17 : 3e-8;
        double *row = tu_alloc_d(k), *Bd = tu_alloc_d(k * n), *crow = tu_alloc_d(n);
        for (int64_t l = 0; l < k; ++l) row[l] = l == 0 ? 1.0 : eps * tu_range(&r, 0.0, 1.0);
        for (int64_t i = 0; i < k * n; ++i) Bd[i] = tu_range(&r, 0.5, 1.0);
        if (!dp)
            for (int64_t l = 0; l < k; ++l) row[l] = (float)row[l];
        if (!dp)
            for (int64_t i = 0; i < k * n; ++i) Bd[i] = (float)Bd[i];
        for (int64_t j = 0; j < n; ++j) { /* in the data's precision, in order */
            double sd = 0.0;
            float sf = 0.0f;
            for (int64_t l = 0; l < k; ++l) {
                if (dp)
                    sd = fma(row[l], Bd[l + j * k], sd);
                else
                    sf = fmaf((float)row[l], (float)Bd[l + j * k], sf);
            }
            crow[j] = dp ? sd : (double)sf;
        }
        double ratio[2] = {0.0, 0.0};
        abft_set_hook(h, put_row, crow);
        for (int v = 0; v < 2; ++v) {
            const int64_t m = v ? 12 : 2, lda = ta ? k : m;
            double *A = tu_alloc_d(m * k), *C = tu_alloc_d(m * n);
            for (int64_t i = 0; i < m; ++i)
                for (int64_t l = 0; l < k; ++l) A[ta ? l + i * lda : i + l * lda] = row[l];
            abft_report_t rep_;
            abft_status_t st;
            if (dp) {
                st = abft_dgemm(h, ta ? ABFT_OP_T : ABFT_OP_N, ABFT_OP_N, m, n, k, 1.0, A, lda, Bd,
                                k, 0.0, C, m, &rep_);
            } else {
                float *As = tu_alloc_s(m * k), *Bs = tu_alloc_s(k * n), *Cs = tu_alloc_s(m * n);
                for (int64_t i = 0; i < m * k; ++i) As[i] = (float)A[i];
                for (int64_t i = 0; i < k * n; ++i) Bs[i] = (float)Bd[i];
                st = abft_sgemm(h, ta ? ABFT_OP_T : ABFT_OP_N, ABFT_OP_N, m, n, k, 1.0f, As, lda,
                                Bs, k, 0.0f, Cs, m, &rep_);
                free(As), free(Bs), free(Cs);
            }
            TU_CHECK(st == ABFT_STATUS_SUCCESS && rep_.detected == 0,
                     "equal rows, fp%d, m %lld: %s, flagged %lld, ratio %g", dp ? 64 : 32,
                     (long long)m, abft_status_name(st), (long long)rep_.detected, rep_.max_ratio);
            ratio[v] = rep_.max_ratio;
            free(A), free(C);
        }
        abft_set_hook(h, NULL, NULL);
        TU_CHECK(ratio[0] == ratio[1] && ratio[0] > 0.0,
                 "equal rows, fp%d, transa %d: ratio %.17g for 2 rows, %.17g for 12", dp ? 64 : 32,
                 ta, ratio[0], ratio[1]);
        free(row), free(Bd), free(crow);
    }
    printf("small terms, 2 and 12 equal rows: equal ratios\n");
}

/* A plan verified without its inputs (A, B NULL) in the tight mode cannot bound a flagged
 * entry's small terms from them: that entry's bound falls back to the worst case, so a
 * change the worst case sees is still detected (a review found a bound of the whole |x| sum
 * letting a change of 5 times the element pass). */
static void test_verify_without_inputs(uint64_t seed) {
    tu_rng_t r;
    tu_rng_init(&r, seed + 31);
    const int64_t m = 64, n = 64, k = 256;
    float *A = tu_alloc_s(m * k), *B = tu_alloc_s(k * n), *C = tu_alloc_s(m * n);
    for (int64_t i = 0; i < m * k; ++i) A[i] = (float)tu_range(&r, 0.0, 1.0);
    for (int64_t i = 0; i < k * n; ++i) B[i] = (float)tu_range(&r, 0.0, 1.0);
    for (int mode = 0; mode < 2; ++mode) {
        abft_handle_t h;
        TU_CHECK_STATUS(abft_create(&h, ABFT_BACKEND_CPU), ABFT_STATUS_SUCCESS);
        abft_set_bound_mode(h, mode ? ABFT_BOUND_TIGHT : ABFT_BOUND_WORST_CASE, 1.0);
        abft_gemm_plan_t p;
        TU_CHECK_STATUS(abft_gemm_plan_create(h, 's', ABFT_OP_N, ABFT_OP_N, m, n, k, 1.0, 0.0, &p),
                        ABFT_STATUS_SUCCESS);
        TU_CHECK_STATUS(abft_sgemm_encode(h, p, A, m, B, k, NULL, m), ABFT_STATUS_SUCCESS);
        for (int64_t j = 0; j < n; ++j)
            for (int64_t i = 0; i < m; ++i) {
                float acc = 0.0f;
                for (int64_t l = 0; l < k; ++l) acc = fmaf(A[i + l * m], B[l + j * k], acc);
                C[i + j * m] = acc;
            }
        const int64_t i0 = (int64_t)tu_int(&r, 0, m - 1), j0 = (int64_t)tu_int(&r, 0, n - 1);
        C[i0 + j0 * m] *= 6.0f;
        abft_report_t rep_;
        abft_status_t st = abft_sgemm_verify(h, p, NULL, m, NULL, k, C, m, &rep_);
        TU_CHECK(st == ABFT_STATUS_SUCCESS && rep_.detected >= 1,
                 "%s, verify without inputs, element (%lld, %lld) times 6: %s, detected %lld, ratio %g",
                 mode ? "tight" : "worst case", (long long)i0, (long long)j0, abft_status_name(st),
                 (long long)rep_.detected, rep_.max_ratio);
        abft_gemm_plan_destroy(p);
        abft_destroy(h);
    }
    free(A), free(B), free(C);
    printf("verify without inputs: a change of 5 times an element detected in both modes\n");
}

/* Products that cancel in the natural order but not in a sliced one, with small terms that
 * a slice's large sum absorbs (a review's construction against OpenBLAS's small-matrix
 * kernels, which sum k in two interleaved lanes; docs/bound.md, "Where the model fails"):
 * pairs (+1, -1) at l = 64q, 64q + 1 in the first half of k against equal entries of B
 * (each pair cancels exactly in order, while the even lane gathers the +1 terms and the
 * odd lane the -1 terms), then small positive terms of 2^-20 at those positions in the
 * second half. In order the small terms survive; in lanes they vanish in sums of about
 * k/170. The same data dealt in cuBLAS's fp32 split-k order (four slices taking tiles of
 * 8 in turn; pairs at l = 8(4q) + 7, 8(4q + 1)) exercise its class. Every product must
 * pass, at tiny m·n (OpenBLAS's small kernels) and at 64 x 64. */
static void test_sliced_orders(abft_handle_t h, uint64_t seed) {
    tu_rng_t r;
    tu_rng_init(&r, seed + 41);
    abft_set_bound_mode(h, ABFT_BOUND_TIGHT, 1.0);
    static const int64_t shapes[4][2] = {{1, 1}, {3, 5}, {1, 16}, {64, 64}};
    double worst = 0.0;
    int count = 0;
    for (int order = 0; order < 2; ++order)
        for (int sh = 0; sh < 4; ++sh) {
            const int64_t m = shapes[sh][0], n = shapes[sh][1], k = 16384;
            float *A = tu_alloc_s(m * k), *B = tu_alloc_s(k * n), *C = tu_alloc_s(m * n);
            for (int64_t l = 0; l < k; ++l) {
                /* first/second member of a pair at l: lanes l % 64 = 0, 1; split-k tiles of
                 * 8 in 4 slices: the last term of tile 4q + 3 and the first of tile 4q + 4
                 * fall in slices 3 and 0 */
                const int first = order == 0 ? l % 64 == 0 : l % 32 == 31;
                const int second = order == 0 ? l % 64 == 1 : l % 32 == 0 && l > 0;
                for (int64_t i = 0; i < m; ++i) {
                    double v = 0.0;
                    if (l < k / 2) v = first ? 1.0 : second ? -1.0 : 0.0;
                    else if (first || second) v = 0x1p-20 * tu_range(&r, 0.5, 1.0);
                    A[i + l * m] = (float)v;
                }
            }
            for (int64_t j = 0; j < n; ++j)
                for (int64_t l = 0; l < k; ++l) {
                    const int second = order == 0 ? l % 64 == 1 : l % 32 == 0 && l > 0;
                    B[l + j * k] = second ? B[l - 1 + j * k] : (float)tu_range(&r, 0.5, 1.0);
                }
            abft_report_t rep_;
            abft_status_t st = abft_sgemm(h, ABFT_OP_N, ABFT_OP_N, m, n, k, 1.0f, A, m, B, k,
                                          0.0f, C, m, &rep_);
            TU_CHECK(st == ABFT_STATUS_SUCCESS && rep_.detected == 0,
                     "sliced order %d, %lld x %lld x %lld: status %s, detected %lld, ratio %g",
                     order, (long long)m, (long long)n, (long long)k, abft_status_name(st),
                     (long long)rep_.detected, rep_.max_ratio);
            worst = fmax(worst, rep_.max_ratio);
            ++count;
            free(A), free(B), free(C);
        }
    printf("pairs that cancel in order, not in lanes or split-k slices: %d fp32 products, "
           "largest residual/bound %.3g\n", count, worst);
}

/* Signs alternating along l (item 3b, lane orders): a row of A of +-(0.5 + 0.5·U), its sign
 * flipping after every T terms, against B of 0.5 + 0.5·U. In the natural order the partial
 * sums stay within about T terms; a host BLAS whose dot kernels deal the terms to 8 or 16
 * lanes (OpenBLAS on this project's CPU machine, at these small shapes) gathers one sign per lane
 * for T = 1, 2, 4 (and 8 with 16 lanes), and its rounding errors grow with the lanes' sums.
 * Before the pass bounded the lane orders, these clean products were flagged at 1.1 to 2.5
 * times the bound (fp64 and fp32, 1 x 1 to 4 x 4 x 16384). Both precisions, both weights,
 * the library's split (a hook set) and not. */
static abft_status_t noop_hook(void *user, abft_hook_site_t site, int which, char prec,
                               void *ptr, int64_t rows, int64_t cols, int64_t ld) {
    (void)user, (void)site, (void)which, (void)prec, (void)ptr, (void)rows, (void)cols, (void)ld;
    return ABFT_STATUS_SUCCESS;
}
static void test_lane_orders(abft_handle_t h, uint64_t seed) {
    tu_rng_t r;
    tu_rng_init(&r, seed + 43);
    abft_set_bound_mode(h, ABFT_BOUND_TIGHT, 1.0);
    static const int64_t shapes[5][3] = {{1, 1, 16384}, {2, 2, 16384}, {4, 4, 16384},
                                         {3, 5, 16384}, {1, 16, 8192}};
    static const int64_t periods[4] = {1, 2, 4, 8};
    double worst = 0.0;
    int count = 0;
    for (int dp = 0; dp < 2; ++dp)
        for (int sh = 0; sh < 5; ++sh)
            for (int p = 0; p < 4; ++p) {
                const int64_t m = shapes[sh][0], n = shapes[sh][1], k = shapes[sh][2];
                const int64_t T = periods[p];
                double *A = tu_alloc_d(m * k), *B = tu_alloc_d(k * n), *C = tu_alloc_d(m * n);
                for (int64_t l = 0; l < k; ++l)
                    for (int64_t i = 0; i < m; ++i)
                        A[i + l * m] = ((l / T) % 2 ? -1.0 : 1.0) * tu_range(&r, 0.5, 1.0);
                for (int64_t x = 0; x < k * n; ++x) B[x] = tu_range(&r, 0.5, 1.0);
                abft_report_t rep_;
                abft_status_t st;
                if ((sh + p) % 2) abft_set_hook(h, noop_hook, NULL); /* the split at k / 2 */
                if (dp) {
                    st = abft_dgemm(h, ABFT_OP_N, ABFT_OP_N, m, n, k, 1.0, A, m, B, k, 0.0, C, m,
                                    &rep_);
                } else {
                    float *As = tu_alloc_s(m * k), *Bs = tu_alloc_s(k * n), *Cs = tu_alloc_s(m * n);
                    for (int64_t x = 0; x < m * k; ++x) As[x] = (float)A[x];
                    for (int64_t x = 0; x < k * n; ++x) Bs[x] = (float)B[x];
                    st = abft_sgemm(h, ABFT_OP_N, ABFT_OP_N, m, n, k, 1.0f, As, m, Bs, k, 0.0f, Cs,
                                    m, &rep_);
                    free(As), free(Bs), free(Cs);
                }
                abft_set_hook(h, NULL, NULL);
                TU_CHECK(st == ABFT_STATUS_SUCCESS && rep_.detected == 0,
                         "signs alternating every %lld terms, %s %lld x %lld x %lld: status %s, "
                         "detected %lld, ratio %g", (long long)T, dp ? "fp64" : "fp32",
                         (long long)m, (long long)n, (long long)k, abft_status_name(st),
                         (long long)rep_.detected, rep_.max_ratio);
                worst = fmax(worst, rep_.max_ratio);
                ++count;
                free(A), free(B), free(C);
            }
    printf("signs alternating along k (lane orders): %d products, largest residual/bound %.3g\n",
           count, worst);
    /* small terms absorbed by a lane's large sum (a review's construction): a head of L terms
     * of A signed + - - + (magnitudes U(1, 2)) whose sum cancels in order and in 2 lanes but
     * not in 16, then a tail of A in U(lo, hi) that the 16 lanes' sums absorb; B in
     * U(0.5, 1), then U(0.9, 1). The small-terms allowance took the natural order, 2 lanes
     * and 4 slices of 8-term tiles only: flagged at 1.11 to 1.46 (fp32, OpenBLAS's 16
     * lanes); it takes the backend's lane orders too now. */
    static const double heads[3][4] = {{32768, 2400, 4.2e-6, 7.5e-6},
                                       {24576, 2400, 4.2e-6, 7.5e-6},
                                       {32768, 2000, 4e-6, 7e-6}};
    static const int pat[4] = {1, -1, -1, 1};
    double worst2 = 0.0;
    for (int c = 0; c < 3; ++c) {
        const int64_t k = (int64_t)heads[c][0], L = (int64_t)heads[c][1];
        float *A = tu_alloc_s(k), *B = tu_alloc_s(k), C[1] = {0.0f};
        for (int64_t l = 0; l < k; ++l) {
            B[l] = (float)(l < L ? tu_range(&r, 0.5, 1.0) : tu_range(&r, 0.9, 1.0));
            A[l] = (float)(l < L ? pat[l % 4] * tu_range(&r, 1.0, 2.0)
                                 : tu_range(&r, heads[c][2], heads[c][3]));
        }
        abft_report_t rep_;
        abft_status_t st = abft_sgemm(h, ABFT_OP_N, ABFT_OP_N, 1, 1, k, 1.0f, A, 1, B, k, 0.0f,
                                      C, 1, &rep_);
        TU_CHECK(st == ABFT_STATUS_SUCCESS && rep_.detected == 0,
                 "small terms absorbed in lanes, 1 x 1 x %lld, head %lld: status %s, detected "
                 "%lld, ratio %g", (long long)k, (long long)L, abft_status_name(st),
                 (long long)rep_.detected, rep_.max_ratio);
        worst2 = fmax(worst2, rep_.max_ratio);
        free(A), free(B);
    }
    printf("small terms absorbed in lanes: 3 products, largest residual/bound %.3g\n", worst2);
}

typedef struct two_err {
    int64_t i, j1, j2;
    double d1, d2;
} two_err_t;
static abft_status_t add_two(void *user, abft_hook_site_t site, int which, char prec, void *ptr,
                             int64_t rows, int64_t cols, int64_t ld) {
    const two_err_t *e = (const two_err_t *)user;
    (void)which, (void)rows, (void)cols, (void)prec;
    if (site != ABFT_SITE_AFTER_GEMM) return ABFT_STATUS_SUCCESS;
    double *C = (double *)ptr;
    C[e->i + e->j1 * ld] += e->d1;
    if (e->d2 != 0.0) C[e->i + e->j2 * ld] += e->d2;
    return ABFT_STATUS_SUCCESS;
}

/* No correction by the crossing checksum alone, in any bound mode (a review's construction):
 * full checksums, beta = 1 (no recomputation), row i of A at scale 1 and the other rows at
 * scale S (the columns' bounds and real errors about S times row i's), a large error in
 * (i, j1) and a second one of 2 to 20 times row i's bound in (i, j2). Row i's value for
 * (i, j1) absorbs the second error; column j1's carries its own rounding, which can cancel
 * most of it, so the two could agree within the smaller noise and the second error stay in
 * row i unreported. In the tight mode S = 100 reached it; in the worst-case and probabilistic
 * modes (bounds far above the real errors) S = 1e5 did, leaving up to 8 and 17 times row i's
 * bound. With nothing to recompute nothing may be written: every trial must leave C exactly
 * as the GEMM and the two errors made it, report nothing corrected, and report row i
 * uncorrectable. */
static void cross_case(uint64_t seed, abft_bound_mode_t mode, double param, double S,
                       double cmax) {
    tu_rng_t r;
    tu_rng_init(&r, seed + 37);
    const int64_t m = 96, n = 80, k = 112, i = 5;
    double *A = tu_alloc_d(m * k), *B = tu_alloc_d(k * n), *G = tu_alloc_d(m * n), *C = tu_alloc_d(m * n);
    for (int64_t l = 0; l < k; ++l)
        for (int64_t x = 0; x < m; ++x) A[x + l * m] = tu_range(&r, -1.0, 1.0) * (x == i ? 1.0 : S);
    for (int64_t x = 0; x < k * n; ++x) B[x] = tu_range(&r, -1.0, 1.0);
    abft_handle_t h;
    TU_CHECK_STATUS(abft_create(&h, ABFT_BACKEND_CPU), ABFT_STATUS_SUCCESS);
    abft_set_checksum_kind(h, ABFT_CHECKSUM_FULL);
    TU_CHECK_STATUS(abft_set_bound_mode(h, mode, param), ABFT_STATUS_SUCCESS);
    abft_report_t rep_;
    /* the golden result through the same split GEMM as the faulty calls (a hook set: the
     * GEMM runs in two halves along k), with errors of zero */
    two_err_t e = {i, 0, 0, 0.0, 0.0};
    abft_set_hook(h, add_two, &e);
    memset(G, 0, sizeof(double) * (size_t)(m * n));
    TU_CHECK_STATUS(abft_dgemm(h, ABFT_OP_N, ABFT_OP_N, m, n, k, 1.0, A, m, B, k, 1.0, G, m, &rep_),
                    ABFT_STATUS_SUCCESS);
    TU_CHECK(rep_.detected == 0, "cross, %s mode: the clean product flagged",
             abft_bound_mode_name(mode));
    double rms = 0.0;
    for (int64_t j = 0; j < n; ++j) rms += G[i + j * m] * G[i + j * m];
    rms = sqrt(rms / (double)n);
    /* row i's bound: one change of 1e-9 of the RMS in (i, 0), against its ratio */
    e.d1 = 1e-9 * rms;
    memset(C, 0, sizeof(double) * (size_t)(m * n));
    abft_dgemm(h, ABFT_OP_N, ABFT_OP_N, m, n, k, 1.0, A, m, B, k, 1.0, C, m, &rep_);
    TU_CHECK(rep_.max_ratio > 1.0, "cross, %s mode: the probe change of row %lld not seen "
             "(ratio %g)", abft_bound_mode_name(mode), (long long)i, rep_.max_ratio);
    const double tau = e.d1 / rep_.max_ratio;
    int bad = 0, trials = 0;
    static const int64_t pairs[4][2] = {{78, 79}, {70, 71}, {10, 60}, {40, 3}};
    e.d1 = 1e-3 * rms;
    for (int pr = 0; pr < 4; ++pr)
    for (double c = -cmax; c <= cmax; c += 0.25) {
        if (fabs(c) < 2.0) continue;
        e.j1 = pairs[pr][0], e.j2 = pairs[pr][1];
        e.d2 = c * tau;
        memset(C, 0, sizeof(double) * (size_t)(m * n));
        abft_status_t st = abft_dgemm(h, ABFT_OP_N, ABFT_OP_N, m, n, k, 1.0, A, m, B, k, 1.0, C, m, &rep_);
        ++trials;
        /* nothing written: C is the GEMM's result with the two errors, exactly (the hook
         * adds them to the GEMM's own C, which equals G: the same split call, the same data) */
        int intact = 1;
        for (int64_t x = 0; x < m * n; ++x) {
            const int64_t r = x % m, q = x / m;
            double want = G[x];
            if (r == i && q == e.j1) want += e.d1;
            if (r == i && q == e.j2) want += e.d2;
            if (C[x] != want) intact = 0;
        }
        int row_reported = 0;
        for (int64_t f = 0; f < rep_.nfaults; ++f)
            if (rep_.faults[f].side == 0 && rep_.faults[f].row == i &&
                rep_.faults[f].action == ABFT_ACTION_UNCORRECTABLE)
                row_reported = 1;
        if (st != ABFT_STATUS_SUCCESS || rep_.corrected != 0 || !intact || !row_reported) {
            if (bad == 0)
                fprintf(stderr, "  %s, d2 = %.2f of row %lld's bound, columns %lld and %lld: "
                        "status %s, corrected %lld, C %s, row %s\n", abft_bound_mode_name(mode),
                        c, (long long)i, (long long)e.j1, (long long)e.j2, abft_status_name(st),
                        (long long)rep_.corrected, intact ? "intact" : "written",
                        row_reported ? "reported" : "not reported");
            ++bad;
        }
    }
    TU_CHECK(bad == 0, "two errors in one row, %s mode, scale %g, no recomputation: %d of %d "
             "trials wrote into C or left row %lld unreported", abft_bound_mode_name(mode), S,
             bad, trials, (long long)i);
    abft_destroy(h);
    free(A), free(B), free(G), free(C);
    printf("two errors in one row, %s mode, scale %g, no recomputation: %d trials, nothing "
           "written, row %lld reported in each\n", abft_bound_mode_name(mode), S, trials,
           (long long)i);
}

static void test_no_cross(uint64_t seed) {
    cross_case(seed, ABFT_BOUND_TIGHT, 1.0, 100.0, 3.5);
    cross_case(seed, ABFT_BOUND_WORST_CASE, 1.0, 1e5, 20.0);
    cross_case(seed, ABFT_BOUND_PROBABILISTIC, 4.0, 1e5, 20.0);
}

/* 14. Never looser than the worst case, entry by entry: a change the worst case detects,
 *     the tight mode detects too. Found by review (fp32 4 x 8 x 1, A = {0.25, 0.5, 0.75, 1},
 *     B_j = ±(0.5 + 0.125 j)): a change of 4e-6 to C(0, 3) passed the tight mode where the
 *     worst case found 1e-6 (the small terms' allowance raised the tight bound above it).
 *     Then small random shapes, alpha and beta, changes of every size around the bounds. */
static int detects_change(abft_handle_t h, abft_bound_mode_t mode, prob_t *p, const double *C0,
                          const float *Cs0, int64_t i, int64_t j, double delta) {
    abft_set_bound_mode(h, mode, 1.0);
    if (p->prec == 'd') memcpy(p->C, C0, sizeof(double) * (size_t)(p->ldc * p->n));
    else memcpy(p->Cs, Cs0, sizeof(float) * (size_t)(p->ldc * p->n));
    add1_t a = {ABFT_SITE_AFTER_GEMM, 0, i, j, delta, 0};
    abft_set_hook(h, add1_fn, &a);
    abft_report_t rep;
    TU_CHECK_STATUS(run(h, p, &rep), ABFT_STATUS_SUCCESS);
    abft_set_hook(h, NULL, NULL);
    return rep.detected > 0;
}

static void test_never_looser(abft_handle_t h, uint64_t seed) {
    prob_t p;
    tu_rng_t r;
    tu_rng_init(&r, seed + 14);
    int review_tight = 0, review_wc = 0, bad = 0, both = 0, trials = 0;
    for (int t = 0; t < 400; ++t) {
        const int review = t == 0;
        const char prec = review || t % 2 ? 's' : 'd';
        const int64_t m = review ? 4 : tu_int(&r, 1, 8);
        const int64_t n = review ? 8 : tu_int(&r, 1, 8);
        const int64_t k = review ? 1 : tu_int(&r, 1, 12);
        const double alpha = review ? 1.0 : tu_range(&r, -2.0, 2.0);
        const double beta = review || t % 3 ? 0.0 : tu_range(&r, -1.0, 1.0);
        make(&p, &r, prec, review ? KIND_UNIFORM : (int)tu_int(&r, 0, KIND_COUNT - 1), m, n, k,
             review ? 0 : (int)tu_int(&r, 0, 1), review ? 0 : (int)tu_int(&r, 0, 1),
             review ? 0 : tu_int(&r, 0, 2), alpha, beta);
        if (review) {
            const float av[4] = {0.25f, 0.5f, 0.75f, 1.0f};
            for (int i = 0; i < 4; ++i) p.As[i] = av[i];
            for (int j = 0; j < 8; ++j) p.Bs[j * p.ldb] = (j % 2 ? -1.0f : 1.0f) * (0.5f + 0.125f * (float)j);
        }
        double *C0 = prec == 'd' ? tu_alloc_d(p.ldc * n + 1) : NULL;
        float *Cs0 = prec == 's' ? tu_alloc_s(p.ldc * n + 1) : NULL;
        if (C0) memcpy(C0, p.C, sizeof(double) * (size_t)(p.ldc * n));
        if (Cs0) memcpy(Cs0, p.Cs, sizeof(float) * (size_t)(p.ldc * n));
        const int64_t i = review ? 0 : tu_int(&r, 0, m - 1);
        const int64_t j = review ? 3 : tu_int(&r, 0, n - 1);
        /* changes from far below to far above the worst case's reach at this size */
        const double u = prec == 'd' ? 0x1p-53 : 0x1p-24;
        for (int e = 0; e < 12; ++e) {
            const double delta = review ? 1e-6 * (double)(e % 4 + 1)
                                        : u * (double)(k + 1) * ldexp(1.0, e - 2);
            if (review && e >= 4) break;
            const int wc = detects_change(h, ABFT_BOUND_WORST_CASE, &p, C0, Cs0, i, j, delta);
            const int tt = detects_change(h, ABFT_BOUND_TIGHT, &p, C0, Cs0, i, j, delta);
            ++trials;
            both += wc && tt;
            if (wc && !tt) {
                ++bad;
                if (bad <= 5)
                    printf("  worst case detects, tight misses: %c %lld x %lld x %lld alpha %g "
                           "beta %g C(%lld, %lld) += %g\n", prec, (long long)m, (long long)n,
                           (long long)k, alpha, beta, (long long)i, (long long)j, delta);
            }
            if (review && delta == 1e-6) review_wc = wc, review_tight = tt;
        }
        free(C0), free(Cs0);
        release(&p);
    }
    printf("never looser: %d changes, %d seen by both, %d seen by the worst case alone; "
           "review case (1e-6 at C(0, 3)): worst case %d, tight %d\n", trials, both, bad,
           review_wc, review_tight);
    TU_CHECK(bad == 0, "the tight mode missed %d changes the worst case detects", bad);
    TU_CHECK(review_wc, "the review case's premise: the worst case detects 1e-6");
    abft_set_bound_mode(h, ABFT_BOUND_TIGHT, 1.0);
}

/* 15. The random checksum shares the tight bound: a fault in A after encoding whose row of
 *     op(B) is a (1, -2, 1) stencil hides from both fixed weights, and the random checksum
 *     must see it at the tight mode's sensitivity, not the worst case's. Found by review:
 *     fp64 256^3, A(3, 5) += 500 times the tight bound of row 3, row 5 of B (1, -2, 1) at
 *     columns 10..12: missed for 40 of 40 seeds while the random checksum took the worst
 *     case's bound. Here the fault is 1e-9 (about 400 times the tight bound of the row, a
 *     fifth of the worst case's), and fp32 likewise (0.5: about 350 times the tight bound,
 *     half the worst case's). */
static void test_random_tight(abft_handle_t h, uint64_t seed) {
    for (int pi = 0; pi < 2; ++pi) {
        const char prec = pi ? 's' : 'd';
        const int64_t n = 256;
        tu_rng_t r;
        tu_rng_init(&r, seed + 15);
        prob_t p;
        make(&p, &r, prec, KIND_UNIFORM, n, n, n, 0, 0, 0, 1.0, 0.0);
        for (int64_t j = 0; j < n; ++j) {
            const double v = j == 10 || j == 12 ? 1.0 : j == 11 ? -2.0 : 0.0;
            if (prec == 'd') p.B[5 + j * p.ldb] = v;
            else p.Bs[5 + j * p.ldb] = (float)v;
        }
        double *A0 = prec == 'd' ? tu_alloc_d(p.lda * n + 1) : NULL;
        float *As0 = prec == 's' ? tu_alloc_s(p.lda * n + 1) : NULL;
        if (A0) memcpy(A0, p.A, sizeof(double) * (size_t)(p.lda * n));
        if (As0) memcpy(As0, p.As, sizeof(float) * (size_t)(p.lda * n));
        add1_t a = {ABFT_SITE_AFTER_ENCODE, 0, 3, 5, pi ? 0.5 : 1e-9, 0};
        int missed[2] = {0, 0};
        for (int mode = 0; mode < 2; ++mode)
            for (uint64_t sd = 1; sd <= 40; ++sd) {
                abft_set_bound_mode(h, mode ? ABFT_BOUND_TIGHT : ABFT_BOUND_WORST_CASE, 1.0);
                abft_set_random_checksum(h, 1, sd * 7919u + seed);
                abft_set_hook(h, add1_fn, &a);
                abft_report_t rep;
                TU_CHECK_STATUS(run(h, &p, &rep), ABFT_STATUS_SUCCESS);
                abft_set_hook(h, NULL, NULL);
                if (A0) memcpy(p.A, A0, sizeof(double) * (size_t)(p.lda * n));
                if (As0) memcpy(p.As, As0, sizeof(float) * (size_t)(p.lda * n));
                missed[mode] += rep.detected == 0;
                TU_CHECK(rep.corrected == 0, "%c: corrected on the random checksum's evidence",
                         prec);
            }
        printf("%c: stencil fault of %g in A(3, 5), random checksum, 40 seeds: missed by the "
               "worst case %d, by the tight mode %d\n", prec, a.delta, missed[0], missed[1]);
        TU_CHECK(missed[1] == 0, "%c: the tight mode's random checksum missed %d of 40", prec,
                 missed[1]);
        free(A0), free(As0);
        release(&p);
    }
    abft_set_random_checksum(h, 0, 0);
    abft_set_bound_mode(h, ABFT_BOUND_TIGHT, 1.0);
}

/* 16. Two stages (docs/bound.md): the filter's part stays below the full pass's wherever
 *     that keeps the tight bound (so a row the filter accepts, the full pass accepts), over
 *     every data kind, transposes, the library's split and the CPU's lane orders. */
static void test_filter_below(uint64_t seed) {
    tu_rng_t r;
    tu_rng_init(&r, seed + 16);
    static const int64_t shapes[][3] = {{1, 1, 1}, {7, 5, 33}, {40, 64, 300}, {33, 20, 1000},
                                        {9, 130, 17}};
    abft_kctx_t none;
    memset(&none, 0, sizeof none);
    int cases = 0, above = 0;
    double lo = INFINITY, hi = 0.0;
    for (size_t sh = 0; sh < sizeof shapes / sizeof shapes[0]; ++sh)
        for (int kind = 0; kind < KIND_COUNT; ++kind)
            for (int pi = 0; pi < 2; ++pi) {
                const char prec = pi ? 's' : 'd';
                const int64_t m = shapes[sh][0], n = shapes[sh][1], k = shapes[sh][2];
                const int ta = (int)tu_int(&r, 0, 1), tb = (int)tu_int(&r, 0, 1);
                prob_t p;
                make(&p, &r, prec, kind, m, n, k, ta, tb, tu_int(&r, 0, 2), 1.0, 0.0);
                double *yb = tu_alloc_d(2 * k), *Tf = tu_alloc_d(2 * m), *Tc = tu_alloc_d(2 * m);
                for (int64_t l = 0; l < 2 * k; ++l) yb[l] = tu_range(&r, -3.0, 3.0);
                abft_tight_args_t a = {pi ? ABFT_PREC_S : ABFT_PREC_D, ta, tb, m, n, k,
                                       pi ? (const void *)p.As : (const void *)p.A, p.lda,
                                       pi ? (const void *)p.Bs : (const void *)p.B, p.ldb, yb, k,
                                       tu_range(&r, -2.0, 2.0), pi ? 0x1p-24 : 0x1p-53, 0x1p-53,
                                       12.5, Tc, m, NULL, tu_int(&r, 0, 1) * (k / 2), 2,
                                       {{8, 1}, {16, 1}}, 0};
                TU_CHECK_STATUS(abft_cpu_tight(&none, &a), ABFT_STATUS_SUCCESS);
                a.filter = 1, a.T = Tf;
                TU_CHECK_STATUS(abft_cpu_tight(&none, &a), ABFT_STATUS_SUCCESS);
                for (int64_t i = 0; i < 2 * m; ++i) {
                    TU_CHECK(Tf[i] >= 0.0 && Tf[i] < INFINITY, "filter T[%lld] = %g",
                             (long long)i, Tf[i]);
                    if (!(Tc[i] >= 0.0)) continue;
                    above += Tf[i] > Tc[i];
                    if (Tc[i] > 0.0) {
                        const double q = Tf[i] / Tc[i];
                        lo = q < lo ? q : lo, hi = q > hi ? q : hi;
                    }
                }
                ++cases;
                free(yb), free(Tf), free(Tc);
                release(&p);
            }
    printf("filter against the full pass: %d cases, filter/full from %.3g to %.3g, %d above\n",
           cases, lo, hi, above);
    TU_CHECK(above == 0, "the filter's part exceeded the full pass's in %d entries", above);
}

/* 17. An input fault after encoding that turns its row's guard (docs/bound.md, "Two
 *     stages"): the second stage reads the inputs after the GEMM. A review's construction:
 *     fp64, m = 4, k = 1024, row 0 of A with 8 distinct magnitudes (at the guard's
 *     quantization) on its first block of 16, one just across a bin's edge from another; B
 *     two-valued there; the change that merges the two (about 3.6e-12) turns row 0's guard in
 *     the full pass of the second stage. It passed the one-call form (at 0.087 of the worst
 *     case) until the second stage took the encodings again (side_changed): the row's
 *     checksum moved, so the filter's part from the inputs as encoded stays. The split form,
 *     whose full pass ran on the encoded A, detects it too. */
static void test_guard_after_encoding(abft_handle_t h) {
    const int64_t m = 4, n = 1024, k = 1024;
    double *A = tu_alloc_d(m * k), *A0 = tu_alloc_d(m * k), *B = tu_alloc_d(k * n);
    double *C = tu_alloc_d(m * n);
    const double delta = tu_guard_case(m, n, k, A, B);
    memcpy(A0, A, sizeof(double) * (size_t)(m * k));
    abft_set_bound_mode(h, ABFT_BOUND_TIGHT, 1.0);
    /* the one-call form: the hook changes A(0, 14) after encoding */
    add1_t f = {ABFT_SITE_AFTER_ENCODE, 0, 0, 14, delta, 0};
    abft_set_hook(h, add1_fn, &f);
    abft_report_t one, split;
    TU_CHECK_STATUS(abft_dgemm(h, ABFT_OP_N, ABFT_OP_N, m, n, k, 1.0, A, m, B, k, 0.0, C, m, &one),
                    ABFT_STATUS_SUCCESS);
    abft_set_hook(h, NULL, NULL);
    /* the split form: encode, the same change, the caller's GEMM (in order), verify */
    memcpy(A, A0, sizeof(double) * (size_t)(m * k));
    abft_gemm_plan_t plan;
    TU_CHECK_STATUS(abft_gemm_plan_create(h, 'd', ABFT_OP_N, ABFT_OP_N, m, n, k, 1.0, 0.0, &plan),
                    ABFT_STATUS_SUCCESS);
    TU_CHECK_STATUS(abft_dgemm_encode(h, plan, A, m, B, k, NULL, m), ABFT_STATUS_SUCCESS);
    A[0 + 14 * m] += delta;
    for (int64_t j = 0; j < n; ++j)
        for (int64_t i = 0; i < m; ++i) {
            double t = 0.0;
            for (int64_t l = 0; l < k; ++l) t += A[i + l * m] * B[l + j * k];
            C[i + j * m] = t;
        }
    TU_CHECK_STATUS(abft_dgemm_verify(h, plan, A, m, B, k, C, m, &split), ABFT_STATUS_SUCCESS);
    abft_gemm_plan_destroy(plan);
    printf("guard turned by an input fault after encoding (change %.3g): one-call form "
           "detected %lld (ratio %.3g), split form detected %lld (ratio %.3g)\n", delta,
           (long long)one.detected, one.max_ratio, (long long)split.detected, split.max_ratio);
    TU_CHECK(f.fired && split.detected > 0, "the split form missed the change (ratio %g)",
             split.max_ratio);
    TU_CHECK(one.detected > 0, "the one-call form missed the change (ratio %g): the second "
             "stage let the changed input turn its row's guard", one.max_ratio);
    /* the same with op(A) = A^T stored k x m, with full checksums (the column side's
     * encodings taken again too), and clean: nothing flagged without the change */
    double *At = tu_alloc_d(k * m);
    for (int64_t i = 0; i < m; ++i)
        for (int64_t l = 0; l < k; ++l) At[l + i * k] = A0[i + l * m];
    for (int kind = 0; kind < 2; ++kind)
        for (int ta = 0; ta < 2; ++ta)
            for (int fault = 0; fault < 2; ++fault) {
                abft_set_checksum_kind(h, kind ? ABFT_CHECKSUM_FULL : ABFT_CHECKSUM_ROW);
                memcpy(A, A0, sizeof(double) * (size_t)(m * k));
                double *X = ta ? At : A;
                if (ta)
                    for (int64_t i = 0; i < m; ++i)
                        for (int64_t l = 0; l < k; ++l) At[l + i * k] = A0[i + l * m];
                add1_t g = {ABFT_SITE_AFTER_ENCODE, 0, ta ? 14 : 0, ta ? 0 : 14, delta, 0};
                if (fault) abft_set_hook(h, add1_fn, &g);
                abft_report_t r;
                TU_CHECK_STATUS(abft_dgemm(h, ta ? ABFT_OP_T : ABFT_OP_N, ABFT_OP_N, m, n, k, 1.0,
                                           X, ta ? k : m, B, k, 0.0, C, m, &r),
                                ABFT_STATUS_SUCCESS);
                abft_set_hook(h, NULL, NULL);
                TU_CHECK(fault ? r.detected > 0 : r.detected == 0,
                         "guard case, %s checksums, op(A) %s, %s: detected %lld (ratio %g)",
                         kind ? "full" : "row", ta ? "T" : "N", fault ? "changed" : "clean",
                         (long long)r.detected, r.max_ratio);
            }
    abft_set_checksum_kind(h, ABFT_CHECKSUM_ROW);
    free(A), free(A0), free(At), free(B), free(C);
}

/* The report's worst_case_rows (include/abft/abft_types.h): 0 for a clean product the tight
 * mode bounds; the rows its guard sends to the worst case, counted, after a full pass (the
 * split form runs it at encoding); every checked entry of an LU in the tight mode; 0 in the
 * worst-case mode. */
static void test_worst_case_rows(abft_handle_t h, uint64_t seed) {
    tu_rng_t r;
    tu_rng_init(&r, seed + 41);
    const int64_t m = 48, n = 8, k = 4096;
    float *A = tu_alloc_s(m * k), *B = tu_alloc_s(k * n), *C = tu_alloc_s(m * n);
    abft_report_t rep;
    abft_set_bound_mode(h, ABFT_BOUND_TIGHT, 1.0);
    /* uniform data, one call (two stages) and the split form */
    tu_fill_s(&r, TU_UNIFORM, m, k, A, m);
    tu_fill_s(&r, TU_UNIFORM, k, n, B, k);
    TU_CHECK_STATUS(abft_sgemm(h, ABFT_OP_N, ABFT_OP_N, m, n, k, 1.0f, A, m, B, k, 0.0f, C, m, &rep),
                    ABFT_STATUS_SUCCESS);
    TU_CHECK(rep.detected == 0 && rep.worst_case_rows == 0,
             "uniform, one call: detected %lld, worst_case_rows %lld", (long long)rep.detected,
             (long long)rep.worst_case_rows);
    /* few values on both sides (the along-l guard): rows 1..m-1 to the worst case, row 0
     * (continuous) kept */
    for (int64_t i = 0; i < m; ++i) {
        const int D = (int)tu_int(&r, 8, 16);
        double vals[16];
        for (int v = 0; v < D; ++v) vals[v] = 0.05 + 0.2 * tu_uniform(&r);
        for (int64_t l = 0; l < k; ++l) A[i + l * m] = (float)vals[tu_int(&r, 0, D - 1)];
    }
    for (int64_t l = 0; l < k; ++l) A[0 + l * m] = (float)tu_range(&r, 0.05, 0.4);
    for (int64_t j = 0; j < n; ++j) {
        const float c = (float)tu_range(&r, 0.5, 2.0);
        for (int64_t l = 0; l < k; ++l) B[l + j * k] = c;
    }
    abft_gemm_plan_t plan;
    TU_CHECK_STATUS(abft_gemm_plan_create(h, 's', ABFT_OP_N, ABFT_OP_N, m, n, k, 1.0, 0.0, &plan),
                    ABFT_STATUS_SUCCESS);
    TU_CHECK_STATUS(abft_sgemm_encode(h, plan, A, m, B, k, NULL, m), ABFT_STATUS_SUCCESS);
    TU_CHECK_STATUS(abft_sgemm(h, ABFT_OP_N, ABFT_OP_N, m, n, k, 1.0f, A, m, B, k, 0.0f, C, m, NULL),
                    ABFT_STATUS_SUCCESS);
    TU_CHECK_STATUS(abft_sgemm_verify(h, plan, A, m, B, k, C, m, &rep), ABFT_STATUS_SUCCESS);
    abft_gemm_plan_destroy(plan);
    TU_CHECK(rep.detected == 0 && rep.worst_case_rows == m - 1,
             "few values, split form: detected %lld, worst_case_rows %lld (want %lld)",
             (long long)rep.detected, (long long)rep.worst_case_rows, (long long)(m - 1));
    const int64_t few = rep.worst_case_rows;
    /* the worst-case mode: none */
    abft_set_bound_mode(h, ABFT_BOUND_WORST_CASE, 1.0);
    TU_CHECK_STATUS(abft_sgemm(h, ABFT_OP_N, ABFT_OP_N, m, n, k, 1.0f, A, m, B, k, 0.0f, C, m, &rep),
                    ABFT_STATUS_SUCCESS);
    TU_CHECK(rep.worst_case_rows == 0, "worst-case mode: worst_case_rows %lld",
             (long long)rep.worst_case_rows);
    /* LU: the worst case in every mode, counted in the tight mode */
    const int64_t nl = 64;
    double *L = tu_alloc_d(nl * nl);
    int64_t *ipiv = (int64_t *)malloc(sizeof(int64_t) * (size_t)nl), info = 0;
    tu_fill_d(&r, TU_UNIFORM, nl, nl, L, nl);
    abft_set_bound_mode(h, ABFT_BOUND_TIGHT, 1.0);
    TU_CHECK_STATUS(abft_dgetrf(h, nl, nl, L, nl, ipiv, &info, &rep), ABFT_STATUS_SUCCESS);
    TU_CHECK(rep.checked > 0 && rep.worst_case_rows == rep.checked,
             "LU, tight mode: checked %lld, worst_case_rows %lld", (long long)rep.checked,
             (long long)rep.worst_case_rows);
    tu_fill_d(&r, TU_UNIFORM, nl, nl, L, nl);
    abft_set_bound_mode(h, ABFT_BOUND_WORST_CASE, 1.0);
    TU_CHECK_STATUS(abft_dgetrf(h, nl, nl, L, nl, ipiv, &info, &rep), ABFT_STATUS_SUCCESS);
    TU_CHECK(rep.worst_case_rows == 0, "LU, worst-case mode: worst_case_rows %lld",
             (long long)rep.worst_case_rows);
    printf("worst_case_rows: uniform 0, few values (split form) %lld of %lld, LU in the tight "
           "mode every checked entry, worst-case mode 0\n", (long long)few, (long long)m);
    free(A), free(B), free(C), free(L), free(ipiv);
}

int main(void) {
    uint64_t seed = tu_seed("test_tight");
    abft_handle_t h;
    TU_CHECK_STATUS(abft_create(&h, ABFT_BACKEND_CPU), ABFT_STATUS_SUCCESS);
    test_api(h);
    test_rules(h);
    test_clean(h, seed);
    test_tightness(h, seed);
    test_detects(h, seed);
    test_big_old_c(h, seed);
    test_few_values(h, seed);
    test_small_terms(h, seed);
    test_mixed_tails(h, seed);
    test_sliced_orders(h, seed);
    test_lane_orders(h, seed);
    test_small_batch(h, seed);
    test_verify_without_inputs(seed);
    test_no_cross(seed);
    test_never_looser(h, seed);
    test_random_tight(h, seed);
    test_filter_below(seed);
    test_guard_after_encoding(h);
    test_worst_case_rows(h, seed);
    abft_destroy(h);
    return tu_finish("test_tight");
}
