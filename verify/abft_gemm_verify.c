/* abft verify layer: the protected GEMM's verification: the compare of the checksums, the
 * random checksum's, and the correction engine's callbacks (locate, correct, re-verify;
 * docs/bound.md "Location and correction"). */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "abft_bound.h"
#include "abft_correct.h"
#include "abft_gemm_internal.h"
#include "abft_internal.h"

/* ---- verification -------------------------------------------------------------------- */

/* One side of the checks (0: rows of C, 1: columns), its host copies fetched only when the
 * compare flagged something. */
typedef struct gemm_side {
    int64_t n;        /* entries on this side (m for rows, n for columns) */
    int64_t len;      /* length of each entry's vector in C (n for rows, m for columns) */
    double *S, *Sa, *P, *Pa; /* n x 2 each, ld = n (host) */
    double *l1;       /* n: 1-norm of the entry's row of op(A) / column of op(B); < 0: unknown */
    abft_gemm_bound_t bc;
    int tight;        /* the tight bound applies (tb, and T: n x 2 host copy, fetched with S) */
    abft_gemm_tight_t tb;
    double *T;
    double *sm;       /* n x 2: abft_bound_tight_small summed over the entry's vector with
                       * the weights, unscaled (INFINITY: unknown, capped by Sa in
                       * abft_bound_tight_raise); < 0: not computed yet (with T) */
    double *oth;      /* the other operand's len vectors of k on the host, once fetched for
                       * the small terms (NULL: not fetched, or not to be) */
    double ysum[2];   /* sum over the inner dimension of the other operand's |.|·V encoding */
    double ymin;      /* its smallest positive entry (first column) */
    int sig;          /* -1 not known yet; 1: the kept checksums changed since encoding */
    double dsig[2][2], tsig[2][2]; /* that change of S^T·V [q][e or w weights] and its
                                      rounding tolerance */
    int64_t *flags;   /* flagged entries (ascending), capacity n */
    int64_t nflag;
} gemm_side_t;

/* The state the correction engine's callbacks work on. */
typedef struct gemm_ctx {
    struct abft_gemm_plan *p;
    const void *A, *B;
    int64_t lda, ldb, ldc;
    void *C;
    int nsides;
    int use_ab;       /* the alpha term exists (k > 0, alpha != 0) */
    gemm_side_t s[2];
    double *va, *vb;  /* k doubles each: a row of op(A), a column of op(B) */
    /* the random checksum (p->rnd): the rows its compare flagged (merged into s[0].flags),
     * and, on the rare path, its encodings on the host as a side of rows (xr: S = Sr, ...,
     * ysum from |op(B)|·Vr) and its weights (xw, n x 2) */
    int64_t *xflags, *xmerge;
    int64_t nx;
    gemm_side_t xr;
    double *xw;
} gemm_ctx_t;

/* Copy `len` elements of data precision starting at `base` with stride `stride` (1 or a
 * leading dimension) to (dir 0) or from (dir 1) the host as doubles. */
static abft_status_t strip_io(const struct abft_gemm_plan *p, const void *base, int64_t stride,
                              int64_t len, double *v, int dir) {
    if (stride == 1)
        return abft_copy_doubles(p->h, p->prec, dir, (void *)base, len > 1 ? len : 1, len, 1, v);
    return abft_copy_doubles(p->h, p->prec, dir, (void *)base, stride, 1, len, v);
}

static const char *at(const struct abft_gemm_plan *p, const void *M, int64_t i, int64_t j,
                      int64_t ld) {
    return (const char *)M + gemm_elem_size(p->prec) * (size_t)(i + j * ld);
}

/* Row i of op(A) (k elements) to the host. */
static abft_status_t fetch_arow(gemm_ctx_t *g, int64_t i, double *v) {
    const struct abft_gemm_plan *p = g->p;
    if (p->transa) return strip_io(p, at(p, g->A, 0, i, g->lda), 1, p->k, v, 0);
    return strip_io(p, at(p, g->A, i, 0, g->lda), g->lda, p->k, v, 0);
}

/* Column j of op(B) (k elements) to the host. */
static abft_status_t fetch_bcol(gemm_ctx_t *g, int64_t j, double *v) {
    const struct abft_gemm_plan *p = g->p;
    if (p->transb) return strip_io(p, at(p, g->B, j, 0, g->ldb), g->ldb, p->k, v, 0);
    return strip_io(p, at(p, g->B, 0, j, g->ldb), 1, p->k, v, 0);
}

static double norm1(const double *v, int64_t n) {
    double s = 0.0;
    for (int64_t l = 0; l < n; ++l) s += fabs(v[l]);
    return s * (1.0 + (double)n * 0x1p-52); /* never below the exact sum */
}

/* Without the input, the 1-norm of entry idx's strip is bounded through the encoding: the
 * rows l of op(B) that are not zero have (|op(B)|·V)_l >= ymin, so sum_l |A_il| over them is
 * at most Sa_i / ymin (rows of op(B) that are zero lose nothing). */
static double l1_bound(const gemm_ctx_t *g, const gemm_side_t *s, int64_t idx) {
    double sa = s->Sa[idx] / (1.0 - 0x1p-53 * (double)(2 * g->p->k + 4)) +
                (double)g->p->k * 0x1p-1074;
    return s->ymin > 0.0 ? sa / s->ymin : 0.0;
}

/* The 1-norms the amplified-underflow term needs, for the listed entries of side cs: the
 * smaller of l1_bound and the input's own norm when the call has the input. */
static abft_status_t ensure_l1(gemm_ctx_t *g, int cs, const int64_t *list, int64_t n) {
    gemm_side_t *s = &g->s[cs];
    const struct abft_gemm_plan *p = g->p;
    if (!g->use_ab) return ABFT_STATUS_SUCCESS;
    const void *M = cs ? g->B : g->A;
    for (int64_t f = 0; f < n; ++f) {
        int64_t idx = list[f];
        if (s->l1[idx] >= 0.0) continue;
        s->l1[idx] = l1_bound(g, s, idx);
        if (M != NULL) {
            /* the input itself is tighter, unless it was corrupted after encoding (then its
             * norm says nothing of the encoded product, and the bound through the encoding,
             * which holds for the input as encoded, is kept) */
            ABFT_TRY(cs ? fetch_bcol(g, idx, g->va) : fetch_arow(g, idx, g->va));
            double x = norm1(g->va, p->k);
            if (x < s->l1[idx]) s->l1[idx] = x;
        }
    }
    return ABFT_STATUS_SUCCESS;
}

static abft_status_t cb_get(void *ctx, int cs, int64_t idx, double *v) {
    gemm_ctx_t *g = (gemm_ctx_t *)ctx;
    if (cs) return strip_io(g->p, at(g->p, g->C, 0, idx, g->ldc), 1, g->p->m, v, 0);
    return strip_io(g->p, at(g->p, g->C, idx, 0, g->ldc), g->ldc, g->p->n, v, 0);
}

