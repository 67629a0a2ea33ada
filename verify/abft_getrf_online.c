/* abft: online protected LU, the checksums carried inside a blocked right-looking LU
 * (docs/lu.md).
 *
 * Per panel K0..K1-1 (jb = K1 - K0 columns):
 *   getrf on the panel A(K0:m, K0:K1)          (backend getrf, local pivots -> global)
 *   laswp on the columns left and right of it, and on the carried checksum columns W and
 *   their bound columns B                       (the same row interchanges)
 *   trsm  U12 = L11^-1·A12
 *   W1 = U1·V, Ua = |U1|·V from the finished U rows (fresh, not solved: see docs/lu.md)
 *   gemm  A22 -= L21·U12;  W2 -= L21·W1;  B2 += 4·|L21|·Ua
 *   hook ABFT_SITE_LU_PANEL, then (every check_every panels) the trailing check
 *         |A22·V2 - W2| <= g·B2 + 2g·|A22|·V2 + underflow terms (abft_bound_lu_trailing)
 *   one error per flagged row of A22 is located (ratio = global column + 1), recomputed
 *   from the row's checksum, re-verified; a row whose checksum alone is off is resynced.
 * The final factors get the offline check of abft_getrf.c (it covers L, which the carried
 * row checksums do not). With look-ahead (the GPU default) the next panel's columns are
 * swapped, solved and updated first and that panel is factored on a second context while
 * this one finishes the update and the check (docs/lu.md, "Look-ahead"). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "abft_lu_internal.h"

typedef struct online {
    abft_handle_t h;
    const abft_lu_ops_t *lo;
    struct abft_lu_plan *p;
    void *A;
    int64_t lda;
    size_t es;
    void *mem;
    double *W, *B;   /* carried checksums and their bound (m x 2, ld m) */
    double *G;       /* explicit weights [1, j + 1] (n x 2, ld n) */
    double *T, *Ta;  /* trailing products (m x 2, ld m) */
    double *U1, *Ua; /* U1·V, |U1|·V of the panel rows (nb x 2, ld nb) */
    int64_t *dinfo;  /* the first zero pivot, accumulated on the backend */
    /* look-ahead (la): the next panel is factored on the second context aux */
    int la;
    const abft_kctx_t *aux;
    double *Tp, *Tpa;     /* the next panel's share of the trailing products (m x 2) */
    void *P;              /* the next panel as the check saw it (m x nb, ld m) */
    int64_t *dinfo_save;  /* *dinfo before the next panel */
} online_t;

static void *elem_ptr(const online_t *o, int64_t i, int64_t j) {
    return (char *)o->A + ((size_t)i + (size_t)j * (size_t)o->lda) * o->es;
}

/* Row interchanges k1..k2-1 of the global pivots ipiv (backend memory) on columns
 * c0..c1-1 of A except skip0..skip1-1, and on W and B when wb (m x 4: B follows W). */
static abft_status_t swap_rows(online_t *o, const abft_kctx_t *ctx, const int64_t *ipiv,
                               int64_t k1, int64_t k2, int64_t c0, int64_t c1, int64_t skip0,
                               int64_t skip1, int wb) {
    const int skip = skip1 > skip0;
    abft_lu_laswp_args_t a = {o->p->prec, 0, c1 - c0, elem_ptr(o, 0, c0), o->lda, k1, k2, ipiv,
                              0, 1, skip ? skip0 - c0 : 0, skip ? skip1 - c0 : 0,
                              wb ? o->W : NULL, wb ? 4 : 0, o->p->m};
    return o->lo->lu_laswp(ctx, &a);
}

/* Factor the panel A(c0:m, c0:c0+w) (rows below c0, all of them), global pivots in ipiv
 * (backend memory), the first zero pivot accumulated in *dinfo (backend memory): nothing
 * here waits for the backend. Wider than inb: split in halves as LAPACK's getrf2 does (left
 * half, swaps + trsm + gemm on the right half, right half, swaps on the left half), so that
 * the backend's getrf only sees narrow panels. */
