/* Regression tests for the soundness of the protected GEMM outside the easy path: each
 * mechanism below made the library report a wrong "corrected", a wrong "checksum fault" or a
 * false alarm before the correction engine and the bound module (docs/bound.md). Every case
 * is deterministic: fixed seeds, fixed positions, fixed values. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

typedef struct add_hook {
    abft_hook_site_t site;
    int which;
    int n;
    int64_t r[8], c[8];
    double delta[8];
    int flip_bit; /* >= 0: flip this bit instead of adding (site CHECKSUM: fp64) */
} add_hook_t;

static abft_status_t add_fn(void *user, abft_hook_site_t site, int which, char prec, void *ptr,
                            int64_t rows, int64_t cols, int64_t ld) {
    add_hook_t *a = (add_hook_t *)user;
    if (site != a->site || which != a->which) return ABFT_STATUS_SUCCESS;
    for (int f = 0; f < a->n; ++f) {
        int64_t o = a->r[f] + a->c[f] * ld;
        if (a->r[f] >= rows || a->c[f] >= cols) continue;
        if (prec == 'd') {
            double *p = (double *)ptr;
            p[o] = a->flip_bit >= 0 ? tu_flip_d(p[o], a->flip_bit) : p[o] + a->delta[f];
        } else {
            float *p = (float *)ptr;
            p[o] = a->flip_bit >= 0 ? tu_flip_s(p[o], a->flip_bit) : p[o] + (float)a->delta[f];
        }
    }
    return ABFT_STATUS_SUCCESS;
}

#define ABFT_TRY_TEST(x)                              \
    do {                                              \
        abft_status_t st_ = (x);                      \
        if (st_ != ABFT_STATUS_SUCCESS) return st_;   \
    } while (0)
static abft_status_t two_hooks(void *user, abft_hook_site_t site, int which, char prec,
                               void *ptr, int64_t rows, int64_t cols, int64_t ld) {
    add_hook_t **h2 = (add_hook_t **)user;
    ABFT_TRY_TEST(add_fn(h2[0], site, which, prec, ptr, rows, cols, ld));
    return add_fn(h2[1], site, which, prec, ptr, rows, cols, ld);
}

enum { M = 9, N = 12, K = 10 };

typedef struct gemm {
    double A[M * K], B[K * N], C0[M * N], G[M * N], C[M * N];
    double alpha, beta;
} gemm_t;

static void make(gemm_t *g, uint64_t seed, double alpha, double beta) {
    tu_rng_t r;
    tu_rng_init(&r, seed);
    tu_fill_d(&r, TU_UNIFORM, M, K, g->A, M);
    tu_fill_d(&r, TU_UNIFORM, K, N, g->B, K);
    tu_fill_d(&r, TU_UNIFORM, M, N, g->C0, M);
    g->alpha = alpha, g->beta = beta;
}

/* golden: the same protected call without a fault (it writes nothing on a clean run) */
static abft_status_t call(abft_handle_t h, gemm_t *g, double *C, abft_report_t *rep) {
    memcpy(C, g->C0, sizeof g->C0);
    return abft_dgemm(h, ABFT_OP_N, ABFT_OP_N, M, N, K, g->alpha, g->A, M, g->B, K, g->beta, C,
                      M, rep);
}

static void golden(abft_handle_t h, gemm_t *g) {
    abft_report_t rep;
    abft_set_hook(h, NULL, NULL);
    TU_CHECK_STATUS(call(h, g, g->G, &rep), ABFT_STATUS_SUCCESS);
    TU_CHECK(rep.detected == 0, "golden run flagged %lld", (long long)rep.detected);
}

static double max_diff(const double *X, const double *Y) {
    double m = 0.0;
    for (int i = 0; i < M * N; ++i) m = fmax(m, fabs(X[i] - Y[i]));
    return m;
}

/* 1. Two equal errors in one row whose weighted centre is an integer column: two row residuals
 *    point at the centre. Row checksums with beta != 0 once wrote the centre and reported it
 *    corrected; with full checksums the row pass wrote the centre and the column pass fixed
 *    the two real ones, leaving the centre wrong. Now the centre is never written: with
 *    beta = 0 the recomputation confirms the two real ones (or the row is recomputed), with
 *    beta != 0 nothing can confirm a value and the row is reported. */
static void test_two_in_a_row(abft_handle_t h) {
    for (int kind = 0; kind < 2; ++kind)
        for (int bz = 0; bz < 2; ++bz) {
            gemm_t g;
            make(&g, 1001, 1.5, bz ? 0.0 : 1.0);
            abft_set_checksum_kind(h, kind ? ABFT_CHECKSUM_FULL : ABFT_CHECKSUM_ROW);
            golden(h, &g);
            add_hook_t a = {ABFT_SITE_AFTER_GEMM, 0, 2, {3, 3}, {2, 6}, {1.0, 1.0}, -1};
            abft_set_hook(h, add_fn, &a);
            abft_report_t rep;
            TU_CHECK_STATUS(call(h, &g, g.C, &rep), ABFT_STATUS_SUCCESS);
            abft_set_hook(h, NULL, NULL);
            int wrote_centre = 0;
            for (int f = 0; f < rep.nfaults; ++f)
                if (rep.faults[f].action == ABFT_ACTION_CORRECTED && rep.faults[f].col == 4)
                    wrote_centre = 1;
            TU_CHECK(!wrote_centre, "kind %d beta %g: the centre column was 'corrected'", kind,
                     g.beta);
            /* (a protected call with a hook splits its GEMM along k: rounding differs from
             * golden in the last bits) */
            TU_CHECK(fabs(g.C[3 + 4 * M] - g.G[3 + 4 * M]) < 1e-12, "kind %d beta %g: centre "
                     "changed", kind, g.beta);
            if (rep.uncorrectable == 0 && rep.recomputed == 0) {
                TU_CHECK(rep.corrected == 2 && max_diff(g.C, g.G) < 1e-12,
                         "kind %d beta %g: corrected %lld, off golden by %g", kind, g.beta,
                         (long long)rep.corrected, max_diff(g.C, g.G));
            } else {
                TU_CHECK(rep.corrected == 0, "kind %d beta %g: partial correction kept", kind,
                         g.beta);
            }
            /* row checksums and beta != 0: nothing can confirm; reported, C untouched */
            if (kind == 0 && !bz)
                TU_CHECK(rep.corrected == 0 && rep.uncorrectable == 1 &&
                             fabs(g.C[3 + 2 * M] - (g.G[3 + 2 * M] + 1.0)) < 1e-12,
                         "row, beta != 0: corrected %lld uncorrectable %lld",
                         (long long)rep.corrected, (long long)rep.uncorrectable);
            /* row checksums, beta = 0: the centre is refused by the recomputation, the row
             * is recomputed */
            if (kind == 0 && bz)
                TU_CHECK(rep.recomputed == 1 && rep.corrected == 0 && max_diff(g.C, g.G) < 1e-12,
                         "row, beta 0: recomputed %lld corrected %lld",
                         (long long)rep.recomputed, (long long)rep.corrected);
            /* full checksums, beta = 0: both errors confirmed by recomputation; beta != 0:
             * nothing can recompute, so nothing is confirmed: reported, C untouched */
            if (kind == 1 && bz)
                TU_CHECK(rep.corrected == 2 && rep.uncorrectable == 0,
                         "kind %d beta %g: corrected %lld uncorrectable %lld", kind, g.beta,
                         (long long)rep.corrected, (long long)rep.uncorrectable);
            if (kind == 1 && !bz)
                TU_CHECK(rep.corrected == 0 && rep.uncorrectable >= 1 &&
                             fabs(g.C[3 + 6 * M] - (g.G[3 + 6 * M] + 1.0)) < 1e-12,
                         "full, beta != 0: corrected %lld uncorrectable %lld",
                         (long long)rep.corrected, (long long)rep.uncorrectable);
        }
    abft_set_checksum_kind(h, ABFT_CHECKSUM_ROW);
}

