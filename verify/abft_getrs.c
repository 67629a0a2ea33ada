/* abft: protected solve with LU factors (docs/lu.md). Each triangular solve op(T)·y = b is
 * checked with the column checksums of its factor: V^T·op(T)·y = V^T·b per right-hand side,
 * against |V^T·op(T)·ŷ - V^T·b| <= coef_y·(|op(T)|^T·V)^T·|ŷ| + coef_b·|b|^T·V + underflow
 * terms (abft_bound_trs: the triangular solve's backward error (T + ΔT)·ŷ = b,
 * |ΔT| <= γ|T|, plus the checksum products, plus the subnormal losses of the quotients,
 * which row i multiplies by |T(i, i)|). Flagged right-hand sides are reported
 * uncorrectable. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "abft_lu_internal.h"

typedef struct solve_ws {
    double *K, *Ka;   /* op(T)^T·V, |op(T)|^T·V (n x 2) */
    double *Bs, *Bsa; /* b^T·V, |b|^T·V (nrhs x 2) */
    double *Ys, *Ysa; /* ŷ^T·K, |ŷ|^T·Ka (nrhs x 2) */
    void *Bc;         /* b as it was before the solve (n x nrhs, ld n, data precision) */
} solve_ws_t;

/* The compare leaves out the amplified-underflow term (it needs T's diagonal): when it
 * flags, the right-hand sides are counted again on the host against the full bound
 * (docs/lu.md, "Gradual underflow"); *nflag, list and *mr are replaced. When the
 * magnitude sums overflowed fp64 (a solution of huge values that is itself finite, as
 * graded matrices give): y^T·K and |y|^T·Ka are summed again from the solution Y (n x nrhs,
 * ldy), and b^T·V and |b|^T·V from the copy of b taken before the solve, in long double,
 * whose exponent range holds them, and the compare is made there; only a bound that
 * overflows even there (or a non-finite solution) verifies nothing. */
