/* libabft_blas.so: the checks of SYRK and TRSM (docs/dropin.md, "SYRK and TRSM").
 *
 * SYRK, C = alpha·M·M^T + beta·C on one triangle (M = op(A), n x k): the triangle stands for
 * a symmetric matrix, and its row checksums obey the GEMM identity with op(B) = M^T,
 *   C'·v = alpha·M·(M^T·v) + beta·C·v,
 * each element of either triangle being one dot product of length k as in a GEMM: the bound
 * is the GEMM's (abft_bound_gemm with inner = out = n) and its amplified-underflow term.
 *
 * TRSM, op(A)·X = alpha·B (left) or X·op(A) = alpha·B (right): B is scaled first,
 * B = fl(alpha·B) in the data precision, as the reference BLAS does, and the routine after
 * this library solves with alpha = 1; each right-hand side is then checked with the
 * column checksums of the triangle, v^T·op(T)·y = v^T·b (left: T = A, y and b columns;
 * right: T = op(A)^T, y and b rows), against the triangular solve's bound (abft_bound_trs,
 * the one getrs uses), its underflow terms from the diagonal.
 *
 * Both: weights v_0 = 1 and v_1(i) = i + 1, every sum in fp64 (long double for a result
 * whose sums overflow fp64); a flagged row or right-hand side is reported uncorrectable,
 * which the drop-in's recompute action repairs. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "abft_blas_internal.h"
#include "verify/abft_bound.h"

#define T double
#define P(name) d_##name
#include "abft_blas_l3_tmpl.h"
#undef T
#undef P
#define T float
#define P(name) s_##name
#include "abft_blas_l3_tmpl.h"
#undef T
#undef P

static void report_flag(abft_report_t *rep, int64_t row, int64_t col, long double d,
                        long double t, int flagged, double *worst) {
    double x = d == 0.0L ? 0.0 : (double)(fabsl(d) / t);
    if (isnan(x) || !(t < INFINITY)) x = d == 0.0L && t < INFINITY ? 0.0 : INFINITY;
    if (flagged && !(x > 1.0)) x = nextafter(1.0, 2.0); /* a flagged entry's ratio is > 1 */
    if (x > *worst) *worst = x;
    if (flagged)
        abft_report_add_fault(rep, row, col, (double)d, x, ABFT_ACTION_UNCORRECTABLE,
                              ABFT_FACTOR_NONE, 0);
}

static void report_start(abft_report_t *rep, const abft_arith_t *a) {
    memset(rep, 0, sizeof *rep);
    rep->unit_roundoff = a->u;
}

static void report_end(abft_report_t *rep, int64_t checked, int64_t flagged, double worst) {
    rep->checked = checked;
    rep->detected = flagged;
    rep->uncorrectable = flagged;
    rep->max_ratio = worst;
}

/* ---- SYRK ------------------------------------------------------------------------------ */

size_t abft_blas_syrk_ws(int64_t n, int64_t k) {
    return (size_t)(4 * k + 13 * n + 1) * sizeof(double);
}

int abft_blas_syrk_before(abft_blas_syrk_t *c, void *ws, const void *C, int64_t ldc) {
    double *d = (double *)ws;
    const int64_t n = c->n, k = c->k;
    c->Y = d, c->Ya = d + 2 * k;
    c->S = d + 4 * k, c->Sa = c->S + 2 * n, c->P = c->Sa + 2 * n, c->Pa = c->P + 2 * n;
    c->a1 = c->Pa + 2 * n, c->R = c->a1 + n, c->Ra = c->R + 2 * n;
    int ok = c->prec == 'd'
                 ? d_syrk_encode(c->trans, n, k, (const double *)c->A, c->lda, c->Y, c->Ya,
                                 c->S, c->Sa, c->a1)
                 : s_syrk_encode(c->trans, n, k, (const float *)c->A, c->lda, c->Y, c->Ya,
                                 c->S, c->Sa, c->a1);
    if (!ok) return 0;
    if (c->beta != 0.0) {
        ok = c->prec == 'd' ? d_sym_sums(c->upper, n, (const double *)C, ldc, c->P, c->Pa)
                            : s_sym_sums(c->upper, n, (const float *)C, ldc, c->P, c->Pa);
        if (!ok) return 0;
    } else {
        for (int64_t i = 0; i < 2 * n; ++i) c->P[i] = c->Pa[i] = 0.0;
    }
    c->ysum[0] = c->ysum[1] = 0.0;
    for (int64_t l = 0; l < k; ++l) c->ysum[0] += c->Ya[l], c->ysum[1] += c->Ya[k + l];
    /* the encodings must be finite for the bound to mean anything */
    for (int64_t i = 0; i < 2 * n; ++i)
        if (!isfinite(c->S[i]) || !isfinite(c->Sa[i]) || !isfinite(c->Pa[i])) return 0;
    return 1;
}