/* 2. Row checksums, beta = 0: a large error and a second one of a few bounds in the same row.
 *    The recomputation once confirmed the large one within about 4 bounds and the row was not
 *    checked again, so the small one stayed behind a "corrected". */
static void test_small_second_error(abft_handle_t h) {
    gemm_t g;
    make(&g, 2002, 1.0, 0.0);
    golden(h, &g);
    /* the size of one bound of row 2: a lone error's ratio tells it */
    add_hook_t a = {ABFT_SITE_AFTER_GEMM, 0, 1, {2}, {7}, {1e-12}, -1};
    abft_set_recompute(h, 0);
    abft_set_hook(h, add_fn, &a);
    abft_report_t rep;
    TU_CHECK_STATUS(call(h, &g, g.C, &rep), ABFT_STATUS_SUCCESS);
    double ratio = rep.max_ratio;
    TU_CHECK(ratio > 1.0, "probe error not detected (ratio %g)", ratio);
    double e2 = 1e-12 * 3.0 / ratio; /* three bounds */
    add_hook_t b = {ABFT_SITE_AFTER_GEMM, 0, 2, {2, 2}, {1, 7}, {1e3, e2}, -1};
    abft_set_hook(h, add_fn, &b);
    TU_CHECK_STATUS(call(h, &g, g.C, &rep), ABFT_STATUS_SUCCESS);
    abft_set_hook(h, NULL, NULL);
    abft_set_recompute(h, 1);
    if (rep.uncorrectable == 0) {
        TU_CHECK(fabs(g.C[2 + 7 * M] - g.G[2 + 7 * M]) < e2 / 2 &&
                     fabs(g.C[2 + 1 * M] - g.G[2 + 1 * M]) < 1e-12,
                 "reported clean, but C(2,7) is off golden by %g (e2 %g), C(2,1) by %g",
                 fabs(g.C[2 + 7 * M] - g.G[2 + 7 * M]), e2, fabs(g.C[2 + M] - g.G[2 + M]));
    }
    printf("small second error (%.3g, 3 bounds): corrected %lld, uncorrectable %lld\n", e2,
           (long long)rep.corrected, (long long)rep.uncorrectable);
}

/* 3. Full checksums, beta != 0: three errors (1, -2, 1)·delta in one row cancel in both row
 *    checksums; each column sees one. With nothing flagged on the row side, the columns were
 *    once called corrupted checksums ("data intact") while C was wrong. */
static void test_cancelling_row(abft_handle_t h) {
    abft_set_checksum_kind(h, ABFT_CHECKSUM_FULL);
    for (int bz = 0; bz < 2; ++bz) {
        gemm_t g;
        make(&g, 3003, 1.0, bz ? 0.0 : 0.75);
        golden(h, &g);
        add_hook_t a = {ABFT_SITE_AFTER_GEMM, 0, 3, {5, 5, 5}, {3, 4, 5}, {0.5, -1.0, 0.5}, -1};
        abft_set_hook(h, add_fn, &a);
        abft_report_t rep;
        TU_CHECK_STATUS(call(h, &g, g.C, &rep), ABFT_STATUS_SUCCESS);
        abft_set_hook(h, NULL, NULL);
        TU_CHECK(rep.checksum_faults == 0, "beta %g: %lld checksum faults claimed", g.beta,
                 (long long)rep.checksum_faults);
        if (bz)
            TU_CHECK(rep.corrected == 3 && rep.uncorrectable == 0 &&
                         max_diff(g.C, g.G) < 1e-12,
                     "beta 0: corrected %lld uncorrectable %lld off %g",
                     (long long)rep.corrected, (long long)rep.uncorrectable,
                     max_diff(g.C, g.G));
        else
            TU_CHECK(rep.corrected == 0 && rep.uncorrectable == 3 &&
                         fabs(g.C[5 + 4 * M] - (g.G[5 + 4 * M] - 1.0)) < 1e-12,
                     "beta != 0: corrected %lld uncorrectable %lld", (long long)rep.corrected,
                     (long long)rep.uncorrectable);
    }
    abft_set_checksum_kind(h, ABFT_CHECKSUM_ROW);
}

/* 4. A corrupted checksum is a checksum fault (data intact) in both modes; an input corrupted
 *    after encoding, which leaves the same picture in its row, is not. */
static void test_checksum_fault(abft_handle_t h) {
    for (int kind = 0; kind < 2; ++kind) {
        abft_set_checksum_kind(h, kind ? ABFT_CHECKSUM_FULL : ABFT_CHECKSUM_ROW);
        for (int side = 0; side < 1 + kind; ++side) {
            gemm_t g;
            make(&g, 4004, 2.0, 0.0);
            golden(h, &g);
            add_hook_t a = {ABFT_SITE_CHECKSUM, side, 1, {4}, {0}, {0}, 60};
            abft_set_hook(h, add_fn, &a);
            abft_report_t rep;
            TU_CHECK_STATUS(call(h, &g, g.C, &rep), ABFT_STATUS_SUCCESS);
            abft_set_hook(h, NULL, NULL);
            TU_CHECK(rep.detected == 1 && rep.checksum_faults == 1 && rep.corrected == 0 &&
                         rep.uncorrectable == 0 && rep.recomputed == 0 &&
                         max_diff(g.C, g.G) < 1e-12,
                     "kind %d side %d: detected %lld checksum %lld corrected %lld unc %lld "
                     "recomputed %lld", kind, side, (long long)rep.detected,
                     (long long)rep.checksum_faults, (long long)rep.corrected,
                     (long long)rep.uncorrectable, (long long)rep.recomputed);
        }
        /* A(4, 3) corrupted after encoding: row 4 of C agrees with the corrupted A */
        gemm_t g;
        make(&g, 4005, 1.0, 0.0);
        golden(h, &g);
        add_hook_t a = {ABFT_SITE_AFTER_ENCODE, 0, 1, {4}, {3}, {0.25}, -1};
        abft_set_recompute(h, 0);
        abft_set_hook(h, add_fn, &a);
        abft_report_t rep;
        TU_CHECK_STATUS(call(h, &g, g.C, &rep), ABFT_STATUS_SUCCESS);
        abft_set_hook(h, NULL, NULL);
        abft_set_recompute(h, 1);
        TU_CHECK(rep.detected >= 1 && rep.checksum_faults == 0 && rep.corrected == 0 &&
                     rep.uncorrectable >= 1,
                 "kind %d, input fault: checksum %lld corrected %lld uncorrectable %lld", kind,
                 (long long)rep.checksum_faults, (long long)rep.corrected,
                 (long long)rep.uncorrectable);
    }
    abft_set_checksum_kind(h, ABFT_CHECKSUM_ROW);
}

