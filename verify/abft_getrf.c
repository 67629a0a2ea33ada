/* abft: offline protected LU (docs/lu.md).
 *
 *   encode  X = A·V, Xa = |A|·V                       one read of A
 *   getrf   P·A = L·U (LAPACK / cuSOLVER, untouched)
 *   check   Y = U·V, Ya = |U|·V; Z = L·Y, Za = |L|·Ya  one read of the factors
 *           |Z - P·X| <= coef_r·Za + coef_s·P·Xa + underflow terms  (abft_bound_lu)
 *   locate  the residual pattern over the rows tells an error of U (it spreads down the
 *           column of L below its row, with the integer ratio d_w/d_e = j + 1 in every
 *           flagged row) from one of L (one row, ratio that of a row of U·V); correct,
 *           re-verify, or revert and report. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "abft_lu_internal.h"

/* ---- plan ------------------------------------------------------------------------------ */

abft_status_t abft_lu_plan_init(abft_handle_t h, abft_prec_t prec, int64_t m, int64_t n,
                                struct abft_lu_plan *p) {
    memset(p, 0, sizeof *p);
    p->h = h;
    p->prec = prec;
    p->m = m;
    p->n = n;
    p->k = m < n ? m : n;
    size_t mm = (size_t)(m > 0 ? m : 1), kk = (size_t)(p->k > 0 ? p->k : 1);
    size_t bytes = (6 * 2 * mm + 2 * 2 * kk + 8) * sizeof(double) + mm * sizeof(int64_t);
    ABFT_TRY(h->ops->alloc(&h->kctx, bytes, &p->mem));
    double *d = (double *)p->mem;
    p->X = d;
    p->Xa = d + 2 * mm;
    p->PX = d + 4 * mm;
    p->PXa = d + 6 * mm;
    p->Z = d + 8 * mm;
    p->Za = d + 10 * mm;
    p->Y = d + 12 * mm;
    p->Ya = d + 12 * mm + 2 * kk;
    p->S = d + 12 * mm + 4 * kk;
    p->perm = (int64_t *)(p->S + 8);
    if (h->lu_recovery && m > 0 && n > 0) {
        size_t es = prec == ABFT_PREC_D ? 8 : 4;
        abft_status_t st = h->ops->alloc(&h->kctx, (size_t)m * (size_t)n * es, &p->A0);
        if (st != ABFT_STATUS_SUCCESS) {
            p->A0 = NULL;
            abft_lu_plan_fini(p);
            return st;
        }
    }
    return ABFT_STATUS_SUCCESS;
}

void abft_lu_plan_fini(struct abft_lu_plan *p) {
    if (p->mem != NULL) p->h->ops->free(&p->h->kctx, p->mem);
    if (p->A0 != NULL) p->h->ops->free(&p->h->kctx, p->A0);
    p->mem = NULL;
    p->A0 = NULL;
}

/* ---- encode ---------------------------------------------------------------------------- */

abft_status_t abft_lu_encode(struct abft_lu_plan *p, const void *A, int64_t lda) {
    abft_handle_t h = p->h;
    const int64_t m = p->m;
    if (m == 0 || p->n == 0) {
        p->encoded = 1;
        return ABFT_STATUS_SUCCESS;
    }
    /* Errors leave the plan as it was (a split-form plan keeps an earlier encoding): the new
     * checksums go to Z, Za (scratch until a verify recomputes them) and are swapped with X,
     * Xa only when the encode succeeds. */
    double *nX = p->Z, *nXa = p->Za;
    abft_tsmm_args_t t = {p->prec, 0, m, p->n, 2, A, lda, NULL, 0, NULL, 0, nX, m, nXa, m, 0};
    ABFT_TRY(h->ops->tsmm(&h->kctx, &t));
    /* Non-finite input: |A|·V is finite iff A is (or the sums overflow, when no bound
     * could be computed either). */
    int64_t nbad = 0;
    ABFT_TRY(abft_lu_nonfinite_rows(h, m, nXa, m, &nbad));
    ABFT_RETURN_IF(nbad > 0, ABFT_STATUS_NON_FINITE_INPUT);
    /* The checksums' own checksum X^T·V (2 x 2), kept on the host: a corrupted entry of X
     * changes it, an intact X reproduces it bit for bit (same kernel, same data). S: 8
     * doubles of scratch. */
    double sig[4], siga[4], *s = p->S;
    abft_tsmm_args_t ts = {ABFT_PREC_D, 1, m, 2, 2, nX, m, NULL, 0, NULL, 0, s, 2, s + 4, 2, 0};
    ABFT_TRY(h->ops->tsmm(&h->kctx, &ts));
    abft_copy_args_t cp = {0, sizeof(double), 2, 2, sig, 2, s, 2};
    ABFT_TRY(h->ops->copy(&h->kctx, &cp));
    abft_copy_args_t cpa = {0, sizeof(double), 2, 2, siga, 2, s + 4, 2};
    ABFT_TRY(h->ops->copy(&h->kctx, &cpa));
    ABFT_TRY(abft_call_hook(h, ABFT_SITE_CHECKSUM, 0, ABFT_PREC_D, nX, m, 2, m));
    if (p->A0 != NULL) { /* the recovery copy (dir 2: backend to backend) */
        abft_copy_args_t c0 = {2, p->prec == ABFT_PREC_D ? 8u : 4u, m, p->n, p->A0, m,
                               (void *)A, lda};
        abft_status_t st = h->ops->copy(&h->kctx, &c0);
        if (st != ABFT_STATUS_SUCCESS) { /* the old copy may be partly overwritten */
            p->encoded = 0;
            return st;
        }
    }
    p->Z = p->X;
    p->Za = p->Xa;
    p->X = nX;
    p->Xa = nXa;
    memcpy(p->sig, sig, sizeof sig);
    memcpy(p->siga, siga, sizeof siga);
    p->encoded = 1;
    return ABFT_STATUS_SUCCESS;
}

/* ---- check ----------------------------------------------------------------------------- */

/* The arithmetic of the call: the BLAS's, and with solver the getrf's (CUDA: cuSOLVER has
 * a math mode of its own), the coarser in every field. */
abft_status_t abft_lu_arith(abft_handle_t h, abft_prec_t prec, int solver, abft_arith_t *a) {
    ABFT_TRY(abft_bound_arith(h, prec, a));
#if ABFT_HAVE_CUDA
    if (solver && h->backend == ABFT_BACKEND_CUDA) {
        abft_arith_t s;
        ABFT_TRY(abft_cuda_solver_arith(h->kctx.solver, prec, &s));
        a->u_in = fmax(a->u_in, s.u_in);
        a->u = fmax(a->u, s.u);
        a->eta = fmax(a->eta, s.eta);
    }
#else
    (void)solver;
#endif
    return ABFT_STATUS_SUCCESS;
}

static abft_status_t fetch_strip(const struct abft_lu_plan *p, const void *src, int64_t ld,
                                 int64_t rows, int64_t cols, double **out);

/* The divisors' sums of the underflow terms (abft_bound_lu) per prefix: row i divides by
 * U(c, c), c < min(i, k), so its terms are pre + 3·min(i, k) (abft_bound_lu_dprefix; a
 * corrupted diagonal entry widens only the rows below it). Read from the factors, slow path
 * only; *pre: malloc'd, 3(k + 1) doubles. */
static abft_status_t diag_sums(const struct abft_lu_plan *p, const void *A, int64_t lda,
                               double **pre) {
    *pre = (double *)malloc(3 * (size_t)(p->k + 1) * sizeof(double));
    ABFT_RETURN_IF(*pre == NULL, ABFT_STATUS_ALLOC_FAILED);
    double *d = NULL;
    abft_status_t st = p->k > 0 ? fetch_strip(p, A, lda + 1, 1, p->k, &d) : ABFT_STATUS_SUCCESS;
    if (st == ABFT_STATUS_SUCCESS) {
        abft_bound_lu_dprefix(d, p->k, *pre);
    } else {
        free(*pre);
        *pre = NULL;
    }
    free(d);
    return st;
}
static const double *row_dsum(const struct abft_lu_plan *p, const double *pre, int64_t i) {
    return pre + 3 * (i < p->k ? i : p->k);
}

/* The full bound of row i, checksum column q (docs/lu.md, "Gradual underflow"); dsum: the
 * row's divisor sums (row_dsum). */
static double row_bound(const abft_lu_bound_t *b, const double *dsum, int q, double pxa,
                        double za) {
    double rc = dsum[2] >= b->rcp_limit ? b->rcp_coef : 0.0;
    return b->coef_s * pxa + (b->coef_r + rc) * za + b->abs_floor + b->eta_amp * dsum[q];
}

/* Host copies of the m x 2 arrays the check compares: Z, Za, P·X, P·Xa (buf: 8m doubles). */
/* Partial pivoting keeps every multiplier |L(i, c)| <= 1 (exactly, in floating point; the
 * library's own getrf and online LU, not necessarily a split-form caller's), so
 * an intact row obeys Za_i = (|L|·(|U|·V))_i <= cap_i = sum_{c <= min(i, k-1)} (|U|·V)_c. A
 * corrupted factor can inflate Za, and with it the row's own bound, far enough to hide
 * itself (a multiplier flipped to 1e19 under TF32, with (U·V)_c cancelling); so the bound
 * uses min(Za, cap), and a row with Za > cap holds a multiplier above 1: a fault. *caps:
 * malloc'd m x 2 from the host copy Ya (k x 2). */
static abft_status_t za_caps(const struct abft_lu_plan *p, double **caps) {
    const int64_t m = p->m, k = p->k;
    *caps = (double *)malloc(sizeof(double) * 2 * (size_t)(m + k + 1));
    ABFT_RETURN_IF(*caps == NULL, ABFT_STATUS_ALLOC_FAILED);
    double *ya = *caps + 2 * m;
    if (k > 0) {
        abft_copy_args_t c = {0, sizeof(double), k, 2, ya, k, p->Ya, k};
        abft_status_t st = p->h->ops->copy(&p->h->kctx, &c);
        if (st != ABFT_STATUS_SUCCESS) {
            free(*caps);
            *caps = NULL;
            return st;
        }
    }
    const double slack = 1.0 + 4.0 * (double)(k + 2) * 0x1p-53;
    for (int q = 0; q < 2; ++q) {
        double run = 0.0;
        for (int64_t i = 0; i < m; ++i) {
            if (i < k) run += ya[i + q * k];
            /* the split form's caller may factor without partial pivoting: no cap there */
            (*caps)[i + q * m] = p->pivoted ? run * slack : INFINITY;
        }
    }
    return ABFT_STATUS_SUCCESS;
}