static abft_status_t cb_put_vec(void *ctx, int cs, int64_t idx, const double *v) {
    gemm_ctx_t *g = (gemm_ctx_t *)ctx;
    double *w = (double *)v; /* strip_io does not write v when storing */
    if (cs) return strip_io(g->p, at(g->p, g->C, 0, idx, g->ldc), 1, g->p->m, w, 1);
    return strip_io(g->p, at(g->p, g->C, idx, 0, g->ldc), g->ldc, g->p->n, w, 1);
}

static abft_status_t cb_put(void *ctx, int64_t i, int64_t j, double v, double *stored) {
    gemm_ctx_t *g = (gemm_ctx_t *)ctx;
    double x = g->p->prec == ABFT_PREC_S ? (double)(float)v : v;
    *stored = x;
    return strip_io(g->p, at(g->p, g->C, i, j, g->ldc), 1, 1, &x, 1);
}

/* The tight mode's small-terms allowance of entry idx of side cs, into s->sm (both weight
 * columns): abft_bound_tight_small of the entry's vector (row i of op(A), or column j of
 * op(B)) against each vector x of the other operand, summed with the weights e and w in the
 * order of x (capped by the entry's encoded |.| sum Sa in abft_bound_tight_raise, which
 * also holds where an input changed after encoding); INFINITY, so Sa itself, where the
 * inputs are missing or a fetch failed (the bound then falls back to the worst case). Where the
 * side has SMALL_BATCH or more flagged entries and the other operand fits SMALL_CACHE doubles, that
 * operand is copied to the host once (s->oth) and the vectors are taken in parallel;
 * otherwise one at a time. Both give the same sums. */
#define SMALL_BATCH 4
#define SMALL_CACHE ((int64_t)1 << 25)
static void ensure_small(gemm_ctx_t *g, int cs, int64_t idx) {
    gemm_side_t *s = &g->s[cs];
    const struct abft_gemm_plan *p = g->p;
    const int64_t k = p->k, len = s->len;
    if (s->sm[idx] >= 0.0) return;
    double acc[2] = {0.0, 0.0};
    abft_tight_order_t ord[ABFT_TIGHT_MAXORD];
    const int nord = abft_bound_tight_lanes(p->h->backend, ord);
    int ok = g->A != NULL && g->B != NULL;
    if (ok)
        ok = (cs ? fetch_bcol(g, idx, g->vb) : fetch_arow(g, idx, g->va)) == ABFT_STATUS_SUCCESS;
    const double *own = cs ? g->vb : g->va;
    if (ok && s->oth == NULL && s->nflag >= SMALL_BATCH && k > 0 && len <= SMALL_CACHE / k) {
        double *o = (double *)malloc(sizeof(double) * (size_t)len * (size_t)(k + 1) + 1);
        abft_status_t st = o != NULL ? ABFT_STATUS_SUCCESS : ABFT_STATUS_ALLOC_FAILED;
        for (int64_t x = 0; x < len && st == ABFT_STATUS_SUCCESS; ++x)
            st = cs ? fetch_arow(g, x, o + (size_t)x * (size_t)k)
                    : fetch_bcol(g, x, o + (size_t)x * (size_t)k);
        if (st == ABFT_STATUS_SUCCESS)
            s->oth = o;
        else free(o); /* one vector at a time below */
    }
    if (ok && s->oth != NULL) {
        double *e = s->oth + (size_t)len * (size_t)k; /* len values, then summed in order */
#pragma omp parallel for schedule(dynamic, 16)
        for (int64_t x = 0; x < len; ++x) {
            const double *o = s->oth + (size_t)x * (size_t)k;
            e[x] = cs ? abft_bound_tight_small(&p->arith, o, own, k, ord, nord, p->tight_ks)
                      : abft_bound_tight_small(&p->arith, own, o, k, ord, nord, p->tight_ks);
        }
        for (int64_t x = 0; x < len; ++x) acc[0] += e[x], acc[1] += (double)(x + 1) * e[x];
    } else {
        for (int64_t x = 0; x < len && ok; ++x) {
            ok = (cs ? fetch_arow(g, x, g->va) : fetch_bcol(g, x, g->vb)) == ABFT_STATUS_SUCCESS;
            if (!ok) break;
            const double e =
                abft_bound_tight_small(&p->arith, g->va, g->vb, k, ord, nord, p->tight_ks);
            acc[0] += e, acc[1] += (double)(x + 1) * e;
        }
    }
    for (int q = 0; q < 2; ++q) s->sm[idx + q * s->n] = ok ? acc[q] : INFINITY;
}

static void cb_expect(void *ctx, int cs, int64_t idx, const double r[2], const double ra[2],
                      double s2[2], double t[2]) {
    gemm_ctx_t *g = (gemm_ctx_t *)ctx;
    const struct abft_gemm_plan *p = g->p;
    const gemm_side_t *s = &g->s[cs];
    double twc[2] = {0.0, 0.0}, amp[2] = {0.0, 0.0};
    int tight[2] = {0, 0};
    for (int q = 0; q < 2; ++q) {
        int64_t o = idx + q * s->n;
        double e = 0.0, b = 0.0;
        if (g->use_ab) e = p->alpha * s->S[o], b = fabs(p->alpha) * s->Sa[o];
        if (p->beta != 0.0) e += p->beta * s->P[o], b += fabs(p->beta) * s->Pa[o];
        s2[q] = e;
        const double tt = s->tight ? s->T[o] : -1.0;
        twc[q] = s->bc.coef_s * b + s->bc.coef_r * ra[q] + s->bc.abs_floor; /* the worst case */
        if (tt >= 0.0) { /* the tight bound, with the vector's own sum for R */
            double as = g->use_ab ? p->alpha * s->S[o] : 0.0;
            double sa = g->use_ab ? fabs(p->alpha) * s->Sa[o] : 0.0;
            double bp = p->beta != 0.0 ? p->beta * s->P[o] : 0.0;
            double pa = p->beta != 0.0 ? fabs(p->beta) * s->Pa[o] : 0.0;
            t[q] = abft_bound_tight_entry(&s->tb, s->bc.abs_floor, tt, sa, pa, ra[q],
                                          fabs(r[q]) + fabs(as) + fabs(bp));
            if (twc[q] < t[q]) t[q] = twc[q]; /* never looser than the worst case */
            tight[q] = 1;
        } else if (tt != tt) {
            t[q] = NAN;
        } else {
            t[q] = twc[q];
        }
        if (g->use_ab) {
            /* entries the compare never flagged have no fetched norm: the bound through
             * the encoding holds for them too */
            double l1 = s->l1[idx] >= 0.0 ? s->l1[idx] : l1_bound(g, s, idx);
            amp[q] = abft_bound_gemm_amp(&s->bc, q, l1, s->ysum[q]);
        }
    }
    /* The tight mode's small terms (docs/bound.md, item 5): the entry's bound is
     * min(Tt + |alpha|·Sm, Twc), Tt the tight bound without them (at most Twc), Twc the
     * worst case's (both valid where the model holds, Twc always; the compare flagged the
     * entry against Tt). Sm costs O(len·k): it is computed for an entry once a column exceeds Tt
     * (every entry the engine judges, locates from or takes a value from does) and kept for
     * every later check; an entry within Tt passes whatever Sm is, and gets Tt until then.
     * The bound stays the tight one wherever Sm is known, so that the engine's noises (what
     * a checksum's value for an element may be off by) are as tight as the compare's bound,
     * not raised to the worst case for want of Sm. Without the inputs Sm is Sa
     * (ensure_small): about the worst case. */
    int need = 0;
    for (int q = 0; q < 2; ++q) need |= tight[q] && fabs(r[q] - s2[q]) > t[q];
    if (need && g->use_ab && s->sm[idx] < 0.0) ensure_small(g, cs, idx);
    for (int q = 0; q < 2; ++q) {
        if (tight[q] && g->use_ab && s->sm[idx + q * s->n] >= 0.0)
            t[q] = abft_bound_tight_raise(t[q], twc[q], p->alpha, s->sm[idx + q * s->n],
                                          s->Sa[idx + q * s->n], s->len, p->k);
        t[q] += amp[q];
    }
}