/* 5. Gradual underflow amplified: a GEMM that applies alpha to B before multiplying (as the
 *    reference BLAS does) loses up to one subnormal spacing in alpha·B(l, j), and the product
 *    with a large A(i, l) amplifies that loss far beyond an absolute allowance. Clean results
 *    computed that way must not be flagged, with and without A and B at verification. */
static void test_underflow(abft_handle_t h) {
    for (int prec = 0; prec < 2; ++prec)
        for (int kind = 0; kind < 2; ++kind) {
            abft_set_checksum_kind(h, kind ? ABFT_CHECKSUM_FULL : ABFT_CHECKSUM_ROW);
            tu_rng_t r;
            tu_rng_init(&r, 5005 + (uint64_t)prec);
            double sa = prec ? 0x1p60 : 0x1p600, sb = prec ? 0x1p-120 : 0x1p-1000;
            double alpha = prec ? 0x1p-25 : 0x1p-70;
            double A[M * K], B[K * N], C[M * N];
            float As[M * K], Bs[K * N], Cs[M * N];
            for (int i = 0; i < M * K; ++i) A[i] = tu_range(&r, 0.5, 1.0) * sa, As[i] = (float)A[i];
            for (int i = 0; i < K * N; ++i) B[i] = tu_range(&r, 0.5, 1.0) * sb, Bs[i] = (float)B[i];
            abft_gemm_plan_t plan = NULL;
            TU_CHECK_STATUS(abft_gemm_plan_create(h, prec ? 's' : 'd', ABFT_OP_N, ABFT_OP_N, M,
                                                  N, K, alpha, 0.0, &plan),
                            ABFT_STATUS_SUCCESS);
            if (prec)
                TU_CHECK_STATUS(abft_sgemm_encode(h, plan, As, M, Bs, K, NULL, M),
                                ABFT_STATUS_SUCCESS);
            else
                TU_CHECK_STATUS(abft_dgemm_encode(h, plan, A, M, B, K, NULL, M),
                                ABFT_STATUS_SUCCESS);
            /* the caller's GEMM: alpha applied to B first, in the data precision */
            for (int j = 0; j < N; ++j)
                for (int i = 0; i < M; ++i) {
                    if (prec) {
                        float s = 0.0f;
                        for (int l = 0; l < K; ++l) {
                            volatile float t = (float)alpha * Bs[l + j * K];
                            s += As[i + l * M] * t;
                        }
                        Cs[i + j * M] = s;
                    } else {
                        double s = 0.0;
                        for (int l = 0; l < K; ++l) {
                            volatile double t = alpha * B[l + j * K];
                            s += A[i + l * M] * t;
                        }
                        C[i + j * M] = s;
                    }
                }
            for (int with = 0; with < 2; ++with) {
                abft_report_t rep;
                abft_status_t st =
                    prec ? abft_sgemm_verify(h, plan, with ? As : NULL, M, with ? Bs : NULL, K,
                                             Cs, M, &rep)
                         : abft_dgemm_verify(h, plan, with ? A : NULL, M, with ? B : NULL, K,
                                             C, M, &rep);
                TU_CHECK_STATUS(st, ABFT_STATUS_SUCCESS);
                TU_CHECK(rep.detected == 0 && rep.max_ratio <= 1.0,
                         "prec %d kind %d inputs %d: clean alpha-first product flagged "
                         "(detected %lld, ratio %g)", prec, kind, with,
                         (long long)rep.detected, rep.max_ratio);
            }
            /* the one-call form through the host BLAS, whatever order it uses */
            abft_report_t rep;
            if (prec)
                TU_CHECK_STATUS(abft_sgemm(h, ABFT_OP_N, ABFT_OP_N, M, N, K, (float)alpha, As, M,
                                           Bs, K, 0.0f, Cs, M, &rep),
                                ABFT_STATUS_SUCCESS);
            else
                TU_CHECK_STATUS(abft_dgemm(h, ABFT_OP_N, ABFT_OP_N, M, N, K, alpha, A, M, B, K,
                                           0.0, C, M, &rep),
                                ABFT_STATUS_SUCCESS);
            TU_CHECK(rep.detected == 0, "prec %d kind %d: one-call form flagged %lld", prec,
                     kind, (long long)rep.detected);
            abft_gemm_plan_destroy(plan);
        }
    abft_set_checksum_kind(h, ABFT_CHECKSUM_ROW);
}

/* 6. The split form's arithmetic is the caller's: declared on the plan (or read from the
 *    caller's cuBLAS handle), reported, and refused where it does not fit the precision. */
static void test_math(abft_handle_t h) {
    gemm_t g;
    make(&g, 6006, 1.0, 0.0);
    float As[M * K], Bs[K * N], Cs[M * N];
    for (int i = 0; i < M * K; ++i) As[i] = (float)g.A[i];
    for (int i = 0; i < K * N; ++i) Bs[i] = (float)g.B[i];
    abft_gemm_plan_t ps = NULL, pd = NULL;
    TU_CHECK_STATUS(abft_gemm_plan_create(h, 's', ABFT_OP_N, ABFT_OP_N, M, N, K, 1.0, 0.0, &ps),
                    ABFT_STATUS_SUCCESS);
    TU_CHECK_STATUS(abft_gemm_plan_create(h, 'd', ABFT_OP_N, ABFT_OP_N, M, N, K, 1.0, 0.0, &pd),
                    ABFT_STATUS_SUCCESS);
    TU_CHECK_STATUS(abft_gemm_plan_set_math(pd, ABFT_MATH_TF32), ABFT_STATUS_INVALID_VALUE);
    TU_CHECK_STATUS(abft_gemm_plan_set_math(ps, (abft_math_t)7), ABFT_STATUS_INVALID_VALUE);
    TU_CHECK_STATUS(abft_gemm_plan_set_math(NULL, ABFT_MATH_IEEE), ABFT_STATUS_INVALID_VALUE);
    TU_CHECK_STATUS(abft_gemm_plan_set_math(ps, ABFT_MATH_TF32), ABFT_STATUS_SUCCESS);
    TU_CHECK_STATUS(abft_sgemm_encode(h, ps, As, M, Bs, K, NULL, M), ABFT_STATUS_SUCCESS);
    /* the caller's "TF32" GEMM: inputs cut to 10 fraction bits, fp32 sums */
    for (int j = 0; j < N; ++j)
        for (int i = 0; i < M; ++i) {
            float s = 0.0f;
            for (int l = 0; l < K; ++l) {
                float a = As[i + l * M], b = Bs[l + j * K];
                union { float f; uint32_t u; } ua = {a}, ub = {b};
                ua.u &= 0xffffe000u, ub.u &= 0xffffe000u; /* truncate to TF32 */
                s += ua.f * ub.f;
            }
            Cs[i + j * M] = s;
        }
    abft_report_t rep;
    TU_CHECK_STATUS(abft_sgemm_verify(h, ps, As, M, Bs, K, Cs, M, &rep), ABFT_STATUS_SUCCESS);
    TU_CHECK(rep.detected == 0 && rep.unit_roundoff == 0x1p-10,
             "declared TF32: detected %lld, u %g", (long long)rep.detected, rep.unit_roundoff);
    /* the same product checked as IEEE fp32 must be flagged: TF32's error is far larger */
    TU_CHECK_STATUS(abft_gemm_plan_set_math(ps, ABFT_MATH_IEEE), ABFT_STATUS_SUCCESS);
    TU_CHECK_STATUS(abft_sgemm_encode(h, ps, As, M, Bs, K, NULL, M), ABFT_STATUS_SUCCESS);
    TU_CHECK_STATUS(abft_sgemm_verify(h, ps, NULL, M, NULL, K, Cs, M, &rep), ABFT_STATUS_SUCCESS);
    TU_CHECK(rep.detected > 0 && rep.unit_roundoff == 0x1p-24,
             "TF32 product checked as fp32: detected %lld", (long long)rep.detected);
    if (!abft_cuda_built()) {
        int dummy = 0;
        TU_CHECK_STATUS(abft_gemm_plan_set_cublas_math(ps, &dummy), ABFT_STATUS_NOT_SUPPORTED);
    }
    TU_CHECK_STATUS(abft_gemm_plan_set_cublas_math(ps, NULL), ABFT_STATUS_SUCCESS);
    abft_gemm_plan_destroy(ps);
    abft_gemm_plan_destroy(pd);
}