/* The row's |L|·(|U|·V) as the bound uses it, and whether it proves a multiplier above 1;
 * *zr: then the ratio that flags it, Za / cap (above 1), else 0. */
static double za_eff(double za, double cap, int *big, double *zr) {
    *zr = 0.0;
    if (za > cap && isfinite(za) && isfinite(cap)) {
        *big = 1;
        *zr = za / cap;
        if (!(*zr > 1.0)) *zr = INFINITY; /* cap = 0 */
        return cap;
    }
    return za;
}

static abft_status_t fetch_cmp(const struct abft_lu_plan *p, double *buf) {
    abft_handle_t h = p->h;
    const int64_t m = p->m;
    const double *src[4] = {p->Z, p->Za, p->PX, p->PXa};
    for (int a = 0; a < 4; ++a) {
        abft_copy_args_t c = {0, sizeof(double), m, 2, buf + 2 * (size_t)m * (size_t)a, m,
                              (void *)src[a], m};
        ABFT_TRY(h->ops->copy(&h->kctx, &c));
    }
    return ABFT_STATUS_SUCCESS;
}

/* The compare evaluates the bound without the amplified-underflow term (which needs the
 * diagonal of U): when it flags, the rows are counted again on the host with the full
 * bound, and *nflagged, *max_ratio replaced. */
static abft_status_t recount(struct abft_lu_plan *p, const void *A, int64_t lda,
                             int64_t *nflagged, double *max_ratio) {
    const int64_t m = p->m;
    const size_t mm = (size_t)m;
    abft_lu_bound_t b;
    abft_bound_lu(p->h, &p->arith, p->prec, p->m, p->n, &b);
    double *pre = NULL;
    ABFT_TRY(diag_sums(p, A, lda, &pre));
    double *buf = (double *)malloc(8 * mm * sizeof(double)), *caps = NULL;
    abft_status_t st = buf == NULL ? ABFT_STATUS_ALLOC_FAILED : fetch_cmp(p, buf);
    if (st == ABFT_STATUS_SUCCESS) st = za_caps(p, &caps);
    int64_t nf = 0;
    double mr = 0.0;
    for (int64_t i = 0; i < m && st == ABFT_STATUS_SUCCESS; ++i) {
        int fl = 0;
        for (int q = 0; q < 2; ++q) {
            size_t o = (size_t)i + (size_t)q * mm;
            double d = buf[o] - buf[4 * mm + o];
            int big = 0;
            double zr = 0.0;
            double za = za_eff(buf[2 * mm + o], caps[o], &big, &zr);
            double t = row_bound(&b, row_dsum(p, pre, i), q, buf[6 * mm + o], za);
            if (!(fabs(d) <= t) || !isfinite(t) || big) fl = 1;
            double x = d == 0.0 ? 0.0 : fabs(d) / t;
            if (isnan(x) || !isfinite(t)) x = INFINITY;
            /* a row flagged by its cap alone has that ratio (its residual may be 0) */
            if (zr > x) x = zr;
            if (x > mr) mr = x;
        }
        nf += fl;
    }
    free(buf);
    free(caps);
    free(pre);
    if (st == ABFT_STATUS_SUCCESS) {
        *nflagged = nf;
        *max_ratio = mr;
    }
    return st;
}

/* One full check of the factors: Y, Ya, Z, Za, compare against PX, PXa. */
static abft_status_t check_factors(struct abft_lu_plan *p, const void *A, int64_t lda,
                                   int64_t *nflagged, double *max_ratio) {
    abft_handle_t h = p->h;
    const abft_lu_ops_t *lo = abft_lu_ops(h);
    const int64_t m = p->m, n = p->n, k = p->k;
    abft_lu_tri_args_t u = {p->prec, 0, 0, k, n, A, lda, NULL, 0, NULL, 0, 0,
                            p->Y, k, p->Ya, k};
    ABFT_TRY(lo->lu_tri(&h->kctx, &u));
    abft_lu_tri_args_t l = {p->prec, 1, 0, m, k, A, lda, p->Y, k, p->Ya, k, 0,
                            p->Z, m, p->Za, m};
    ABFT_TRY(lo->lu_tri(&h->kctx, &l));
    abft_lu_bound_t b;
    abft_bound_lu(h, &p->arith, p->prec, m, n, &b);
    abft_compare_args_t c = {m, p->Z, m, p->Za, m, p->PX, m, p->PXa, m, NULL, 0, NULL, 0,
                             1.0, 0.0, b.coef_s, b.coef_r, b.abs_floor, 0, NULL, nflagged,
                             max_ratio, NULL, 0, 0.0, 0.0, 0.0, 0.0, 1.0};
    ABFT_TRY(h->ops->compare(&h->kctx, &c, 1));
    /* An overflowed bound (Za = Inf) passes any residual: such rows count as flagged. */
    int64_t nbad = 0;
    ABFT_TRY(abft_lu_nonfinite_rows(h, m, p->Za, m, &nbad));
    /* a row whose |L|·(|U|·V) exceeds what multipliers <= 1 allow (za_caps): the compare
     * measured it against a bound the fault itself inflated */
    int64_t nbig = 0;
    if (nbad == 0 && *nflagged == 0 && m > 0) {
        double *caps = NULL, *za = (double *)malloc(sizeof(double) * 2 * (size_t)m);
        abft_status_t st = za == NULL ? ABFT_STATUS_ALLOC_FAILED : za_caps(p, &caps);
        if (st == ABFT_STATUS_SUCCESS) {
            abft_copy_args_t c = {0, sizeof(double), m, 2, za, m, p->Za, m};
            st = h->ops->copy(&h->kctx, &c);
        }
        for (int64_t i = 0; i < 2 * m && st == ABFT_STATUS_SUCCESS; ++i) {
            int big = 0;
            double zr;
            (void)za_eff(za[i], caps[i], &big, &zr);
            nbig += big;
        }
        free(za);
        free(caps);
        ABFT_TRY(st);
    }
    if (nbad > 0) {
        *nflagged += nbad;
        *max_ratio = INFINITY;
    } else if (*nflagged > 0 || nbig > 0) {
        ABFT_TRY(recount(p, A, lda, nflagged, max_ratio));
    }
    if (*nflagged == 0 && !(*max_ratio < INFINITY)) *nflagged = 1;
    return ABFT_STATUS_SUCCESS;
}

/* Host copies of what location needs. */
typedef struct host_view {
    int64_t m, k;
    double *d[2], *t[2]; /* residual and bound per row, per checksum column */
    double *PX;          /* P·(A·V) (m x 2) */
    double *Z, *Za;      /* L·(U·V), |L|·(|U|·V) (m x 2) */
    double *Y;           /* U·V (k x 2) */
    unsigned char *big;  /* per row: |L|·(|U|·V) proves a multiplier above 1 (za_caps) */
    double *zr;          /* per row: then the larger Za / cap of the two columns, else 0 */
    abft_lu_bound_t b;   /* the bound (abft_bound_lu) and its divisor sums (diag_sums) */
    double *pre;
    double *buf;
} host_view_t;

static abft_status_t fetch(struct abft_lu_plan *p, const void *A, int64_t lda, host_view_t *v) {
    abft_handle_t h = p->h;
    const int64_t m = p->m, k = p->k;
    size_t mm = (size_t)m, kk = (size_t)(k > 0 ? k : 1);
    v->m = m;
    v->k = k;
    v->buf = (double *)malloc((13 * mm + 2 * kk) * sizeof(double));
    ABFT_RETURN_IF(v->buf == NULL, ABFT_STATUS_ALLOC_FAILED);
    double *Z = v->buf, *Za = Z + 2 * mm, *PX = Za + 2 * mm, *PXa = PX + 2 * mm;
    double *D = PXa + 2 * mm, *T = D + 2 * mm;
    v->PX = PX;
    v->Z = Z;
    v->Za = Za;
    v->Y = T + 2 * mm;
    v->zr = v->Y + 2 * kk;
    abft_copy_args_t c1 = {0, sizeof(double), m, 2, Z, m, p->Z, m};
    abft_copy_args_t c2 = {0, sizeof(double), m, 2, Za, m, p->Za, m};
    abft_copy_args_t c3 = {0, sizeof(double), m, 2, PX, m, p->PX, m};
    abft_copy_args_t c4 = {0, sizeof(double), m, 2, PXa, m, p->PXa, m};
    abft_copy_args_t c5 = {0, sizeof(double), k, 2, v->Y, k, p->Y, k};
    abft_bound_lu(h, &p->arith, p->prec, m, p->n, &v->b);
    abft_status_t st = diag_sums(p, A, lda, &v->pre);
    if (st == ABFT_STATUS_SUCCESS) st = h->ops->copy(&h->kctx, &c1);
    if (st == ABFT_STATUS_SUCCESS) st = h->ops->copy(&h->kctx, &c2);
    if (st == ABFT_STATUS_SUCCESS) st = h->ops->copy(&h->kctx, &c3);
    if (st == ABFT_STATUS_SUCCESS) st = h->ops->copy(&h->kctx, &c4);
    if (st == ABFT_STATUS_SUCCESS) st = h->ops->copy(&h->kctx, &c5);
    if (st != ABFT_STATUS_SUCCESS) {
        free(v->pre);
        free(v->buf);
        return st;
    }
    double *caps = NULL;
    v->big = (unsigned char *)calloc(mm + 1, 1);
    st = v->big == NULL ? ABFT_STATUS_ALLOC_FAILED : za_caps(p, &caps);
    if (st != ABFT_STATUS_SUCCESS) {
        free(v->big);
        free(v->pre);
        free(v->buf);
        return st;
    }
    for (int64_t i = 0; i < m; ++i) v->zr[i] = 0.0;
    for (int q = 0; q < 2; ++q) {
        v->d[q] = D + q * mm;
        v->t[q] = T + q * mm;
        for (int64_t i = 0; i < m; ++i) {
            int big = 0;
            double zr = 0.0;
            double za = za_eff(Za[i + q * mm], caps[i + q * mm], &big, &zr);
            v->big[i] |= (unsigned char)big;
            if (zr > v->zr[i]) v->zr[i] = zr;
            v->d[q][i] = Z[i + q * mm] - PX[i + q * mm];
            v->t[q][i] = row_bound(&v->b, row_dsum(p, v->pre, i), q, PXa[i + q * mm], za);
        }
    }
    free(caps);
    return ABFT_STATUS_SUCCESS;
}