/* Element (i, j) recomputed from the inputs (beta = 0 only: the old C is gone), with a bound
 * on its error: the dot product's rounding in the GEMM's arithmetic and its underflow. */
static abft_status_t cb_elem(void *ctx, int64_t i, int64_t j, double *v, double *noise,
                             int *ok) {
    gemm_ctx_t *g = (gemm_ctx_t *)ctx;
    struct abft_gemm_plan *p = g->p;
    *ok = 0;
    if (p->beta != 0.0) return ABFT_STATUS_SUCCESS;
    if (!g->use_ab) { /* C = 0 exactly */
        *v = 0.0, *noise = 0.0, *ok = 1;
        return ABFT_STATUS_SUCCESS;
    }
    if (g->A == NULL || g->B == NULL) return ABFT_STATUS_SUCCESS;
    size_t es = gemm_elem_size(p->prec);
    abft_gemm_args_t a = {p->prec, p->transa, p->transb, 1, 1, p->k, p->alpha, 0.0,
                          p->transa ? at(p, g->A, 0, i, g->lda) : at(p, g->A, i, 0, g->lda),
                          g->lda,
                          p->transb ? at(p, g->B, j, 0, g->ldb) : at(p, g->B, 0, j, g->ldb),
                          g->ldb, p->w[W_TMP], 1};
    ABFT_TRY(p->h->ops->gemm(&p->h->kctx, &a));
    double dv = 0.0;
    float fv = 0.0f;
    abft_copy_args_t c = {0, es, 1, 1, p->prec == ABFT_PREC_D ? (void *)&dv : (void *)&fv, 1,
                          p->w[W_TMP], 1};
    ABFT_TRY(p->h->ops->copy(&p->h->kctx, &c));
    ABFT_TRY(fetch_arow(g, i, g->va));
    ABFT_TRY(fetch_bcol(g, j, g->vb));
    double dot = 0.0;
    for (int64_t l = 0; l < p->k; ++l) dot += fabs(g->va[l] * g->vb[l]);
    dot *= 1.0 + (double)p->k * 0x1p-52;
    const gemm_side_t *s = &g->s[0];
    *v = p->prec == ABFT_PREC_D ? dv : (double)fv;
    *noise = abft_bound_dot(p->h, &p->arith, (double)p->k + 1.0) * fabs(p->alpha) * dot *
                 (1.0 + 8.0 * 0x1p-53) +
             ((double)p->k + 3.0) * p->arith.eta * (fabs(p->alpha) + 1.0) +
             s->bc.eta_amp * (norm1(g->va, p->k) + norm1(g->vb, p->k));
    *ok = 1;
    return ABFT_STATUS_SUCCESS;
}

/* Vector idx of side cs recomputed from the inputs (beta = 0) and written into C. */
static abft_status_t cb_vec(void *ctx, int cs, int64_t idx, int *ok) {
    gemm_ctx_t *g = (gemm_ctx_t *)ctx;
    struct abft_gemm_plan *p = g->p;
    *ok = 0;
    if (p->beta != 0.0) return ABFT_STATUS_SUCCESS;
    int64_t len = cs ? p->m : p->n;
    if (!g->use_ab) {
        memset(g->va, 0, sizeof(double) * (size_t)(len > p->k ? p->k : len));
        for (int64_t l = 0; l < len; ++l) {
            double z = 0.0, stored;
            ABFT_TRY(cb_put(ctx, cs ? l : idx, cs ? idx : l, z, &stored));
        }
        *ok = 1;
        return ABFT_STATUS_SUCCESS;
    }
    if (g->A == NULL || g->B == NULL) return ABFT_STATUS_SUCCESS;
    abft_gemm_args_t a = {p->prec, p->transa, p->transb, p->m, p->n, p->k, p->alpha, 0.0,
                          g->A, g->lda, g->B, g->ldb, g->C, g->ldc};
    if (cs == 0) {
        a.m = 1;
        a.A = p->transa ? at(p, g->A, 0, idx, g->lda) : at(p, g->A, idx, 0, g->lda);
        a.C = (void *)at(p, g->C, idx, 0, g->ldc);
    } else {
        a.n = 1;
        a.B = p->transb ? at(p, g->B, idx, 0, g->ldb) : at(p, g->B, 0, idx, g->ldb);
        a.C = (void *)at(p, g->C, 0, idx, g->ldc);
    }
    ABFT_TRY(p->h->ops->gemm(&p->h->kctx, &a));
    *ok = 1;
    return ABFT_STATUS_SUCCESS;
}

/* The arrays a side's kept checksums (host copy in a gemm_side_t) come from: the encoding
 * of the other operand (x, xa) and their own checksum taken at encoding (sig). */
typedef struct kept_src {
    int x, xa, sig;
} kept_src_t;

/* Have the kept checksums of s changed since they were encoded? Their own checksum, taken at
 * encoding, against the same sums of the host copy, beyond the rounding of the two. */
static abft_status_t kept_changed(gemm_ctx_t *g, gemm_side_t *s, kept_src_t src,
                                  int *changed) {
    struct abft_gemm_plan *p = g->p;
    if (s->sig < 0) {
        double y[4];
        abft_copy_args_t c = {0, sizeof(double), 2, 2, y, 2, p->w[src.sig], p->ld[src.sig]};
        ABFT_TRY(p->h->ops->copy(&p->h->kctx, &c));
        double g2 = abft_gamma(p->h, (double)s->n + 2.0, 0x1p-53);
        s->sig = 0;
        for (int q = 0; q < 2; ++q)
            for (int v = 0; v < 2; ++v) {
                double cur = 0.0, abs = 0.0;
                for (int64_t i = 0; i < s->n; ++i) {
                    double w = v ? (double)(i + 1) : 1.0, x = s->S[i + q * s->n];
                    cur += w * x;
                    abs += w * fabs(x);
                }
                double tol = 2.0 * g2 * abs * (1.0 + 0x1p-50) + 4.0 * (double)s->n * 0x1p-1074;
                s->dsig[q][v] = cur - y[q + 2 * v];
                s->tsig[q][v] = tol;
                if (!(fabs(s->dsig[q][v]) <= tol)) s->sig = 1;
            }
    }
    *changed = s->sig;
    return ABFT_STATUS_SUCCESS;
}