/* B a (1, -2, 1) stencil: row l holds 1, -2, 1 at columns l .. l+2. */
static void stencil_b(gemm_t *g) {
    memset(g->B, 0, sizeof g->B);
    for (int l = 0; l < K; ++l)
        for (int t = 0; t < 3 && l + t < N; ++t) g->B[l + (l + t) * K] = t == 1 ? -2.0 : 1.0;
}

/* The golden run, then A(4, 3) += 0.5 after encoding (its row of B a whole stencil), with
 * A put back afterwards; *off: how far the fault moved C. */
static void stencil_fault_a(abft_handle_t h, gemm_t *g, abft_report_t *rep, double *off) {
    golden(h, g);
    add_hook_t a = {ABFT_SITE_AFTER_ENCODE, 0, 1, {4}, {3}, {0.5}, -1};
    abft_set_hook(h, add_fn, &a);
    TU_CHECK_STATUS(call(h, g, g->C, rep), ABFT_STATUS_SUCCESS);
    abft_set_hook(h, NULL, NULL);
    g->A[4 + 3 * M] -= 0.5; /* the hook changed the caller's A */
    *off = max_diff(g->C, g->G);
}

/* 7. The fixed weights' blind spot: a fault in A(i, l) after encoding changes row i of C by
 *    delta·(row l of op(B)), which row checksums cannot see when that row is orthogonal to
 *    both weight vectors, as a (1, -2, 1) stencil is. Column checksums see it in every column
 *    the stencil touches (docs/bound.md, "Blind spots"). */
static void test_stencil(abft_handle_t h) {
    gemm_t g;
    make(&g, 7007, 1.0, 0.0);
    stencil_b(&g);
    for (int kind = 0; kind < 2; ++kind) {
        abft_set_checksum_kind(h, kind ? ABFT_CHECKSUM_FULL : ABFT_CHECKSUM_ROW);
        abft_report_t rep;
        double off;
        stencil_fault_a(h, &g, &rep, &off);
        TU_CHECK(off > 0.4, "the fault did not reach C (%g)", off);
        if (kind == 0)
            TU_CHECK(rep.detected == 0, "row checksums saw the stencil fault: the blind spot "
                     "this test documents is gone, update docs/bound.md");
        else
            TU_CHECK(rep.detected >= 3 && rep.corrected == 0 && rep.uncorrectable >= 1,
                     "full checksums: detected %lld corrected %lld uncorrectable %lld",
                     (long long)rep.detected, (long long)rep.corrected,
                     (long long)rep.uncorrectable);
    }
    abft_set_checksum_kind(h, ABFT_CHECKSUM_ROW);
}

/* 7b. The random checksum (abft_set_random_checksum) closes the blind spot of 7 and the one
 *     full checksums keep: a fault spanning a row of op(B) orthogonal to both weights, in a
 *     column of op(A) orthogonal to both too, hides from rows and columns alike. Detection
 *     only: nothing is corrected on its evidence. A fault in C is still corrected. */
static void test_random_checksum(abft_handle_t h) {
    int on = -1;
    uint64_t seed = 1;
    TU_CHECK_STATUS(abft_get_random_checksum(h, &on, &seed), ABFT_STATUS_SUCCESS);
    TU_CHECK(on == 0, "the random checksum is on by default");
    TU_CHECK_STATUS(abft_set_random_checksum(h, 2, 1), ABFT_STATUS_INVALID_VALUE);
    TU_CHECK_STATUS(abft_set_random_checksum(NULL, 1, 1), ABFT_STATUS_NOT_INITIALIZED);
    TU_CHECK_STATUS(abft_get_random_checksum(h, NULL, &seed), ABFT_STATUS_INVALID_VALUE);
    TU_CHECK_STATUS(abft_get_random_checksum(h, &on, NULL), ABFT_STATUS_INVALID_VALUE);
    TU_CHECK_STATUS(abft_set_random_checksum(h, 1, 77), ABFT_STATUS_SUCCESS);
    TU_CHECK_STATUS(abft_get_random_checksum(h, &on, &seed), ABFT_STATUS_SUCCESS);
    TU_CHECK(on == 1 && seed == 77, "get returned %d, %llu", on, (unsigned long long)seed);

    /* the stencil fault of 7 in A (row checksums): seen under every seed tried */
    gemm_t g;
    make(&g, 7007, 1.0, 0.0);
    stencil_b(&g);
    int missed = 0, claimed = 0;
    for (uint64_t sd = 1; sd <= 200; ++sd) {
        abft_set_random_checksum(h, 1, sd);
        abft_report_t rep;
        double off;
        stencil_fault_a(h, &g, &rep, &off);
        missed += rep.detected == 0;
        claimed += rep.corrected != 0 || rep.uncorrectable == 0;
    }
    TU_CHECK(missed == 0 && claimed == 0,
             "random checksum, stencil fault in A: missed under %d of 200 seeds, corrected or "
             "left unreported under %d", missed, claimed);

    /* a fault of row 3 of B by delta·(1, -2, 1) at columns 5..7, column 3 of A a stencil
     * too: the change of C is a_3·Delta, orthogonal to both weights in rows and columns */
    make(&g, 7017, 1.0, 0.0);
    for (int i = 0; i < M; ++i) g.A[i + 3 * M] = i == 2 || i == 4 ? 1.0 : i == 3 ? -2.0 : 0.0;
    abft_set_checksum_kind(h, ABFT_CHECKSUM_FULL);
    for (int rnd = 0; rnd < 2; ++rnd) {
        abft_set_random_checksum(h, rnd, 20261125);
        golden(h, &g);
        add_hook_t b = {ABFT_SITE_AFTER_ENCODE, 1, 3, {3, 3, 3}, {5, 6, 7}, {0.25, -0.5, 0.25},
                        -1};
        abft_set_hook(h, add_fn, &b);
        abft_report_t rep;
        TU_CHECK_STATUS(call(h, &g, g.C, &rep), ABFT_STATUS_SUCCESS);
        abft_set_hook(h, NULL, NULL);
        for (int f = 0; f < 3; ++f) g.B[b.r[f] + b.c[f] * K] -= b.delta[f];
        double off = max_diff(g.C, g.G);
        TU_CHECK(off > 0.2, "the B fault did not reach C (%g)", off);
        if (!rnd)
            TU_CHECK(rep.detected == 0, "full checksums saw the orthogonal B fault: the blind "
                     "spot this test documents is gone, update docs/bound.md");
        else
            TU_CHECK(rep.detected >= 1 && rep.corrected == 0 && rep.uncorrectable >= 1,
                     "full + random checksums, orthogonal B fault: detected %lld corrected "
                     "%lld uncorrectable %lld", (long long)rep.detected,
                     (long long)rep.corrected, (long long)rep.uncorrectable);
    }
    abft_set_checksum_kind(h, ABFT_CHECKSUM_ROW);

    /* a flip in C after the GEMM: still located, confirmed and corrected (beta = 0; the
     * written value is the element recomputed by a dot product: the GEMM's value within
     * rounding) */
    make(&g, 7027, 1.0, 0.0);
    abft_set_random_checksum(h, 1, 5);
    golden(h, &g);
    add_hook_t c = {ABFT_SITE_AFTER_GEMM, 0, 1, {6}, {9}, {0.0}, 61};
    abft_set_hook(h, add_fn, &c);
    abft_report_t rep;
    TU_CHECK_STATUS(call(h, &g, g.C, &rep), ABFT_STATUS_SUCCESS);
    abft_set_hook(h, NULL, NULL);
    TU_CHECK(rep.corrected == 1 && rep.uncorrectable == 0 && max_diff(g.C, g.G) < 1e-12,
             "random checksum on, a flip in C: corrected %lld uncorrectable %lld, off %g",
             (long long)rep.corrected, (long long)rep.uncorrectable, max_diff(g.C, g.G));
    /* a flip in the random checksum's own encoding Sr (hook site CHECKSUM, which 2): told
     * from a fault of the data by re-deriving it, as the fixed weights' checksums are:
     * "checksum fault", C intact (beta = 0 and beta != 0) */
    for (int b = 0; b < 2; ++b) {
        make(&g, 7037 + (uint64_t)b, 1.0, b ? 0.75 : 0.0);
        abft_set_random_checksum(h, 1, 9);
        golden(h, &g);
        add_hook_t x = {ABFT_SITE_CHECKSUM, 2, 1, {5}, {b}, {0.0}, 60};
        abft_set_hook(h, add_fn, &x);
        TU_CHECK_STATUS(call(h, &g, g.C, &rep), ABFT_STATUS_SUCCESS);
        abft_set_hook(h, NULL, NULL);
        TU_CHECK(rep.checksum_faults == 1 && rep.corrected == 0 && rep.uncorrectable == 0 &&
                     max_diff(g.C, g.G) < 1e-12, /* a hook splits the GEMM along k */
                 "random checksum, its encoding struck (beta %g): checksum faults %lld "
                 "corrected %lld uncorrectable %lld, C off %g", g.beta,
                 (long long)rep.checksum_faults, (long long)rep.corrected,
                 (long long)rep.uncorrectable, max_diff(g.C, g.G));
    }
    abft_set_random_checksum(h, 0, 0);
}