static abft_status_t recount(abft_handle_t h, abft_prec_t prec, int unit, int64_t n,
                             int64_t nrhs, const void *A, int64_t lda, const void *Y,
                             int64_t ldy, const solve_ws_t *w,
                             const abft_trs_bound_t *b, int64_t *list, int64_t *nflag,
                             double *mr) {
    const size_t es = prec == ABFT_PREC_D ? 8 : 4, rr = (size_t)nrhs;
    double dsum[3] = {0.0, 0.0, 0.0};
    double *buf = (double *)malloc((8 * rr + (size_t)n) * sizeof(double));
    void *raw = malloc((size_t)n * es);
    abft_status_t st = buf == NULL || raw == NULL ? ABFT_STATUS_ALLOC_FAILED : ABFT_STATUS_SUCCESS;
    if (st == ABFT_STATUS_SUCCESS && !unit) {
        double *dg = buf + 8 * rr;
        abft_copy_args_t cd = {0, es, 1, n, raw, 1, (void *)A, lda + 1};
        st = h->ops->copy(&h->kctx, &cd);
        for (int64_t i = 0; i < n && st == ABFT_STATUS_SUCCESS; ++i)
            dg[i] = es == 8 ? ((double *)raw)[i] : (double)((float *)raw)[i];
        if (st == ABFT_STATUS_SUCCESS) {
            abft_bound_lu_dsum(dg, n, 0, dsum);
            dsum[2] = abft_bound_lu_dmax(dg, n);
        }
    }
    const double *src[4] = {w->Bs, w->Bsa, w->Ys, w->Ysa};
    for (int a = 0; a < 4 && st == ABFT_STATUS_SUCCESS; ++a) {
        abft_copy_args_t c = {0, sizeof(double), nrhs, 2, buf + 2 * rr * (size_t)a, nrhs,
                              (void *)src[a], nrhs};
        st = h->ops->copy(&h->kctx, &c);
    }
    /* wide: a magnitude sum (|b|^T·V or |ŷ|^T·Ka) is not finite: every sum again, in long
     * double (ys: y^T·K, |y|^T·Ka, b^T·V, |b|^T·V, nrhs x 2 each) */
    int wide = 0;
    for (size_t o = 0; o < 2 * rr && st == ABFT_STATUS_SUCCESS; ++o)
        if (!isfinite(buf[2 * rr + o]) || !isfinite(buf[6 * rr + o])) wide = 1;
    long double *ys = NULL;
    if (st == ABFT_STATUS_SUCCESS && wide) {
        ys = (long double *)malloc(8 * rr * sizeof(long double));
        double *k = (double *)malloc(4 * (size_t)n * sizeof(double) + 1);
        void *yc = malloc((size_t)n * es + 1);
        if (ys == NULL || k == NULL || yc == NULL) st = ABFT_STATUS_ALLOC_FAILED;
        const double *ksrc[2] = {w->K, w->Ka};
        for (int a = 0; a < 2 && st == ABFT_STATUS_SUCCESS; ++a) {
            abft_copy_args_t c = {0, sizeof(double), n, 2, k + 2 * (size_t)n * (size_t)a, n,
                                  (void *)ksrc[a], n};
            st = h->ops->copy(&h->kctx, &c);
        }
        for (int64_t j = 0; j < nrhs && st == ABFT_STATUS_SUCCESS; ++j) {
            abft_copy_args_t c = {0, es, n, 1, yc, n,
                                  (char *)(uintptr_t)Y + (size_t)j * (size_t)ldy * es, ldy};
            st = h->ops->copy(&h->kctx, &c);
            for (int q = 0; q < 2 && st == ABFT_STATUS_SUCCESS; ++q) {
                long double sy = 0.0L, sa = 0.0L;
                for (int64_t i = 0; i < n; ++i) {
                    long double y = es == 8 ? ((double *)yc)[i] : ((float *)yc)[i];
                    sy += (long double)k[i + (size_t)q * (size_t)n] * y;
                    sa += (long double)k[2 * (size_t)n + i + (size_t)q * (size_t)n] * fabsl(y);
                }
                ys[(size_t)j + (size_t)q * rr] = sy, ys[2 * rr + (size_t)j + (size_t)q * rr] = sa;
            }
            /* and the right-hand side's, from its copy taken before the solve */
            abft_copy_args_t cb = {0, es, n, 1, yc, n,
                                   (char *)w->Bc + (size_t)j * (size_t)n * es, n};
            if (st == ABFT_STATUS_SUCCESS) st = h->ops->copy(&h->kctx, &cb);
            for (int q = 0; q < 2 && st == ABFT_STATUS_SUCCESS; ++q) {
                long double sb = 0.0L, sba = 0.0L;
                for (int64_t i = 0; i < n; ++i) {
                    long double v = q ? (long double)(i + 1) : 1.0L;
                    long double x = es == 8 ? ((double *)yc)[i] : ((float *)yc)[i];
                    sb += v * x, sba += v * fabsl(x);
                }
                ys[4 * rr + (size_t)j + (size_t)q * rr] = sb;
                ys[6 * rr + (size_t)j + (size_t)q * rr] = sba;
            }
        }
        free(k);
        free(yc);
    }
    int64_t nf = 0;
    double m = 0.0;
    const double rc = dsum[2] >= b->rcp_limit ? b->rcp_coef : 0.0;
    for (int64_t j = 0; j < nrhs && st == ABFT_STATUS_SUCCESS; ++j) {
        int fl = 0;
        for (int q = 0; q < 2; ++q) {
            size_t o = (size_t)j + (size_t)q * rr;
            long double ysum = ys != NULL ? ys[o] : (long double)buf[4 * rr + o];
            long double yabs = ys != NULL ? ys[2 * rr + o] : (long double)buf[6 * rr + o];
            long double bsum = ys != NULL ? ys[4 * rr + o] : (long double)buf[o];
            long double babs = ys != NULL ? ys[6 * rr + o] : (long double)buf[2 * rr + o];
            long double d = ysum - bsum;
            long double t = (long double)(b->coef_y + rc) * yabs +
                            (long double)(b->coef_b + rc) * babs + b->abs_floor +
                            (long double)b->eta_amp * dsum[q];
            const int flq = !(fabsl(d) <= t) || !isfinite(t);
            fl |= flq;
            long double xl = d == 0.0L ? 0.0L : fabsl(d) / t;
            double x = (double)xl;
            if (isnan(x) || !isfinite(t)) x = INFINITY;
            /* a ratio above 1 in long double may round to 1 in double: a flagged entry's
             * ratio stays above 1 (docs/api.md, max_ratio) */
            if (flq && !(x > 1.0)) x = nextafter(1.0, 2.0);
            if (x > m) m = x;
        }
        if (fl && nf < ABFT_REPORT_MAX_FAULTS) list[nf] = j;
        nf += fl;
    }
    free(raw);
    free(buf);
    free(ys);
    if (st == ABFT_STATUS_SUCCESS) {
        *nflag = nf;
        *mr = m;
    }
    return st;
}

