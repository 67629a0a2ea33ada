/* abft: protected solve with LU factors (docs/lu.md). Each triangular solve op(T)·y = b is
 * checked with the column checksums of its factor: V^T·op(T)·y = V^T·b per right-hand side,
 * against |V^T·op(T)·ŷ - V^T·b| <= (γ_n(u_f) + 2γ_n(u_c))·(|op(T)|^T·V)^T·|ŷ| + γ_n(u_c)·|b|^T·V
 * (the triangular solve's backward error (T + ΔT)·ŷ = b, |ΔT| <= γ_n|T|, plus the checksum
 * products). Flagged right-hand sides are reported uncorrectable. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "abft_lu_internal.h"

typedef struct solve_ws {
    double *K, *Ka;   /* op(T)^T·V, |op(T)|^T·V (n x 2) */
    double *Bs, *Bsa; /* b^T·V, |b|^T·V (nrhs x 2) */
    double *Ys, *Ysa; /* ŷ^T·K, |ŷ|^T·Ka (nrhs x 2) */
} solve_ws_t;

/* Solve op(T)·Y = B in place (uplo 1: unit L, 0: U) and check it. */
static abft_status_t checked_solve(abft_handle_t h, abft_prec_t prec, int uplo, int trans,
                                   int64_t n, int64_t nrhs, const void *A, int64_t lda, void *B,
                                   int64_t ldb, solve_ws_t *w, abft_report_t *rep) {
    const abft_lu_ops_t *lo = abft_lu_ops(h);
    /* column checksums of op(T): op = N needs T^T·V (trans tri), op = T needs T·V */
    abft_lu_tri_args_t k = {prec, uplo, !trans, n, n, A, lda, NULL, 0, NULL, 0, 0, w->K, n,
                            w->Ka, n};
    ABFT_TRY(lo->lu_tri(&h->kctx, &k));
    abft_tsmm_args_t bs = {prec, 1, n, nrhs, 2, B, ldb, NULL, 0, NULL, 0, w->Bs, nrhs, w->Bsa, nrhs};
    ABFT_TRY(h->ops->tsmm(&h->kctx, &bs));
    abft_lu_trsm_args_t ts = {prec, uplo, trans, n, nrhs, A, lda, B, ldb};
    ABFT_TRY(lo->lu_trsm(&h->kctx, &ts));
    abft_tsmm_args_t ys = {prec, 1, n, nrhs, 2, B, ldb, w->K, n, w->Ka, n, w->Ys, nrhs, w->Ysa, nrhs};
    ABFT_TRY(h->ops->tsmm(&h->kctx, &ys));
    const double uf = abft_lu_unit_roundoff(prec), uc = 0x1.0p-53;
    const double slack = 1.0 + 4.0 * abft_gamma(h, 2.0 * (double)n, uc);
    double cs = (abft_gamma(h, (double)n, uf) + 2.0 * abft_gamma(h, (double)n, uc)) * slack;
    double cr = abft_gamma(h, (double)n, uc) * slack;
    double floor = (double)(3 * n + 2) * (double)n * ((double)n + 1.0) / 2.0 * abft_lu_eta(prec);
    int64_t list[ABFT_REPORT_MAX_FAULTS], nflag = 0;
    double mr = 0.0;
    abft_compare_args_t c = {nrhs, w->Bs, nrhs, w->Bsa, nrhs, w->Ys, nrhs, w->Ysa, nrhs, NULL, 0,
                             NULL, 0, 1.0, 0.0, cs, cr, floor, ABFT_REPORT_MAX_FAULTS, list,
                             &nflag, &mr};
    ABFT_TRY(h->ops->compare(&h->kctx, &c, 1));
    int64_t nbad = 0; /* an overflowed bound passes anything */
    ABFT_TRY(abft_lu_nonfinite_rows(h, nrhs, w->Ysa, nrhs, &nbad));
    if (nbad > 0) mr = INFINITY;
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

static abft_status_t getrs(abft_handle_t h, abft_prec_t prec, abft_operation_t trans, int64_t n,
                           int64_t nrhs, const void *A, int64_t lda, const int64_t *ipiv, void *B,
                           int64_t ldb, abft_report_t *report) {
    ABFT_RETURN_IF(!abft_handle_ok(h), ABFT_STATUS_NOT_INITIALIZED);
    ABFT_RETURN_IF(abft_bad_op(trans), ABFT_STATUS_INVALID_VALUE);
    ABFT_RETURN_IF(abft_bad_matrix(n, n, A, lda) || abft_bad_matrix(n, nrhs, B, ldb),
                   ABFT_STATUS_INVALID_VALUE);
    ABFT_RETURN_IF(n > 0 && ipiv == NULL, ABFT_STATUS_INVALID_VALUE);
    abft_report_t local;
    abft_report_t *rep = report != NULL ? report : &local;
    memset(rep, 0, sizeof *rep);
    rep->unit_roundoff = abft_lu_unit_roundoff(prec);
    if (n == 0 || nrhs == 0) return ABFT_STATUS_SUCCESS;
    const abft_lu_ops_t *lo = abft_lu_ops(h);
    int64_t *hp = (int64_t *)malloc((size_t)n * sizeof(int64_t));
    ABFT_RETURN_IF(hp == NULL, ABFT_STATUS_ALLOC_FAILED);
    void *mem = NULL;
    abft_status_t st = h->ops->alloc(&h->kctx, (4 * (size_t)n + 8 * (size_t)nrhs) * sizeof(double), &mem);
    abft_copy_args_t cp = {0, sizeof(int64_t), n, 1, hp, n, (void *)ipiv, n};
    if (st == ABFT_STATUS_SUCCESS) st = h->ops->copy(&h->kctx, &cp);
    for (int64_t i = 0; i < n && st == ABFT_STATUS_SUCCESS; ++i)
        if (hp[i] < i + 1 || hp[i] > n) st = ABFT_STATUS_INVALID_VALUE;
    if (st == ABFT_STATUS_SUCCESS) {
        double *d = (double *)mem;
        solve_ws_t w = {d, d + 2 * n, d + 4 * n, d + 4 * n + 2 * nrhs, d + 4 * n + 4 * nrhs,
                        d + 4 * n + 6 * nrhs};
        if (trans == ABFT_OP_N) {
            abft_lu_laswp_args_t sw = {prec, 0, nrhs, B, ldb, 0, n, hp, 0, 0, 0, 0, NULL, 0, 0};
            st = lo->lu_laswp(&h->kctx, &sw);
            if (st == ABFT_STATUS_SUCCESS)
                st = checked_solve(h, prec, 1, 0, n, nrhs, A, lda, B, ldb, &w, rep);
            if (st == ABFT_STATUS_SUCCESS)
                st = checked_solve(h, prec, 0, 0, n, nrhs, A, lda, B, ldb, &w, rep);
        } else {
            st = checked_solve(h, prec, 0, 1, n, nrhs, A, lda, B, ldb, &w, rep);
            if (st == ABFT_STATUS_SUCCESS)
                st = checked_solve(h, prec, 1, 1, n, nrhs, A, lda, B, ldb, &w, rep);
            for (int64_t i = n - 1; i >= 0 && st == ABFT_STATUS_SUCCESS; --i) {
                abft_lu_laswp_args_t sw = {prec, 0, nrhs, B, ldb, i, i + 1, hp, 0, 0, 0, 0, NULL, 0, 0};
                st = lo->lu_laswp(&h->kctx, &sw);
            }
        }
    }
    if (mem != NULL) h->ops->free(&h->kctx, mem);
    free(hp);
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