/* 7c. No false alarm from the random checksum: clean products of every shape (1 included,
 *     k = 0 included), transposes, alpha (0 included) and beta in both precisions, padded
 *     leading dimensions, uniform, wide-range, cancelling and positive data, row and full
 *     checksums, and the split form verified with and without its inputs. Fixed seeds
 *     7100..7499. Then subnormal products: op(B) of subnormals times a large A and alpha,
 *     where each product of the encoding with a weight that is not an integer loses up to a
 *     subnormal spacing, which A and alpha amplify (docs/bound.md). */
static void test_random_clean(abft_handle_t h) {
    const double alphas[] = {1.0, -0.75, 0.0, 3.0}, betas[] = {0.0, 1.0, -0.5};
    int64_t products = 0, flagged = 0;
    double worst = 0.0;
    for (uint64_t sd = 7100; sd < 7500; ++sd) {
        tu_rng_t r;
        tu_rng_init(&r, sd);
        int64_t m = tu_int(&r, 1, 40), n = tu_int(&r, 1, 40), k = tu_int(&r, 0, 40);
        int ta = (int)tu_int(&r, 0, 1), tb = (int)tu_int(&r, 0, 1), sp = (int)(sd % 2);
        double alpha = alphas[(sd / 2) % 4], beta = betas[(sd / 8) % 3];
        tu_kind_t kind = (tu_kind_t)tu_int(&r, 0, 3);
        int64_t ar = ta ? k : m, ac = ta ? m : k, br = tb ? n : k, bc = tb ? k : n;
        int64_t lda = (ar > 1 ? ar : 1) + tu_int(&r, 0, 3);
        int64_t ldb = (br > 1 ? br : 1) + tu_int(&r, 0, 3);
        int64_t ldc = m + tu_int(&r, 0, 3);
        double *A = tu_alloc_d(lda * (ac > 0 ? ac : 1)), *B = tu_alloc_d(ldb * (bc > 0 ? bc : 1));
        double *C = tu_alloc_d(ldc * n);
        tu_fill_d(&r, kind, ar, ac, A, lda);
        tu_fill_d(&r, kind, br, bc, B, ldb);
        tu_fill_d(&r, kind, m, n, C, ldc);
        abft_set_checksum_kind(h, (sd / 12) % 2 ? ABFT_CHECKSUM_FULL : ABFT_CHECKSUM_ROW);
        abft_set_random_checksum(h, 1, sd * 31 + 7);
        abft_report_t rep;
        abft_status_t st;
        if (sp) { /* fp32 */
            float *As = (float *)A, *Bs = (float *)B, *Cs = (float *)C;
            for (int64_t i = 0; i < lda * ac; ++i) As[i] = (float)A[i];
            for (int64_t i = 0; i < ldb * bc; ++i) Bs[i] = (float)B[i];
            for (int64_t i = 0; i < ldc * n; ++i) Cs[i] = (float)C[i];
            st = abft_sgemm(h, (abft_operation_t)ta, (abft_operation_t)tb, m, n, k,
                            (float)alpha, As, lda, Bs, ldb, (float)beta, Cs, ldc, &rep);
        } else if (sd % 3 == 0) { /* the split form, verified with or without A and B */
            abft_gemm_plan_t p = NULL;
            st = abft_gemm_plan_create(h, 'd', (abft_operation_t)ta, (abft_operation_t)tb, m, n,
                                       k, alpha, beta, &p);
            if (st == ABFT_STATUS_SUCCESS) st = abft_dgemm_encode(h, p, A, lda, B, ldb, C, ldc);
            for (int64_t j = 0; j < n && st == ABFT_STATUS_SUCCESS; ++j)
                for (int64_t i = 0; i < m; ++i) { /* the caller's own GEMM */
                    long double acc = 0.0L;
                    for (int64_t l = 0; l < k; ++l)
                        acc += (long double)(ta ? A[l + i * lda] : A[i + l * lda]) *
                               (tb ? B[j + l * ldb] : B[l + j * ldb]);
                    C[i + j * ldc] = (double)((long double)alpha * acc +
                                              (beta != 0.0 ? (long double)beta * C[i + j * ldc]
                                                           : 0.0L));
                }
            const int inputs = (int)((sd / 6) % 2);
            if (st == ABFT_STATUS_SUCCESS)
                st = abft_dgemm_verify(h, p, inputs ? A : NULL, lda, inputs ? B : NULL, ldb, C,
                                       ldc, &rep);
            abft_gemm_plan_destroy(p);
        } else {
            st = abft_dgemm(h, (abft_operation_t)ta, (abft_operation_t)tb, m, n, k, alpha, A,
                            lda, B, ldb, beta, C, ldc, &rep);
        }
        TU_CHECK_STATUS(st, ABFT_STATUS_SUCCESS);
        ++products;
        if (rep.detected != 0) {
            ++flagged;
            printf("test_soundness: random checksum false alarm, seed %llu (m %lld n %lld k %lld "
                   "%s)\n", (unsigned long long)sd, (long long)m, (long long)n, (long long)k,
                   sp ? "fp32" : "fp64");
        }
        if (rep.max_ratio > worst) worst = rep.max_ratio;
        free(A), free(B), free(C);
    }
    /* subnormal products, row and full checksums, plain and split form */
    for (uint64_t sd = 1; sd <= 120; ++sd) {
        tu_rng_t r;
        tu_rng_init(&r, 7600 + sd);
        const int64_t m = sd % 2 ? 4 : 1, n = sd % 2 ? 8 : 4, k = sd % 2 ? 8 : 2;
        double A[32], B[64], C[32];
        for (int64_t i = 0; i < m * k; ++i)
            A[i] = sd % 2 ? tu_range(&r, 500.0, 1000.0) : 0x1p1000 * tu_range(&r, 1.0, 2.0);
        for (int64_t i = 0; i < k * n; ++i) B[i] = (double)tu_int(&r, 1, 5) * 0x1p-1074;
        const double alpha = sd % 3 == 0 ? 1000.0 : sd % 3 == 1 ? 0x1p20 : -64.0;
        abft_set_checksum_kind(h, (sd / 2) % 2 ? ABFT_CHECKSUM_FULL : ABFT_CHECKSUM_ROW);
        abft_set_random_checksum(h, 1, sd);
        abft_report_t rep;
        memset(C, 0, sizeof C);
        TU_CHECK_STATUS(abft_dgemm(h, ABFT_OP_N, ABFT_OP_N, m, n, k, alpha, A, m, B, k, 0.0, C,
                                   m, &rep),
                        ABFT_STATUS_SUCCESS);
        ++products;
        if (rep.detected != 0) {
            ++flagged;
            printf("test_soundness: random checksum false alarm on subnormal data, seed %llu, "
                   "ratio %g\n", (unsigned long long)sd, rep.max_ratio);
        }
    }
    TU_CHECK(flagged == 0, "random checksum: %lld of %lld clean products flagged",
             (long long)flagged, (long long)products);
    printf("test_soundness: random checksum, %lld clean products (120 subnormal): %lld "
           "flagged, largest residual/bound %.3g\n", (long long)products, (long long)flagged,
           worst);
    abft_set_checksum_kind(h, ABFT_CHECKSUM_ROW);
    abft_set_random_checksum(h, 0, 0);
}

