/* abft correction engine (docs/bound.md, "Location and correction").
 *
 *   1. refine: every entry the compare flagged is checked again with the full bound (the
 *      protocol's expect); what passes was never an error;
 *   2. locate and confirm: a flagged vector whose two residuals point at one element gets a
 *      candidate value from its checksum; it is written only when the element recomputed
 *      from the inputs agrees (and the recomputation is what is written). Nothing else
 *      confirms: neither row checksums alone nor the crossing vector's checksum (a value
 *      confirmed by it is only known within the sum of the two lines' noises, and the
 *      larger can exceed the element's own bound many times over);
 *   3. re-verify: after a round of writes every checksum is recomputed (recheck) and every
 *      entry is checked against its own bound, with no allowance for the written values (a
 *      written value must fit its row's and its column's bound as any element does, so a
 *      correction can never widen a check and hide a second error); rounds repeat to a
 *      fixed point; if an entry crossing a write still fails at the end, every write is
 *      rolled back (a reporting policy: a vector reported uncorrectable is left as the
 *      GEMM gave it, whole);
 *   4. what is left: a corrupted checksum when re-deriving it from its inputs explains the
 *      residual (data intact), else the vector recomputed from the inputs when allowed and
 *      it then passes, else reported uncorrectable. */
#include "abft_correct.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct wlog {
    int64_t i, j;
    double old, now;
    double ratio; /* |residual| / bound of the entry that located it */
    int side;
} wlog_t;

typedef struct engine {
    const abft_corr_ops_t *ops;
    void *ctx;
    const abft_corr_cfg_t *cfg;
    wlog_t *w;
    int64_t nw, capw;
    double *v, *v2; /* vectors of the longest side */
    int64_t *open[2];
    int64_t nopen[2];
} engine_t;

/* hi + lo += x, compensated (TwoSum) */
static inline void two_sum_add(double *hi, double *lo, double x) {
    double s = *hi + x, z = s - *hi;
    *lo += (*hi - (s - z)) + (x - z);
    *hi = s;
}

/* Sums of a vector: r[0] = sum v_j, r[1] = sum (j+1) v_j, compensated as the backends'
 * checksums are (within u·|r| + gamma_len^2·ra of the exact sums: the tight bound mode
 * leaves no room for a plain sum's rounding); ra likewise with |v_j|, plain. */
static void vec_sums(const double *v, int64_t len, double r[2], double ra[2]) {
    double s0 = 0, s1 = 0, l0 = 0, l1 = 0, a0 = 0, a1 = 0;
    for (int64_t j = 0; j < len; ++j) {
        double w = (double)(j + 1), p = w * v[j];
        two_sum_add(&s0, &l0, v[j]);
        two_sum_add(&s1, &l1, p);
        l1 += fma(w, v[j], -p); /* the product's error, exact */
        a0 += fabs(v[j]);
        a1 += w * fabs(v[j]);
    }
    r[0] = isfinite(s0) ? s0 + l0 : s0;
    r[1] = isfinite(s1) ? s1 + l1 : s1;
    ra[0] = a0, ra[1] = a1;
}

/* The detection-only checksum's ratio of row idx (values v); 0 without one. */
static double extra_ratio(const engine_t *e, int cs, int64_t idx, const double *v) {
    double x = 0.0;
    if (cs == 0 && e->ops->extra != NULL) e->ops->extra(e->ctx, idx, v, &x);
    return x;
}

/* Does vector idx of side cs (values v) pass its bound (and, for a row, the detection-only
 * checksum's)? d: residuals, t: bounds of the two located checksums. */
static int passes(const engine_t *e, int cs, int64_t idx, const double *v, double d[2],
                  double t[2]) {
    double r[2], ra[2], s[2];
    vec_sums(v, e->cfg->len[cs], r, ra);
    e->ops->expect(e->ctx, cs, idx, r, ra, s, t);
    int ok = 1;
    for (int q = 0; q < 2; ++q) {
        d[q] = r[q] - s[q];
        if (!(fabs(d[q]) <= t[q]) || isinf(t[q])) ok = 0;
    }
    if (ok && !(extra_ratio(e, cs, idx, v) <= 1.0)) ok = 0;
    return ok;
}