void abft_blas_syrk_after(abft_handle_t h, const abft_blas_syrk_t *c, const void *C,
                          int64_t ldc, abft_report_t *rep) {
    const int64_t n = c->n;
    const abft_prec_t prec = c->prec == 'd' ? ABFT_PREC_D : ABFT_PREC_S;
    abft_arith_t arith;
    if (abft_bound_arith(h, prec, &arith) != ABFT_STATUS_SUCCESS) arith = abft_arith_native(prec);
    report_start(rep, &arith);
    abft_gemm_bound_t b;
    abft_bound_gemm(h, &arith, c->alpha, c->beta, n, c->k, n, &b);
    int fin = c->prec == 'd' ? d_sym_sums(c->upper, n, (const double *)C, ldc, c->R, c->Ra)
                             : s_sym_sums(c->upper, n, (const float *)C, ldc, c->R, c->Ra);
    /* a finite result whose sums overflowed fp64: summed again in long double */
    long double *wide = NULL;
    if (fin)
        for (int64_t i = 0; i < 2 * n && wide == NULL; ++i)
            if (!isfinite(c->R[i]) || !isfinite(c->Ra[i])) {
                wide = (long double *)malloc(4 * (size_t)n * sizeof(long double));
                if (wide == NULL) break;
                if (c->prec == 'd')
                    d_sym_sums_w(c->upper, n, (const double *)C, ldc, wide, wide + 2 * n);
                else
                    s_sym_sums_w(c->upper, n, (const float *)C, ldc, wide, wide + 2 * n);
            }
    const long double al = c->alpha, be = c->beta;
    int64_t flagged = 0;
    double worst = 0.0;
    for (int64_t i = 0; i < n; ++i) {
        int fl = 0;
        long double dq[2], tq[2];
        for (int q = 0; q < 2; ++q) {
            const int64_t o = i + (int64_t)q * n;
            const long double r = wide ? wide[o] : (long double)c->R[o];
            const long double ra = wide ? wide[2 * n + o] : (long double)c->Ra[o];
            const long double s = al * (long double)c->S[o] + be * (long double)c->P[o];
            const long double d = r - s;
            long double t = (long double)b.coef_s * (fabsl(al) * (long double)c->Sa[o] +
                                                     fabsl(be) * (long double)c->Pa[o]) +
                            (long double)b.coef_r * ra + (long double)b.abs_floor;
            if (!(fabsl(d) <= t)) { /* the amplified-underflow term, for flagged rows only */
                const double a1 = c->trans ? c->a1[i]
                                  : c->prec == 'd'
                                      ? d_row_norm(c->k, (const double *)c->A, c->lda, i)
                                      : s_row_norm(c->k, (const float *)c->A, c->lda, i);
                t += (long double)abft_bound_gemm_amp(&b, q, a1, c->ysum[q]);
            }
            dq[q] = d, tq[q] = t;
            fl |= !(fabsl(d) <= t);
        }
        const int q = !(fabsl(dq[0]) <= tq[0]) || fl == 0 ? 0 : 1;
        report_flag(rep, i, -1, dq[q], tq[q], fl, &worst);
        if (fl == 0) report_flag(rep, i, -1, dq[1], tq[1], 0, &worst);
        flagged += fl;
    }
    free(wide);
    report_end(rep, n, flagged, worst);
}

void abft_blas_tri_save(char prec, int upper, int64_t n, const void *C, int64_t ldc,
                        void *buf) {
    if (prec == 'd') d_tri_save(upper, n, (const double *)C, ldc, (double *)buf);
    else s_tri_save(upper, n, (const float *)C, ldc, (float *)buf);
}

void abft_blas_tri_load(char prec, int upper, int64_t n, void *C, int64_t ldc,
                        const void *buf) {
    if (prec == 'd') d_tri_load(upper, n, (double *)C, ldc, (const double *)buf);
    else s_tri_load(upper, n, (float *)C, ldc, (const float *)buf);
}

void abft_blas_tri_scale(char prec, int upper, int64_t n, const void *beta, void *C,
                         int64_t ldc) {
    if (prec == 'd') d_tri_scale(upper, n, *(const double *)beta, (double *)C, ldc);
    else s_tri_scale(upper, n, *(const float *)beta, (float *)C, ldc);
}

/* ---- TRSM ------------------------------------------------------------------------------ */

size_t abft_blas_trsm_ws(int64_t m, int64_t n, int left) {
    const int64_t N = left ? m : n, nrhs = left ? n : m;
    return (size_t)(5 * N + 8 * nrhs + 1) * sizeof(double);
}