/* Vector idx of side cs recomputed in the fp64 checksum arithmetic with its absolute
 * companion, one tsmm over the other operand: a row is op(B)^T·op(A)(i,:)^T with
 * |op(B)|^T·|op(A)(i,:)|^T, a column op(A)·op(B)(:,j) with |op(A)|·|op(B)(:,j)|. Each
 * element of v must lie within the GEMM's own error of it, dot_{k+3}·|alpha|·(|A||B|)_ij,
 * plus the recomputation's, gamma_k(2^-53)·(|A||B|)_ij, and the underflow allowances. */
static abft_status_t cb_check_vec(void *ctx, int cs, int64_t idx, const double *v, int *ok,
                                  int *available) {
    gemm_ctx_t *g = (gemm_ctx_t *)ctx;
    struct abft_gemm_plan *p = g->p;
    abft_handle_t h = p->h;
    *ok = 1;
    *available = 0;
    if (p->beta != 0.0 || !g->use_ab || g->A == NULL || g->B == NULL) return ABFT_STATUS_SUCCESS;
    const int64_t k = p->k, len = cs ? p->m : p->n;
    /* X = [x, 0], Xabs = [|x|, 1] (k x 2 each, fp64 on the backend), x the strip: Y[:,0] the
     * recomputation, Yabs = [(|.|·|x|), the 1-norms of the other operand's strips] */
    ABFT_TRY(cs ? fetch_bcol(g, idx, g->va) : fetch_arow(g, idx, g->va));
    double *host = (double *)calloc((size_t)(4 * k + 4 * len + 2), sizeof(double));
    ABFT_RETURN_IF(host == NULL, ABFT_STATUS_ALLOC_FAILED);
    for (int64_t l = 0; l < k; ++l)
        host[l] = g->va[l], host[2 * k + l] = fabs(g->va[l]), host[3 * k + l] = 1.0;
    void *dev = NULL;
    size_t bytes = sizeof(double) * (size_t)(4 * k + 4 * len + 2);
    abft_status_t st = h->ops->alloc(&h->kctx, bytes, &dev);
    double *dx = (double *)dev, *dxa = dx + 2 * k, *dy = dx + 4 * k, *dya = dy + 2 * len;
    if (st == ABFT_STATUS_SUCCESS) {
        abft_copy_args_t c = {1, sizeof(double), k, 4, host, k, dx, k};
        st = h->ops->copy(&h->kctx, &c);
    }
    if (st == ABFT_STATUS_SUCCESS) {
        /* rows: op(B)^T·x, op(B) stored br x bc; columns: op(A)·x, op(A) stored ar x ac */
        int64_t br = p->transb ? p->n : k, bc = p->transb ? k : p->n;
        int64_t ar = p->transa ? k : p->m, ac = p->transa ? p->m : k;
        abft_tsmm_args_t a = cs ? (abft_tsmm_args_t){p->prec, p->transa, ar, ac, 2, g->A, g->lda,
                                                     dx, k, dxa, k, dy, len, dya, len, p->comp}
                                : (abft_tsmm_args_t){p->prec, !p->transb, br, bc, 2, g->B, g->ldb,
                                                     dx, k, dxa, k, dy, len, dya, len, p->comp};
        st = h->ops->tsmm(&h->kctx, &a);
    }
    double *y = host + 4 * k, *ya = y + 2 * len; /* y: len x 2, ya: len x 2 */
    if (st == ABFT_STATUS_SUCCESS) {
        abft_copy_args_t c = {0, sizeof(double), len, 4, y, len, dy, len};
        st = h->ops->copy(&h->kctx, &c);
    }
    if (dev != NULL) (void)h->ops->free(&h->kctx, dev);
    if (st == ABFT_STATUS_SUCCESS) {
        const gemm_side_t *s = &g->s[0];
        double coef = (abft_bound_dot(h, &p->arith, (double)k + 3.0) +
                       abft_gamma(h, (double)k + 1.0, 0x1p-53)) * (1.0 + 16.0 * 0x1p-53);
        double l1 = norm1(g->va, k);
        double floor = ((double)k + 3.0) * p->arith.eta * (fabs(p->alpha) + 1.0) +
                       (double)(k + 2) * 0x1p-1074;
        for (int64_t l = 0; l < len && *ok; ++l) {
            /* the underflow of alpha applied to either operand first, amplified by the
             * other: eta·(1-norm of this strip + 1-norm of the other operand's strip) */
            double t = coef * fabs(p->alpha) * ya[l] + floor +
                       s->bc.eta_amp * (l1 + ya[l + len] * (1.0 + (double)k * 0x1p-52));
            if (!(fabs(v[l] - p->alpha * y[l]) <= t)) *ok = 0;
        }
        *available = 1;
    }
    free(host);
    return st;
}

/* The expected checksum of entry idx re-derived from the input it was encoded from: a row's
 * S_i = op(A)(i,:)·Yb (and Sa_i), a column's T_j = op(B)(:,j)^T·Za, each O(k) with the kept
 * encoding of the other operand. It counts as a corrupted checksum only when the kept
 * checksums' own checksum shows they changed since encoding: an input corrupted after
 * encoding gives the same picture from the row alone (the data agree with a checksum
 * re-derived from the corrupted input). The beta·C_old part cannot be re-derived. */