static double ratio_of(const double d[2], const double t[2]) {
    double m = 0.0;
    for (int q = 0; q < 2; ++q) {
        /* an overflowed bound verifies nothing: infinite, as the compare counts it */
        double r = !(t[q] < INFINITY) ? INFINITY
                   : t[q] > 0.0       ? fabs(d[q]) / t[q]
                                      : (d[q] == 0.0 ? 0.0 : INFINITY);
        if (!(r <= m)) m = isnan(r) ? INFINITY : r;
    }
    return m;
}

/* ratio_of, with the detection-only checksum's ratio of a row folded in (never NaN: the
 * op reports +Inf for NaN) */
static double entry_ratio(const engine_t *e, int cs, int64_t idx, const double *v,
                          const double d[2], const double t[2]) {
    double m = ratio_of(d, t), x = extra_ratio(e, cs, idx, v);
    return x > m ? x : m;
}

/* Keep in open[cs] only the entries of list that fail the full check now. */
static abft_status_t refine(engine_t *e, int cs, const int64_t *list, int64_t nlist,
                            double *max_ratio) {
    int64_t keep = 0;
    for (int64_t f = 0; f < nlist; ++f) {
        double d[2], t[2];
        ABFT_TRY(e->ops->get(e->ctx, cs, list[f], e->v));
        int ok = passes(e, cs, list[f], e->v, d, t);
        if (max_ratio != NULL) {
            double r = entry_ratio(e, cs, list[f], e->v, d, t);
            if (!(r <= *max_ratio)) *max_ratio = r;
        }
        if (!ok) e->open[cs][keep++] = list[f];
    }
    e->nopen[cs] = keep;
    return ABFT_STATUS_SUCCESS;
}

/* Recompute every checksum and keep the entries that fail. */
static abft_status_t recheck(engine_t *e) {
    int64_t nf[2] = {0, 0};
    ABFT_TRY(e->ops->recheck(e->ctx, e->open, nf));
    for (int cs = 0; cs < e->cfg->nsides; ++cs) ABFT_TRY(refine(e, cs, e->open[cs], nf[cs], NULL));
    return ABFT_STATUS_SUCCESS;
}

/* The single element that the residuals d of a failing vector point at, or -1. */
static int64_t locate(const double *v, int64_t len, const double d[2], const double t[2]) {
    int64_t j = -1, nbad = 0;
    for (int64_t l = 0; l < len; ++l)
        if (!isfinite(v[l])) ++nbad, j = l;
    if (nbad == 1) return j;
    if (nbad > 1) return -1; /* several non-finite elements: not one error */
    if (!(isfinite(d[0]) && isfinite(d[1]))) {
        /* The sums overflowed: one element became huge (an exponent flip). It is the
         * candidate; the confirmation decides. */
        double big = -1.0;
        for (int64_t l = 0; l < len; ++l)
            if (fabs(v[l]) > big) big = fabs(v[l]), j = l;
        return j;
    }
    /* One error delta at position j gives d = (delta, (j+1)·delta). Accept the position only
     * if the integer is unambiguous even when both residuals carry their full noise. */
    if (d[0] == 0.0) return -1;
    double ratio = d[1] / d[0];
    double jr = nearbyint(ratio);
    double noise = (t[1] + fabs(jr) * t[0]) / fabs(d[0]);
    if (!(jr >= 1.0 && jr <= (double)len && fabs(ratio - jr) + noise < 0.5)) return -1;
    return (int64_t)jr - 1;
}

static abft_status_t log_write(engine_t *e, const wlog_t *w) {
    if (e->nw == e->capw) {
        int64_t cap = e->capw ? 2 * e->capw : 16;
        wlog_t *nw = (wlog_t *)realloc(e->w, sizeof(wlog_t) * (size_t)cap);
        ABFT_RETURN_IF(nw == NULL, ABFT_STATUS_ALLOC_FAILED);
        e->w = nw, e->capw = cap;
    }
    e->w[e->nw++] = *w;
    return ABFT_STATUS_SUCCESS;
}

static int in_list(const int64_t *list, int64_t n, int64_t x) {
    int64_t lo = 0, hi = n; /* ascending */
    while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        if (list[mid] < x) lo = mid + 1;
        else hi = mid;
    }
    return lo < n && list[lo] == x;
}