/* 8. alpha = 0 follows BLAS: A and B are not referenced (NULL is accepted, a NaN in them
 *    changes nothing), C becomes beta·C, checked. */
static void test_alpha_zero(abft_handle_t h) {
    gemm_t g;
    make(&g, 8008, 0.0, 0.5);
    abft_report_t rep;
    memcpy(g.C, g.C0, sizeof g.C);
    TU_CHECK_STATUS(abft_dgemm(h, ABFT_OP_N, ABFT_OP_T, M, N, K, 0.0, NULL, M, NULL, N, 0.5,
                               g.C, M, &rep),
                    ABFT_STATUS_SUCCESS);
    double off = 0.0;
    for (int i = 0; i < M * N; ++i) off = fmax(off, fabs(g.C[i] - 0.5 * g.C0[i]));
    TU_CHECK(off == 0.0 && rep.detected == 0, "alpha = 0: C off beta·C by %g, detected %lld",
             off, (long long)rep.detected);
    TU_CHECK_STATUS(abft_dgemm(h, ABFT_OP_N, ABFT_OP_N, M, N, K, 0.0, NULL, M - 1, NULL, K, 0.5,
                               g.C, M, &rep),
                    ABFT_STATUS_INVALID_VALUE); /* lda is still checked */
    g.A[3] = NAN;
    memcpy(g.C, g.C0, sizeof g.C);
    TU_CHECK_STATUS(call(h, &g, g.C, &rep), ABFT_STATUS_SUCCESS);
    TU_CHECK(rep.nonfinite_input == 0 && rep.detected == 0, "alpha = 0: a NaN in A was read");
}

/* 9. LU: a multiplier corrupted to a huge value inflates its own row's bound (|L|·(|U|·V) of
 *    the factors as they are), and when row c of U·V cancels it hides completely (here
 *    U(c, c:c+2) = (1, -2, 1)·16, so (U·V)_c = 0 and the residual of row r does not move).
 *    Partial pivoting keeps |L| <= 1, which bounds |L|·(|U|·V) from the rows of |U|·V: the
 *    row is flagged and reported (no recovery copy: nothing can confirm a correction). The
 *    split form's caller may factor without pivoting (|L| > 1 legitimately): no false alarm
 *    there. */
enum { NL = 8 };
static void lu_factors(double *L, double *U, double *A, double lscale) {
    memset(L, 0, sizeof(double) * NL * NL);
    memset(U, 0, sizeof(double) * NL * NL);
    for (int i = 0; i < NL; ++i) {
        L[i + i * NL] = 1.0;
        for (int j = 0; j < i; ++j) L[i + j * NL] = lscale * (double)((i + 2 * j) % 5 - 2) / 4.0;
        for (int j = i; j < NL; ++j) U[i + j * NL] = 8.0 + (double)((3 * i + j) % 7);
    }
    for (int i = 0; i < NL; ++i) /* A = L·U (exact: small dyadic values) */
        for (int j = 0; j < NL; ++j) {
            double t = 0.0;
            for (int l = 0; l < NL; ++l) t += L[i + l * NL] * U[l + j * NL];
            A[i + j * NL] = t;
        }
}

