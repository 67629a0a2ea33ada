/* abft verify layer: the protected GEMM's tight bound mode (docs/bound.md, "Tight mode" and
 * "Two stages"): the pass at encoding, the second stage, and the inputs changed after
 * encoding. */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "abft_bound.h"
#include "abft_correct.h"
#include "abft_gemm_internal.h"
#include "abft_internal.h"

int gemm_tight_wanted(const struct abft_gemm_plan *p) {
    return p->h->bound_mode == ABFT_BOUND_TIGHT;
}
/* How the plan's checksums are summed, for the tight bound (abft_bound_tight_comp; on the
 * CUDA backend compensated only where the encoding asked for it: comp). */
int gemm_tight_compensated(const struct abft_gemm_plan *p) {
    const int c = abft_bound_tight_comp(p->h->backend, p->prec);
    return c == ABFT_TIGHT_COMP_TREE && !p->comp ? ABFT_TIGHT_COMP_PLAIN : c;
}
/* The backend runs the tight pass. */
abft_status_t gemm_tight_check(const struct abft_gemm_plan *p) {
    if (!gemm_tight_wanted(p)) return ABFT_STATUS_SUCCESS;
    ABFT_RETURN_IF(p->h->ops->tight == NULL, ABFT_STATUS_NOT_SUPPORTED);
    return ABFT_STATUS_SUCCESS;
}

/* The tight pass (after the encodings of B and A, whose op(B)·V and op(A)^T·V it reads):
 * each row's part of the tight bound, and each column's for FULL (the same pass over
 * C^T = op(B)^T·op(A)^T). Where it does not apply (abft_bound_tight_applies: an arithmetic
 * that shortens the inputs) the worst case is used. */
static abft_status_t tight_run(struct abft_gemm_plan *p, const void *A, int64_t lda,
                               const void *B, int64_t ldb, int filter, int ti, int tci) {
    abft_handle_t h = p->h;
    abft_gemm_tight_t tb;
    abft_bound_gemm_tight(h, &p->arith, p->n, p->k, p->n, gemm_tight_compensated(p), &tb);
    abft_tight_args_t a = {p->prec, p->transa, p->transb, p->m, p->n, p->k, A, lda, B, ldb,
                           p->w[W_YB], p->ld[W_YB], p->alpha, tb.u, tb.u_chk, tb.lambda,
                           p->w[ti], p->ld[ti], NULL, p->tight_ks, 0, {{0, 0}}, filter};
    a.nord = abft_bound_tight_lanes(h->backend, a.ord);
    ABFT_TRY(h->ops->tight(&h->kctx, &a));
    if (p->kind == ABFT_CHECKSUM_FULL) {
        abft_bound_gemm_tight(h, &p->arith, p->m, p->k, p->m, gemm_tight_compensated(p), &tb);
        abft_tight_args_t c = {p->prec, !p->transb, !p->transa, p->n, p->m, p->k, B, ldb, A,
                               lda, p->w[W_ZA], p->ld[W_ZA], p->alpha, tb.u, tb.u_chk,
                               tb.lambda, p->w[tci], p->ld[tci], NULL, p->tight_ks, 0, {{0, 0}},
                               filter};
        c.nord = abft_bound_tight_lanes(h->backend, c.ord);
        ABFT_TRY(h->ops->tight(&h->kctx, &c));
    }
    return ABFT_STATUS_SUCCESS;
}

/* At encoding: the full pass, or in two stages the filter only (docs/bound.md, "Two
 * stages"). */
abft_status_t gemm_tight_pass(struct abft_gemm_plan *p, const void *A, int64_t lda,
                              const void *B, int64_t ldb) {
    if (!gemm_tight_wanted(p) || !abft_bound_tight_applies(&p->arith))
        return ABFT_STATUS_SUCCESS;
    ABFT_TRY(gemm_tight_check(p));
    p->tight_ks = abft_gemm_ksplit(p->h, p->k); /* as run_gemm splits it */
    ABFT_TRY(tight_run(p, A, lda, B, ldb, p->two_stage, W_TT, W_TTC));
    p->tight = 1;
    p->tight_full = !p->two_stage;
    p->tight_u = p->arith.u;
    return ABFT_STATUS_SUCCESS;
}

/* Which entries of one side (cs: 0 rows, 1 columns for FULL) have inputs that changed after
 * encoding, as far as their checksums show (docs/bound.md, "Two stages"): the side's two
 * encodings are taken again from the inputs at hand, each against the one stored at
 * encoding, within abft_bound_reencode. Rows: Y = op(B)·V (k x 2), then S = op(A)·Y (m x 2)
 * with the stored Y; columns: Za = op(A)^T·V, then T = op(B)^T·Za. chg[i] = 1 where S
 * moved beyond its rounding, or where op(A)·dY is not 0 for dY the moves of Y beyond theirs
 * (an input of the other side changed, and entry i reads it). */