/* Flagged: the residual exceeds the bound, or either is not finite (an overflowed checksum
 * gives d = t = Inf, which a plain |d| <= t would pass). */
static int row_flagged(const host_view_t *v, int64_t i) {
    if (v->big[i]) return 1;
    for (int q = 0; q < 2; ++q)
        if (!(fabs(v->d[q][i]) <= v->t[q][i]) || !isfinite(v->t[q][i])) return 1;
    return 0;
}
static double row_ratio(const host_view_t *v, int64_t i) {
    double r = v->zr[i]; /* a row flagged by its cap (za_caps): Za / cap */
    for (int q = 0; q < 2; ++q) {
        double x = v->d[q][i] == 0.0 ? 0.0 : fabs(v->d[q][i]) / v->t[q][i];
        if (isnan(x)) x = INFINITY;
        if (x > r) r = x;
    }
    return r;
}

/* An error delta at (r, c) of U: d_r = delta·[1, c + 1]. Returns 1 with c and delta when
 * the ratio is an integer in range, unambiguously; 2 when it fits but the neighbouring
 * columns would fit too (an error of U, but not located); 0 when it does not fit. */
static int u_ratio(const host_view_t *v, int64_t r, int64_t n, int64_t *col, double *delta) {
    double de = v->d[0][r], dw = v->d[1][r], te = v->t[0][r], tw = v->t[1][r];
    if (!(fabs(de) > te) || !isfinite(de) || !isfinite(dw)) return 0;
    double rho = dw / de;
    if (!(rho >= 0.5 && rho < (double)n + 0.5)) return 0;
    int64_t c = (int64_t)llround(rho) - 1;
    if (c < r || c >= n) return 0;
    double w = (double)(c + 1);
    if (!(fabs(dw - w * de) <= tw + w * te)) return 0;
    if (!(fabs(de) > 2.0 * (tw + (w + 1.0) * te))) return 2; /* c +- 1 would fit too */
    *col = c;
    *delta = (de + w * dw) / (1.0 + w * w); /* least squares over both columns */
    return 1;
}

/* An error delta at (r, c) of L, c < r: d_r = delta·(U·V)_c. Returns the number of rows c
 * of U·V that explain the residual (exactly 1 is a location). */
static int l_locate(const host_view_t *v, int64_t r, int64_t *col, double *delta) {
    double de = v->d[0][r], dw = v->d[1][r], te = v->t[0][r], tw = v->t[1][r];
    if (!isfinite(de) || !isfinite(dw)) return 0;
    /* An error of L shows in both checksums (d = delta·(U·V)_c); a corrupted checksum in
     * one. When either residual is within twice its noise the two cannot be told apart:
     * no location (the residual is reported instead). */
    if (!(fabs(de) > 2.0 * te) || !(fabs(dw) > 2.0 * tw)) return 0;
    int found = 0;
    int64_t kmax = r < v->k ? r : v->k;
    for (int64_t c = 0; c < kmax; ++c) {
        double ye = v->Y[c], yw = v->Y[c + v->k];
        double nn = ye * ye + yw * yw;
        if (!(nn > 0.0) || !isfinite(nn)) continue;
        double dl = (de * ye + dw * yw) / nn;
        /* twice the noise: a second candidate that fits that loosely makes it ambiguous */
        if (fabs(de - dl * ye) <= 2.0 * te && fabs(dw - dl * yw) <= 2.0 * tw) {
            if (found++ == 0) {
                *col = c;
                *delta = dl;
            }
        }
    }
    return found;
}

typedef struct fix {
    int64_t i, j;
    double delta, old, ratio;
    double value; /* the confirmed value (copy_value) */
    abft_factor_t factor;
} fix_t;

/* A rows x cols strip of backend memory at src (leading dimension ld, the plan's precision)
 * on the host as doubles, contiguous (one row or one column; *out: malloc'd, the caller
 * frees it; NULL on failure). */
static abft_status_t fetch_strip(const struct abft_lu_plan *p, const void *src, int64_t ld,
                                 int64_t rows, int64_t cols, double **out) {
    const size_t cnt = (size_t)rows * (size_t)cols;
    double *d = (double *)malloc((cnt > 0 ? cnt : 1) * sizeof(double));
    *out = NULL;
    ABFT_RETURN_IF(d == NULL, ABFT_STATUS_ALLOC_FAILED);
    abft_status_t st = abft_copy_doubles(p->h, p->prec, 0, (void *)src, ld, rows, cols, d);
    if (st != ABFT_STATUS_SUCCESS) {
        free(d);
        return st;
    }
    *out = d;
    return ABFT_STATUS_SUCCESS;
}

/* The largest element of row r of the factors (non-finite counts as largest) as a single
 * candidate: in L (column < r) it touches row r only; in U (column >= r) also the rows
 * below, through column r of L. exact_value recomputes it from the checksums, and the full
 * re-check confirms or reverts it. */
static abft_status_t largest_candidate(struct abft_lu_plan *p, const void *A, int64_t lda,
                                       int64_t r, fix_t *fix, int *nfix) {
    size_t es = p->prec == ABFT_PREC_D ? 8 : 4;
    double *row = NULL;
    ABFT_TRY(fetch_strip(p, (const char *)A + (size_t)r * es, lda, 1, p->n, &row));
    int64_t c = -1;
    double big = -1.0;
    for (int64_t j = 0; j < p->n; ++j) {
        double ax = isfinite(row[j]) ? fabs(row[j]) : INFINITY;
        if (ax > big) big = ax, c = j;
    }
    free(row);
    if (c < 0 || (c >= r && r >= p->k)) return ABFT_STATUS_SUCCESS;
    fix[0].i = r;
    fix[0].j = c;
    fix[0].delta = 0.0;
    fix[0].factor = c < r ? ABFT_FACTOR_L : ABFT_FACTOR_U;
    fix[0].ratio = INFINITY;
    *nfix = 1;
    return ABFT_STATUS_SUCCESS;
}

/* Location over the flagged rows: *nfix element fixes (0: not explained by one error of
 * U or by one error per row of L; *ambiguous when both explanations fit). */
static abft_status_t locate(struct abft_lu_plan *p, const void *A, int64_t lda,
                            const host_view_t *v, const int64_t *F, int64_t nf, fix_t *fix,
                            int *nfix, int *ambiguous) {
    *nfix = 0;
    *ambiguous = 0;
    const int64_t r = F[0], m = p->m;
    if (!isfinite(v->d[0][r]) || !isfinite(v->d[1][r]) || !isfinite(v->t[0][r]) ||
        !isfinite(v->t[1][r]))
        return largest_candidate(p, A, lda, r, fix, nfix);
    /* U: first flagged row r, integer ratio, and every row below consistent with
     * d_i = L(i, r)·d_r (flagged or not). u_fit: the pattern of an error of U; u_ok: one
     * located (its column unambiguous). */
    int64_t uc = -1;
    double ud = 0.0;
    int ur = r < p->k ? u_ratio(v, r, p->n, &uc, &ud) : 0, u_fit = 0;
    if (ur != 0) {
        u_fit = 1;
        int64_t nl = m - r - 1;
        if (nl > 0) {
            size_t es = p->prec == ABFT_PREC_D ? 8 : 4;
            const char *src = (const char *)A + ((size_t)(r + 1) + (size_t)r * (size_t)lda) * es;
            double *col = NULL;
            ABFT_TRY(fetch_strip(p, src, lda, nl, 1, &col));
            for (int64_t i = r + 1; i < m && u_fit; ++i) {
                double l = col[i - r - 1];
                for (int q = 0; q < 2 && u_fit; ++q) {
                    double pred = l * v->d[q][r];
                    if (!(fabs(v->d[q][i] - pred) <= 2.0 * (v->t[q][i] + fabs(l) * v->t[q][r])))
                        u_fit = 0;
                }
            }
            free(col);
        }
    }
    const int u_ok = u_fit && ur == 1;
    /* L: each flagged row on its own (one error per row of L, up to the report's list). */
    int l_ok = nf <= ABFT_REPORT_MAX_FAULTS;
    for (int64_t f = 0; f < nf && l_ok; ++f) {
        int64_t lc = -1;
        double ld = 0.0;
        if (l_locate(v, F[f], &lc, &ld) != 1) {
            l_ok = 0;
            break;
        }
        fix[f].i = F[f];
        fix[f].j = lc;
        fix[f].delta = ld;
        fix[f].factor = ABFT_FACTOR_L;
        fix[f].ratio = row_ratio(v, F[f]);
    }
    /* Never correct on a guess: an error of U that fits, even one whose column is not
     * unambiguous, makes a fitting L candidate ambiguous (bit 26 of U(103, 107), the last
     * row of a 104 x 108 LU: the ratio 108.0001 fits columns 107 and 106, and one row of
     * U·V within 2τ of it was "corrected" into L(103, 56)). */
    if (u_fit && l_ok) {
        *ambiguous = 1;
        return ABFT_STATUS_SUCCESS;
    }
    if (l_ok) {
        *nfix = (int)nf;
        return ABFT_STATUS_SUCCESS;
    }
    if (u_ok) {
        fix[0].i = r;
        fix[0].j = uc;
        fix[0].delta = ud;
        fix[0].factor = ABFT_FACTOR_U;
        fix[0].ratio = row_ratio(v, r);
        *nfix = 1;
        return ABFT_STATUS_SUCCESS;
    }
    /* Neither pattern fitted. When the residual is so large that the location arithmetic
     * above overflows (products of it with U·V beyond the fp64 range: an exponent flip to
     * a huge but finite value), try the largest element of the first flagged row, which
     * the full re-check confirms or reverts. Only then: for an ordinary residual, one
     * element recomputed from the checksums can always be made to fit them (a corrupted
     * checksum would be "corrected" into the data). */
    if (fmax(fabs(v->d[0][r]), fabs(v->d[1][r])) > 0x1p500)
        return largest_candidate(p, A, lda, r, fix, nfix);
    return ABFT_STATUS_SUCCESS;
}