static void test_lu_big_multiplier(abft_handle_t h) {
    double L[NL * NL], U[NL * NL], A[NL * NL];
    const int c = 3, r = 6;
    lu_factors(L, U, A, 1.0);
    for (int j = c; j < NL; ++j) U[c + j * NL] = 0.0;
    U[c + c * NL] = 16.0, U[c + (c + 1) * NL] = -32.0, U[c + (c + 2) * NL] = 16.0;
    for (int i = 0; i < NL; ++i)
        for (int j = 0; j < NL; ++j) {
            double t = 0.0;
            for (int l = 0; l < NL; ++l) t += L[i + l * NL] * U[l + j * NL];
            A[i + j * NL] = t;
        }
    /* partial pivoting keeps the identity here (|L| <= 1/2): getrf returns L and U */
    int64_t ipiv[NL], info = 0;
    abft_report_t rep;
    double F[NL * NL];
    memcpy(F, A, sizeof F);
    TU_CHECK_STATUS(abft_dgetrf(h, NL, NL, F, NL, ipiv, &info, &rep), ABFT_STATUS_SUCCESS);
    TU_CHECK(rep.detected == 0 && fabs(F[r + c * NL] - L[r + c * NL]) < 1e-12,
             "clean: detected %lld, L(r,c) %g", (long long)rep.detected, F[r + c * NL]);
    memcpy(F, A, sizeof F);
    add_hook_t a = {ABFT_SITE_AFTER_LU, 0, 1, {r}, {c}, {1e6 - L[r + c * NL]}, -1};
    abft_set_hook(h, add_fn, &a);
    TU_CHECK_STATUS(abft_dgetrf(h, NL, NL, F, NL, ipiv, &info, &rep), ABFT_STATUS_SUCCESS);
    abft_set_hook(h, NULL, NULL);
    TU_CHECK(rep.detected >= 1 && rep.corrected == 0 && rep.uncorrectable >= 1 &&
                 F[r + c * NL] == 1e6,
             "huge multiplier over a cancelling row of U·V: detected %lld corrected %lld "
             "uncorrectable %lld", (long long)rep.detected, (long long)rep.corrected,
             (long long)rep.uncorrectable);

    /* the split form with a factorization that does not pivot (|L| up to 3) */
    lu_factors(L, U, A, 6.0);
    for (int i = 0; i < NL; ++i)
        for (int j = 0; j < NL; ++j) F[i + j * NL] = i > j ? L[i + j * NL] : U[i + j * NL];
    for (int i = 0; i < NL; ++i) ipiv[i] = i + 1;
    abft_lu_plan_t plan = NULL;
    TU_CHECK_STATUS(abft_lu_plan_create(h, 'd', NL, NL, &plan), ABFT_STATUS_SUCCESS);
    TU_CHECK_STATUS(abft_dgetrf_encode(h, plan, A, NL), ABFT_STATUS_SUCCESS);
    TU_CHECK_STATUS(abft_dgetrf_verify(h, plan, F, NL, ipiv, 64, &rep), ABFT_STATUS_SUCCESS);
    TU_CHECK(rep.detected == 0, "split form, no pivoting, |L| > 1: false alarm (%lld)",
             (long long)rep.detected);
    abft_lu_plan_destroy(plan);
}

/* 10. A corrupted checksum entry in one row and an input corrupted after encoding in another:
 *     the input fault's row agrees with its re-derived checksum, but the change of S^T·V is
 *     the other row's, so it is reported, not called a checksum fault. */
static void test_checksum_and_input(abft_handle_t h) {
    gemm_t g;
    make(&g, 9009, 1.0, 0.0);
    golden(h, &g);
    abft_set_recompute(h, 0);
    add_hook_t a = {ABFT_SITE_AFTER_ENCODE, 0, 1, {2}, {3}, {1.0}, -1};
    add_hook_t b = {ABFT_SITE_CHECKSUM, 0, 1, {5}, {0}, {100.0}, -1};
    add_hook_t *both[2] = {&a, &b};
    abft_set_hook(h, two_hooks, both);
    abft_report_t rep;
    TU_CHECK_STATUS(call(h, &g, g.C, &rep), ABFT_STATUS_SUCCESS);
    abft_set_hook(h, NULL, NULL);
    abft_set_recompute(h, 1);
    g.A[2 + 3 * M] -= 1.0;
    int cs_row2 = 0, cs_row5 = 0;
    for (int f = 0; f < rep.nfaults; ++f) {
        if (rep.faults[f].action != ABFT_ACTION_CHECKSUM_FAULT) continue;
        cs_row2 |= rep.faults[f].row == 2;
        cs_row5 |= rep.faults[f].row == 5;
    }
    TU_CHECK(!cs_row2 && cs_row5 && rep.uncorrectable >= 1,
             "checksum fault claimed for the input fault's row %d, for the corrupted entry %d, "
             "uncorrectable %lld", cs_row2, cs_row5, (long long)rep.uncorrectable);
}

/* 13. Full checksums without recomputation (beta != 0, or the split form's verify without A
 *     and B): four equal errors around (4, 5), at (4, 4), (4, 6), (3, 5) and (5, 5). Row 4
 *     and column 5 both point at C(4, 5) with the value C(4, 5) - 2·delta, so the crossing
 *     confirmation agreed, and after that write row 4 and column 5 passed (each then holds
 *     a (1, -2, 1) pattern the weights [1, j+1] cannot see): C(4, 5), which was right, was
 *     reported corrected and left off by 0.5. Only a recomputation confirms a correction
 *     now, and without one nothing is written at all: every line holding an error is
 *     reported. */
static void test_plus_pattern(abft_handle_t h) {
    const int64_t i0 = 4, j0 = 5;
    add_hook_t a = {ABFT_SITE_AFTER_GEMM, 0, 4, {4, 4, 3, 5}, {4, 6, 5, 5},
                    {0.25, 0.25, 0.25, 0.25}, -1};
    abft_set_checksum_kind(h, ABFT_CHECKSUM_FULL);
    for (int form = 0; form < 2; ++form)
        for (int rnd = 0; rnd < 2; ++rnd) {
            gemm_t g;
            make(&g, 1313, 1.0, form == 0 ? 1.0 : 0.0);
            abft_set_random_checksum(h, rnd, 77);
            golden(h, &g);
            abft_report_t rep;
            if (form == 0) { /* abft_dgemm, beta = 1: no recomputation */
                abft_set_hook(h, add_fn, &a);
                TU_CHECK_STATUS(call(h, &g, g.C, &rep), ABFT_STATUS_SUCCESS);
                abft_set_hook(h, NULL, NULL);
            } else { /* split form, beta = 0, verify without A and B */
                abft_gemm_plan_t p = NULL;
                TU_CHECK_STATUS(abft_gemm_plan_create(h, 'd', ABFT_OP_N, ABFT_OP_N, M, N, K,
                                                      g.alpha, 0.0, &p),
                                ABFT_STATUS_SUCCESS);
                TU_CHECK_STATUS(abft_dgemm_encode(h, p, g.A, M, g.B, K, NULL, 0),
                                ABFT_STATUS_SUCCESS);
                memcpy(g.C, g.G, sizeof g.C); /* the caller's GEMM */
                for (int f = 0; f < a.n; ++f) g.C[a.r[f] + a.c[f] * M] += a.delta[f];
                TU_CHECK_STATUS(abft_dgemm_verify(h, p, NULL, 0, NULL, 0, g.C, M, &rep),
                                ABFT_STATUS_SUCCESS);
                abft_gemm_plan_destroy(p);
            }
            TU_CHECK(g.C[i0 + j0 * M] == g.G[i0 + j0 * M] || fabs(g.C[i0 + j0 * M] -
                     g.G[i0 + j0 * M]) < 1e-12, "plus, form %d rnd %d: C(4,5) written, off "
                     "by %g", form, rnd, g.C[i0 + j0 * M] - g.G[i0 + j0 * M]);
            TU_CHECK(rep.corrected == 0, "plus, form %d rnd %d: corrected %lld", form, rnd,
                     (long long)rep.corrected);
            /* every error stays in a line reported uncorrectable */
            for (int f = 0; f < a.n; ++f) {
                int covered = 0;
                for (int q = 0; q < rep.nfaults; ++q)
                    if (rep.faults[q].action == ABFT_ACTION_UNCORRECTABLE &&
                        ((rep.faults[q].side == 0 && rep.faults[q].row == a.r[f]) ||
                         (rep.faults[q].side == 1 && rep.faults[q].col == a.c[f])))
                        covered = 1;
                TU_CHECK(covered, "plus, form %d rnd %d: the error at (%lld, %lld) is in no "
                         "reported line", form, rnd, (long long)a.r[f], (long long)a.c[f]);
            }
        }
    /* the same pattern of eight errors delta·s·s^T, s = (1, -2, 1), without its centre:
     * only row 4 and column 5 see anything, and both point at C(4, 5) + 4·delta; a write
     * there would leave delta·s·s^T, which no fixed-weight checksum sees (docs/bound.md).
     * With beta = 0 the recomputation of C(4, 5) refuses that value (and the random
     * checksum sees the pattern): C(4, 5) stays as it was, nothing is reported corrected. */
    add_hook_t b = {ABFT_SITE_AFTER_GEMM, 0, 0, {0}, {0}, {0}, -1};
    const int st[3] = {1, -2, 1};
    for (int x = 0; x < 3; ++x)
        for (int y = 0; y < 3; ++y)
            if (x != 1 || y != 1)
                b.r[b.n] = i0 - 1 + x, b.c[b.n] = j0 - 1 + y, b.delta[b.n++] = 0.25 * st[x] * st[y];
    gemm_t g;
    make(&g, 1314, 1.0, 0.0);
    abft_set_random_checksum(h, 1, 78);
    golden(h, &g);
    abft_report_t rep;
    abft_set_hook(h, add_fn, &b);
    TU_CHECK_STATUS(call(h, &g, g.C, &rep), ABFT_STATUS_SUCCESS);
    abft_set_hook(h, NULL, NULL);
    TU_CHECK(rep.detected > 0 && rep.corrected == 0 &&
                 fabs(g.C[i0 + j0 * M] - g.G[i0 + j0 * M]) < 1e-12,
             "stencil square, random checksum: detected %lld corrected %lld, C(4,5) off by %g",
             (long long)rep.detected, (long long)rep.corrected,
             g.C[i0 + j0 * M] - g.G[i0 + j0 * M]);
    abft_set_random_checksum(h, 0, 0);
    abft_set_checksum_kind(h, ABFT_CHECKSUM_ROW);
    printf("plus pattern: no write, every error in a reported line (4 configurations); "
           "stencil square: C(4, 5) not written\n");
}