/* The value the checksum of vector idx (values v) gives for its element j, from the other
 * elements (not old - delta: an exponent flip makes old so large that old - delta loses
 * every digit), and its noise: the bound of the vector without the element and the rounding
 * of the value. */
static void from_checksum(const engine_t *e, int cs, int64_t idx, double *v, int64_t j,
                          double *cand, double *noise) {
    double old = v[j], r[2], ra[2], s[2], t[2];
    v[j] = 0.0;
    vec_sums(v, e->cfg->len[cs], r, ra);
    e->ops->expect(e->ctx, cs, idx, r, ra, s, t);
    v[j] = old;
    *cand = s[0] - r[0];
    *noise = t[0] + 2.0 * e->cfg->u_store * fabs(*cand);
}

/* Try one flagged vector: locate, confirm, write. *wrote = 1 when a value was written. */
static abft_status_t try_vector(engine_t *e, int cs, int64_t idx, int *wrote) {
    const abft_corr_cfg_t *cfg = e->cfg;
    int64_t len = cfg->len[cs];
    double *v = e->v;
    double d[2], t[2];
    *wrote = 0;
    ABFT_TRY(e->ops->get(e->ctx, cs, idx, v));
    if (passes(e, cs, idx, v, d, t)) return ABFT_STATUS_SUCCESS;
    int64_t j = locate(v, len, d, t);
    if (j < 0) return ABFT_STATUS_SUCCESS;
    int64_t row = cs ? j : idx, col = cs ? idx : j;
    /* confirmed only when the element recomputed from the inputs agrees with the
     * checksum's value; the recomputation carries only its own rounding: it is written.
     * Without a recomputation (beta != 0, or no inputs) nothing is written: the crossing
     * vector's checksum would confirm a value only within the sum of the two lines' noises
     * (its own rounding can cancel most of a second error this line's candidate absorbed),
     * and the larger noise can exceed this element's bound many times over. */
    if (e->ops->elem == NULL) return ABFT_STATUS_SUCCESS;
    double value = 0.0, noise_r = 0.0;
    int ok = 0;
    ABFT_TRY(e->ops->elem(e->ctx, row, col, &value, &noise_r, &ok));
    if (!ok) return ABFT_STATUS_SUCCESS;
    double old = v[j], cand, noise_c;
    from_checksum(e, cs, idx, v, j, &cand, &noise_c);
    if (!isfinite(cand) || !isfinite(noise_c)) return ABFT_STATUS_SUCCESS;
    if (!(fabs(value - cand) <= noise_c + noise_r)) return ABFT_STATUS_SUCCESS;
    double stored = value;
    ABFT_TRY(e->ops->put(e->ctx, row, col, value, &stored));
    wlog_t w = {row, col, old, stored, ratio_of(d, t), cs};
    ABFT_TRY(log_write(e, &w));
    *wrote = 1;
    return ABFT_STATUS_SUCCESS;
}

/* Does an entry still failing cross a kept write? Every write is the element recomputed
 * from the inputs, so it is right whatever else its vector holds; but an entry still failing
 * in the written row or column says that vector held more than the one error the write
 * removed, and the engine then undoes every write and reports the entries: a policy, not a
 * need of soundness, so that what is reported uncorrectable is left as the GEMM gave it. */
static int open_crosses_write(const engine_t *e) {
    const int two = e->cfg->nsides == 2;
    for (int64_t k = 0; k < e->nw; ++k) {
        if (in_list(e->open[0], e->nopen[0], e->w[k].i)) return 1;
        if (two && in_list(e->open[1], e->nopen[1], e->w[k].j)) return 1;
    }
    return 0;
}

static abft_status_t rollback(engine_t *e) {
    for (int64_t k = e->nw - 1; k >= 0; --k) {
        double stored;
        ABFT_TRY(e->ops->put(e->ctx, e->w[k].i, e->w[k].j, e->w[k].old, &stored));
    }
    e->nw = 0;
    return recheck(e);
}

