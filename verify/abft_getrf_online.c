/* abft: online protected LU, the checksums carried inside a blocked right-looking LU
 * (DESIGN section 5, docs/lu.md).
 *
 * Per panel K0..K1-1 (jb = K1 - K0 columns):
 *   getrf on the panel A(K0:m, K0:K1)          (backend getrf, local pivots -> global)
 *   laswp on the columns left and right of it, and on the carried checksum columns W and
 *   their bound columns B                       (the same row interchanges)
 *   trsm  U12 = L11^-1·A12
 *   W1 = U1·V, Ua = |U1|·V from the finished U rows (fresh, not solved: see docs/lu.md)
 *   gemm  A22 -= L21·U12;  W2 -= L21·W1;  B2 += 4·|L21|·Ua
 *   hook ABFT_SITE_LU_PANEL, then (every check_every panels) the trailing check
 *         |A22·V2 - W2| <= g·B2 + 2g·|A22|·V2, g = gamma_{max(m,n)+1}(u)
 *   one error per flagged row of A22 is located (ratio = global column + 1), recomputed
 *   from the row's checksum, re-verified; a row whose checksum alone is off is resynced.
 * The final factors get the offline check of abft_getrf.c (it covers L, which the carried
 * row checksums do not). */
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
} online_t;

static void *elem_ptr(const online_t *o, int64_t i, int64_t j) {
    return (char *)o->A + ((size_t)i + (size_t)j * (size_t)o->lda) * o->es;
}