static abft_status_t factor_panel(online_t *o, const abft_kctx_t *ctx, int64_t c0, int64_t w,
                                  int64_t inb, int64_t *ipiv, int64_t *dinfo) {
    abft_handle_t h = o->h;
    const abft_lu_ops_t *lo = o->lo;
    struct abft_lu_plan *p = o->p;
    const int64_t m = p->m;
    if (w <= inb) {
        abft_lu_getrf_args_t gf = {p->prec, m - c0, w, elem_ptr(o, c0, c0), o->lda, ipiv + c0,
                                   NULL, NULL, c0, dinfo};
        return lo->lu_getrf(ctx, &gf);
    }
    const int64_t w1 = w / 2, w2 = w - w1, c1 = c0 + w1;
    ABFT_TRY(factor_panel(o, ctx, c0, w1, inb, ipiv, dinfo));
    ABFT_TRY(swap_rows(o, ctx, ipiv, c0, c1, c1, c0 + w, 0, 0, 0));
    abft_lu_trsm_args_t ts = {p->prec, 1, 0, w1, w2, elem_ptr(o, c0, c0), o->lda,
                              elem_ptr(o, c0, c1), o->lda};
    ABFT_TRY(lo->lu_trsm(ctx, &ts));
    abft_gemm_args_t ge = {p->prec, 0, 0, m - c1, w2, w1, -1.0, 1.0, elem_ptr(o, c1, c0), o->lda,
                           elem_ptr(o, c0, c1), o->lda, elem_ptr(o, c1, c1), o->lda};
    ABFT_TRY(h->ops->gemm(ctx, &ge));
    ABFT_TRY(factor_panel(o, ctx, c1, w2, inb, ipiv, dinfo));
    return swap_rows(o, ctx, ipiv, c1, c0 + w, c0, c1, 0, 0, 0);
}

/* Start the next panel, columns K1..K2-1, on the second context once the main one has
 * updated them. When the check after this panel is due, the panel's share of the row
 * checksums (Tp, Tpa), a copy of it (P) and of the info are taken first: the check reads
 * them, and restores the panel from them when it corrects an entry there. */
static abft_status_t start_next(online_t *o, int64_t K1, int64_t K2, int checking, int64_t inb,
                                int64_t *ipiv) {
    abft_handle_t h = o->h;
    struct abft_lu_plan *p = o->p;
    const int64_t m = p->m, n = p->n, mt = m - K1, w = K2 - K1;
    if (checking) {
        abft_tsmm_args_t t = {p->prec, 0, mt, w, 2, elem_ptr(o, K1, K1), o->lda, o->G + K1, n,
                              NULL, 0, o->Tp, m, o->Tpa, m, 0};
        ABFT_TRY(h->ops->tsmm(&h->kctx, &t));
        abft_copy_args_t ci = {2, 8, 1, 1, o->dinfo_save, 1, o->dinfo, 1};
        ABFT_TRY(h->ops->copy(&h->kctx, &ci));
    }
    ABFT_TRY(h->ops->order(o->aux, &h->kctx));
    if (checking) {
        abft_copy_args_t cp = {2, o->es, mt, w, o->P, m, elem_ptr(o, K1, K1), o->lda};
        ABFT_TRY(h->ops->copy(o->aux, &cp));
    }
    return factor_panel(o, o->aux, K1, w, inb, ipiv, o->dinfo);
}

/* Element (gi, j) of the trailing matrix after the panels before K1, recomputed from the
 * recovery copy: A0(row of gi, j) - sum_{l < K1} L(gi, l)·U(l, j), the rows of A0 taken
 * through the pivots 0..K1-1. It agrees with the value the checksum gives (s, noise ns)
 * within ns plus the trailing update's own error (coef·(|A0| + sum |L||U|) + floor):
 * *confirmed, and *value is the recomputation. Without a copy nothing is confirmed. */
static abft_status_t copy_trailing(online_t *o, int64_t K1, int64_t gi, int64_t j,
                                   const int64_t *ipiv, double coef, double floor, double s,
                                   double ns, double *value, int *confirmed) {
    abft_handle_t h = o->h;
    struct abft_lu_plan *p = o->p;
    const int64_t m = p->m;
    *confirmed = 0;
    if (p->A0 == NULL) return ABFT_STATUS_SUCCESS;
    int64_t *piv = (int64_t *)malloc(sizeof(int64_t) * (size_t)(K1 + 1));
    double *lr = (double *)malloc(sizeof(double) * 2 * (size_t)(K1 + 1));
    abft_status_t st = piv == NULL || lr == NULL ? ABFT_STATUS_ALLOC_FAILED : ABFT_STATUS_SUCCESS;
    double *uc = lr + K1 + 1, a0 = 0.0;
    if (st == ABFT_STATUS_SUCCESS && K1 > 0) {
        abft_copy_args_t cp = {0, sizeof(int64_t), K1, 1, piv, K1, (void *)ipiv, K1};
        st = h->ops->copy(&h->kctx, &cp);
    }
    int64_t row = gi; /* the original row now at gi: undo the interchanges, last first */
    for (int64_t l = K1 - 1; l >= 0 && st == ABFT_STATUS_SUCCESS; --l) {
        int64_t pl = piv[l] - 1;
        if (row == l) row = pl;
        else if (row == pl) row = l;
    }
    /* L(gi, 0:K1), U(0:K1, j) and A0(row, j) */
    if (st == ABFT_STATUS_SUCCESS)
        st = abft_copy_doubles(h, p->prec, 0, elem_ptr(o, gi, 0), o->lda, 1, K1, lr);
    if (st == ABFT_STATUS_SUCCESS)
        st = abft_copy_doubles(h, p->prec, 0, elem_ptr(o, 0, j), o->lda, K1, 1, uc);
    if (st == ABFT_STATUS_SUCCESS)
        st = abft_copy_doubles(h, p->prec, 0, (char *)p->A0 + o->es * (size_t)(row + j * m), m,
                               1, 1, &a0);
    if (st == ABFT_STATUS_SUCCESS) {
        double x = a0, za = fabs(a0);
        for (int64_t l = 0; l < K1; ++l) {
            x -= lr[l] * uc[l];
            za += fabs(lr[l] * uc[l]);
        }
        double nc = coef * (za + fabs(x)) * (1.0 + 0x1p-50) + floor;
        *value = x;
        *confirmed = isfinite(x) && fabs(x - s) <= ns + nc;
    }
    free(piv);
    free(lr);
    return st;
}