static abft_status_t side_changed(struct abft_gemm_plan *p, int cs, const void *A, int64_t lda,
                                  const void *B, int64_t ldb, unsigned char *chg) {
    abft_handle_t h = p->h;
    const int64_t k = p->k, ar = p->transa ? p->k : p->m, ac = p->transa ? p->m : p->k;
    const int64_t br = p->transb ? p->n : p->k, bc = p->transb ? p->k : p->n;
    /* the side's first operand (its weights' sums, len1 terms each) and second (len2 = k) */
    const void *M1 = cs ? A : B, *M2 = cs ? B : A;
    const int64_t r1 = cs ? ar : br, c1 = cs ? ac : bc, ld1 = cs ? lda : ldb;
    const int64_t r2 = cs ? br : ar, c2 = cs ? bc : ac, ld2 = cs ? ldb : lda;
    const int t1 = cs ? !p->transa : p->transb, t2 = cs ? !p->transb : p->transa;
    const int64_t len1 = cs ? p->m : p->n, nout = cs ? p->n : p->m;
    const int yi = cs ? W_ZA : W_YB, yai = cs ? W_ZAA : W_YBA;
    const int si = cs ? W_T : W_S, sai = cs ? W_TA : W_SA;
    const double eta = 0x1p-1074;
    /* the sums' kind as the encoding took them (the CPU backend's always compensated) */
    const int comp = abft_bound_tight_comp(h->backend, p->prec) != ABFT_TIGHT_COMP_PLAIN;
    memset(chg, 0, (size_t)nout);
    double *hb = (double *)malloc(sizeof(double) * (size_t)(8 * k + 8 * nout + 2));
    void *dy = NULL, *dx = NULL, *ds = NULL, *dsa = NULL;
    abft_status_t st = hb != NULL ? ABFT_STATUS_SUCCESS : ABFT_STATUS_ALLOC_FAILED;
    if (st == ABFT_STATUS_SUCCESS)
        st = h->ops->alloc(&h->kctx, sizeof(double) * (size_t)k * 2, &dy);
    if (st == ABFT_STATUS_SUCCESS)
        st = h->ops->alloc(&h->kctx, sizeof(double) * (size_t)k * 2, &dx);
    if (st == ABFT_STATUS_SUCCESS)
        st = h->ops->alloc(&h->kctx, sizeof(double) * (size_t)nout * 2, &ds);
    if (st == ABFT_STATUS_SUCCESS)
        st = h->ops->alloc(&h->kctx, sizeof(double) * (size_t)nout * 2, &dsa);
    double *y1 = hb, *y0 = hb + 2 * k, *ya = hb + 4 * k, *dyh = hb + 6 * k;
    double *s1 = hb + 8 * k, *sa1 = s1 + 2 * nout, *s0 = s1 + 4 * nout, *sa0 = s1 + 6 * nout;
    /* the weights again, and against their encoding */
    if (st == ABFT_STATUS_SUCCESS)
        st = gemm_tsmm_c(h, p->comp, p->prec, t1, r1, c1, 2, M1, ld1, NULL, 0, NULL, 0,
                         (double *)dy, k, NULL, 0);
    abft_copy_args_t cp[3] = {{0, sizeof(double), k, 2, y1, k, dy, k},
                              {0, sizeof(double), k, 2, y0, k, p->w[yi], p->ld[yi]},
                              {0, sizeof(double), k, 2, ya, k, p->w[yai], p->ld[yai]}};
    for (int x = 0; x < 3 && st == ABFT_STATUS_SUCCESS; ++x) st = h->ops->copy(&h->kctx, &cp[x]);
    int moved = 0;
    for (int64_t x = 0; x < 2 * k && st == ABFT_STATUS_SUCCESS; ++x) {
        const double d = y1[x] - y0[x];
        const double tol = abft_bound_reencode(comp, fmax(fabs(y0[x]), fabs(y1[x])), ya[x], ya[x],
                                               len1, 0);
        dyh[x] = fabs(d) > tol || (d != d) ? d : 0.0;
        moved |= dyh[x] != 0.0;
    }
    /* the side's checksums from the stored weights: |.| sums with the weights' own
     * underflow (abft_bound_reencode) */
    for (int64_t x = 0; x < 2 * k; ++x) ya[x] = fabs(y0[x]) + 2.0 * (double)(len1 + 1) * eta;
    abft_copy_args_t up = {1, sizeof(double), k, 2, ya, k, dx, k};
    if (st == ABFT_STATUS_SUCCESS) st = h->ops->copy(&h->kctx, &up);
    if (st == ABFT_STATUS_SUCCESS)
        st = gemm_tsmm_c(h, p->comp, p->prec, t2, r2, c2, 2, M2, ld2, p->w[yi], p->ld[yi],
                         (const double *)dx, k, (double *)ds, nout, (double *)dsa, nout);
    abft_copy_args_t cq[4] = {{0, sizeof(double), nout, 2, s1, nout, ds, nout},
                              {0, sizeof(double), nout, 2, sa1, nout, dsa, nout},
                              {0, sizeof(double), nout, 2, s0, nout, p->w[si], p->ld[si]},
                              {0, sizeof(double), nout, 2, sa0, nout, p->w[sai], p->ld[sai]}};
    for (int x = 0; x < 4 && st == ABFT_STATUS_SUCCESS; ++x) st = h->ops->copy(&h->kctx, &cq[x]);
    for (int64_t x = 0; x < 2 * nout && st == ABFT_STATUS_SUCCESS; ++x) {
        const double d = s1[x] - s0[x];
        const double tol = abft_bound_reencode(comp, fmax(fabs(s0[x]), fabs(s1[x])), sa1[x],
                                               sa0[x], k, len1);
        if (fabs(d) > tol || d != d) chg[x % nout] = 1;
    }
    /* the weights moved: the entries that read the moves */
    if (st == ABFT_STATUS_SUCCESS && moved) {
        abft_copy_args_t u2 = {1, sizeof(double), k, 2, dyh, k, dx, k};
        st = h->ops->copy(&h->kctx, &u2);
        if (st == ABFT_STATUS_SUCCESS)
            st = gemm_tsmm_c(h, 0, p->prec, t2, r2, c2, 2, M2, ld2, (const double *)dx, k, NULL, 0,
                             (double *)ds, nout, NULL, 0);
        abft_copy_args_t c5 = {0, sizeof(double), nout, 2, s1, nout, ds, nout};
        if (st == ABFT_STATUS_SUCCESS) st = h->ops->copy(&h->kctx, &c5);
        for (int64_t x = 0; x < 2 * nout && st == ABFT_STATUS_SUCCESS; ++x)
            if (s1[x] != 0.0) chg[x % nout] = 1;
    }
    if (dy != NULL) h->ops->free(&h->kctx, dy);
    if (dx != NULL) h->ops->free(&h->kctx, dx);
    if (ds != NULL) h->ops->free(&h->kctx, ds);
    if (dsa != NULL) h->ops->free(&h->kctx, dsa);
    free(hb);
    return st;
}