static abft_status_t rederive(gemm_ctx_t *g, int cs, int64_t idx, gemm_side_t *kp,
                              kept_src_t src, int *changed) {
    struct abft_gemm_plan *p = g->p;
    *changed = 0;
    const void *M = cs ? g->B : g->A;
    if (!g->use_ab || M == NULL) return ABFT_STATUS_SUCCESS;
    int kept = 0;
    ABFT_TRY(kept_changed(g, kp, src, &kept));
    if (!kept) return ABFT_STATUS_SUCCESS;
    /* the strip of the input as a 1 x k (trans 0) or k x 1 (trans 1) matrix */
    int along = cs ? !p->transb : p->transa; /* the strip is contiguous */
    int64_t ld = cs ? g->ldb : g->lda;
    const void *base = cs ? (p->transb ? at(p, M, idx, 0, ld) : at(p, M, 0, idx, ld))
                          : (p->transa ? at(p, M, 0, idx, ld) : at(p, M, idx, 0, ld));
    double *y = p->w[W_TMP], *ya = p->w[W_TMP] + 2;
    abft_tsmm_args_t a = {p->prec, along, along ? p->k : 1, along ? 1 : p->k, 2, base, ld,
                          p->w[src.x], p->ld[src.x], p->w[src.xa], p->ld[src.xa], y, 1, ya, 1,
                          p->comp};
    ABFT_TRY(p->h->ops->tsmm(&p->h->kctx, &a));
    double r[4];
    abft_copy_args_t c = {0, sizeof(double), 4, 1, r, 4, y, 4};
    ABFT_TRY(p->h->ops->copy(&p->h->kctx, &c));
    double gk = abft_gamma(p->h, (double)p->k + 2.0, 0x1p-53);
    const int64_t n = kp->n;
    for (int q = 0; q < 2; ++q) {
        int64_t o = idx + q * n;
        double tol = 2.0 * gk * (kp->Sa[o] > r[2 + q] ? kp->Sa[o] : r[2 + q]) * (1.0 + 0x1p-50) +
                     4.0 * (double)(p->k + 2) * 0x1p-1074;
        if (!(fabs(r[q] - kp->S[o]) <= tol)) *changed = 1;
    }
    /* ... and the change of S^T·V since encoding must be this entry's change: delta with
     * unit weights, (idx + 1)·delta with index weights, in each column q (a corrupted entry
     * elsewhere together with an input corrupted in this row must not pass) */
    for (int q = 0; q < 2 && *changed; ++q) {
        int64_t o = idx + q * n;
        double delta = kp->S[o] - r[q];
        double tol = 2.0 * gk * (kp->Sa[o] + r[2 + q]) + 4.0 * (double)(p->k + 2) * 0x1p-1074;
        if (!(fabs(kp->dsig[q][0] - delta) <= kp->tsig[q][0] + tol) ||
            !(fabs(kp->dsig[q][1] - (double)(idx + 1) * delta) <=
              kp->tsig[q][1] + (double)(idx + 1) * tol))
            *changed = 0;
    }
    if (*changed) {
        for (int q = 0; q < 2; ++q) {
            double delta = kp->S[idx + q * n] - r[q];
            kp->dsig[q][0] -= delta, kp->dsig[q][1] -= (double)(idx + 1) * delta;
            kp->S[idx + q * n] = r[q], kp->Sa[idx + q * n] = r[2 + q];
        }
    }
    return ABFT_STATUS_SUCCESS;
}

/* The engine's checksum op: the side's kept checksum re-derived, and for a row the random
 * checksum's too (either may be the corrupted one). */
static abft_status_t cb_checksum(void *ctx, int cs, int64_t idx, int *changed) {
    gemm_ctx_t *g = (gemm_ctx_t *)ctx;
    kept_src_t src = {cs ? W_ZA : W_YB, cs ? W_ZAA : W_YBA, cs ? W_SIGT : W_SIG};
    ABFT_TRY(rederive(g, cs, idx, &g->s[cs], src, changed));
    if (cs == 0 && g->p->rnd) {
        kept_src_t xsrc = {W_YR, W_YRA, W_SIGR};
        int cx = 0;
        ABFT_TRY(rederive(g, 0, idx, &g->xr, xsrc, &cx));
        *changed |= cx;
    }
    return ABFT_STATUS_SUCCESS;
}

/* One side's compare job for the backend; its flagged indices come back to the host. */
static abft_compare_args_t compare_job(const gemm_ctx_t *g, int cs, double *max_ratio) {
    const struct abft_gemm_plan *p = g->p;
    const gemm_side_t *s = &g->s[cs];
    const double *const *w = (const double *const *)p->w;
    const int64_t *ld = p->ld;
    int b = cs ? W_RC - W_R : 0; /* offset between the row and column array indices */
    int sidx = cs ? W_T : W_S, pidx = cs ? W_PC : W_P;
    /* k = 0 or alpha = 0: the alpha terms vanish (and the GEMM reads neither A nor B, so
     * their encodings are not used: NaN there must not flag anything). */
    const int use_ab = g->use_ab;
    abft_compare_args_t c = {s->n, w[W_R + b], ld[W_R + b], w[W_RA + b], ld[W_RA + b],
                             use_ab ? w[sidx] : w[W_R + b], ld[sidx],
                             use_ab ? w[sidx + 1] : w[W_RA + b], ld[sidx + 1],
                             w[pidx], ld[pidx], w[pidx + 1], ld[pidx + 1],
                             use_ab ? p->alpha : 0.0, p->beta, s->bc.coef_s, s->bc.coef_r,
                             s->bc.abs_floor, s->n, s->flags, (int64_t *)&s->nflag, max_ratio,
                             NULL, 0, 0.0, 0.0, 0.0, 0.0, 1.0};
    if (s->tight) {
        c.T = w[cs ? W_TTC : W_TT], c.ldt = ld[cs ? W_TTC : W_TT];
        c.tcoef_s = s->tb.coef_s, c.tcoef_p = s->tb.coef_p, c.tcoef_r = s->tb.coef_r;
        c.tcoef_x = s->tb.coef_x;
    }
    return c;
}

/* The random checksum's tight coefficients (rows): the fixed ones, plus the rounding of its
 * stored encoding Yr = op(B)·Vr, which the pass's part bounds for the e weights only (in
 * quadrature): here its worst case, u_chk·(|op(A)|·|Yr|) <= u_chk·Sra, on Sra's
 * coefficient. Its weights lie in [1, 2), so every other part of the tight bound is at most
 * twice the e column's (rnd_job's tscale, docs/bound.md). */
static abft_gemm_tight_t rnd_tight(const gemm_side_t *s) {
    abft_gemm_tight_t tb = s->tb;
    tb.coef_s += tb.u_chk * (1.0 + 0x1p-40);
    return tb;
}

static abft_status_t fetch_n2(abft_handle_t h, double *host, const double *dev, int64_t n,
                              int64_t ldd);

/* The random checksum's compare job over R = C·Vr (W_RR, from check_all's pass over C). */
static abft_compare_args_t rnd_job(gemm_ctx_t *g, double *mrx) {
    struct abft_gemm_plan *p = g->p;
    double *const *w = p->w;
    const int64_t *ld = p->ld;
    const gemm_side_t *s = &g->s[0];
    const int use_ab = g->use_ab;
    abft_compare_args_t c = {p->m, w[W_RR], ld[W_RR], w[W_RRA], ld[W_RRA],
                             use_ab ? w[W_SR] : w[W_RR], ld[W_SR],
                             use_ab ? w[W_SRA] : w[W_RRA], ld[W_SRA],
                             w[W_PR], ld[W_PR], w[W_PRA], ld[W_PRA],
                             use_ab ? p->alpha : 0.0, p->beta, s->bc.coef_s, s->bc.coef_r,
                             s->bc.abs_floor, p->m, g->xflags, &g->nx, mrx,
                             NULL, 0, 0.0, 0.0, 0.0, 0.0, 1.0};
    if (s->tight) { /* the rows' tight part (the e column's, ldt = 0), twice */
        const abft_gemm_tight_t tb = rnd_tight(s);
        c.T = w[W_TT], c.ldt = 0, c.tscale = 2.0;
        c.tcoef_s = tb.coef_s, c.tcoef_p = tb.coef_p, c.tcoef_r = tb.coef_r;
        c.tcoef_x = tb.coef_x;
    }
    return c;
}