/* Trailing check of rows/cols K1.. after a panel; locate, correct, resync. With look-ahead
 * (K2 > K1) the next panel, columns K1..K2-1, is being factored on the second context: its
 * share of the row checksums is in Tp, Tpa and its entries as the check sees them in P;
 * a correction there restores the panel from P and factors it again. */
static abft_status_t trailing_check(online_t *o, int64_t K1, int64_t K2, int64_t inb,
                                    int64_t *ipiv, abft_report_t *rep) {
    abft_handle_t h = o->h;
    struct abft_lu_plan *p = o->p;
    const int64_t m = p->m, n = p->n, mt = m - K1, nt = n - K1, np = K2 - K1, nr = n - K2;
    abft_lu_trailing_bound_t b;
    abft_bound_lu_trailing(h, &p->arith, p->prec, m, n, &b);
    double *T = o->T, *Ta = o->Ta;
    if (nr > 0) {
        abft_tsmm_args_t t = {p->prec, 0, mt, nr, 2, elem_ptr(o, K1, K2), o->lda, o->G + K2, n,
                              NULL, 0, o->T, m, o->Ta, m, 0};
        ABFT_TRY(h->ops->tsmm(&h->kctx, &t));
        if (np > 0) {
            abft_lu_axpy_args_t ap = {mt, 2, 1.0, o->Tp, m, o->T, m, 1.0, o->Tpa, m, o->Ta, m};
            ABFT_TRY(o->lo->lu_axpy(&h->kctx, &ap));
        }
    } else {
        T = o->Tp;
        Ta = o->Tpa;
    }
    int64_t nflag = 0;
    double mr = 0.0;
    abft_compare_args_t c = {mt, T, m, Ta, m, o->W + K1, m, o->B + K1, m, NULL, 0,
                             NULL, 0, 1.0, 0.0, b.coef_b, b.coef_t, b.abs_floor, 0, NULL,
                             &nflag, &mr, NULL, 0, 0.0, 0.0, 0.0, 0.0, 1.0};
    /* The only wait for the backend in a clean panel. A NaN or Inf in Ta (an overflowed
     * bound, which would pass anything) needs no separate count: it makes the bound t NaN or
     * +Inf, and compare flags such an entry (!(|d| <= t) or t = +Inf). The slow path below
     * then reports the row's ratio as +Inf. */
    ABFT_TRY(h->ops->compare(&h->kctx, &c, 1));
    if (nflag == 0 && !(mr < INFINITY)) nflag = 1;
    rep->checked += mt;
    if (nflag == 0) {
        if (mr > rep->max_ratio || isnan(mr)) rep->max_ratio = mr;
        return ABFT_STATUS_SUCCESS;
    }

    /* Slow path on the host: rows of T, Ta, W, B against the full bound, with the
     * amplified-underflow term of the finished columns' divisors U(k, k), k < K1 (the
     * compare leaves it out: docs/lu.md, "Gradual underflow"). The next panel's
     * factorization first. */
    if (np > 0) ABFT_TRY(h->ops->order(&h->kctx, o->aux));
    double dsum[3] = {0.0, 0.0, 0.0};
    {
        double *dg = (double *)malloc((size_t)(K1 + 1) * sizeof(double));
        abft_status_t sd = dg == NULL ? ABFT_STATUS_ALLOC_FAILED : ABFT_STATUS_SUCCESS;
        /* the diagonal U(l, l), l < K1: stride lda + 1 */
        if (sd == ABFT_STATUS_SUCCESS)
            sd = abft_copy_doubles(h, p->prec, 0, o->A, o->lda + 1, 1, K1, dg);
        if (sd == ABFT_STATUS_SUCCESS) {
            abft_bound_lu_dsum(dg, K1, 0, dsum);
            dsum[2] = abft_bound_lu_dmax(dg, K1);
        }
        free(dg);
        ABFT_TRY(sd);
    }
    /* a pivot whose reciprocal is subnormal: the multipliers' relative term on B2 */
    const double cb = b.coef_b + (dsum[2] >= b.rcp_limit ? b.rcp_coef : 0.0);
    double hmr = 0.0; /* the largest ratio against the full bound */
    size_t mm = (size_t)mt;
    double *buf = (double *)malloc((8 * mm + (size_t)nt) * sizeof(double));
    void *row = malloc((size_t)nt * o->es);
    abft_status_t st = buf == NULL || row == NULL ? ABFT_STATUS_ALLOC_FAILED : ABFT_STATUS_SUCCESS;
    double *Th = buf, *Tah = Th + 2 * mm, *W = Tah + 2 * mm, *B = W + 2 * mm, *x = B + 2 * mm;
    abft_copy_args_t c1 = {0, 8, mt, 2, Th, mt, T, m}, c2 = {0, 8, mt, 2, Tah, mt, Ta, m};
    abft_copy_args_t c3 = {0, 8, mt, 2, W, mt, o->W + K1, m}, c4 = {0, 8, mt, 2, B, mt, o->B + K1, m};
    if (st == ABFT_STATUS_SUCCESS) st = h->ops->copy(&h->kctx, &c1);
    if (st == ABFT_STATUS_SUCCESS) st = h->ops->copy(&h->kctx, &c2);
    if (st == ABFT_STATUS_SUCCESS) st = h->ops->copy(&h->kctx, &c3);
    if (st == ABFT_STATUS_SUCCESS) st = h->ops->copy(&h->kctx, &c4);
    int restored = 0;
    for (int64_t i = 0; i < mt && st == ABFT_STATUS_SUCCESS; ++i) {
        double d[2], tb[2];
        int fl[2];
        for (int q = 0; q < 2; ++q) {
            d[q] = Th[i + q * mm] - W[i + q * mm];
            tb[q] = cb * B[i + q * mm] + b.coef_t * Tah[i + q * mm] + b.abs_floor +
                    b.eta_amp * dsum[q];
            fl[q] = !(fabs(d[q]) <= tb[q]) || !isfinite(tb[q]);
        }
        /* per column, a NaN residual's ratio is +Inf (fmax would drop it for the other
         * column's: a carried checksum flipped to NaN was reported at that ratio, below 1) */
        double ratio = 0.0;
        for (int q = 0; q < 2; ++q) {
            const double rq = d[q] == 0.0 ? 0.0 : fabs(d[q]) / tb[q];
            if (!(rq <= ratio)) ratio = isnan(rq) ? INFINITY : rq;
        }
        if (!isfinite(tb[0]) || !isfinite(tb[1])) ratio = INFINITY;
        if (ratio > hmr) hmr = ratio;
        if (!fl[0] && !fl[1]) continue;
        rep->detected += 1;
        /* one data error delta at global column j: d = delta·[1, j + 1] */
        int64_t j = -1;
        if (fl[0] && isfinite(d[0]) && isfinite(d[1])) {
            double rho = d[1] / d[0];
            if (rho >= 0.5 && rho < (double)n + 0.5) {
                int64_t jj = (int64_t)llround(rho) - 1;
                double w = (double)(jj + 1);
                if (jj >= K1 && jj < n && fabs(d[1] - w * d[0]) <= tb[1] + w * tb[0] &&
                    fabs(d[0]) > 2.0 * (tb[1] + (w + 1.0) * tb[0]))
                    j = jj;
            }
        }
        int64_t gi = K1 + i;
        if (j >= 0) {
            /* the row as the check saw it (the next panel's part from its copy), and A(gi, j)
             * recomputed from the row's carried checksum without it */
            abft_copy_args_t cp = {0, o->es, 1, np, row, 1, (char *)o->P + (size_t)i * o->es, m};
            abft_copy_args_t cr = {0, o->es, 1, nr, (char *)row + (size_t)np * o->es, 1,
                                   elem_ptr(o, gi, K2), o->lda};
            if (np > 0) st = h->ops->copy(&h->kctx, &cp);
            if (st == ABFT_STATUS_SUCCESS && nr > 0) st = h->ops->copy(&h->kctx, &cr);
            if (st != ABFT_STATUS_SUCCESS) break;
            for (int64_t l = 0; l < nt; ++l)
                x[l] = o->es == 8 ? ((double *)row)[l] : (double)((float *)row)[l];
            double s = W[i], old = x[j - K1];
            for (int64_t l = 0; l < nt; ++l)
                if (K1 + l != j) s -= x[l];
            /* Confirm or do not correct: the row's two residuals cannot tell one error from
             * several whose weighted centre is an integer, or from a corrupted carried
             * checksum; the recovery copy gives an independent value (without one the row
             * is reported and the final check decides). */
            double vc = 0.0;
            int confirmed = 0;
            st = copy_trailing(o, K1, gi, j, ipiv, b.coef_b + b.coef_t,
                               b.abs_floor + b.eta_amp * dsum[0], s, tb[0], &vc, &confirmed);
            if (st != ABFT_STATUS_SUCCESS) break;
            if (!confirmed) {
                rep->uncorrectable += 1;
                abft_lu_add_fault(rep, gi, -1, d[0], ratio, ABFT_ACTION_UNCORRECTABLE,
                                  ABFT_FACTOR_NONE);
                continue;
            }
            s = vc;
            if (j < K2 && !restored) {
                /* the next panel was factored with the error: back to the copy */
                abft_copy_args_t rp = {2, o->es, mt, np, elem_ptr(o, K1, K1), o->lda, o->P, m};
                abft_copy_args_t ri = {2, 8, 1, 1, o->dinfo, 1, o->dinfo_save, 1};
                st = h->ops->copy(&h->kctx, &rp);
                if (st == ABFT_STATUS_SUCCESS) st = h->ops->copy(&h->kctx, &ri);
                if (st != ABFT_STATUS_SUCCESS) break;
                restored = 1;
            }
            abft_lu_elem_args_t e = {p->prec, o->A, o->lda, gi, j};
            st = o->lo->lu_set(&h->kctx, &e, s);
            if (st != ABFT_STATUS_SUCCESS) break;
            /* re-verify the row with the value as stored */
            x[j - K1] = o->es == 8 ? s : (double)(float)s;
            double rr[2] = {0.0, 0.0}, ra[2] = {0.0, 0.0};
            for (int64_t l = 0; l < nt; ++l) {
                const double w = (double)(K1 + l + 1);
                rr[0] += x[l];
                rr[1] += w * x[l];
                ra[0] += fabs(x[l]);
                ra[1] += w * fabs(x[l]);
            }
            int ok = 1;
            for (int q = 0; q < 2; ++q) {
                double tq = cb * B[i + q * mm] + b.coef_t * ra[q] + b.abs_floor +
                            b.eta_amp * dsum[q];
                if (!(fabs(rr[q] - W[i + q * mm]) <= tq)) ok = 0;
            }
            if (ok) {
                rep->corrected += 1;
                abft_lu_add_fault(rep, gi, j, old - s, ratio, ABFT_ACTION_CORRECTED,
                                  ABFT_FACTOR_NONE);
                continue;
            }
            st = o->lo->lu_set(&h->kctx, &e, old); /* revert: never keep a guess */
            if (st != ABFT_STATUS_SUCCESS) break;
        } else if (fl[0] != fl[1] && isfinite(Th[i]) && isfinite(Th[i + mm])) {
            /* One checksum column off, the other consistent: the checksum was hit, the data
             * is intact. Resync the carried checksum from the data. */
            abft_copy_args_t cw = {1, 8, 1, 2, &Th[i], mm, o->W + gi, m};
            st = h->ops->copy(&h->kctx, &cw);
            if (st != ABFT_STATUS_SUCCESS) break;
            rep->checksum_faults += 1;
            abft_lu_add_fault(rep, gi, -1, d[0], ratio, ABFT_ACTION_CHECKSUM_FAULT,
                              ABFT_FACTOR_NONE);
            continue;
        }
        rep->uncorrectable += 1;
        abft_lu_add_fault(rep, gi, -1, d[0], ratio, ABFT_ACTION_UNCORRECTABLE, ABFT_FACTOR_NONE);
    }
    free(row);
    free(buf);
    if (hmr > rep->max_ratio) rep->max_ratio = hmr;
    /* the restored (and corrected) next panel, factored again in order */
    if (st == ABFT_STATUS_SUCCESS && restored)
        st = factor_panel(o, &h->kctx, K1, np, inb, ipiv, o->dinfo);
    return st;
}