/* Step 4 for one entry still failing. */
static abft_status_t settle(engine_t *e, int cs, int64_t idx, abft_report_t *rep) {
    double d[2], t[2];
    ABFT_TRY(e->ops->get(e->ctx, cs, idx, e->v));
    if (passes(e, cs, idx, e->v, d, t)) return ABFT_STATUS_SUCCESS;
    int64_t row = cs ? -1 : idx, col = cs ? idx : -1;
    double ratio = entry_ratio(e, cs, idx, e->v, d, t);
    if (e->ops->checksum != NULL) {
        int changed = 0;
        double d2[2], t2[2];
        ABFT_TRY(e->ops->checksum(e->ctx, cs, idx, &changed));
        if (changed && passes(e, cs, idx, e->v, d2, t2)) {
            rep->checksum_faults++;
            abft_report_add_fault(rep, row, col, d[0], ratio, ABFT_ACTION_CHECKSUM_FAULT,
                                  ABFT_FACTOR_NONE, cs);
            return ABFT_STATUS_SUCCESS;
        }
    }
    if (e->cfg->recompute_vec && e->ops->vec != NULL) {
        /* the vector as it is, kept apart: the recheck below reads other vectors into e->v */
        const int64_t len = e->cfg->len[cs];
        double *orig = (double *)malloc(sizeof(double) * (size_t)(len + 1));
        ABFT_RETURN_IF(orig == NULL, ABFT_STATUS_ALLOC_FAILED);
        memcpy(orig, e->v, sizeof(double) * (size_t)len);
        int ok = 0;
        abft_status_t sv = e->ops->vec(e->ctx, cs, idx, &ok);
        if (sv != ABFT_STATUS_SUCCESS) {
            free(orig);
            return sv;
        }
        if (ok) {
            double d2[2], t2[2];
            int64_t before[2] = {e->nopen[0], e->nopen[1]};
            ABFT_TRY(e->ops->get(e->ctx, cs, idx, e->v2));
            int good = passes(e, cs, idx, e->v2, d2, t2);
            if (good && e->cfg->nsides == 2) {
                /* every entry of the other side crosses the new vector: it may only clear
                 * entries there, never flag new ones */
                int64_t *save = (int64_t *)malloc(sizeof(int64_t) * (size_t)(before[!cs] + 1));
                ABFT_RETURN_IF(save == NULL, ABFT_STATUS_ALLOC_FAILED);
                memcpy(save, e->open[!cs], sizeof(int64_t) * (size_t)before[!cs]);
                abft_status_t st = recheck(e);
                for (int64_t f = 0; st == ABFT_STATUS_SUCCESS && f < e->nopen[!cs]; ++f)
                    if (!in_list(save, before[!cs], e->open[!cs][f])) good = 0;
                free(save);
                if (st != ABFT_STATUS_SUCCESS) {
                    free(orig);
                    return st;
                }
            }
            if (good) {
                free(orig);
                rep->recomputed++;
                abft_report_add_fault(rep, row, col, d[0], ratio, ABFT_ACTION_RECOMPUTED,
                                      ABFT_FACTOR_NONE, cs);
                return ABFT_STATUS_SUCCESS;
            }
            abft_status_t sr = e->ops->put_vec(e->ctx, cs, idx, orig); /* restore what was there */
            free(orig);
            ABFT_TRY(sr);
            if (e->cfg->nsides == 2) ABFT_TRY(recheck(e));
        } else {
            free(orig);
        }
    }
    rep->uncorrectable++;
    abft_report_add_fault(rep, row, col, d[0], ratio, ABFT_ACTION_UNCORRECTABLE,
                          ABFT_FACTOR_NONE, cs);
    return ABFT_STATUS_SUCCESS;
}