/* X^T·V and |X|^T·V now (2 x 2 each, host). */
static abft_status_t x_sums(struct abft_lu_plan *p, double sig[4], double siga[4]) {
    abft_handle_t h = p->h;
    const int64_t m = p->m;
    double *dev = p->S; /* 8 doubles of scratch */
    abft_tsmm_args_t ts = {ABFT_PREC_D, 1, m, 2, 2, p->X, m, NULL, 0, NULL, 0, dev, 2,
                           dev + 4, 2, 0};
    ABFT_TRY(h->ops->tsmm(&h->kctx, &ts));
    abft_copy_args_t cp = {0, sizeof(double), 2, 2, sig, 2, dev, 2};
    ABFT_TRY(h->ops->copy(&h->kctx, &cp));
    abft_copy_args_t cpa = {0, sizeof(double), 2, 2, siga, 2, dev + 4, 2};
    return h->ops->copy(&h->kctx, &cpa);
}

/* How X^T·V moved since encoding: d[i] = X^T·V now minus at encoding, t[i] the rounding of
 * the two encodings (2·gamma of both absolute sums); i = q (plain sum of column q) and q + 2
 * (its weighted sum). */
typedef struct x_delta {
    double d[4], t[4];
} x_delta_t;

static abft_status_t x_delta(struct abft_lu_plan *p, x_delta_t *x) {
    double sig[4], siga[4], unused, g;
    ABFT_TRY(x_sums(p, sig, siga));
    abft_bound_lu_checksums(p->h, p->m, p->n, &unused, &g);
    for (int i = 0; i < 4; ++i) {
        x->d[i] = sig[i] - p->sig[i];
        x->t[i] = g * (p->siga[i] + siga[i]);
    }
    return ABFT_STATUS_SUCCESS;
}

/* The largest |d| / t of the four sums (x_delta): above 1 exactly when X^T·V moved beyond
 * the rounding of its two encodings (NaN or a zero bound under a change: +Inf). */
static double x_delta_ratio(const x_delta_t *x) {
    double r = 0.0;
    for (int i = 0; i < 4; ++i) {
        double e = x->d[i] == 0.0 ? 0.0 : fabs(x->d[i]) / x->t[i];
        if (isnan(e)) e = INFINITY;
        if (e > r) r = e;
    }
    return r;
}

abft_status_t abft_lu_x_changed(struct abft_lu_plan *p, int *changed) {
    x_delta_t x;
    *changed = 0;
    if (p->m == 0 || p->n == 0) return ABFT_STATUS_SUCCESS;
    ABFT_TRY(x_delta(p, &x));
    for (int i = 0; i < 4; ++i)
        if (!(fabs(x.d[i]) <= x.t[i])) *changed = 1;
    return ABFT_STATUS_SUCCESS;
}

/* Which row of X changed since encoding, from the move of X^T·V (x): *changed when it
 * changed beyond the rounding of the two encodings; *prow the row (original order) whose
 * index both checksum columns' weighted sums give, -1 when no single row explains it. */
static void x_change_row(const struct abft_lu_plan *p, const x_delta_t *x, int *changed,
                         int64_t *prow) {
    *changed = 0;
    *prow = -1;
    int64_t pr = -1, ok = 1;
    for (int q = 0; q < 2; ++q) {
        const double de = x->d[q], dw = x->d[q + 2], te = x->t[q], tw = x->t[q + 2];
        if (fabs(de) <= te && fabs(dw) <= tw) continue;
        *changed = 1;
        if (!(fabs(de) > te)) ok = 0;
        double rho = dw / de;
        if (!(rho >= 0.5 && rho < (double)p->m + 0.5)) ok = 0;
        if (!ok) continue;
        int64_t r = (int64_t)llround(rho) - 1;
        if (pr >= 0 && pr != r) ok = 0;
        pr = r;
    }
    if (*changed && ok) *prow = pr;
}

/* Can the change of X^T·V be the change of row pr alone: in each column q the weighted
 * sum moved by (pr + 1) times the plain one, within both sums' rounding? (x_change_row
 * reads the row from their ratio, which a change within the plain sum's rounding leaves
 * undetermined: a low bit of one entry.) */
static int x_row_consistent(const x_delta_t *x, int64_t pr) {
    const double w = (double)(pr + 1);
    for (int q = 0; q < 2; ++q)
        if (!(fabs(x->d[q + 2] - w * x->d[q]) <= x->t[q + 2] + w * x->t[q])) return 0;
    return 1;
}

/* Row pr of X (original order) re-derived from the encode-time sums and the other rows as
 * they are now, x_q = sigma_q - sum_{i != pr} X(i, q), as an interval [lo_q, hi_q] that holds
 * the encoded value: the two sums' rounding (sig_coef times their absolute sums) and the
 * subtraction's, and |X_q| <= Xa_q (to rounding) of an intact row (Xa as encoded).
 * Independent of the (possibly huge or non-finite) entry it replaces; lo > hi or NaN when
 * the other rows are not as encoded either. */
static abft_status_t x_rederive(struct abft_lu_plan *p, int64_t pr, double lo[2],
                                double hi[2]) {
    const int64_t m = p->m;
    double *hx = (double *)malloc(2 * (size_t)m * sizeof(double));
    ABFT_RETURN_IF(hx == NULL, ABFT_STATUS_ALLOC_FAILED);
    double xa[2];
    abft_copy_args_t c = {0, sizeof(double), m, 2, hx, m, p->X, m};
    abft_copy_args_t ca = {0, sizeof(double), 1, 2, xa, 1, p->Xa + pr, m};
    abft_status_t st = p->h->ops->copy(&p->h->kctx, &c);
    if (st == ABFT_STATUS_SUCCESS) st = p->h->ops->copy(&p->h->kctx, &ca);
    double slack, g;
    abft_bound_lu_checksums(p->h, m, p->n, &slack, &g);
    for (int q = 0; q < 2 && st == ABFT_STATUS_SUCCESS; ++q) {
        double s = 0.0, sa = 0.0;
        for (int64_t i = 0; i < m; ++i)
            if (i != pr) {
                s += hx[i + q * m];
                sa += fabs(hx[i + q * m]);
            }
        double x = p->sig[q] - s;
        double noise = g * (p->siga[q] + sa) + 0x1p-52 * fabs(x);
        double cap = xa[q] * slack;
        lo[q] = fmax(x - noise, -cap);
        hi[q] = fmin(x + noise, cap);
        if (!isfinite(noise) || !isfinite(x)) lo[q] = hi[q] = NAN; /* explains nothing */
    }
    free(hx);
    return st;
}

/* Does the re-derived checksum [lo, hi] of factor row r explain the row's residual: with a
 * value of it in place of (P·X)_r the row passes its check (the data intact), in both
 * columns? *ratio: the row's largest distance to it over the bound. */
static int x_explains(const host_view_t *v, int64_t r, const double lo[2], const double hi[2],
                      double *ratio) {
    int ok = !v->big[r];
    double mr = 0.0;
    for (int q = 0; q < 2; ++q) {
        double z = v->Z[r + q * v->m], t = v->t[q][r];
        double d = z < lo[q] ? lo[q] - z : z > hi[q] ? z - hi[q] : 0.0;
        if (!(lo[q] <= hi[q])) d = NAN;
        if (!(d <= t) || !isfinite(t)) ok = 0;
        double e = d == 0.0 ? 0.0 : d / t;
        if (isnan(e) || !isfinite(t)) e = INFINITY;
        if (e > mr) mr = e;
    }
    *ratio = mr;
    return ok;
}

/* A corrupted entry of X (after encode) changes X^T·V; an intact X reproduces it. A checksum
 * fault is declared (*is_cs) only for a single flagged row F[0] that the re-derived entry of
 * X explains (x_explains): the row of X that changed (X^T·V's two weighted sums, or an
 * entry beyond its absolute companion) is F[0]'s, and with the row re-derived from the
 * encode-time sums the factors pass. Otherwise the data are wrong too. *x_changed when X is
 * not as encoded (then no correction may be taken from it); *x_row when the only row of X
 * that changed is F[0]'s. */
static abft_status_t checksum_fault(struct abft_lu_plan *p, const host_view_t *v,
                                    const int64_t *perm_host, const int64_t *F, int64_t nf,
                                    int *is_cs, int *x_changed, int *x_row) {
    abft_handle_t h = p->h;
    const int64_t m = p->m;
    *is_cs = 0;
    *x_changed = 0;
    *x_row = 0;
    int64_t prow = -1;
    if (nf == 1) {
        /* An intact checksum obeys |A·V| <= |A|·V (to rounding): an entry of X beyond its
         * absolute companion, or not finite, is a corrupted checksum whatever its size
         * (the sums below overflow for an exponent flip). */
        int64_t pr = perm_host[F[0]];
        double x[2], xa[2];
        abft_copy_args_t c1 = {0, sizeof(double), 1, 2, x, 1, p->X + pr, m};
        abft_copy_args_t c2 = {0, sizeof(double), 1, 2, xa, 1, p->Xa + pr, m};
        ABFT_TRY(h->ops->copy(&h->kctx, &c1));
        ABFT_TRY(h->ops->copy(&h->kctx, &c2));
        double slack, unused;
        abft_bound_lu_checksums(h, m, p->n, &slack, &unused);
        for (int q = 0; q < 2; ++q)
            if (!isfinite(x[q]) || !(fabs(x[q]) <= xa[q] * slack)) {
                *x_changed = 1;
                prow = pr;
            }
    }
    if (prow < 0) {
        x_delta_t x;
        int changed = 0;
        ABFT_TRY(x_delta(p, &x));
        x_change_row(p, &x, &changed, &prow);
        *x_changed = changed;
        if (!changed) prow = -1;
        /* one flagged row: the change may be its row of X alone */
        if (changed && prow < 0 && nf == 1 && x_row_consistent(&x, perm_host[F[0]]))
            prow = perm_host[F[0]];
    }
    if (prow < 0 || nf != 1 || perm_host[F[0]] != prow) return ABFT_STATUS_SUCCESS;
    double lo[2], hi[2], ratio;
    *x_row = 1;
    ABFT_TRY(x_rederive(p, prow, lo, hi));
    *is_cs = x_explains(v, F[0], lo, hi, &ratio);
    return ABFT_STATUS_SUCCESS;
}