/* Solve op(T)·Y = B in place (uplo 1: unit L, 0: U) and check it. */
static abft_status_t checked_solve(abft_handle_t h, abft_prec_t prec, const abft_arith_t *f,
                                   int uplo, int trans, int64_t n, int64_t nrhs, const void *A,
                                   int64_t lda, void *B, int64_t ldb, solve_ws_t *w,
                                   abft_report_t *rep) {
    const abft_lu_ops_t *lo = abft_lu_ops(h);
    /* column checksums of op(T): op = N needs T^T·V (trans tri), op = T needs T·V */
    abft_lu_tri_args_t k = {prec, uplo, !trans, n, n, A, lda, NULL, 0, NULL, 0, 0, w->K, n,
                            w->Ka, n};
    ABFT_TRY(lo->lu_tri(&h->kctx, &k));
    abft_tsmm_args_t bs = {prec, 1, n, nrhs, 2, B, ldb, NULL, 0, NULL, 0, w->Bs, nrhs, w->Bsa, nrhs, 0};
    ABFT_TRY(h->ops->tsmm(&h->kctx, &bs));
    /* b as it was, for a recount whose sums overflow fp64 (on the stream: no wait) */
    abft_copy_args_t cb = {2, prec == ABFT_PREC_D ? 8u : 4u, n, nrhs, w->Bc, n, B, ldb};
    ABFT_TRY(h->ops->copy(&h->kctx, &cb));
    abft_lu_trsm_args_t ts = {prec, uplo, trans, n, nrhs, A, lda, B, ldb};
    ABFT_TRY(lo->lu_trsm(&h->kctx, &ts));
    abft_tsmm_args_t ys = {prec, 1, n, nrhs, 2, B, ldb, w->K, n, w->Ka, n, w->Ys, nrhs, w->Ysa, nrhs, 0};
    ABFT_TRY(h->ops->tsmm(&h->kctx, &ys));
    abft_trs_bound_t b;
    abft_bound_trs(h, f, prec, n, uplo, &b);
    int64_t list[ABFT_REPORT_MAX_FAULTS], nflag = 0;
    double mr = 0.0;
    abft_compare_args_t c = {nrhs, w->Bs, nrhs, w->Bsa, nrhs, w->Ys, nrhs, w->Ysa, nrhs, NULL, 0,
                             NULL, 0, 1.0, 0.0, b.coef_y, b.coef_b, b.abs_floor,
                             ABFT_REPORT_MAX_FAULTS, list,
                             &nflag, &mr, NULL, 0, 0.0, 0.0, 0.0, 0.0, 1.0};
    ABFT_TRY(h->ops->compare(&h->kctx, &c, 1));
    /* the compare flags every right-hand side whose bound is not finite (sums that
     * overflowed fp64): the recount takes those again in long double */
    if (nflag > 0)
        ABFT_TRY(recount(h, prec, uplo, n, nrhs, A, lda, B, ldb, w, &b, list, &nflag, &mr));
    rep->checked += nrhs;
    if (mr > rep->max_ratio || isnan(mr)) rep->max_ratio = mr;
    if (nflag == 0 && !(mr < INFINITY)) nflag = 1;
    rep->detected += nflag;
    rep->uncorrectable += nflag;
    for (int64_t f = 0; f < nflag && f < ABFT_REPORT_MAX_FAULTS; ++f)
        abft_lu_add_fault(rep, -1, list[f], 0.0, mr, ABFT_ACTION_UNCORRECTABLE,
                          uplo ? ABFT_FACTOR_L : ABFT_FACTOR_U);
    return ABFT_STATUS_SUCCESS;
}