static abft_status_t run(engine_t *e, int64_t *flags[2], int64_t nflag[2], abft_report_t *rep,
                         double *max_ratio) {
    const abft_corr_cfg_t *cfg = e->cfg;
    const int ns = cfg->nsides;
    int64_t total = 0;
    for (int cs = 0; cs < ns; ++cs) {
        ABFT_TRY(refine(e, cs, flags[cs], nflag[cs], max_ratio));
        total += e->nopen[cs];
    }
    rep->detected = total;
    if (total == 0) return ABFT_STATUS_SUCCESS;
    /* rounds of writes, each followed by a recheck of everything, to a fixed point */
    for (int64_t round = 0; round < 4 + 2 * total; ++round) {
        int progress = 0;
        for (int cs = 0; cs < ns; ++cs) {
            for (int64_t f = 0; f < e->nopen[cs]; ++f) {
                int wrote = 0;
                ABFT_TRY(try_vector(e, cs, e->open[cs][f], &wrote));
                progress |= wrote;
            }
        }
        if (!progress) break;
        ABFT_TRY(recheck(e));
        if (e->nopen[0] + (ns == 2 ? e->nopen[1] : 0) == 0) break;
    }
    if (e->nw > 0 && open_crosses_write(e)) ABFT_TRY(rollback(e));
    /* every vector written into, confirmed element by element where the inputs allow */
    for (int64_t k = 0; k < e->nw && e->ops->check_vec != NULL; ++k) {
        int bad = 0;
        for (int cs = 0; cs < ns && !bad; ++cs) {
            int64_t idx = cs ? e->w[k].j : e->w[k].i;
            int ok = 1, avail = 0;
            ABFT_TRY(e->ops->get(e->ctx, cs, idx, e->v));
            ABFT_TRY(e->ops->check_vec(e->ctx, cs, idx, e->v, &ok, &avail));
            if (avail && !ok) bad = 1;
        }
        if (bad) {
            ABFT_TRY(rollback(e));
            break;
        }
    }
    for (int64_t k = 0; k < e->nw; ++k) {
        rep->corrected++;
        abft_report_add_fault(rep, e->w[k].i, e->w[k].j, e->w[k].old - e->w[k].now,
                              e->w[k].ratio, ABFT_ACTION_CORRECTED, ABFT_FACTOR_NONE,
                              e->w[k].side);
    }
    /* settle works on copies: recomputing a vector may recheck (and rewrite open[]) */
    for (int cs = 0; cs < ns; ++cs) {
        int64_t n = e->nopen[cs];
        int64_t *list = (int64_t *)malloc(sizeof(int64_t) * (size_t)(n + 1));
        ABFT_RETURN_IF(list == NULL, ABFT_STATUS_ALLOC_FAILED);
        memcpy(list, e->open[cs], sizeof(int64_t) * (size_t)n);
        abft_status_t st = ABFT_STATUS_SUCCESS;
        for (int64_t f = 0; f < n && st == ABFT_STATUS_SUCCESS; ++f)
            st = settle(e, cs, list[f], rep);
        free(list);
        ABFT_TRY(st);
    }
    return ABFT_STATUS_SUCCESS;
}

abft_status_t abft_correct(const abft_corr_ops_t *ops, void *ctx, const abft_corr_cfg_t *cfg,
                           int64_t *flags[2], int64_t nflag[2], abft_report_t *rep,
                           double *max_ratio) {
    engine_t e;
    memset(&e, 0, sizeof e);
    e.ops = ops, e.ctx = ctx, e.cfg = cfg;
    *max_ratio = 0.0;
    int64_t maxlen = cfg->len[0] > cfg->len[1] ? cfg->len[0] : cfg->len[1];
    abft_status_t st = ABFT_STATUS_SUCCESS;
    e.v = (double *)malloc(sizeof(double) * (size_t)(maxlen + 1));
    e.v2 = (double *)malloc(sizeof(double) * (size_t)(maxlen + 1));
    if (e.v == NULL || e.v2 == NULL) st = ABFT_STATUS_ALLOC_FAILED;
    for (int cs = 0; cs < cfg->nsides && st == ABFT_STATUS_SUCCESS; ++cs) {
        e.open[cs] = (int64_t *)malloc(sizeof(int64_t) * (size_t)(cfg->n[cs] + 1));
        if (e.open[cs] == NULL) st = ABFT_STATUS_ALLOC_FAILED;
    }
    if (st == ABFT_STATUS_SUCCESS) st = run(&e, flags, nflag, rep, max_ratio);
    /* a failure half-way leaves no write of the engine behind (best effort: the failure
     * may be the backend's) */
    for (int64_t k = e.nw - 1; st != ABFT_STATUS_SUCCESS && k >= 0; --k) {
        double stored;
        (void)ops->put(ctx, e.w[k].i, e.w[k].j, e.w[k].old, &stored);
    }
    for (int cs = 0; cs < 2; ++cs) free(e.open[cs]);
    free(e.v);
    free(e.v2);
    free(e.w);
    return st;
}