/* Nothing flagged: X^T·V still has to be as encoded. A changed row of X that the factors
 * agree with means the data changed with it (a checksum and an element corrupted
 * consistently: the check passes against the corrupted checksum); with the row re-derived
 * from the encode-time sums the factors must pass. They do: a checksum fault that did not
 * reach the data (reported as such); they do not, or no single row explains the change:
 * detected, uncorrectable (nothing corrected: X is not as encoded). */
static abft_status_t x_unflagged(struct abft_lu_plan *p, const void *A, int64_t lda,
                                 const int64_t *perm, abft_report_t *report) {
    enum { MAX_TRIED = 8 };
    x_delta_t x;
    int changed = 0;
    int64_t prow = -1;
    ABFT_TRY(x_delta(p, &x));
    x_change_row(p, &x, &changed, &prow);
    /* X^T·V is a compared entry like the rows: its ratio enters max_ratio (docs/api.md),
     * and when it is what detects the fault (no row flagged) it is the report's ratio of
     * that detection, above 1 */
    const double xr = x_delta_ratio(&x);
    if (xr > report->max_ratio) report->max_ratio = xr;
    if (!changed) return ABFT_STATUS_SUCCESS;
    /* The rows of X whose change alone fits X^T·V: the one the ratio names, or, when a
     * change within the plain sum's rounding leaves the ratio undetermined (a low bit of
     * one entry), every row consistent with both sums (x_row_consistent), the first
     * MAX_TRIED of them tried. A row whose re-derivation the factors pass explains the
     * change with the data intact; a corrupted row of X with its data changed consistently
     * fails against its own re-derivation, and every other row's re-derivation carries
     * that row's change: none passes. */
    int64_t cand[MAX_TRIED], ncand = 0, nconsistent = 0;
    if (prow >= 0) {
        cand[ncand++] = prow;
        nconsistent = 1;
    } else {
        for (int64_t pr = 0; pr < p->m; ++pr)
            if (x_row_consistent(&x, pr)) {
                if (ncand < MAX_TRIED) cand[ncand++] = pr;
                ++nconsistent;
            }
    }
    int cs = 0;
    int64_t r = -1;
    double ratio = INFINITY, d0 = 0.0;
    if (ncand > 0) {
        host_view_t v;
        ABFT_TRY(fetch(p, A, lda, &v));
        abft_status_t st = ABFT_STATUS_SUCCESS;
        for (int64_t c = 0; c < ncand && !cs && st == ABFT_STATUS_SUCCESS; ++c) {
            int64_t rc = -1;
            for (int64_t i = 0; i < p->m; ++i)
                if (perm[i] == cand[c]) rc = i;
            if (rc < 0) continue;
            double lo[2], hi[2], rt = INFINITY;
            st = x_rederive(p, cand[c], lo, hi);
            if (st != ABFT_STATUS_SUCCESS) break;
            cs = x_explains(&v, rc, lo, hi, &rt);
            if (c == 0 || cs) {
                ratio = rt;
                d0 = v.Z[rc] - 0.5 * (lo[0] + hi[0]);
                r = nconsistent == 1 ? rc : -1; /* the row, when only one fits */
            }
        }
        free(v.big);
        free(v.pre);
        free(v.buf);
        ABFT_TRY(st);
    }
    /* the fault's ratio: the detecting one (X^T·V's), or the factors' distance to the
     * re-derived checksum when that is larger (the data changed too) */
    ratio = isnan(ratio) ? INFINITY : fmax(ratio, xr);
    report->detected += 1;
    if (cs) {
        report->checksum_faults += 1;
        abft_lu_add_fault(report, r, -1, d0, ratio, ABFT_ACTION_CHECKSUM_FAULT,
                          ABFT_FACTOR_NONE);
    } else {
        report->uncorrectable += 1;
        if (ratio > report->max_ratio) report->max_ratio = ratio;
        abft_lu_add_fault(report, r, -1, d0, ratio, ABFT_ACTION_UNCORRECTABLE,
                          ABFT_FACTOR_NONE);
    }
    return ABFT_STATUS_SUCCESS;
}

/* The corrected value of the located element, recomputed from the checksum of its row
 * without it (the standard ABFT recovery): old - delta would carry the rounding error of
 * the residual, which is relative to the corrupted value and may dwarf the true one.
 *   U(r, c) = (P·X)_r - sum_{j < r} L(r, j)·(U·V)_j - sum_{j >= r, j != c} U(r, j)
 *   L(r, c) = ((P·X)_r - sum_{j < r, j != c} L(r, j)·(U·V)_j - (U·V)_r) / (U·V)_c
 * in the checksum column where the divisor is larger. */
static abft_status_t exact_value(struct abft_lu_plan *p, const void *A, int64_t lda,
                                 const host_view_t *v, const fix_t *f, double *value) {
    const int64_t n = p->n, k = p->k, r = f->i, c = f->j;
    size_t es = p->prec == ABFT_PREC_D ? 8 : 4;
    double *raw = NULL;
    ABFT_TRY(fetch_strip(p, (const char *)A + (size_t)r * es, lda, 1, n, &raw));
    int q = 0;
    if (f->factor == ABFT_FACTOR_L && fabs(v->Y[c + k]) > fabs(v->Y[c])) q = 1;
    double s = v->PX[r + q * v->m];
    int64_t jl = r < k ? r : k;
    for (int64_t j = 0; j < jl; ++j)
        if (!(f->factor == ABFT_FACTOR_L && j == c)) s -= raw[j] * v->Y[j + q * k];
    if (f->factor == ABFT_FACTOR_U) {
        for (int64_t j = r; j < n; ++j)
            if (j != c) s -= raw[j] * (q == 0 ? 1.0 : (double)(j + 1));
        *value = q == 0 ? s : s / (double)(c + 1);
    } else {
        if (r < k) s -= v->Y[r + q * k];
        *value = s / v->Y[c + q * k];
    }
    free(raw);
    return ABFT_STATUS_SUCCESS;
}

/* The element of a fix recomputed from the recovery copy and the other factors, with a
 * bound on how far the stored factors may differ from it (their backward error, as the row
 * bound states it, taken elementwise):
 *   U(r, c) = A'(r, c) - sum_{j < r} L(r, j)·U(j, c)                      (r <= c)
 *   L(r, c) = (A'(r, c) - sum_{j < c} L(r, j)·U(j, c)) / U(c, c)          (r > c)
 * with A' = P·A0. An independent check of the value the checksums give: a value that
 * absorbed a second error of its row, or a corrupted checksum, disagrees with it. */
static abft_status_t copy_value(struct abft_lu_plan *p, const void *A, int64_t lda,
                                const host_view_t *v, const int64_t *perm, const fix_t *f,
                                double *value, double *noise) {
    const int64_t r = f->i, c = f->j;
    const size_t es = p->prec == ABFT_PREC_D ? 8 : 4;
    const int is_u = f->factor == ABFT_FACTOR_U;
    const int64_t nj = is_u ? r : c; /* terms of the sum */
    double *lrow = NULL, *ucol = NULL, *a = NULL;
    abft_status_t st = fetch_strip(p, (const char *)A + (size_t)r * es, lda, 1, nj + 1, &lrow);
    if (st == ABFT_STATUS_SUCCESS)
        st = fetch_strip(p, (const char *)A + (size_t)c * (size_t)lda * es, lda, nj + 1, 1,
                         &ucol);
    if (st == ABFT_STATUS_SUCCESS)
        st = fetch_strip(p, (const char *)p->A0 + ((size_t)perm[r] + (size_t)c * (size_t)p->m) * es,
                         p->m, 1, 1, &a);
    if (st == ABFT_STATUS_SUCCESS) {
        double s = a[0], za = 0.0;
        for (int64_t j = 0; j < nj; ++j) {
            s -= lrow[j] * ucol[j];
            za += fabs(lrow[j] * ucol[j]);
        }
        double x = is_u ? s : s / ucol[c];
        za += is_u ? fabs(x) : fabs(x * ucol[c]); /* the element's own term (L(r, r) = 1) */
        za *= 1.0 + 0x1p-50;
        double t = row_bound(&v->b, row_dsum(p, v->pre, r), 0, fabs(a[0]), za);
        double uf = p->prec == ABFT_PREC_D ? 0x1p-53 : 0x1p-24;
        *value = x;
        *noise = is_u ? t : t / fabs(ucol[c]) + 2.0 * uf * fabs(x);
        if (!isfinite(*noise)) *noise = INFINITY;
    }
    free(lrow);
    free(ucol);
    free(a);
    return st;
}

/* With a recovery copy: does row r of the factors agree with its original row of A (the
 * copy), |L·(U·V) - a·V|_r <= the row's bound with |a|·V in place of P·|A|·V? Then the
 * data is intact and the encoded checksum of that row is what changed (*is_cs = 1). Never
 * for a row whose |L|·(|U|·V) proves a multiplier above 1 (za_caps): that is a fault of L,
 * and where the row of U·V it multiplies cancels (a row of U summing to 0 in both weights,
 * as [2, -4, 2]) the row's checksum agrees with the copy whatever the multiplier. */