/* NaN or Inf in B (n x nrhs)? B^T·0 is NaN exactly in the columns that hold one (Inf·0 and
 * NaN·0 are NaN; a huge finite value gives 0, where |B|^T·V would overflow): one
 * tall-and-skinny product against zeros (Z, n x 2, backend memory, zeroed here) into Y
 * (nrhs x 2, the workspace's Bs), then the screen. Reads B only. */
static abft_status_t b_nonfinite(abft_handle_t h, abft_prec_t prec, int64_t n, int64_t nrhs,
                                 const void *B, int64_t ldb, double *Z, double *Y,
                                 int64_t *count) {
    double *hz = (double *)calloc(2 * (size_t)n, sizeof(double));
    ABFT_RETURN_IF(hz == NULL, ABFT_STATUS_ALLOC_FAILED);
    abft_copy_args_t c = {1, sizeof(double), n, 2, hz, n, Z, n};
    abft_status_t st = h->ops->copy(&h->kctx, &c);
    free(hz);
    ABFT_TRY(st);
    abft_tsmm_args_t t = {prec, 1, n, nrhs, 2, B, ldb, Z, n, NULL, 0, Y, nrhs, NULL, 0, 0};
    ABFT_TRY(h->ops->tsmm(&h->kctx, &t));
    return abft_count_nonfinite(h, Y, nrhs, nrhs, count);
}