/* The rows the random checksum flagged join the row side's flags (ascending, each once). */
static void rnd_merge(gemm_ctx_t *g) {
    gemm_side_t *s = &g->s[0];
    int64_t a = 0, b = 0, n = 0;
    while (a < s->nflag || b < g->nx) {
        int64_t x;
        if (b >= g->nx || (a < s->nflag && s->flags[a] < g->xflags[b])) x = s->flags[a++];
        else if (a >= s->nflag || g->xflags[b] < s->flags[a]) x = g->xflags[b++];
        else x = s->flags[a++], ++b; /* in both */
        g->xmerge[n++] = x;
    }
    memcpy(s->flags, g->xmerge, sizeof(int64_t) * (size_t)n);
    s->nflag = n;
}

static abft_status_t fetch_encodings(gemm_ctx_t *g, gemm_side_t *s, int sidx, int pidx,
                                     int yidx);

/* Host copies of the random checksum's encodings, as a side of rows, and its weights (the
 * rare path). */
static abft_status_t fetch_rnd(gemm_ctx_t *g) {
    const struct abft_gemm_plan *p = g->p;
    g->xr.n = p->m;
    g->xw = (double *)malloc(sizeof(double) * (size_t)p->n * 2 + 1);
    ABFT_RETURN_IF(g->xw == NULL, ABFT_STATUS_ALLOC_FAILED);
    gemm_rnd_weights(p->rnd_seed, p->n, g->xw);
    return fetch_encodings(g, &g->xr, W_SR, W_PR, W_YRA);
}

/* The engine's detection-only check of row idx (values v): its residual in each weight
 * column against the bound of docs/bound.md with these weights (at most 2 each, so their
 * sum over the row is at most 2n), the tight one where the rows have it (rnd_job's, with
 * the small terms' allowance at most twice the e column's), no allowance for written
 * values. */
static void cb_extra(void *ctx, int64_t idx, const double *v, double *ratio) {
    gemm_ctx_t *g = (gemm_ctx_t *)ctx;
    const struct abft_gemm_plan *p = g->p;
    gemm_side_t *s = &g->s[0];
    const int64_t m = p->m, n = p->n;
    double worst = 0.0;
    *ratio = 0.0;
    if (!p->rnd) return; /* no random checksum: nothing to add */
    for (int q = 0; q < 2; ++q) {
        const double *wq = g->xw + q * n;
        double r = 0.0, ra = 0.0;
        for (int64_t j = 0; j < n; ++j) r += wq[j] * v[j], ra += wq[j] * fabs(v[j]);
        double e = 0.0, b = 0.0;
        int64_t o = idx + q * m;
        if (g->use_ab) e = p->alpha * g->xr.S[o], b = fabs(p->alpha) * g->xr.Sa[o];
        if (p->beta != 0.0) e += p->beta * g->xr.P[o], b += fabs(p->beta) * g->xr.Pa[o];
        const double wc = s->bc.coef_s * b + s->bc.coef_r * ra + s->bc.abs_floor;
        double t = wc;
        const double tt = s->tight ? s->T[idx] : -1.0;
        if (tt != tt) {
            t = NAN;
        } else if (tt >= 0.0) {
            const abft_gemm_tight_t tb = rnd_tight(s);
            const double as = g->use_ab ? p->alpha * g->xr.S[o] : 0.0;
            const double bp = p->beta != 0.0 ? p->beta * g->xr.P[o] : 0.0;
            const double sa = g->use_ab ? fabs(p->alpha) * g->xr.Sa[o] : 0.0;
            const double pa = p->beta != 0.0 ? fabs(p->beta) * g->xr.Pa[o] : 0.0;
            t = abft_bound_tight_entry(&tb, s->bc.abs_floor, 2.0 * tt, sa, pa, ra,
                                       fabs(r) + fabs(as) + fabs(bp));
            if (wc < t) t = wc;
            if (g->use_ab && fabs(r - e) > t) {
                ensure_small(g, 0, idx);
                if (s->sm[idx] >= 0.0)
                    t = abft_bound_tight_raise(t, wc, p->alpha, 2.0 * s->sm[idx],
                                               g->xr.Sa[o], n, p->k);
            }
        }
        if (g->use_ab) {
            double l1 = s->l1[idx] >= 0.0 ? s->l1[idx] : l1_bound(g, s, idx);
            t += s->bc.eta_amp * (2.0 * (double)n * l1 + g->xr.ysum[q]);
            /* weights that are not integers: each product r_j·b_lj of the encoding that is
             * subnormal loses up to a subnormal spacing, n per entry of Yr, which op(A)
             * and alpha then amplify */
            t += fabs(p->alpha) * (double)n * 0x1p-1074 * l1 * (1.0 + 0x1p-40);
        }
        /* likewise r_j·C_old(i, j), amplified by beta */
        if (p->beta != 0.0) t += fabs(p->beta) * (double)n * 0x1p-1074 * (1.0 + 0x1p-40);
        double d = r - e;
        double x = isinf(t) ? INFINITY
                   : t > 0.0 ? fabs(d) / t
                             : (d == 0.0 ? 0.0 : INFINITY);
        if (!(x <= worst)) worst = isnan(x) ? INFINITY : x;
    }
    *ratio = worst;
}

/* 4. the pass over C (rows and, fused, columns) and the compare of every side: one
 * synchronisation. */
static abft_status_t check_all(gemm_ctx_t *g, double mr[2]) {
    struct abft_gemm_plan *p = g->p;
    abft_handle_t h = p->h;
    const int full = g->nsides == 2;
    if (gemm_rnd_fused(p)) /* R and its random twin RR from one pass (c = 4) */
        ABFT_TRY(gemm_tsmm_c(h, p->comp, p->prec, 0, p->m, p->n, 4, g->C, g->ldc, p->w[W_RW],
                             p->ld[W_RW], NULL, 0, p->w[W_R], p->ld[W_R], p->w[W_RA],
                             p->ld[W_RA]));
    else
        ABFT_TRY(gemm_encode_matrix(h, p->comp, p->prec, p->m, p->n, g->C, g->ldc, p->w[W_R],
                                    p->w[W_RA], p->ld[W_R], full ? p->w[W_RC] : NULL,
                                    full ? p->w[W_RCA] : NULL, p->ld[W_RC]));
    abft_compare_args_t jobs[2];
    for (int cs = 0; cs < g->nsides; ++cs) jobs[cs] = compare_job(g, cs, &mr[cs]);
    if (!p->rnd) return h->ops->compare(&h->kctx, jobs, g->nsides);
    /* the random checksum (beside full checksums: one more pass over C); its compare joins
     * the rows' (a second synchronisation only beside full checksums: the compare takes
     * two jobs) */
    double mrx = 0.0;
    abft_compare_args_t x = rnd_job(g, &mrx);
    if (!full) {
        jobs[1] = x;
        ABFT_TRY(h->ops->compare(&h->kctx, jobs, 2));
    } else {
        ABFT_TRY(gemm_tsmm(h, p->comp, p->prec, 0, p->m, p->n, g->C, g->ldc, gemm_rnd_cols(p),
                           p->ld[W_RW], NULL, 0, p->w[W_RR], p->ld[W_RR], p->w[W_RRA],
                           p->ld[W_RRA]));
        ABFT_TRY(h->ops->compare(&h->kctx, jobs, 2));
        ABFT_TRY(h->ops->compare(&h->kctx, &x, 1));
    }
    if (!(mrx <= mr[0])) mr[0] = mrx;
    rnd_merge(g);
    return ABFT_STATUS_SUCCESS;
}