int abft_blas_trsm_encode(abft_blas_trsm_t *c, void *ws) {
    double *d = (double *)ws;
    const int64_t N = c->left ? c->m : c->n, nrhs = c->left ? c->n : c->m;
    c->K = d, c->Ka = d + 2 * N, c->dg = d + 4 * N;
    c->Bs = d + 5 * N, c->Bsa = c->Bs + 2 * nrhs; /* nrhs x 2 each, then Ys and Ysa */
    c->Ys = c->Bsa + 2 * nrhs, c->Ysa = c->Ys + 2 * nrhs;
    int ok = c->prec == 'd' ? d_trsm_encode(c->left, c->upper, c->trans, c->unit, N,
                                            (const double *)c->A, c->lda, c->K, c->Ka, c->dg)
                            : s_trsm_encode(c->left, c->upper, c->trans, c->unit, N,
                                            (const float *)c->A, c->lda, c->K, c->Ka, c->dg);
    if (!ok) return 0;
    for (int64_t i = 0; i < 2 * N; ++i)
        if (!isfinite(c->K[i]) || !isfinite(c->Ka[i])) return 0;
    c->dsum[0] = c->dsum[1] = 0.0;
    c->dmax = 0.0;
    if (!c->unit) {
        abft_bound_lu_dsum(c->dg, N, 0, c->dsum);
        c->dmax = abft_bound_lu_dmax(c->dg, N);
    }
    return 1;
}

int abft_blas_trsm_rhs(abft_blas_trsm_t *c, void *B, int64_t ldb, const void *alpha) {
    const int64_t nrhs = c->left ? c->n : c->m;
    int ok;
    if (c->prec == 'd') {
        const double a = *(const double *)alpha;
        ok = d_trsm_rhs(c->left, c->m, c->n, (double *)B, ldb, a != 1.0, a, c->Bs, c->Bsa);
    } else {
        const float a = *(const float *)alpha;
        ok = s_trsm_rhs(c->left, c->m, c->n, (float *)B, ldb, a != 1.0f, a, c->Bs, c->Bsa);
    }
    if (!ok) return 0;
    for (int64_t i = 0; i < 2 * nrhs; ++i)
        if (!isfinite(c->Bs[i]) || !isfinite(c->Bsa[i])) return 0;
    return 1;
}

void abft_blas_trsm_after(abft_handle_t h, const abft_blas_trsm_t *c, const void *X,
                          int64_t ldx, abft_report_t *rep) {
    const int64_t N = c->left ? c->m : c->n, nrhs = c->left ? c->n : c->m;
    const abft_prec_t prec = c->prec == 'd' ? ABFT_PREC_D : ABFT_PREC_S;
    abft_arith_t arith;
    if (abft_bound_arith(h, prec, &arith) != ABFT_STATUS_SUCCESS) arith = abft_arith_native(prec);
    report_start(rep, &arith);
    abft_trs_bound_t b;
    abft_bound_trs(h, &arith, prec, N, c->unit, &b);
    const int fin =
        c->prec == 'd'
            ? d_trsm_sol(c->left, c->m, c->n, (const double *)X, ldx, c->K, c->Ka, c->Ys, c->Ysa)
            : s_trsm_sol(c->left, c->m, c->n, (const float *)X, ldx, c->K, c->Ka, c->Ys, c->Ysa);
    long double *wide = NULL;
    if (fin)
        for (int64_t i = 0; i < 2 * nrhs && wide == NULL; ++i)
            if (!isfinite(c->Ys[i]) || !isfinite(c->Ysa[i])) {
                wide = (long double *)malloc(4 * (size_t)nrhs * sizeof(long double));
                if (wide == NULL) break;
                if (c->prec == 'd')
                    d_trsm_sol_w(c->left, c->m, c->n, (const double *)X, ldx, c->K, c->Ka,
                                 wide, wide + 2 * nrhs);
                else
                    s_trsm_sol_w(c->left, c->m, c->n, (const float *)X, ldx, c->K, c->Ka,
                                 wide, wide + 2 * nrhs);
            }
    const double rc = c->dmax >= b.rcp_limit ? b.rcp_coef : 0.0;
    int64_t flagged = 0;
    double worst = 0.0;
    for (int64_t j = 0; j < nrhs; ++j) {
        int fl = 0;
        long double dq[2], tq[2];
        for (int q = 0; q < 2; ++q) {
            const int64_t o = j + (int64_t)q * nrhs;
            const long double ys = wide ? wide[o] : (long double)c->Ys[o];
            const long double ya = wide ? wide[2 * nrhs + o] : (long double)c->Ysa[o];
            const long double d = ys - (long double)c->Bs[o];
            const long double t = (long double)(b.coef_y + rc) * ya +
                                  (long double)(b.coef_b + rc) * (long double)c->Bsa[o] +
                                  (long double)b.abs_floor +
                                  (long double)b.eta_amp * (long double)c->dsum[q];
            dq[q] = d, tq[q] = t;
            fl |= !(fabsl(d) <= t) || !(t < INFINITY);
        }
        const int q = !(fabsl(dq[0]) <= tq[0]) || fl == 0 ? 0 : 1;
        /* left: right-hand side j is column j of X (row -1); right: row j (column -1) */
        report_flag(rep, c->left ? -1 : j, c->left ? j : -1, dq[q], tq[q], fl, &worst);
        if (fl == 0) report_flag(rep, -1, -1, dq[1], tq[1], 0, &worst);
        flagged += fl;
    }
    free(wide);
    report_end(rep, nrhs, flagged, worst);
}