/* 14. Absolute-value sums that overflow (|A| near 2^1017, 64 rows): the column's bound is
 *     infinite, so it verifies nothing and the column is reported; report.max_ratio came
 *     back 0 (|d|/inf) while an entry failed. It is now infinite, as the compare counts it. */
static void test_overflowed_ratio(abft_handle_t h) {
    enum { MO = 64 };
    static double A[MO], B[1] = {1.0}, C[MO];
    for (int i = 0; i < MO; ++i) A[i] = (i & 1 ? -1.0 : 1.0) * 0x1p1017;
    for (int kind = 0; kind < 2; ++kind) {
        abft_set_checksum_kind(h, kind ? ABFT_CHECKSUM_FULL : ABFT_CHECKSUM_ROW);
        abft_report_t rep;
        TU_CHECK_STATUS(abft_dgemm(h, ABFT_OP_N, ABFT_OP_N, MO, 1, 1, 1.0, A, MO, B, 1, 0.0, C,
                                   MO, &rep),
                        ABFT_STATUS_SUCCESS);
        TU_CHECK(rep.detected == 0 || rep.max_ratio > 1.0,
                 "kind %d: detected %lld with max_ratio %g", kind, (long long)rep.detected,
                 rep.max_ratio);
        if (kind == 1)
            TU_CHECK(rep.detected > 0 && rep.uncorrectable > 0,
                     "full: the overflowed column was not reported (detected %lld)",
                     (long long)rep.detected);
    }
    abft_set_checksum_kind(h, ABFT_CHECKSUM_ROW);
}

/* 15. The split form's verify accepted C overlapping A (abft_dgemm refuses it): verify may
 *     write C while it reads A and B. And an fp32 plan took scalars beyond fp32's range. */
static void test_split_contract(abft_handle_t h) {
    double A[16], B[16], C[16], Cs[16];
    for (int i = 0; i < 16; ++i) A[i] = B[i] = C[i] = 1.0 + i;
    abft_gemm_plan_t p = NULL;
    TU_CHECK_STATUS(abft_gemm_plan_create(h, 'd', ABFT_OP_N, ABFT_OP_N, 4, 4, 4, 1.0, 0.0, &p),
                    ABFT_STATUS_SUCCESS);
    TU_CHECK_STATUS(abft_dgemm_encode(h, p, C, 4, B, 4, NULL, 0), ABFT_STATUS_SUCCESS);
    memcpy(Cs, C, sizeof C);
    abft_report_t rep;
    memset(&rep, 0x5a, sizeof rep);
    abft_report_t rep0 = rep;
    TU_CHECK_STATUS(abft_dgemm_verify(h, p, C, 4, B, 4, C, 4, &rep), ABFT_STATUS_INVALID_VALUE);
    TU_CHECK(abft_last_invalid_argument() == 7 && memcmp(C, Cs, sizeof C) == 0 &&
                 memcmp(&rep, &rep0, sizeof rep) == 0,
             "verify with C == A: argument %d, C or report touched",
             abft_last_invalid_argument());
    TU_CHECK_STATUS(abft_dgemm_verify(h, p, A, 4, C, 4, C, 4, &rep), ABFT_STATUS_INVALID_VALUE);
    TU_CHECK(abft_last_invalid_argument() == 7, "verify with C == B: argument %d",
             abft_last_invalid_argument());
    abft_gemm_plan_destroy(p);
    (void)A;
    TU_CHECK_STATUS(abft_gemm_plan_create(h, 's', ABFT_OP_N, ABFT_OP_N, 4, 4, 4, 1e39, 0.0, &p),
                    ABFT_STATUS_INVALID_VALUE);
    TU_CHECK(abft_last_invalid_argument() == 8, "fp32 plan, alpha 1e39: argument %d",
             abft_last_invalid_argument());
    TU_CHECK_STATUS(abft_gemm_plan_create(h, 's', ABFT_OP_N, ABFT_OP_N, 4, 4, 4, 1.0, -1e39, &p),
                    ABFT_STATUS_INVALID_VALUE);
    TU_CHECK(abft_last_invalid_argument() == 9, "fp32 plan, beta -1e39: argument %d",
             abft_last_invalid_argument());
}

int main(void) {
    printf("test_soundness: fixed seeds 1001..8008 and 7100..7499\n");
    abft_handle_t h = NULL;
    TU_CHECK_STATUS(abft_create(&h, ABFT_BACKEND_CPU), ABFT_STATUS_SUCCESS);
    test_two_in_a_row(h);
    test_small_second_error(h);
    test_cancelling_row(h);
    test_checksum_fault(h);
    test_underflow(h);
    test_math(h);
    test_stencil(h);
    test_random_checksum(h);
    test_random_clean(h);
    test_alpha_zero(h);
    test_lu_big_multiplier(h);
    test_checksum_and_input(h);
    test_plus_pattern(h);
    test_overflowed_ratio(h);
    test_split_contract(h);
    TU_CHECK_STATUS(abft_destroy(h), ABFT_STATUS_SUCCESS);
    return tu_finish("test_soundness");
}