static abft_status_t run_online(online_t *o, int64_t nb, int64_t inb, int64_t every, int64_t *hpiv,
                                int64_t *ipiv, int64_t *info, abft_report_t *rep) {
    /* Inside the panel loop only the trailing checks (and a hook, when set) wait for the
     * backend: the pivots and the info stay there until the end. */
    abft_handle_t h = o->h;
    const abft_lu_ops_t *lo = o->lo;
    struct abft_lu_plan *p = o->p;
    const int64_t m = p->m, n = p->n, k = p->k;
    const double mone = -1.0;
    /* W = X, B = Xa (through the identity permutation: a backend-side copy) */
    for (int64_t i = 0; i < m; ++i) hpiv[i] = i; /* hpiv has m entries */
    abft_copy_args_t cp = {1, 8, m, 1, hpiv, m, p->perm, m};
    ABFT_TRY(h->ops->copy(&h->kctx, &cp));
    abft_lu_gather_args_t g1 = {m, 2, p->perm, p->X, m, o->W, m};
    abft_lu_gather_args_t g2 = {m, 2, p->perm, p->Xa, m, o->B, m};
    ABFT_TRY(lo->lu_gather(&h->kctx, &g1));
    ABFT_TRY(lo->lu_gather(&h->kctx, &g2));
    *info = 0;
    int64_t zero = 0;
    abft_copy_args_t ci = {1, 8, 1, 1, &zero, 1, o->dinfo, 1};
    ABFT_TRY(h->ops->copy(&h->kctx, &ci));
    /* With look-ahead every panel after the first is factored on the second context as soon
     * as its columns are updated; the main context waits for it before the panel's swaps.
     * Without a hook it overlaps the rest of the trailing update and the check; with one,
     * only the check (the hook must see A between two panels). */
    const int early = o->la && h->hook == NULL;
    if (o->la) ABFT_TRY(factor_panel(o, &h->kctx, 0, nb < k ? nb : k, inb, ipiv, o->dinfo));
    int64_t panel = 0;
    for (int64_t K0 = 0; K0 < k; K0 += nb, ++panel) {
        const int64_t jb = nb < k - K0 ? nb : k - K0, K1 = K0 + jb;
        const int64_t K2 = o->la && K1 < k ? (nb < k - K1 ? K1 + nb : k) : K1;
        const int check = K1 < k && (panel + 1) % every == 0;
        if (o->la)
            ABFT_TRY(h->ops->order(&h->kctx, o->aux));
        else
            ABFT_TRY(factor_panel(o, &h->kctx, K0, jb, inb, ipiv, o->dinfo));
        /* With look-ahead the next panel's columns K1..K2-1 go first (swaps, trsm, update),
         * so that its factorization starts as early as possible (without a hook: before
         * the rest of this panel's work). nx = 0 without look-ahead. */
        const int64_t nx = K2 - K1;
        if (nx > 0) {
            ABFT_TRY(swap_rows(o, &h->kctx, ipiv, K0, K1, K1, K2, 0, 0, 0));
            abft_lu_trsm_args_t ts = {p->prec, 1, 0, jb, nx, elem_ptr(o, K0, K0), o->lda,
                                      elem_ptr(o, K0, K1), o->lda};
            ABFT_TRY(lo->lu_trsm(&h->kctx, &ts));
            abft_gemm_args_t ge = {p->prec, 0, 0, m - K1, nx, jb, mone, 1.0,
                                   elem_ptr(o, K1, K0), o->lda, elem_ptr(o, K0, K1), o->lda,
                                   elem_ptr(o, K1, K1), o->lda};
            ABFT_TRY(h->ops->gemm(&h->kctx, &ge));
            if (early) ABFT_TRY(start_next(o, K1, K2, check, inb, ipiv));
        }
        /* the other columns left and right of the panel, and W and B (adjacent, B = W + 2m:
         * one m x 4 block), in one call */
        ABFT_TRY(swap_rows(o, &h->kctx, ipiv, K0, K1, 0, n, K0, K2, 1));
        if (K2 < n) {
            abft_lu_trsm_args_t ts = {p->prec, 1, 0, jb, n - K2, elem_ptr(o, K0, K0), o->lda,
                                      elem_ptr(o, K0, K2), o->lda};
            ABFT_TRY(lo->lu_trsm(&h->kctx, &ts));
        }
        if (K1 < m) {
            /* the finished U rows' checksums, fresh from the data */
            abft_lu_tri_args_t tu = {p->prec, 0, 0, jb, n - K0, elem_ptr(o, K0, K0), o->lda,
                                     o->G + K0, n, NULL, 0, 0, o->U1, nb, o->Ua, nb};
            ABFT_TRY(lo->lu_tri(&h->kctx, &tu));
            if (K2 < n) {
                abft_gemm_args_t ge = {p->prec, 0, 0, m - K1, n - K2, jb, mone, 1.0,
                                       elem_ptr(o, K1, K0), o->lda, elem_ptr(o, K0, K2), o->lda,
                                       elem_ptr(o, K1, K2), o->lda};
                ABFT_TRY(h->ops->gemm(&h->kctx, &ge));
            }
            abft_tsmm_args_t tl = {p->prec, 0, m - K1, jb, 2, elem_ptr(o, K1, K0), o->lda, o->U1,
                                   nb, o->Ua, nb, o->T, m, o->Ta, m, 0};
            ABFT_TRY(h->ops->tsmm(&h->kctx, &tl));
            abft_lu_axpy_args_t aw = {m - K1, 2, -1.0, o->T, m, o->W + K1, m,
                                      4.0, o->Ta, m, o->B + K1, m};
            ABFT_TRY(lo->lu_axpy(&h->kctx, &aw));
        }
        if (K1 < k) {
            ABFT_TRY(abft_call_hook(h, ABFT_SITE_LU_PANEL, (int)panel, p->prec, o->A, m, n,
                                    o->lda));
            ABFT_TRY(abft_call_hook(h, ABFT_SITE_CHECKSUM, (int)panel + 1, ABFT_PREC_D, o->W, m,
                                    2, m));
            if (o->la && !early) ABFT_TRY(start_next(o, K1, K2, check, inb, ipiv));
            if (check) ABFT_TRY(trailing_check(o, K1, K2, inb, ipiv, rep));
        }
    }
    ABFT_TRY(abft_call_hook(h, ABFT_SITE_AFTER_LU, 0, p->prec, o->A, m, n, o->lda));
    abft_copy_args_t pf = {0, 8, k, 1, hpiv, k, ipiv, k};
    ABFT_TRY(h->ops->copy(&h->kctx, &pf));
    abft_copy_args_t cf = {0, 8, 1, 1, info, 1, o->dinfo, 1};
    ABFT_TRY(h->ops->copy(&h->kctx, &cf));
    if (*info < 0) /* the backend's getrf refused an argument (as lu_getrf maps it) */
        return h->backend == ABFT_BACKEND_CUDA ? ABFT_STATUS_CUSOLVER_ERROR
                                               : ABFT_STATUS_EXECUTION_FAILED;
    ABFT_TRY(abft_lu_verify_info(p, o->A, o->lda, hpiv, rep, info));
    /* Every correction of the run came from checksums carried from X = A·V. If X itself
     * changed after encoding (beyond the rounding of its own checksum), a correction may
     * have made the factors agree with a corrupted checksum, and the final check, made
     * against the same X, cannot tell: report them instead (the caller refactors). */
    int changed = 0;
    if (rep->corrected > 0) ABFT_TRY(abft_lu_x_changed(p, &changed));
    if (changed) {
        for (int64_t f = 0; f < rep->nfaults; ++f)
            if (rep->faults[f].action == ABFT_ACTION_CORRECTED)
                rep->faults[f].action = ABFT_ACTION_UNCORRECTABLE;
        rep->uncorrectable += rep->corrected;
        rep->corrected = 0;
        rep->spread = 1;
    }
    return ABFT_STATUS_SUCCESS;
}