static abft_status_t getrs(abft_handle_t h, abft_prec_t prec, abft_operation_t trans, int64_t n,
                           int64_t nrhs, const void *A, int64_t lda, const int64_t *ipiv, void *B,
                           int64_t ldb, abft_report_t *report) {
    ABFT_RETURN_IF(!abft_handle_ok(h), ABFT_STATUS_NOT_INITIALIZED);
    /* positions: trans 2, n 3, nrhs 4, A 5, lda 6, ipiv 7, B 8, ldb 9, report 10 */
    ABFT_ARG_IF(abft_bad_op(trans), 2);
    ABFT_ARG_IF(n < 0, 3);
    ABFT_ARG_IF(nrhs < 0, 4);
    int bad = abft_matrix_bad_arg(n, n, A, lda, 5, 6);
    ABFT_ARG_IF(bad != 0, bad);
    bad = abft_matrix_bad_arg(n, nrhs, B, ldb, 8, 9);
    ABFT_ARG_IF(bad != 0, bad);
    ABFT_ARG_IF(n > 0 && ipiv == NULL, 7);
    /* B is written while A and ipiv are read; the report must overlap none of them */
    const size_t es = prec == ABFT_PREC_D ? 8 : 4;
    const size_t bA = abft_lu_span(n, n, lda, es), bB = abft_lu_span(n, nrhs, ldb, es);
    const size_t bP = (size_t)n * sizeof(int64_t), bR = report != NULL ? sizeof *report : 0;
    ABFT_ARG_IF(abft_lu_overlap(B, bB, A, bA) || abft_lu_overlap(B, bB, ipiv, bP), 8);
    ABFT_ARG_IF(abft_lu_overlap(report, bR, A, bA) || abft_lu_overlap(report, bR, B, bB) ||
                    abft_lu_overlap(report, bR, ipiv, bP),
                10);
    /* the solves run in the BLAS's arithmetic (CUDA: the cuBLAS handle's math mode) */
    abft_arith_t arith;
    ABFT_TRY(abft_bound_arith(h, prec, &arith));
    /* Errors leave every output untouched: the report is written at the end. */
    abft_report_t lrep;
    abft_report_t *rep = &lrep;
    memset(rep, 0, sizeof *rep);
    rep->unit_roundoff = abft_lu_report_u(&arith);
    if (n == 0 || nrhs == 0) {
        if (report != NULL) {
            abft_bound_report_lu(h, &lrep);
            *report = lrep;
        }
        return ABFT_STATUS_SUCCESS;
    }
    const abft_lu_ops_t *lo = abft_lu_ops(h);
    int64_t *hp = (int64_t *)malloc((size_t)n * sizeof(int64_t));
    ABFT_RETURN_IF(hp == NULL, ABFT_STATUS_ALLOC_FAILED);
    void *mem = NULL;
    abft_copy_args_t cp = {0, sizeof(int64_t), n, 1, hp, n, (void *)ipiv, n};
    abft_status_t st = h->ops->copy(&h->kctx, &cp);
    /* a pivot getrf never writes is refused before anything is written */
    for (int64_t i = 0; i < n && st == ABFT_STATUS_SUCCESS; ++i)
        if (hp[i] < i + 1 || hp[i] > n) {
            abft_set_bad_arg(7);
            st = ABFT_STATUS_INVALID_VALUE;
        }
    if (st == ABFT_STATUS_SUCCESS)
        st = h->ops->alloc(&h->kctx,
                           (4 * (size_t)n + 8 * (size_t)nrhs + (size_t)n * (size_t)nrhs) *
                               sizeof(double),
                           &mem);
    /* NaN/Inf in B: refused before anything is written (the factors are not scanned) */
    int64_t nbad = 0;
    if (st == ABFT_STATUS_SUCCESS)
        st = b_nonfinite(h, prec, n, nrhs, B, ldb, (double *)mem, (double *)mem + 4 * n, &nbad);
    if (st == ABFT_STATUS_SUCCESS && nbad > 0) st = ABFT_STATUS_NON_FINITE_INPUT;
    if (st == ABFT_STATUS_SUCCESS) {
        double *d = (double *)mem;
        solve_ws_t w = {d, d + 2 * n, d + 4 * n, d + 4 * n + 2 * nrhs, d + 4 * n + 4 * nrhs,
                        d + 4 * n + 6 * nrhs, d + 4 * n + 8 * nrhs};
        if (trans == ABFT_OP_N) {
            abft_lu_laswp_args_t sw = {prec, 0, nrhs, B, ldb, 0, n, hp, 0, 0, 0, 0, NULL, 0, 0};
            st = lo->lu_laswp(&h->kctx, &sw);
            if (st == ABFT_STATUS_SUCCESS)
                st = checked_solve(h, prec, &arith, 1, 0, n, nrhs, A, lda, B, ldb, &w, rep);
            if (st == ABFT_STATUS_SUCCESS)
                st = checked_solve(h, prec, &arith, 0, 0, n, nrhs, A, lda, B, ldb, &w, rep);
        } else {
            st = checked_solve(h, prec, &arith, 0, 1, n, nrhs, A, lda, B, ldb, &w, rep);
            if (st == ABFT_STATUS_SUCCESS)
                st = checked_solve(h, prec, &arith, 1, 1, n, nrhs, A, lda, B, ldb, &w, rep);
            for (int64_t i = n - 1; i >= 0 && st == ABFT_STATUS_SUCCESS; --i) {
                abft_lu_laswp_args_t sw = {prec, 0, nrhs, B, ldb, i, i + 1, hp, 0, 0, 0, 0, NULL, 0, 0};
                st = lo->lu_laswp(&h->kctx, &sw);
            }
        }
    }
    if (mem != NULL) h->ops->free(&h->kctx, mem);
    free(hp);
    if (st == ABFT_STATUS_NON_FINITE_INPUT) {
        lrep.nonfinite_input = 1;
        if (report != NULL) {
            abft_bound_report_lu(h, &lrep);
            *report = lrep;
        }
        return st;
    }
    if (st == ABFT_STATUS_SUCCESS && report != NULL) {
        abft_bound_report_lu(h, &lrep);
        *report = lrep;
    }
    return st;
}

abft_status_t abft_dgetrs(abft_handle_t h, abft_operation_t trans, int64_t n, int64_t nrhs,
                          const double *A, int64_t lda, const int64_t *ipiv, double *B,
                          int64_t ldb, abft_report_t *report) {
    return getrs(h, ABFT_PREC_D, trans, n, nrhs, A, lda, ipiv, B, ldb, report);
}
abft_status_t abft_sgetrs(abft_handle_t h, abft_operation_t trans, int64_t n, int64_t nrhs,
                          const float *A, int64_t lda, const int64_t *ipiv, float *B,
                          int64_t ldb, abft_report_t *report) {
    return getrs(h, ABFT_PREC_S, trans, n, nrhs, A, lda, ipiv, B, ldb, report);
}