/* Trailing check of rows/cols K1.. after a panel; locate, correct, resync. */
static abft_status_t trailing_check(online_t *o, int64_t K1, abft_report_t *rep) {
    abft_handle_t h = o->h;
    struct abft_lu_plan *p = o->p;
    const int64_t m = p->m, n = p->n, mt = m - K1, nt = n - K1;
    const double u = abft_lu_unit_roundoff(p->prec);
    const double g = abft_gamma(h, (double)(m > n ? m : n) + 1.0, u);
    const double slack = 1.0 + 4.0 * abft_gamma(h, (double)(m + n), 0x1.0p-53);
    const double floor = (double)(m + n + 2) * (double)n * ((double)n + 1.0) / 2.0 *
                         abft_lu_eta(p->prec);
    abft_tsmm_args_t t = {p->prec, 0, mt, nt, 2, elem_ptr(o, K1, K1), o->lda, o->G + K1, n,
                          NULL, 0, o->T, m, o->Ta, m};
    ABFT_TRY(h->ops->tsmm(&h->kctx, &t));
    int64_t nflag = 0;
    double mr = 0.0;
    abft_compare_args_t c = {mt, o->T, m, o->Ta, m, o->W + K1, m, o->B + K1, m, NULL, 0,
                             NULL, 0, 1.0, 0.0, g * slack, 2.0 * g * slack, floor, 0, NULL,
                             &nflag, &mr};
    /* The only wait for the backend in a clean panel. A NaN or Inf in Ta (an overflowed
     * bound, which would pass anything) needs no separate count: it makes the bound t NaN or
     * +Inf, and compare flags such an entry (!(|d| <= t) or t = +Inf). The slow path below
     * then reports the row's ratio as +Inf. */
    ABFT_TRY(h->ops->compare(&h->kctx, &c));
    if (nflag == 0 && !(mr < INFINITY)) nflag = 1;
    rep->checked += mt;
    if (mr > rep->max_ratio || isnan(mr)) rep->max_ratio = mr;
    if (nflag == 0) return ABFT_STATUS_SUCCESS;

    /* Slow path on the host: rows of T, Ta, W, B. */
    size_t mm = (size_t)mt;
    double *buf = (double *)malloc((8 * mm + (size_t)nt) * sizeof(double));
    void *row = malloc((size_t)nt * o->es);
    abft_status_t st = buf == NULL || row == NULL ? ABFT_STATUS_ALLOC_FAILED : ABFT_STATUS_SUCCESS;
    double *T = buf, *Ta = T + 2 * mm, *W = Ta + 2 * mm, *B = W + 2 * mm;
    abft_copy_args_t c1 = {0, 8, mt, 2, T, mt, o->T, m}, c2 = {0, 8, mt, 2, Ta, mt, o->Ta, m};
    abft_copy_args_t c3 = {0, 8, mt, 2, W, mt, o->W + K1, m}, c4 = {0, 8, mt, 2, B, mt, o->B + K1, m};
    if (st == ABFT_STATUS_SUCCESS) st = h->ops->copy(&h->kctx, &c1);
    if (st == ABFT_STATUS_SUCCESS) st = h->ops->copy(&h->kctx, &c2);
    if (st == ABFT_STATUS_SUCCESS) st = h->ops->copy(&h->kctx, &c3);
    if (st == ABFT_STATUS_SUCCESS) st = h->ops->copy(&h->kctx, &c4);
    for (int64_t i = 0; i < mt && st == ABFT_STATUS_SUCCESS; ++i) {
        double d[2], tb[2];
        int fl[2];
        for (int q = 0; q < 2; ++q) {
            d[q] = T[i + q * mm] - W[i + q * mm];
            tb[q] = g * slack * B[i + q * mm] + 2.0 * g * slack * Ta[i + q * mm] + floor;
            fl[q] = !(fabs(d[q]) <= tb[q]) || !isfinite(tb[q]);
        }
        if (!fl[0] && !fl[1]) continue;
        rep->detected += 1;
        double ratio = fmax(fabs(d[0]) / tb[0], fabs(d[1]) / tb[1]);
        if (isnan(ratio) || !isfinite(tb[0]) || !isfinite(tb[1])) ratio = INFINITY;
        if (!(ratio < INFINITY)) rep->max_ratio = INFINITY;
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
            /* recompute A(gi, j) from the row's carried checksum without it */
            abft_copy_args_t cr = {0, o->es, 1, nt, row, 1, elem_ptr(o, gi, K1), o->lda};
            st = h->ops->copy(&h->kctx, &cr);
            if (st != ABFT_STATUS_SUCCESS) break;
            double s = W[i];
            for (int64_t l = 0; l < nt; ++l)
                if (K1 + l != j)
                    s -= o->es == 8 ? ((double *)row)[l] : (double)((float *)row)[l];
            abft_lu_elem_args_t e = {p->prec, o->A, o->lda, gi, j};
            double old = 0.0;
            st = o->lo->lu_get(&h->kctx, &e, &old);
            if (st == ABFT_STATUS_SUCCESS) st = o->lo->lu_set(&h->kctx, &e, s);
            /* re-verify the row */
            double rr[2], ra[2];
            abft_tsmm_args_t t1 = {p->prec, 0, 1, nt, 2, elem_ptr(o, gi, K1), o->lda, o->G + K1, n,
                                   NULL, 0, o->T, m, o->Ta, m};
            if (st == ABFT_STATUS_SUCCESS) st = h->ops->tsmm(&h->kctx, &t1);
            abft_copy_args_t c5 = {0, 8, 1, 2, rr, 1, o->T, m}, c6 = {0, 8, 1, 2, ra, 1, o->Ta, m};
            if (st == ABFT_STATUS_SUCCESS) st = h->ops->copy(&h->kctx, &c5);
            if (st == ABFT_STATUS_SUCCESS) st = h->ops->copy(&h->kctx, &c6);
            if (st != ABFT_STATUS_SUCCESS) break;
            int ok = 1;
            for (int q = 0; q < 2; ++q) {
                double tq = g * slack * B[i + q * mm] + 2.0 * g * slack * ra[q] + floor;
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
        } else if (fl[0] != fl[1] && isfinite(T[i]) && isfinite(T[i + mm])) {
            /* One checksum column off, the other consistent: the checksum was hit, the data
             * is intact. Resync the carried checksum from the data. */
            abft_copy_args_t cw = {1, 8, 1, 2, &T[i], mm, o->W + gi, m};
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
    return st;
}

/* Row interchanges k1..k2-1 of the global pivots ipiv (backend memory) on columns
 * c0..c1-1 of A except skip0..skip1-1, and on W and B when wb (m x 4: B follows W). */
static abft_status_t swap_rows(online_t *o, const int64_t *ipiv, int64_t k1, int64_t k2,
                               int64_t c0, int64_t c1, int64_t skip0, int64_t skip1, int wb) {
    const int skip = skip1 > skip0;
    abft_lu_laswp_args_t a = {o->p->prec, 0, c1 - c0, elem_ptr(o, 0, c0), o->lda, k1, k2, ipiv,
                              0, 1, skip ? skip0 - c0 : 0, skip ? skip1 - c0 : 0,
                              wb ? o->W : NULL, wb ? 4 : 0, o->p->m};
    return o->lo->lu_laswp(&o->h->kctx, &a);
}

/* Factor the panel A(c0:m, c0:c0+w) (rows below c0, all of them), global pivots in ipiv
 * (backend memory), the first zero pivot accumulated in *dinfo (backend memory): nothing
 * here waits for the backend. Wider than inb: split in halves as LAPACK's getrf2 does (left
 * half, swaps + trsm + gemm on the right half, right half, swaps on the left half), so that
 * the backend's getrf only sees narrow panels. */
static abft_status_t factor_panel(online_t *o, int64_t c0, int64_t w, int64_t inb,
                                  int64_t *ipiv, int64_t *dinfo) {
    abft_handle_t h = o->h;
    const abft_lu_ops_t *lo = o->lo;
    struct abft_lu_plan *p = o->p;
    const int64_t m = p->m;
    if (w <= inb) {
        abft_lu_getrf_args_t gf = {p->prec, m - c0, w, elem_ptr(o, c0, c0), o->lda, ipiv + c0,
                                   NULL, NULL, c0, dinfo};
        return lo->lu_getrf(&h->kctx, &gf);
    }
    const int64_t w1 = w / 2, w2 = w - w1, c1 = c0 + w1;
    ABFT_TRY(factor_panel(o, c0, w1, inb, ipiv, dinfo));
    ABFT_TRY(swap_rows(o, ipiv, c0, c1, c1, c0 + w, 0, 0, 0));
    abft_lu_trsm_args_t ts = {p->prec, 1, 0, w1, w2, elem_ptr(o, c0, c0), o->lda,
                              elem_ptr(o, c0, c1), o->lda};
    ABFT_TRY(lo->lu_trsm(&h->kctx, &ts));
    abft_gemm_args_t ge = {p->prec, 0, 0, m - c1, w2, w1, -1.0, 1.0, elem_ptr(o, c1, c0), o->lda,
                           elem_ptr(o, c0, c1), o->lda, elem_ptr(o, c1, c1), o->lda};
    ABFT_TRY(h->ops->gemm(&h->kctx, &ge));
    ABFT_TRY(factor_panel(o, c1, w2, inb, ipiv, dinfo));
    return swap_rows(o, ipiv, c1, c0 + w, c0, c1, 0, 0, 0);
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
    int64_t panel = 0;
    for (int64_t K0 = 0; K0 < k; K0 += nb, ++panel) {
        const int64_t jb = nb < k - K0 ? nb : k - K0, K1 = K0 + jb;
        ABFT_TRY(factor_panel(o, K0, jb, inb, ipiv, o->dinfo));
        /* the columns left and right of the panel, and W and B (adjacent, B = W + 2m: one
         * m x 4 block), in one call */
        ABFT_TRY(swap_rows(o, ipiv, K0, K1, 0, n, K0, K1, 1));
        if (K1 < n) {
            abft_lu_trsm_args_t ts = {p->prec, 1, 0, jb, n - K1, elem_ptr(o, K0, K0), o->lda,
                                      elem_ptr(o, K0, K1), o->lda};
            ABFT_TRY(lo->lu_trsm(&h->kctx, &ts));
        }
        if (K1 < m) {
            /* the finished U rows' checksums, fresh from the data */
            abft_lu_tri_args_t tu = {p->prec, 0, 0, jb, n - K0, elem_ptr(o, K0, K0), o->lda,
                                     o->G + K0, n, NULL, 0, 0, o->U1, nb, o->Ua, nb};
            ABFT_TRY(lo->lu_tri(&h->kctx, &tu));
            if (K1 < n) {
                abft_gemm_args_t ge = {p->prec, 0, 0, m - K1, n - K1, jb, mone, 1.0,
                                       elem_ptr(o, K1, K0), o->lda, elem_ptr(o, K0, K1), o->lda,
                                       elem_ptr(o, K1, K1), o->lda};
                ABFT_TRY(h->ops->gemm(&h->kctx, &ge));
            }
            abft_tsmm_args_t tl = {p->prec, 0, m - K1, jb, 2, elem_ptr(o, K1, K0), o->lda, o->U1,
                                   nb, o->Ua, nb, o->T, m, o->Ta, m};
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
            if ((panel + 1) % every == 0) ABFT_TRY(trailing_check(o, K1, rep));
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
    return abft_lu_verify(p, o->A, o->lda, hpiv, rep);
}

static abft_status_t getrf_online(abft_handle_t h, abft_prec_t prec, int64_t m, int64_t n,
                                  void *A, int64_t lda, int64_t *ipiv,
                                  const abft_lu_options_t *opt, int64_t *info,
                                  abft_report_t *report) {
    ABFT_RETURN_IF(!abft_handle_ok(h), ABFT_STATUS_NOT_INITIALIZED);
    ABFT_RETURN_IF(abft_bad_matrix(m, n, A, lda), ABFT_STATUS_INVALID_VALUE);
    const int64_t k = m < n ? m : n;
    ABFT_RETURN_IF(k > 0 && ipiv == NULL, ABFT_STATUS_INVALID_VALUE);
    const int gpu = h->backend == ABFT_BACKEND_CUDA;
    int64_t nb = gpu ? 512 : 64, every = 1, inb = gpu ? 128 : 0;
    if (opt != NULL) {
        ABFT_RETURN_IF(opt->nb < 0 || opt->check_every < 0 || opt->panel_nb < 0,
                       ABFT_STATUS_INVALID_VALUE);
        if (opt->nb > 0) nb = opt->nb;
        if (opt->check_every > 0) every = opt->check_every;
        if (opt->panel_nb > 0) inb = opt->panel_nb;
    }
    /* GPU default nb = 512 with 128-column leaves: the fastest of bench_lu's sweep on the
     * H100 once swaps and pivots stayed on the device (1062a33: 43.8 ms against 44.6 ms
     * for nb = 256 without recursion, fp64 n = 8192, checks off). CPU: no recursion. */
    if (inb == 0) inb = nb;
    abft_report_t local;
    abft_report_t *rep = report != NULL ? report : &local;
    memset(rep, 0, sizeof *rep);
    rep->unit_roundoff = abft_lu_unit_roundoff(prec);
    if (info != NULL) *info = 0;
    if (k == 0) return ABFT_STATUS_SUCCESS;
    if (nb > k) nb = k;

    struct abft_lu_plan p;
    ABFT_TRY(abft_lu_plan_init(h, prec, m, n, &p));
    online_t o = {h, abft_lu_ops(h), &p, A, lda, prec == ABFT_PREC_D ? 8u : 4u, NULL,
                  NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL};
    size_t mm = (size_t)m, nn = (size_t)n, bb = (size_t)nb;
    abft_status_t st =
        h->ops->alloc(&h->kctx, (8 * mm + 2 * nn + 4 * bb + 1) * sizeof(double), &o.mem);
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
        o.dinfo = (int64_t *)(o.Ua + 2 * bb);
        for (size_t j = 0; j < nn; ++j) {
            hg[j] = 1.0;
            hg[j + nn] = (double)(j + 1);
        }
        abft_copy_args_t cg = {1, 8, n, 2, hg, n, o.G, n};
        st = h->ops->copy(&h->kctx, &cg);
    }
    if (st == ABFT_STATUS_SUCCESS) st = abft_lu_encode(&p, A, lda);
    if (st == ABFT_STATUS_SUCCESS) st = run_online(&o, nb, inb, every, hpiv, ipiv, &linfo, rep);
    free(hg);
    free(hpiv);
    if (o.mem != NULL) h->ops->free(&h->kctx, o.mem);
    abft_lu_plan_fini(&p);
    if (st != ABFT_STATUS_SUCCESS) return st;
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