static abft_status_t cb_recheck(void *ctx, int64_t *list[2], int64_t nf[2]) {
    gemm_ctx_t *g = (gemm_ctx_t *)ctx;
    double mr[2] = {0.0, 0.0};
    ABFT_TRY(check_all(g, mr));
    for (int cs = 0; cs < g->nsides; ++cs) {
        gemm_side_t *s = &g->s[cs];
        nf[cs] = s->nflag;
        memcpy(list[cs], s->flags, sizeof(int64_t) * (size_t)s->nflag);
        ABFT_TRY(ensure_l1(g, cs, list[cs], nf[cs]));
    }
    return ABFT_STATUS_SUCCESS;
}

static abft_status_t fetch_n2(abft_handle_t h, double *host, const double *dev, int64_t n,
                              int64_t ldd) {
    if (dev == NULL) {
        memset(host, 0, sizeof(double) * (size_t)n * 2);
        return ABFT_STATUS_SUCCESS;
    }
    abft_copy_args_t c = {0, sizeof(double), n, 2, host, n, (void *)dev, ldd};
    return h->ops->copy(&h->kctx, &c);
}

/* Bring one side's encodings to the host, with the sums the underflow term needs. */
static abft_status_t fetch_side(gemm_ctx_t *g, int cs) {
    gemm_side_t *s = &g->s[cs];
    ABFT_TRY(fetch_encodings(g, s, cs ? W_T : W_S, cs ? W_PC : W_P, cs ? W_ZAA : W_YBA));
    if (!s->tight) return ABFT_STATUS_SUCCESS;
    s->T = (double *)malloc(sizeof(double) * (size_t)s->n * 4 + 1);
    ABFT_RETURN_IF(s->T == NULL, ABFT_STATUS_ALLOC_FAILED);
    s->sm = s->T + 2 * s->n;
    for (int64_t i = 0; i < 2 * s->n; ++i) s->sm[i] = -1.0;
    return fetch_n2(g->p->h, s->T, g->p->w[cs ? W_TTC : W_TT], s->n, g->p->ld[cs ? W_TTC : W_TT]);
}

/* Host copies of the encodings of s (s->n entries): S, Sa from sidx, sidx + 1, P, Pa from
 * pidx, pidx + 1, and the sums the underflow term needs from yidx. */
static abft_status_t fetch_encodings(gemm_ctx_t *g, gemm_side_t *s, int sidx, int pidx,
                                     int yidx) {
    struct abft_gemm_plan *p = g->p;
    abft_handle_t h = p->h;
    const double *const *w = (const double *const *)p->w;
    const int64_t *ld = p->ld;
    int64_t n = s->n;
    s->S = (double *)calloc((size_t)n * 9 + 1, sizeof(double));
    ABFT_RETURN_IF(s->S == NULL, ABFT_STATUS_ALLOC_FAILED);
    s->Sa = s->S + 2 * n, s->P = s->S + 4 * n, s->Pa = s->S + 6 * n, s->l1 = s->S + 8 * n;
    for (int64_t i = 0; i < n; ++i) s->l1[i] = -1.0;
    s->sig = -1;
    ABFT_TRY(fetch_n2(h, s->S, g->use_ab ? w[sidx] : NULL, n, ld[sidx]));
    ABFT_TRY(fetch_n2(h, s->Sa, g->use_ab ? w[sidx + 1] : NULL, n, ld[sidx + 1]));
    ABFT_TRY(fetch_n2(h, s->P, p->beta != 0.0 ? w[pidx] : NULL, n, ld[pidx]));
    ABFT_TRY(fetch_n2(h, s->Pa, p->beta != 0.0 ? w[pidx + 1] : NULL, n, ld[pidx + 1]));
    s->ysum[0] = s->ysum[1] = 0.0;
    s->ymin = 0.0;
    if (!g->use_ab) return ABFT_STATUS_SUCCESS;
    double *y = (double *)malloc(sizeof(double) * (size_t)p->k * 2);
    ABFT_RETURN_IF(y == NULL, ABFT_STATUS_ALLOC_FAILED);
    abft_status_t st = fetch_n2(h, y, w[yidx], p->k, ld[yidx]);
    for (int64_t l = 0; l < p->k && st == ABFT_STATUS_SUCCESS; ++l) {
        s->ysum[0] += y[l];
        s->ysum[1] += y[l + p->k];
        if (y[l] > 0.0 && (s->ymin == 0.0 || y[l] < s->ymin)) s->ymin = y[l];
    }
    double pad = 1.0 + (double)(p->k + 2) * 0x1p-52;
    s->ysum[0] *= pad, s->ysum[1] *= pad;
    free(y);
    return st;
}

static void ctx_free(gemm_ctx_t *g) {
    for (int cs = 0; cs < 2; ++cs) {
        free(g->s[cs].S);
        free(g->s[cs].T);
        free(g->s[cs].oth);
        free(g->s[cs].flags);
    }
    free(g->va);
    free(g->xflags);
    free(g->xr.S);
    free(g->xw);
}

static const abft_corr_ops_t gemm_corr_ops = {cb_get,  cb_put_vec,  cb_put,       cb_expect,
                                              cb_elem, cb_vec,      cb_checksum,  cb_check_vec,
                                              cb_recheck, cb_extra};

/* The report's worst_case_rows in the tight mode: a side without the tight bound (it does
 * not apply to the arithmetic, or the pass did not run for it) counts every entry; after
 * the full pass (at encoding, or the second stage), the entries it sent to the worst case
 * (either weight column); with the filter alone, none (the filter's bound is the tighter). */