/* The second stage: the full pass (after the GEMM: the inputs are the caller's, unchanged
 * unless corrupted after encoding), each entry's part then the larger of it and the
 * filter's, except where the full pass sends the entry to the worst case (T < 0) or finds
 * no bound (NaN): its verdict stands, unless the entry's inputs changed after encoding
 * (side_changed): a change the full pass read may have turned its guards, and the filter's
 * part, from the inputs as encoded, stays (docs/bound.md, "Two stages"). */
abft_status_t gemm_tight_second(struct abft_gemm_plan *p, const void *A, int64_t lda,
                                const void *B, int64_t ldb) {
    abft_handle_t h = p->h;
    ABFT_TRY(tight_run(p, A, lda, B, ldb, 0, W_TF, W_TFC));
    for (int cs = 0; cs < (p->kind == ABFT_CHECKSUM_FULL ? 2 : 1); ++cs) {
        const int64_t n = cs ? p->n : p->m;
        const int ti = cs ? W_TTC : W_TT, fi = cs ? W_TFC : W_TF;
        double *t = (double *)malloc(sizeof(double) * (size_t)n * 4 + 1);
        unsigned char *chg = (unsigned char *)malloc((size_t)n + 1);
        if (t == NULL || chg == NULL) {
            free(t), free(chg);
            return ABFT_STATUS_ALLOC_FAILED;
        }
        abft_copy_args_t c1 = {0, sizeof(double), n, 2, t, n, p->w[ti], p->ld[ti]};
        abft_copy_args_t c2 = {0, sizeof(double), n, 2, t + 2 * n, n, p->w[fi], p->ld[fi]};
        abft_status_t st = h->ops->copy(&h->kctx, &c1);
        if (st == ABFT_STATUS_SUCCESS) st = h->ops->copy(&h->kctx, &c2);
        int fell = 0;
        for (int64_t x = 0; x < 2 * n && st == ABFT_STATUS_SUCCESS; ++x)
            fell |= abft_bound_tight_fell_back(t[2 * n + x]) && t[x] >= 0.0;
        if (st == ABFT_STATUS_SUCCESS && fell) st = side_changed(p, cs, A, lda, B, ldb, chg);
        for (int64_t x = 0; x < 2 * n && st == ABFT_STATUS_SUCCESS; ++x)
            if (!(fell && chg[x % n] && abft_bound_tight_fell_back(t[2 * n + x]) && t[x] >= 0.0))
                t[x] = abft_bound_tight_merge(t[x], t[2 * n + x]);
        abft_copy_args_t c3 = {1, sizeof(double), n, 2, t, n, p->w[ti], p->ld[ti]};
        if (st == ABFT_STATUS_SUCCESS) st = h->ops->copy(&h->kctx, &c3);
        free(t), free(chg);
        ABFT_TRY(st);
    }
    p->tight_full = 1;
    return ABFT_STATUS_SUCCESS;
}