static abft_status_t copy_says_checksum(struct abft_lu_plan *p, const host_view_t *v,
                                        const int64_t *perm, int64_t r, int *is_cs) {
    const int64_t n = p->n;
    const size_t es = p->prec == ABFT_PREC_D ? 8 : 4;
    *is_cs = 0;
    if (v->big[r]) return ABFT_STATUS_SUCCESS;
    double *row = NULL;
    ABFT_TRY(fetch_strip(p, (const char *)p->A0 + (size_t)perm[r] * es, p->m, 1, n, &row));
    double s[2] = {0, 0}, sa[2] = {0, 0};
    for (int64_t j = 0; j < n; ++j) {
        double x = row[j];
        s[0] += x;
        s[1] += x * (double)(j + 1);
        sa[0] += fabs(x);
        sa[1] += fabs(x) * (double)(j + 1);
    }
    free(row);
    int agree = 1;
    for (int q = 0; q < 2; ++q) {
        double t = row_bound(&v->b, row_dsum(p, v->pre, r), q, sa[q], v->Za[r + q * v->m]);
        if (!(fabs(v->Z[r + q * v->m] - s[q]) <= t) || !isfinite(t)) agree = 0;
    }
    *is_cs = agree;
    return ABFT_STATUS_SUCCESS;
}

/* Recompute row r of the factors from the recovery copy (its original row perm[r]):
 *   L(r, 0:kr) = a(0:kr)·U(0:kr, 0:kr)^-1,   U(r, r:n) = a(r:n) - L(r, 0:kr)·U(0:kr, r:n)
 * (kr = min(r, k); rows r >= k have no U part), then run the whole check again. The row is
 * kept only when it passes (*ok = 1); otherwise its old values are restored. Every other row
 * is taken as intact: this is the recovery of a single fault in row r (of L or of U) that
 * the checksums detected but could not pin to one element. */
static abft_status_t recover_row(struct abft_lu_plan *p, void *A, int64_t lda,
                                 const int64_t *perm, int64_t r, int *ok) {
    abft_handle_t h = p->h;
    const abft_lu_ops_t *lo = abft_lu_ops(h);
    const int64_t m = p->m, n = p->n, k = p->k, kr = r < k ? r : k;
    const size_t es = p->prec == ABFT_PREC_D ? 8 : 4;
    *ok = 0;
    /* backend vectors: x (the new row, contiguous) and old (row r as it was); every copy
     * below stays in backend memory (dir 2: `host` is the destination) */
    void *x = NULL;
    ABFT_TRY(h->ops->alloc(&h->kctx, 2 * (size_t)n * es, &x));
    char *old = (char *)x + (size_t)n * es, *Ar = (char *)A + (size_t)r * es;
    abft_copy_args_t c_old = {2, es, 1, n, old, 1, Ar, lda};
    abft_copy_args_t c_a = {2, es, 1, n, x, 1, (char *)p->A0 + (size_t)perm[r] * es, m};
    abft_status_t st = h->ops->copy(&h->kctx, &c_old);
    if (st == ABFT_STATUS_SUCCESS) st = h->ops->copy(&h->kctx, &c_a);
    if (st == ABFT_STATUS_SUCCESS && kr > 0) { /* U11^T·l = a(0:kr) */
        abft_lu_trsm_args_t ts = {p->prec, 0, 1, kr, 1, A, lda, x, n};
        st = lo->lu_trsm(&h->kctx, &ts);
    }
    if (st == ABFT_STATUS_SUCCESS && r < k && r > 0) { /* a(r:n) -= U(0:r, r:n)^T·l */
        abft_gemm_args_t g = {p->prec, 1, 0, n - r, 1, r, -1.0, 1.0,
                              (const char *)A + (size_t)r * (size_t)lda * es, lda, x, n,
                              (char *)x + (size_t)r * es, n};
        st = h->ops->gemm(&h->kctx, &g);
    }
    abft_copy_args_t c_new = {2, es, 1, n, Ar, lda, x, 1};
    if (st == ABFT_STATUS_SUCCESS) st = h->ops->copy(&h->kctx, &c_new);
    int64_t nflag = 0;
    double mr = 0.0;
    if (st == ABFT_STATUS_SUCCESS) st = check_factors(p, A, lda, &nflag, &mr);
    if (st == ABFT_STATUS_SUCCESS && nflag == 0) *ok = 1;
    else if (st == ABFT_STATUS_SUCCESS) {
        abft_copy_args_t c_rev = {2, es, 1, n, Ar, lda, old, 1};
        st = h->ops->copy(&h->kctx, &c_rev);
    }
    abft_status_t sf = h->ops->free(&h->kctx, x); /* after the stream's use of x */
    return st != ABFT_STATUS_SUCCESS ? st : sf;
}

/* At most this many rows above the first flagged one are recomputed (recover_above). */
#define LU_RECOVER_ABOVE 3

/* A small error delta of U at (r, c) shows as delta·[1, c + 1] in row r and as
 * L(i, r)·delta·[1, c + 1] in every row i > r. The bounds differ from row to row, so a row
 * below can exceed its bound while row r stays within its own (bit 20 of U(65, 66), n = 81:
 * row 68 flagged at 1.001 of its bound, row 65 at 0.89): the first flagged row f is then
 * not the row of the fault, and recomputing f (recover_row) does not repair the factors
 * (the re-check refuses it, or passes with the error moved into row f's bound).
 * Candidates are the rows r < min(f, k) with L(f, r) != 0 for which the residuals obey
 * d_f = L(f, r)·d_r within their bounds in both checksum columns,
 *   s_r = max_q |d_f,q - L(f, r)·d_r,q| / (t_f,q + |L(f, r)|·t_r,q) <= 1,
 * (the row of the fault: the two rows' rounding, far below 1 in practice; a row without the
 * error: about |d_f| / (|L(f, r)|·t_r)). The LU_RECOVER_ABOVE smallest s_r are recomputed
 * from the copy in that order, each re-checked in full by recover_row (restored when the
 * check still fails); the first that passes is kept (*ok = 1, *row). */
static abft_status_t recover_above(struct abft_lu_plan *p, void *A, int64_t lda,
                                   const host_view_t *v, const int64_t *perm, int64_t f,
                                   int64_t *row, int *ok) {
    const int64_t kf = f < p->k ? f : p->k;
    const size_t es = p->prec == ABFT_PREC_D ? 8 : 4;
    *ok = 0;
    if (kf <= 0) return ABFT_STATUS_SUCCESS;
    double *lf = NULL; /* L(f, 0:kf) */
    ABFT_TRY(fetch_strip(p, (const char *)A + (size_t)f * es, lda, 1, kf, &lf));
    abft_status_t st = ABFT_STATUS_SUCCESS;
    int64_t best[LU_RECOVER_ABOVE];
    double score[LU_RECOVER_ABOVE];
    int nb = 0;
    for (int64_t r = 0; r < kf; ++r) {
        double l = lf[r];
        if (!(l != 0.0) || !isfinite(l)) continue;
        double sr = 0.0;
        for (int q = 0; q < 2; ++q) {
            double e = fabs(v->d[q][f] - l * v->d[q][r]) / (v->t[q][f] + fabs(l) * v->t[q][r]);
            if (!(e <= sr)) sr = e; /* NaN stays NaN: not a candidate */
        }
        if (!(sr <= 1.0)) continue;
        int pos = nb;
        while (pos > 0 && score[pos - 1] > sr) --pos;
        if (pos >= LU_RECOVER_ABOVE) continue;
        for (int j = nb < LU_RECOVER_ABOVE ? nb : LU_RECOVER_ABOVE - 1; j > pos; --j) {
            best[j] = best[j - 1];
            score[j] = score[j - 1];
        }
        best[pos] = r;
        score[pos] = sr;
        if (nb < LU_RECOVER_ABOVE) ++nb;
    }
    free(lf);
    for (int j = 0; j < nb && st == ABFT_STATUS_SUCCESS && !*ok; ++j) {
        st = recover_row(p, A, lda, perm, best[j], ok);
        if (st == ABFT_STATUS_SUCCESS && *ok) *row = best[j];
    }
    return st;
}