static abft_status_t count_fallback(const struct abft_gemm_plan *p, const gemm_ctx_t *g,
                                    abft_report_t *rep) {
    abft_handle_t h = p->h;
    for (int cs = 0; cs < g->nsides; ++cs) {
        const int64_t n = g->s[cs].n;
        if (!g->s[cs].tight) {
            rep->worst_case_rows += n;
            continue;
        }
        if (!p->tight_full || n == 0) continue;
        double *t = (double *)malloc(sizeof(double) * (size_t)n * 2);
        ABFT_RETURN_IF(t == NULL, ABFT_STATUS_ALLOC_FAILED);
        const int ti = cs ? W_TTC : W_TT;
        abft_copy_args_t c = {0, sizeof(double), n, 2, t, n, p->w[ti], p->ld[ti]};
        const abft_status_t st = h->ops->copy(&h->kctx, &c);
        for (int64_t i = 0; i < n && st == ABFT_STATUS_SUCCESS; ++i)
            rep->worst_case_rows +=
                abft_bound_tight_fell_back(t[i]) || abft_bound_tight_fell_back(t[n + i]);
        free(t);
        ABFT_TRY(st);
    }
    return ABFT_STATUS_SUCCESS;
}

/* held != NULL: the GEMM went through the device-side gate; *held = 1 when the gate held it
 * back (a non-finite screen): then C is the old C, and nothing is checked or changed. */
abft_status_t gemm_verify(struct abft_gemm_plan *p, const void *A, int64_t lda, const void *B,
                          int64_t ldb, void *C, int64_t ldc, abft_report_t *rep, int *held) {
    abft_handle_t h = p->h;
    ABFT_TRY(gemm_plan_arith(p));
    rep->unit_roundoff = p->arith.u_in > 0.0 ? p->arith.u_in : p->arith.u;
    if (p->m == 0 || p->n == 0) return ABFT_STATUS_SUCCESS;
    ABFT_TRY(abft_call_hook(h, ABFT_SITE_AFTER_GEMM, 0, p->prec, C, p->m, p->n, ldc));
    gemm_ctx_t g;
    memset(&g, 0, sizeof g);
    g.p = p, g.A = A, g.lda = lda, g.B = B, g.ldb = ldb, g.C = C, g.ldc = ldc;
    g.nsides = p->kind == ABFT_CHECKSUM_FULL ? 2 : 1;
    g.use_ab = p->k > 0 && p->alpha != 0.0;
    abft_status_t st = ABFT_STATUS_SUCCESS;
    for (int cs = 0; cs < g.nsides && st == ABFT_STATUS_SUCCESS; ++cs) {
        gemm_side_t *s = &g.s[cs];
        s->n = cs ? p->n : p->m;
        s->len = cs ? p->m : p->n;
        abft_bound_gemm(h, &p->arith, p->alpha, p->beta, s->len, p->k, s->len, &s->bc);
        /* the tight bound where the tight pass ran for this arithmetic (else the worst case) */
        s->tight = p->tight && gemm_tight_wanted(p) && p->arith.u == p->tight_u &&
                   abft_bound_tight_applies(&p->arith);
        if (s->tight)
            abft_bound_gemm_tight(h, &p->arith, s->len, p->k, s->len, gemm_tight_compensated(p),
                                  &s->tb);
        s->flags = (int64_t *)malloc(sizeof(int64_t) * (size_t)(s->n + 1));
        if (s->flags == NULL) st = ABFT_STATUS_ALLOC_FAILED;
    }
    if (st == ABFT_STATUS_SUCCESS && p->rnd) {
        g.xflags = (int64_t *)malloc(sizeof(int64_t) * (size_t)(2 * p->m + 2));
        g.xmerge = g.xflags + p->m + 1;
        if (g.xflags == NULL) st = ABFT_STATUS_ALLOC_FAILED;
    }
    double mr[2] = {0.0, 0.0};
    if (st == ABFT_STATUS_SUCCESS) st = check_all(&g, mr);
    int64_t flagged = 0;
    for (int cs = 0; cs < g.nsides && st == ABFT_STATUS_SUCCESS; ++cs) {
        if (mr[cs] > rep->max_ratio) rep->max_ratio = mr[cs];
        rep->checked += g.s[cs].n;
        flagged += g.s[cs].nflag;
    }
    if (held != NULL && st == ABFT_STATUS_SUCCESS) { /* the compare synchronised already */
        int64_t count = 0;
        st = h->ops->gate_result(&h->kctx, &count);
        if (st == ABFT_STATUS_SUCCESS && count > 0) {
            *held = 1;
            ctx_free(&g);
            return ABFT_STATUS_SUCCESS;
        }
    }
    /* two stages: something exceeds the filter's bound; the full pass decides (the rows
     * flagged by the random checksum are among the rows' flags: check_all merged them) */
    if (st == ABFT_STATUS_SUCCESS && g.s[0].tight && !p->tight_full && A != NULL && B != NULL &&
        (g.s[0].nflag > 0 || (g.nsides == 2 && g.s[1].nflag > 0))) {
        st = gemm_tight_second(p, A, lda, B, ldb);
        if (st == ABFT_STATUS_SUCCESS) st = check_all(&g, mr);
        /* the compare against the full bound replaces the filter's */
        flagged = 0, rep->max_ratio = 0.0;
        for (int cs = 0; cs < g.nsides && st == ABFT_STATUS_SUCCESS; ++cs) {
            if (mr[cs] > rep->max_ratio) rep->max_ratio = mr[cs];
            flagged += g.s[cs].nflag;
        }
    }
    if (st == ABFT_STATUS_SUCCESS && gemm_tight_wanted(p) && g.use_ab)
        st = count_fallback(p, &g, rep);
    if (st != ABFT_STATUS_SUCCESS || flagged == 0) {
        ctx_free(&g);
        return st;
    }
    /* The rare path: something was flagged. */
    g.va = (double *)malloc(sizeof(double) * 2 * (size_t)(p->k + 1));
    g.vb = g.va != NULL ? g.va + p->k + 1 : NULL;
    if (g.va == NULL) st = ABFT_STATUS_ALLOC_FAILED;
    for (int cs = 0; cs < g.nsides && st == ABFT_STATUS_SUCCESS; ++cs) {
        st = fetch_side(&g, cs);
        if (st == ABFT_STATUS_SUCCESS) st = ensure_l1(&g, cs, g.s[cs].flags, g.s[cs].nflag);
    }
    if (st == ABFT_STATUS_SUCCESS && p->rnd) st = fetch_rnd(&g);
    if (st == ABFT_STATUS_SUCCESS) {
        abft_corr_cfg_t cfg;
        memset(&cfg, 0, sizeof cfg);
        cfg.nsides = g.nsides;
        cfg.n[0] = p->m, cfg.n[1] = p->n;
        cfg.len[0] = p->n, cfg.len[1] = p->m;
        cfg.u_store = p->prec == ABFT_PREC_S ? 0x1p-24 : 0x1p-53;
        cfg.recompute_vec = h->recompute;
        int64_t *flags[2] = {g.s[0].flags, g.s[1].flags};
        int64_t nflag[2] = {g.s[0].nflag, g.s[1].nflag};
        double refined = 0.0;
        st = abft_correct(&gemm_corr_ops, &g, &cfg, flags, nflag, rep, &refined);
        /* the compare's flags measured against the full bound (docs/api.md) */
        rep->max_ratio = refined;
    }
    ctx_free(&g);
    return st;
}