static abft_status_t getrf_online(abft_handle_t h, abft_prec_t prec, int64_t m, int64_t n,
                                  void *A, int64_t lda, int64_t *ipiv,
                                  const abft_lu_options_t *opt, int64_t *info,
                                  abft_report_t *report) {
    ABFT_RETURN_IF(!abft_handle_ok(h), ABFT_STATUS_NOT_INITIALIZED);
    ABFT_ARG_IF(m < 0, 2);
    ABFT_ARG_IF(n < 0, 3);
    int bad = abft_matrix_bad_arg(m, n, A, lda, 4, 5);
    ABFT_ARG_IF(bad != 0, bad);
    const int64_t k = m < n ? m : n;
    ABFT_ARG_IF(k > 0 && ipiv == NULL, 6);
    const int gpu = h->backend == ABFT_BACKEND_CUDA;
    /* GPU default, from bench_lu on the H100 with look-ahead (b362505, 84b2c08): up to
     * k = 8192, nb = 256 without recursion (fp64 8192, checks off: 42.1 ms against 42.6 ms
     * for 512 in 128-column leaves; every 4th panel checked: +8.8 % against +10.7 % over
     * cuSOLVER); above, nb = 512 in 128-column leaves (fp64 16384, every 4th: +1.8 % against
     * +11.2 % for 256: the tall panels gain from the recursion, and half as many checks read
     * the trailing matrix). CPU: LAPACK's 64, no recursion. */
    const int wide = gpu && k > 8192;
    int64_t nb = gpu ? (wide ? 512 : 256) : 64, every = 1, inb = wide ? 128 : 0;
    if (opt != NULL) {
        ABFT_ARG_IF(opt->nb < 0 || opt->check_every < 0 || opt->panel_nb < 0 ||
                        opt->lookahead < -1 || opt->lookahead > 1,
                    7);
        if (opt->nb > 0) nb = opt->nb;
        if (opt->check_every > 0) every = opt->check_every;
        if (opt->panel_nb > 0) inb = opt->panel_nb;
    }
    if (inb == 0) inb = nb;
    int la = gpu && h->hook == NULL;
    if (opt != NULL && opt->lookahead != 0) la = opt->lookahead > 0;
    static const int opos[4] = {4, 6, 8, 9};
    ABFT_TRY(abft_lu_check_outputs(m, n, A, lda, prec == ABFT_PREC_D ? 8 : 4, ipiv,
                                   sizeof(int64_t), info, report, opos));
    /* the panels' getrf (cuSOLVER's math mode on the GPU) and the trsm/gemm (cuBLAS's): an
     * arithmetic the bound does not model is refused before anything is touched */
    abft_arith_t arith;
    ABFT_TRY(abft_lu_arith(h, prec, 1, &arith));
    /* Errors leave every output untouched: the report and info are written at the end. */
    abft_report_t lrep;
    abft_report_t *rep = &lrep;
    memset(rep, 0, sizeof *rep);
    rep->unit_roundoff = abft_lu_report_u(&arith);
    if (k == 0) {
        if (info != NULL) *info = 0;
        if (report != NULL) {
            abft_bound_report_lu(h, &lrep);
            *report = lrep;
        }
        return ABFT_STATUS_SUCCESS;
    }
    if (nb > k) nb = k;

    struct abft_lu_plan p;
    ABFT_TRY(abft_lu_plan_init(h, prec, m, n, &p));
    p.pivoted = 1;
    p.arith = arith;
    online_t o;
    memset(&o, 0, sizeof o);
    o.h = h;
    o.lo = abft_lu_ops(h);
    o.p = &p;
    o.A = A;
    o.lda = lda;
    o.es = prec == ABFT_PREC_D ? 8u : 4u;
    o.la = la && nb < k;
    /* the copy of the next panel only when some check sees one */
    const int copies = o.la && every <= (k - 1) / nb;
    size_t mm = (size_t)m, nn = (size_t)n, bb = (size_t)nb;
    size_t pw = copies ? (mm * bb * o.es + 7) / 8 : 0; /* P in doubles */
    abft_status_t st = ABFT_STATUS_SUCCESS;
    if (o.la) st = abft_aux_context(h, &o.aux);
    if (st == ABFT_STATUS_SUCCESS)
        st = h->ops->alloc(&h->kctx, (12 * mm + 2 * nn + 4 * bb + 2 + pw) * sizeof(double),
                           &o.mem);
    int64_t *hpiv = (int64_t *)malloc((size_t)(m > n ? m : n) * sizeof(int64_t));
    double *hg = (double *)malloc(2 * nn * sizeof(double));
    if (hpiv == NULL || hg == NULL) st = ABFT_STATUS_ALLOC_FAILED;
    int64_t linfo = 0;
    if (st == ABFT_STATUS_SUCCESS) {
        double *d = (double *)o.mem;
        o.W = d;
        o.B = d + 2 * mm;
        o.T = d + 4 * mm;
        o.Ta = d + 6 * mm;
        o.G = d + 8 * mm;
        o.U1 = o.G + 2 * nn;
        o.Ua = o.U1 + 2 * bb;
        o.Tp = o.Ua + 2 * bb;
        o.Tpa = o.Tp + 2 * mm;
        o.dinfo = (int64_t *)(o.Tpa + 2 * mm);
        o.dinfo_save = o.dinfo + 1;
        o.P = pw > 0 ? (void *)(o.dinfo_save + 1) : NULL;
        for (size_t j = 0; j < nn; ++j) {
            hg[j] = 1.0;
            hg[j + nn] = (double)(j + 1);
        }
        abft_copy_args_t cg = {1, 8, n, 2, hg, n, o.G, n};
        st = h->ops->copy(&h->kctx, &cg);
    }
    if (st == ABFT_STATUS_SUCCESS) st = abft_lu_encode(&p, A, lda);
    if (st == ABFT_STATUS_SUCCESS) st = run_online(&o, nb, inb, every, hpiv, ipiv, &linfo, rep);
    if (o.aux != NULL) {
        /* the caller's stream is after everything (a failure may leave work queued there) */
        abft_status_t r = h->ops->order(&h->kctx, o.aux);
        if (st == ABFT_STATUS_SUCCESS) st = r;
    }
    free(hg);
    free(hpiv);
    if (o.mem != NULL) h->ops->free(&h->kctx, o.mem);
    abft_lu_plan_fini(&p);
    if (st == ABFT_STATUS_NON_FINITE_INPUT) {
        lrep.nonfinite_input = 1;
        if (report != NULL) {
            abft_bound_report_lu(h, &lrep);
            *report = lrep;
        }
        return st;
    }
    if (st != ABFT_STATUS_SUCCESS) return st;
    if (report != NULL) {
        abft_bound_report_lu(h, &lrep);
        *report = lrep;
    }
    if (info != NULL) *info = linfo;
    return linfo > 0 ? ABFT_STATUS_SINGULAR : ABFT_STATUS_SUCCESS;
}

abft_status_t abft_dgetrf_online(abft_handle_t h, int64_t m, int64_t n, double *A, int64_t lda,
                                 int64_t *ipiv, const abft_lu_options_t *options, int64_t *info,
                                 abft_report_t *report) {
    return getrf_online(h, ABFT_PREC_D, m, n, A, lda, ipiv, options, info, report);
}
abft_status_t abft_sgetrf_online(abft_handle_t h, int64_t m, int64_t n, float *A, int64_t lda,
                                 int64_t *ipiv, const abft_lu_options_t *options, int64_t *info,
                                 abft_report_t *report) {
    return getrf_online(h, ABFT_PREC_S, m, n, A, lda, ipiv, options, info, report);
}