abft_status_t abft_lu_verify(struct abft_lu_plan *p, void *A, int64_t lda, const int64_t *ipiv,
                             abft_report_t *report) {
    abft_handle_t h = p->h;
    const abft_lu_ops_t *lo = abft_lu_ops(h);
    const int64_t m = p->m, k = p->k;
    report->unit_roundoff = abft_lu_report_u(&p->arith);
    if (m == 0 || p->n == 0) return ABFT_STATUS_SUCCESS;
    /* P from the pivots (host), then P·X and P·Xa on the backend. */
    int64_t *perm = (int64_t *)malloc((size_t)m * sizeof(int64_t));
    ABFT_RETURN_IF(perm == NULL, ABFT_STATUS_ALLOC_FAILED);
    for (int64_t i = 0; i < m; ++i) perm[i] = i;
    for (int64_t i = 0; i < k; ++i) {
        int64_t pi = ipiv[i] - 1;
        if (pi < i || pi >= m) { /* getrf never writes such a pivot */
            free(perm);
            abft_set_bad_arg(0);
            return ABFT_STATUS_INVALID_VALUE;
        }
        int64_t t = perm[i];
        perm[i] = perm[pi];
        perm[pi] = t;
    }
    abft_status_t st;
    abft_copy_args_t cp = {1, sizeof(int64_t), m, 1, perm, m, p->perm, m};
    st = h->ops->copy(&h->kctx, &cp);
    abft_lu_gather_args_t g1 = {m, 2, p->perm, p->X, m, p->PX, m};
    abft_lu_gather_args_t g2 = {m, 2, p->perm, p->Xa, m, p->PXa, m};
    if (st == ABFT_STATUS_SUCCESS) st = lo->lu_gather(&h->kctx, &g1);
    if (st == ABFT_STATUS_SUCCESS) st = lo->lu_gather(&h->kctx, &g2);
    int64_t nflag = 0;
    double mr = 0.0;
    if (st == ABFT_STATUS_SUCCESS) st = check_factors(p, A, lda, &nflag, &mr);
    report->checked += m;
    if (mr > report->max_ratio || isnan(mr)) report->max_ratio = mr;
    if (st == ABFT_STATUS_SUCCESS && nflag == 0) st = x_unflagged(p, A, lda, perm, report);
    if (st != ABFT_STATUS_SUCCESS || nflag == 0) {
        free(perm);
        return st;
    }
    report->detected += nflag;

    /* Slow path: something is flagged. */
    host_view_t v;
    st = fetch(p, A, lda, &v);
    if (st != ABFT_STATUS_SUCCESS) {
        free(perm);
        return st;
    }
    int64_t *F = (int64_t *)malloc((size_t)m * sizeof(int64_t));
    fix_t fix[ABFT_REPORT_MAX_FAULTS];
    int nfix = 0, is_cs = 0, ambiguous = 0;
    int64_t nf = 0;
    if (F == NULL) st = ABFT_STATUS_ALLOC_FAILED;
    if (st == ABFT_STATUS_SUCCESS) {
        for (int64_t i = 0; i < m; ++i)
            if (row_flagged(&v, i)) F[nf++] = i;
        if (nf == 0) { /* the backend compare and the host disagree: treat as flagged */
            st = ABFT_STATUS_INTERNAL_ERROR;
        }
    }
    int x_changed = 0, x_row = 0;
    if (st == ABFT_STATUS_SUCCESS)
        st = checksum_fault(p, &v, perm, F, nf, &is_cs, &x_changed, &x_row);
    if (st == ABFT_STATUS_SUCCESS && is_cs) {
        report->checksum_faults += 1;
        abft_lu_add_fault(report, F[0], -1, v.d[0][F[0]], row_ratio(&v, F[0]),
                          ABFT_ACTION_CHECKSUM_FAULT, ABFT_FACTOR_NONE);
    } else if (st == ABFT_STATUS_SUCCESS) {
        st = locate(p, A, lda, &v, F, nf, fix, &nfix, &ambiguous);
    }
    if (st == ABFT_STATUS_SUCCESS && !is_cs && nfix > 0) {
        /* Confirm or do not correct: two row residuals cannot tell one error from several
         * in a row whose weighted centre is an integer, nor an error of the factors from a
         * corrupted checksum (a 23 x 1 LU: e and w coincide, and the same bit flipped in both
         * entries of a row of X fits an error of L exactly), and the rows below an error of
         * U repeat its residual without adding a column. Only the recovery copy gives an
         * independent value (copy_value); without it nothing is corrected (the rows are
         * reported; docs/lu.md). */
        for (int f = 0; f < nfix && st == ABFT_STATUS_SUCCESS; ++f) {
            double val = 0.0, vc = 0.0, nc = INFINITY;
            if (p->A0 == NULL || x_changed) {
                nfix = 0;
                break;
            }
            st = exact_value(p, A, lda, &v, &fix[f], &val);
            if (st == ABFT_STATUS_SUCCESS) st = copy_value(p, A, lda, &v, perm, &fix[f], &vc, &nc);
            if (st != ABFT_STATUS_SUCCESS) break;
            /* the checksum's value carries the row's bound (for L divided by (U·V)_c) */
            int64_t r = fix[f].i;
            double nv = fix[f].factor == ABFT_FACTOR_U
                            ? v.t[0][r]
                            : fmin(v.t[0][r] / fabs(v.Y[fix[f].j]),
                                   v.t[1][r] / fabs(v.Y[fix[f].j + v.k]));
            /* (a non-finite or overflowing element leaves the row's bound infinite: the
             * copy's value, independent of the checksums, is then written and the full
             * re-check below decides alone) */
            if (isfinite(nv) && !(fabs(val - vc) <= nv + nc)) {
                nfix = 0;
                break;
            }
            fix[f].value = vc;
        }
        if (nfix == 0) ambiguous = 1;
    }
    if (st == ABFT_STATUS_SUCCESS && !is_cs && nfix > 0) {
        /* Correct, then re-verify everything; revert when the check still fails. */
        for (int f = 0; f < nfix && st == ABFT_STATUS_SUCCESS; ++f) {
            abft_lu_elem_args_t e = {p->prec, A, lda, fix[f].i, fix[f].j};
            double val = 0.0;
            st = lo->lu_get(&h->kctx, &e, &fix[f].old);
            val = fix[f].value;
            if (st == ABFT_STATUS_SUCCESS) {
                fix[f].delta = fix[f].old - val;
                st = lo->lu_set(&h->kctx, &e, val);
            }
        }
        int64_t nflag2 = 0;
        double mr2 = 0.0;
        if (st == ABFT_STATUS_SUCCESS) st = check_factors(p, A, lda, &nflag2, &mr2);
        if (st == ABFT_STATUS_SUCCESS && nflag2 == 0) {
            report->corrected += nfix;
            for (int f = 0; f < nfix; ++f)
                abft_lu_add_fault(report, fix[f].i, fix[f].j, fix[f].delta, fix[f].ratio,
                                  ABFT_ACTION_CORRECTED, fix[f].factor);
        } else if (st == ABFT_STATUS_SUCCESS) {
            for (int f = nfix - 1; f >= 0 && st == ABFT_STATUS_SUCCESS; --f) {
                abft_lu_elem_args_t e = {p->prec, A, lda, fix[f].i, fix[f].j};
                st = lo->lu_set(&h->kctx, &e, fix[f].old);
            }
            nfix = 0;
        }
    }
    int recovered = 0;
    if (st == ABFT_STATUS_SUCCESS && !is_cs && nfix == 0 && p->A0 != NULL && nf == 1 &&
        (!x_changed || x_row)) {
        /* one flagged row that agrees with its copy, and no other row of X changed (a row
         * of X changed with its data consistently would pass unflagged): a checksum
         * fault */
        st = copy_says_checksum(p, &v, perm, F[0], &is_cs);
        if (st == ABFT_STATUS_SUCCESS && is_cs) {
            report->checksum_faults += 1;
            abft_lu_add_fault(report, F[0], -1, v.d[0][F[0]], row_ratio(&v, F[0]),
                              ABFT_ACTION_CHECKSUM_FAULT, ABFT_FACTOR_NONE);
        }
    }
    if (st == ABFT_STATUS_SUCCESS && !is_cs && nfix == 0 && p->A0 != NULL) {
        /* Not located: with a recovery copy, recompute the row of the fault. That is the
         * first flagged row for one error of L, and for one of U when its own row shows
         * it; a small error of U may show only below its row (recover_above). The rows
         * above go first: an intact row recomputed comes back as it was (the re-check
         * fails, the row is restored), but the first flagged row recomputed around an
         * error above it can absorb it well enough to pass (bit 19 of U(113, 118),
         * 121 x 121: row 115 recomputed, row 113 left wrong). */
        int64_t rr = F[0];
        st = recover_above(p, A, lda, &v, perm, F[0], &rr, &recovered);
        if (st == ABFT_STATUS_SUCCESS && !recovered) {
            rr = F[0];
            st = recover_row(p, A, lda, perm, rr, &recovered);
        }
        if (st == ABFT_STATUS_SUCCESS && recovered) {
            report->recomputed += 1;
            abft_lu_add_fault(report, rr, -1, v.d[0][rr], row_ratio(&v, F[0]),
                              ABFT_ACTION_RECOMPUTED, ABFT_FACTOR_NONE);
        }
    }
    if (st == ABFT_STATUS_SUCCESS && !is_cs && nfix == 0 && !recovered) {
        /* Not one element of L or U: the fault struck during the factorization (or
         * several struck), and the factors are those of a different matrix. (Or both
         * explanations fit: then nothing is touched either.) */
        report->uncorrectable += nf;
        if (!ambiguous) report->spread = 1;
        for (int64_t f = 0; f < nf; ++f)
            abft_lu_add_fault(report, F[f], -1, v.d[0][F[f]], row_ratio(&v, F[f]),
                              ABFT_ACTION_UNCORRECTABLE, ABFT_FACTOR_NONE);
    }
    free(F);
    free(v.big);
    free(v.pre);
    free(v.buf);
    free(perm);
    return st;
}

/* LAPACK's info of the factors as they are now: i + 1 for the first exactly zero U(i, i), else
 * 0 (the diagonal read with stride lda + 1, one transfer). */
static abft_status_t diag_info(struct abft_lu_plan *p, const void *A, int64_t lda,
                               int64_t *info) {
    double *d = NULL;
    if (p->k == 0 || p->n == 0) {
        *info = 0;
        return ABFT_STATUS_SUCCESS;
    }
    ABFT_TRY(fetch_strip(p, A, lda + 1, 1, p->k, &d));
    int64_t z = 0;
    for (int64_t i = 0; i < p->k && z == 0; ++i)
        if (d[i] == 0.0) z = i + 1;
    free(d);
    *info = z;
    return ABFT_STATUS_SUCCESS;
}

abft_status_t abft_lu_verify_info(struct abft_lu_plan *p, void *A, int64_t lda,
                                  const int64_t *ipiv, abft_report_t *report, int64_t *info) {
    const int64_t wrote = report->corrected + report->recomputed;
    ABFT_TRY(abft_lu_verify(p, A, lda, ipiv, report));
    /* a correction or a recomputed row changed the factors after the getrf computed its
     * info (a fault that had made a zero pivot nonzero, or the reverse): the info is the
     * returned factors' */
    if (report->corrected + report->recomputed > wrote) ABFT_TRY(diag_info(p, A, lda, info));
    return ABFT_STATUS_SUCCESS;
}

/* ---- public entry points ---------------------------------------------------------------- */

/* Outputs of an LU call that must not overlap each other (docs/api.md): A, ipiv (k
 * entries of ipiv_es bytes), info and the report. */
abft_status_t abft_lu_check_outputs(int64_t m, int64_t n, const void *A, int64_t lda, size_t es,
                                    const void *ipiv, size_t ipiv_es, const int64_t *info,
                                    const abft_report_t *report, const int pos[4]) {
    const int64_t k = m < n ? m : n;
    const void *p[4] = {A, ipiv, info, report};
    size_t b[4] = {abft_lu_span(m, n, lda, es), ipiv != NULL ? (size_t)k * ipiv_es : 0,
                   info != NULL ? sizeof *info : 0, report != NULL ? sizeof *report : 0};
    for (int i = 0; i < 4; ++i)
        for (int j = i + 1; j < 4; ++j)
            ABFT_ARG_IF(abft_lu_overlap(p[i], b[i], p[j], b[j]), pos[j]);
    return ABFT_STATUS_SUCCESS;
}

/* Errors leave every output untouched (docs/api.md): the report and info are written only
 * when the call completes (SUCCESS or SINGULAR; NON_FINITE_INPUT writes the report with
 * nonfinite_input = 1 and leaves info alone). */
static abft_status_t getrf_offline(abft_handle_t h, abft_prec_t prec, int64_t m, int64_t n,
                                   void *A, int64_t lda, int64_t *ipiv, int64_t *info,
                                   abft_report_t *report) {
    ABFT_RETURN_IF(!abft_handle_ok(h), ABFT_STATUS_NOT_INITIALIZED);
    ABFT_ARG_IF(m < 0, 2);
    ABFT_ARG_IF(n < 0, 3);
    int bad = abft_matrix_bad_arg(m, n, A, lda, 4, 5);
    ABFT_ARG_IF(bad != 0, bad);
    int64_t k = m < n ? m : n;
    ABFT_ARG_IF(k > 0 && ipiv == NULL, 6);
    static const int opos[4] = {4, 6, 7, 8};
    ABFT_TRY(abft_lu_check_outputs(m, n, A, lda, prec == ABFT_PREC_D ? 8 : 4, ipiv,
                                   sizeof(int64_t), info, report, opos));
    abft_arith_t arith; /* an arithmetic the bound does not model: refused here */
    ABFT_TRY(abft_lu_arith(h, prec, 1, &arith));
    abft_report_t rep;
    memset(&rep, 0, sizeof rep);
    rep.unit_roundoff = abft_lu_report_u(&arith);
    int64_t linfo = 0;
    abft_status_t st = ABFT_STATUS_SUCCESS;
    if (k > 0) {
        const abft_lu_ops_t *lo = abft_lu_ops(h);
        struct abft_lu_plan p;
        ABFT_TRY(abft_lu_plan_init(h, prec, m, n, &p));
        p.pivoted = 1;
        p.arith = arith;
        int64_t *hpiv = (int64_t *)malloc((size_t)k * sizeof(int64_t));
        if (hpiv == NULL) st = ABFT_STATUS_ALLOC_FAILED;
        if (st == ABFT_STATUS_SUCCESS) st = abft_lu_encode(&p, A, lda);
        abft_lu_getrf_args_t g = {prec, m, n, A, lda, ipiv, &linfo, NULL, 0, NULL};
        if (st == ABFT_STATUS_SUCCESS) st = lo->lu_getrf(&h->kctx, &g);
        if (st == ABFT_STATUS_SUCCESS)
            st = abft_call_hook(h, ABFT_SITE_AFTER_LU, 0, prec, A, m, n, lda);
        abft_copy_args_t cp = {0, sizeof(int64_t), k, 1, hpiv, k, ipiv, k};
        if (st == ABFT_STATUS_SUCCESS) st = h->ops->copy(&h->kctx, &cp);
        if (st == ABFT_STATUS_SUCCESS) st = abft_lu_verify_info(&p, A, lda, hpiv, &rep, &linfo);
        free(hpiv);
        abft_lu_plan_fini(&p);
    }
    if (st == ABFT_STATUS_NON_FINITE_INPUT) {
        rep.nonfinite_input = 1;
        if (report != NULL) {
            abft_bound_report_lu(h, &rep);
            *report = rep;
        }
        return st;
    }
    if (st != ABFT_STATUS_SUCCESS) return st;
    if (report != NULL) {
        abft_bound_report_lu(h, &rep);
        *report = rep;
    }
    if (info != NULL) *info = linfo;
    return linfo > 0 ? ABFT_STATUS_SINGULAR : ABFT_STATUS_SUCCESS;
}

abft_status_t abft_dgetrf(abft_handle_t h, int64_t m, int64_t n, double *A, int64_t lda,
                          int64_t *ipiv, int64_t *info, abft_report_t *report) {
    return getrf_offline(h, ABFT_PREC_D, m, n, A, lda, ipiv, info, report);
}
abft_status_t abft_sgetrf(abft_handle_t h, int64_t m, int64_t n, float *A, int64_t lda,
                          int64_t *ipiv, int64_t *info, abft_report_t *report) {
    return getrf_offline(h, ABFT_PREC_S, m, n, A, lda, ipiv, info, report);
}

/* ---- split form ------------------------------------------------------------------------- */

abft_status_t abft_lu_plan_create(abft_handle_t h, char precision, int64_t m, int64_t n,
                                  abft_lu_plan_t *plan) {
    ABFT_RETURN_IF(!abft_handle_ok(h), ABFT_STATUS_NOT_INITIALIZED);
    ABFT_ARG_IF(precision != 'd' && precision != 's', 2);
    ABFT_ARG_IF(m < 0, 3);
    ABFT_ARG_IF(n < 0, 4);
    ABFT_ARG_IF(plan == NULL, 5);
    struct abft_lu_plan *p = (struct abft_lu_plan *)malloc(sizeof *p);
    ABFT_RETURN_IF(p == NULL, ABFT_STATUS_ALLOC_FAILED);
    abft_status_t st =
        abft_lu_plan_init(h, precision == 'd' ? ABFT_PREC_D : ABFT_PREC_S, m, n, p);
    if (st != ABFT_STATUS_SUCCESS) {
        free(p);
        return st;
    }
    *plan = p;
    return ABFT_STATUS_SUCCESS;
}

abft_status_t abft_lu_plan_destroy(abft_lu_plan_t plan) {
    if (plan == NULL) return ABFT_STATUS_SUCCESS;
    abft_lu_plan_fini(plan);
    free(plan);
    return ABFT_STATUS_SUCCESS;
}

static abft_status_t split_encode(abft_handle_t h, abft_lu_plan_t p, abft_prec_t prec,
                                  const void *A, int64_t lda) {
    ABFT_RETURN_IF(!abft_handle_ok(h), ABFT_STATUS_NOT_INITIALIZED);
    ABFT_ARG_IF(p == NULL || p->h != h || p->prec != prec, 2);
    int bad = abft_matrix_bad_arg(p->m, p->n, A, lda, 3, 4);
    ABFT_ARG_IF(bad != 0, bad);
    return abft_lu_encode(p, A, lda);
}

static abft_status_t split_verify(abft_handle_t h, abft_lu_plan_t p, abft_prec_t prec, void *A,
                                  int64_t lda, const void *ipiv, int bits,
                                  abft_report_t *report) {
    ABFT_RETURN_IF(!abft_handle_ok(h), ABFT_STATUS_NOT_INITIALIZED);
    ABFT_ARG_IF(p == NULL || p->h != h || p->prec != prec, 2);
    int bad = abft_matrix_bad_arg(p->m, p->n, A, lda, 3, 4);
    ABFT_ARG_IF(bad != 0, bad);
    ABFT_ARG_IF(bits != 32 && bits != 64, 6);
    ABFT_ARG_IF(p->k > 0 && ipiv == NULL, 5);
    ABFT_ARG_IF(!p->encoded, 2);
    size_t es = bits == 64 ? 8 : 4;
    static const int opos[4] = {3, 5, 0, 7};
    ABFT_TRY(abft_lu_check_outputs(p->m, p->n, A, lda, prec == ABFT_PREC_D ? 8 : 4, ipiv, es,
                                   NULL, report, opos));
    /* the caller's getrf ran in the arithmetic of the handle's BLAS/LAPACK handles */
    ABFT_TRY(abft_lu_arith(h, prec, 1, &p->arith));
    abft_report_t rep;
    memset(&rep, 0, sizeof rep);
    rep.unit_roundoff = abft_lu_report_u(&p->arith);
    abft_status_t st = ABFT_STATUS_SUCCESS;
    int64_t info = 0;
    if (p->k > 0) {
        int64_t *hp = (int64_t *)malloc((size_t)p->k * sizeof(int64_t));
        void *raw = malloc((size_t)p->k * es);
        st = hp == NULL || raw == NULL ? ABFT_STATUS_ALLOC_FAILED : ABFT_STATUS_SUCCESS;
        abft_copy_args_t cp = {0, es, p->k, 1, raw, p->k, (void *)ipiv, p->k};
        if (st == ABFT_STATUS_SUCCESS) st = h->ops->copy(&h->kctx, &cp);
        /* a pivot getrf never writes is refused before anything is written */
        for (int64_t i = 0; i < p->k && st == ABFT_STATUS_SUCCESS; ++i) {
            hp[i] = bits == 64 ? ((const int64_t *)raw)[i] : (int64_t)((const int32_t *)raw)[i];
            if (hp[i] < i + 1 || hp[i] > p->m) {
                abft_set_bad_arg(5);
                st = ABFT_STATUS_INVALID_VALUE;
            }
        }
        if (st == ABFT_STATUS_SUCCESS) st = abft_lu_verify_info(p, A, lda, hp, &rep, &info);
        free(raw);
        free(hp);
    }
    if (st != ABFT_STATUS_SUCCESS) return st;
    if (report != NULL) {
        abft_bound_report_lu(h, &rep);
        *report = rep;
    }
    /* the caller's getrf gave the info of the factors it wrote; when this call corrected or
     * recomputed them, the status tells whether the returned U has a zero pivot */
    return info > 0 ? ABFT_STATUS_SINGULAR : ABFT_STATUS_SUCCESS;
}

abft_status_t abft_dgetrf_encode(abft_handle_t h, abft_lu_plan_t plan, const double *A,
                                 int64_t lda) {
    return split_encode(h, plan, ABFT_PREC_D, A, lda);
}
abft_status_t abft_sgetrf_encode(abft_handle_t h, abft_lu_plan_t plan, const float *A,
                                 int64_t lda) {
    return split_encode(h, plan, ABFT_PREC_S, A, lda);
}
abft_status_t abft_dgetrf_verify(abft_handle_t h, abft_lu_plan_t plan, double *A, int64_t lda,
                                 const void *ipiv, int ipiv_bits, abft_report_t *report) {
    return split_verify(h, plan, ABFT_PREC_D, A, lda, ipiv, ipiv_bits, report);
}
abft_status_t abft_sgetrf_verify(abft_handle_t h, abft_lu_plan_t plan, float *A, int64_t lda,
                                 const void *ipiv, int ipiv_bits, abft_report_t *report) {
    return split_verify(h, plan, ABFT_PREC_S, A, lda, ipiv, ipiv_bits, report);
}
