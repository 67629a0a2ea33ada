/* abft bound module: one model of the arithmetic, every bound derived from it. */
#include "abft_bound.h"
#include "abft_tight_common.h"

#include <math.h>

static const double U_FP64 = 0x1p-53;

abft_arith_t abft_arith_native(abft_prec_t prec) {
    abft_arith_t a;
    a.u_in = 0.0;
    a.u = prec == ABFT_PREC_D ? 0x1p-53 : 0x1p-24;
    a.eta = prec == ABFT_PREC_D ? 0x1p-1074 : 0x1p-149;
    return a;
}

abft_arith_t abft_arith_checksum(void) { return abft_arith_native(ABFT_PREC_D); }

abft_status_t abft_arith_of(abft_math_t math, abft_prec_t prec, abft_arith_t *a) {
    abft_arith_t r = abft_arith_native(prec);
    switch (math) {
    case ABFT_MATH_IEEE:
        break;
    case ABFT_MATH_TF32: /* 10 fraction bits in (rounded or truncated), exact products, fp32
                          * sums that may truncate and align with few guard bits */
        ABFT_RETURN_IF(prec != ABFT_PREC_S, ABFT_STATUS_INVALID_VALUE);
        r.u_in = 0x1p-10, r.u = 0x1p-22;
        break;
    case ABFT_MATH_BF16X9: /* fp32-level accuracy documented; 2 bits of margin */
        ABFT_RETURN_IF(prec != ABFT_PREC_S, ABFT_STATUS_INVALID_VALUE);
        r.u = 0x1p-22;
        break;
    default:
        return ABFT_STATUS_INVALID_VALUE;
    }
    *a = r;
    return ABFT_STATUS_SUCCESS;
}

abft_status_t abft_bound_arith_cublas(void *cublas_handle, abft_prec_t prec, abft_arith_t *a) {
#if ABFT_HAVE_CUDA
    abft_math_t math = ABFT_MATH_IEEE;
    ABFT_TRY(abft_cuda_blas_math(cublas_handle, prec, &math));
    return abft_arith_of(math, prec, a);
#else
    (void)cublas_handle, (void)prec, (void)a;
    return ABFT_STATUS_NOT_SUPPORTED;
#endif
}

abft_status_t abft_bound_arith(abft_handle_t h, abft_prec_t prec, abft_arith_t *a) {
    if (h->backend == ABFT_BACKEND_CUDA) return abft_bound_arith_cublas(h->kctx.blas, prec, a);
    return abft_arith_of(ABFT_MATH_IEEE, prec, a);
}

double abft_gamma(abft_handle_t h, double n, double u) {
    if (!(n > 0.0) || !(u > 0.0)) return 0.0;
    if (h->bound_mode == ABFT_BOUND_PROBABILISTIC) return h->bound_factor * sqrt(n) * u;
    double nu = n * u, g;
    if (nu < 0.5) {
        g = nu / (1.0 - nu);
    } else {
        /* (1 + u)^n - 1, with a relative margin far above the rounding of expm1/log1p */
        g = expm1(n * log1p(u)) * (1.0 + 0x1p-40);
    }
    return h->bound_factor * g;
}

double abft_bound_dot(abft_handle_t h, const abft_arith_t *a, double n) {
    double in = a->u_in * (2.0 + a->u_in); /* (1 + u_in)^2 - 1 */
    return in + (1.0 + in) * abft_gamma(h, n, a->u);
}

/* ---- GEMM ---------------------------------------------------------------------------- */

void abft_bound_gemm(abft_handle_t h, const abft_arith_t *g, double alpha, double beta,
                     int64_t inner, int64_t k, int64_t out, abft_gemm_bound_t *b) {
    double kd = (double)k;
    double gi = abft_gamma(h, (double)inner, U_FP64);
    double gk = abft_gamma(h, kd, U_FP64);
    double go = abft_gamma(h, (double)out, U_FP64);
    double gg = abft_bound_dot(h, g, kd + 3.0); /* the GEMM (+ alpha, beta, and a k split) */
    double g3 = abft_gamma(h, 3.0, U_FP64);     /* alpha·S + beta·P in the compare */
    /* The absolute-value products are computed in floating point, so they may come out
     * below their exact values by a factor (1 - gamma): divide by it. */
    double shrink_s = 1.0 - U_FP64 * (double)(inner + k + 2);
    double shrink_r = 1.0 - U_FP64 * (double)(out + 1);
    double pad = 1.0 + 8.0 * U_FP64; /* the rounding of |R - s| and of the bound itself */
    b->coef_s = (gg + gk * (1.0 + gi) + gi + g3) / shrink_s * pad;
    b->coef_r = go * (1.0 + go) / shrink_r * pad;
    /* Gradual underflow, not amplified: each product of the GEMM (scaled by alpha when
     * alpha is applied last), the beta·C term, and each fp64 operation of the checksums may
     * lose up to one subnormal spacing; the weights sum to at most (out+1)(out+2)/2. */
    double wmax = (double)(out + 1) * (double)(out + 2);
    b->abs_floor = ((kd + 3.0) * g->eta * (fabs(alpha) + fabs(beta) + 1.0) +
                    4.0 * (double)(inner + k + out + 3) * 0x1p-1074) * wmax;
    /* Amplified: fl(alpha·b) loses up to eta when it underflows, and that loss is then
     * multiplied by the other operand's element (factor 2: the rounding of those products
     * and sums, and of the norms the host computes). */
    b->eta_amp = 2.0 * g->eta * pad;
    b->wsum[0] = (double)out;
    b->wsum[1] = (double)out * ((double)out + 1.0) / 2.0;
    if (isnan(b->coef_s) || isnan(b->coef_r)) b->coef_s = b->coef_r = INFINITY;
}

double abft_bound_gemm_amp(const abft_gemm_bound_t *b, int q, double l1, double ysum) {
    return b->eta_amp * (b->wsum[q] * l1 + ysum);
}

/* The sketch's tail bound: a rounding error E sub-Gaussian with variance proxy V (Hoeffding,
 * independent roundings of at most u each), V estimated by V·X/q with X at worst a
 * chi-square of q degrees of freedom (all squared partial sums parallel), so
 * P(|E| > lambda·sqrt(V·X/q)) <= 2·E[exp(-lambda^2·X/(2q))] = 2·(1 + lambda^2/q)^(-q/2).
 * The exact parts of V (short nodes, the encoding's rounding) only raise the ratio of the
 * estimate to V toward 1, which the same bound covers with 2·exp(-lambda^2/2) more. */
static double tight_lambda(void) {
    const double q = ABFT_TIGHT_SKETCH;
    return sqrt(q * (pow(2.0 / ABFT_TIGHT_FALSE_ALARM, 2.0 / q) - 1.0));
}

static double gamma_sq(double n) {
    double g = n * U_FP64 / (1.0 - n * U_FP64);
    return !(g >= 0.0 && g < 1.0) ? INFINITY : g * g;
}

/* gamma_n(2^-53), the worst case whatever the handle's mode */
static double gamma_wc(double n) {
    double nu = n * U_FP64;
    return nu < 0.5 ? nu / (1.0 - nu) : INFINITY;
}

void abft_bound_gemm_tight(abft_handle_t h, const abft_arith_t *g, int64_t inner, int64_t k,
                           int64_t out, int comp, abft_gemm_tight_t *t) {
    const double pad = 1.0 + 8.0 * U_FP64;
    const double shrink_s = 1.0 - U_FP64 * (double)(inner + k + 2);
    const double shrink_r = 1.0 - U_FP64 * (double)(out + 1);
    t->lambda = tight_lambda() * h->bound_factor;
    t->u = g->u;
    t->u_chk = U_FP64;
    /* compensated checksums (Dot2): each within u·|value| + 2·gamma_len^2·(its |.| sum) in
     * order, and within u·|value| + 2·gamma_(2·len)^2·(its |.| sum) merged over a tree (the
     * error terms, 2·len at most, summed in any order, each at most u times a partial sum);
     * the first-order parts are coef_x's, the second-order ones: */
    const double f = comp == ABFT_TIGHT_COMP_TREE ? 2.0 : 1.0;
    t->coef_s = 2.0 * (gamma_sq(f * (double)inner + 2.0) + gamma_sq(f * (double)k + 2.0)) /
                shrink_s * pad;
    /* beta·C_old: a BLAS may add into C once per block of k, up to k times (the reference
     * BLAS adds every product into C), each addition rounding relative to a C that holds
     * beta·C_old; small increments against a large old C round alike, so these add up
     * linearly: the worst case's gamma_(k+3) on |beta|·|C_old|·V (found by review: an
     * OpenBLAS sgemm with k = 16384 onto C_old = 1 exceeded 3·u) */
    const double nk = (double)k + 3.0;
    const double gpk = nk * g->u < 0.5 ? nk * g->u / (1.0 - nk * g->u) : INFINITY;
    t->coef_p = (gpk + 2.0 * gamma_sq(f * (double)out + 2.0)) / shrink_r * pad;
    t->coef_r = 2.0 * gamma_sq(f * (double)out + 2.0) / shrink_r * pad;
    /* R, S, P rounded once each, alpha·S and beta·P, their sum, and the residual R - s */
    t->coef_x = 6.0 * U_FP64 * pad;
    if (comp == ABFT_TIGHT_COMP_PLAIN) {
        /* plain fp64 checksums: the encodings of op(B) (inner terms) and op(A) (k terms) and
         * of the old C, the pass over C (out terms), the compare's three operations: the
         * worst-case terms of abft_bound_gemm without the GEMM's own */
        const double gi = gamma_wc((double)inner), gk = gamma_wc((double)k);
        const double go = gamma_wc((double)out), g3 = gamma_wc(3.0);
        t->coef_s += (gk * (1.0 + gi) + gi + g3) / shrink_s * pad;
        t->coef_p += (gi + g3) / shrink_r * pad;
        t->coef_r += go * (1.0 + go) / shrink_r * pad;
    }
}

/* One running sum of a class of terms: its prefix P, the range [lo, hi] of P (0 included)
 * and its |x| sum l1. Returns the largest node the next term x can join in it (any run of
 * the class's consecutive terms ending there, plus the GEMM's own error on it, slack·l1),
 * then adds x. (Comparisons, not fmax: inlined.) */
typedef struct small_sum { double P, lo, hi, l1; } small_sum_t;
static inline double small_node(small_sum_t *c, double x, double ax, double slack) {
    const double dl = c->P - c->lo, dh = c->hi - c->P;
    const double d = (dl > dh ? dl : dh) + slack * c->l1;
    c->P += x, c->l1 += ax;
    c->lo = c->P < c->lo ? c->P : c->lo, c->hi = c->P > c->hi ? c->P : c->hi;
    return d;
}

double abft_bound_tight_small(const abft_arith_t *g, const double *a, const double *b, int64_t k,
                              const abft_tight_order_t *ord, int nord, int64_t ksplit) {
    const double kd = (double)k;
    /* the node as the GEMM holds it is off the exact one by at most gamma_k(u)·(its |x|
     * sum); P, lo and hi here by at most gamma_k(2^-53) of the same sum each */
    const double ku = kd * g->u;
    int nlist = 0, smax = 1;
    if (!(ku < 0.5) || !abft_tight_orders(ord, nord, &nlist, &smax)) {
        /* every term may be one (or the list of orders is not valid: the same answer) */
        double s = 0.0;
        for (int64_t l = 0; l < k; ++l) s += fabs(a[l] * b[l]);
        return s * (1.0 + g->u) * (1.0 + (kd + 2.0) * 0x1p-52);
    }
    const double slack = ku / (1.0 - ku) + 3.0 * gamma_wc(kd + 1.0);
    const double c = 2.0 * g->u * (1.0 + 0x1p-48);
    /* The orders whose nodes are bounded, the largest taken: the natural one (any
     * contiguous blocking), two interleaved lanes (even and odd l) and four slices taking
     * tiles of 8 terms in turn (tile t to slice t mod 4: cuBLAS's fp32 split-k measured on
     * an H100), and the backend's lane orders (abft_bound_tight_lanes); docs/bound.md,
     * "Where the model fails". Each lane order's lanes start afresh at the library's split
     * (its second half is a GEMM of its own). */
    enum { NO = 2 + ABFT_TIGHT_MAXORD };
    abft_tight_order_t all[NO] = {{2, 1}, {4, 8}};
    int no = 2;
    for (int o = 0; o < nlist; ++o) all[no++] = ord[o];
    const int64_t ks = ksplit > 0 && ksplit < k ? ksplit : 0;
    small_sum_t nat = {0, 0, 0, 0}, lane[NO][ABFT_TIGHT_MAXLANES];
    memset(lane, 0, sizeof lane);
    double acc = 0.0;
    for (int64_t l = 0; l < k; ++l) {
        if (l == ks && ks > 0) memset(lane, 0, sizeof lane);
        const int64_t base = ks > 0 && l >= ks ? ks : 0;
        const double x = a[l] * b[l], ax = fabs(x);
        double d = small_node(&nat, x, ax, slack);
        for (int o = 0; o < no; ++o) {
            const double e = small_node(&lane[o][abft_tight_lane(l, base, all[o].S, all[o].b)], x, ax, slack);
            d = e > d ? e : d;
        }
        if (ax < c * d || ax < g->eta) acc += ax;
    }
    /* a product rounded before it is added errs by at most its rounded value; fp64
     * products and the sum here, relatively (k + 2)·2^-52 */
    return acc * (1.0 + g->u) * (1.0 + (kd + 2.0) * 0x1p-52);
}

double abft_bound_tight_entry(const abft_gemm_tight_t *tb, double abs_floor, double tt,
                              double sa, double pa, double ra, double x) {
    return tt + tb->coef_s * sa + tb->coef_p * pa + tb->coef_r * ra + tb->coef_x * x + abs_floor;
}

double abft_bound_tight_raise(double t, double wc, double alpha, double sm, double sa,
                              int64_t len, int64_t k) {
    /* sm's own summation, relatively (len + 2)·2^-52; sa rounded within
     * (2·(k + len) + 4)·2^-53 of the exact |.| sum */
    const double a = sm * (1.0 + (double)(len + 2) * 0x1p-52);
    const double cap = sa / (1.0 - 0x1p-53 * (double)(2 * (k + len) + 4));
    if (t != t) return t; /* a NaN verifies nothing */
    /* never above the worst case (valid whatever the model), also where t itself is */
    const double up = t + fabs(alpha) * (a < cap ? a : cap);
    return up < wc ? up : wc;
}

double abft_bound_tight_merge(double tf, double t) { return !(t >= 0.0) || t > tf ? t : tf; }

int abft_bound_tight_fell_back(double t) { return !(t >= 0.0); }

double abft_bound_reencode(int comp, double s, double ay, double sa, int64_t len, int64_t inner) {
    const double u = 0x1p-53, eta = 0x1p-1074;
    double e;
    if (comp) {
        const double g = gamma_wc(2.0 * (double)len), gi = gamma_wc(2.0 * (double)inner);
        e = u * fabs(s) + 2.0 * g * g * ay + (inner > 0 ? u * ay + 2.0 * gi * gi * sa : 0.0);
    } else {
        e = gamma_wc((double)len + 1.0) * ay + (inner > 0 ? gamma_wc((double)inner + 1.0) * sa : 0.0);
    }
    return 2.0 * (e + ((double)len + 1.0) * eta);
}

void abft_bound_report_lu(abft_handle_t h, abft_report_t *rep) {
    rep->worst_case_rows = h->bound_mode == ABFT_BOUND_TIGHT ? rep->checked : 0;
}

int abft_bound_tight_applies(const abft_arith_t *g) { return g->u_in == 0.0; }

int abft_bound_tight_lanes(abft_backend_t backend, abft_tight_order_t ord[ABFT_TIGHT_MAXORD]) {
    if (backend == ABFT_BACKEND_CUDA) { /* cuBLAS's split-k: 4 slices taking tiles of 8 */
        ord[0] = (abft_tight_order_t){4, 8};
        return 1;
    }
    /* a host BLAS's vector kernels: 8 lanes (fp64) or 16 (fp32) of 64 bytes */
    ord[0] = (abft_tight_order_t){8, 1};
    ord[1] = (abft_tight_order_t){16, 1};
    return 2;
}

int abft_bound_tight_comp(abft_backend_t backend, abft_prec_t prec) {
    if (backend != ABFT_BACKEND_CUDA) return ABFT_TIGHT_COMP_SEQ;
    return prec == ABFT_PREC_D ? ABFT_TIGHT_COMP_TREE : ABFT_TIGHT_COMP_PLAIN;
}

/* ---- LU and getrs ---- */

static const double U_CHK = 0x1p-53;        /* the fp64 checksum arithmetic */
static const double ETA_CHK = 0x1p-1074;    /* its subnormal loss */
static const double PAD = 1.0 + 0x1p-40;    /* far above the rounding of these formulas */

/* The relative error of a reciprocal 1/d whose result is subnormal (|d| above rcp_limit):
 * it loses up to eta absolutely while |1/d| > 1/Omega (Omega the overflow threshold), so
 * relatively at most eta·Omega = 8 times the native unit roundoff (docs/lu.md, "Gradual
 * underflow"). rcp_limit: half the reciprocal of the smallest normal number. */
static double rcp_loss(const abft_arith_t *f, abft_prec_t prec) {
    return ldexp(f->eta, prec == ABFT_PREC_D ? 1024 : 128);
}
static double rcp_limit(abft_prec_t prec) { return prec == ABFT_PREC_D ? 0x1p1021 : 0x1p125; }

/* One elimination step of length p in arithmetic f: a dot product (p products and sums,
 * inputs shortened by u_in in tensor-core modes) and, with div, one quotient or a product
 * with a reciprocal (two roundings: p + 1 in all, as LAPACK scales a column of L by the
 * reciprocal of its pivot). */
static double elim(abft_handle_t h, const abft_arith_t *f, double p, int div) {
    return abft_bound_dot(h, f, p + (div ? 1.0 : 0.0));
}

static double wsum_tri(double n) { return n * (n + 1.0) / 2.0; }

void abft_bound_lu(abft_handle_t h, const abft_arith_t *f, abft_prec_t prec, int64_t m,
                   int64_t n, abft_lu_bound_t *b) {
    const double nd = (double)n, k = (double)(m < n ? m : n);
    double gf = elim(h, f, k, 1);
    double gkc = abft_gamma(h, k, U_CHK), gnc = abft_gamma(h, nd, U_CHK);
    /* second-order terms (|L||Ŷ| against the computed Za, Ya against |U|V, Xa against |A|V)
     * are each within a factor 1 + gamma of the first-order ones */
    double slack = 1.0 + 4.0 * abft_gamma(h, nd + k, U_CHK);
    b->coef_r = (gf + gnc + gkc) * slack;
    b->coef_s = gnc * slack;
    /* not amplified: each product of the factorization (k + 1 per entry) and each fp64
     * operation of the checksums (X, Y: n per entry; Z: k, and Y's losses through |L| <= 1
     * plus rounding) loses at most its eta; the weights sum to at most n(n + 1)/2 */
    b->abs_floor = ((k + 1.0) * f->eta + (3.0 * nd + 2.0 * k + 2.0) * ETA_CHK) *
                   wsum_tri(nd) * PAD;
    /* amplified: a multiplier L(i, k) = A(i, k)/U(k, k) (or times its reciprocal) that
     * rounds into the subnormals loses up to eta, which the identity of entry (i, k)
     * multiplies by |U(k, k)| */
    b->eta_amp = f->eta * slack * PAD;
    /* a subnormal reciprocal of a pivot: the multiplier off by rcp_loss relatively, on the
     * |L||U| term */
    b->rcp_coef = rcp_loss(f, prec) * (1.0 + gf) * slack * PAD;
    b->rcp_limit = rcp_limit(prec);
    if (isnan(b->coef_r) || isnan(b->coef_s)) b->coef_r = b->coef_s = INFINITY;
}

void abft_bound_lu_trailing(abft_handle_t h, const abft_arith_t *f, abft_prec_t prec,
                            int64_t m, int64_t n, abft_lu_trailing_bound_t *b) {
    const double md = (double)m, nd = (double)n, mx = md > nd ? md : nd;
    double g = elim(h, f, mx, 1);
    double slack = 1.0 + 4.0 * abft_gamma(h, md + nd, U_CHK);
    b->coef_b = g * slack;
    b->coef_t = 2.0 * g * slack;
    /* products of the factorization (at most max(m, n) + 1 per entry) and of the fp64
     * checksum updates (W2 -= L21·W1, the trailing products: m + n + 2 per entry, twice) */
    b->abs_floor = ((mx + 1.0) * f->eta + 2.0 * (md + nd + 2.0) * ETA_CHK) * wsum_tri(nd) * PAD;
    b->eta_amp = f->eta * slack * PAD;
    /* the panels' multipliers and a subnormal reciprocal: on B2, which holds |L21||U1|V */
    b->rcp_coef = rcp_loss(f, prec) * (1.0 + g) * slack * PAD;
    b->rcp_limit = rcp_limit(prec);
    if (isnan(b->coef_b)) b->coef_b = b->coef_t = INFINITY;
}

void abft_bound_trs(abft_handle_t h, const abft_arith_t *f, abft_prec_t prec, int64_t n,
                    int unit, abft_trs_bound_t *b) {
    const double nd = (double)n;
    /* row i of the substitution: i - 1 products and sums, then (non-unit) a quotient by
     * T(i, i) or a product with its reciprocal */
    double g = elim(h, f, nd, !unit);
    double gnc = abft_gamma(h, nd, U_CHK);
    double slack = 1.0 + 4.0 * abft_gamma(h, 2.0 * nd, U_CHK);
    b->coef_y = (g + 2.0 * gnc) * slack;
    b->coef_b = gnc * slack;
    /* the solve's products (n per row) and the fp64 checksum products (b^T·V, ŷ^T·K, K) */
    b->abs_floor = (nd * f->eta + (2.0 * nd + 2.0) * ETA_CHK) * wsum_tri(nd) * PAD;
    /* a subnormal quotient y_i loses up to eta, which row i of op(T)·y multiplies by
     * |T(i, i)| */
    b->eta_amp = unit ? 0.0 : f->eta * slack * PAD;
    /* y_i = s_i·fl(1/T(i, i)) with a subnormal reciprocal: off by rcp_loss relatively, and
     * |s_i| <= (1 + g)(|b_i| + sum_j |T(i, j)||y_j|) */
    b->rcp_coef = unit ? 0.0 : rcp_loss(f, prec) * (1.0 + g) * slack * PAD;
    b->rcp_limit = rcp_limit(prec);
    if (isnan(b->coef_y)) b->coef_y = b->coef_b = INFINITY;
}

void abft_bound_lu_dsum(const double *d, int64_t k, int64_t off, double dsum[2]) {
    double s0 = 0.0, s1 = 0.0;
    for (int64_t i = 0; i < k; ++i) {
        double a = fabs(d[i]);
        if (!(a == a)) a = INFINITY; /* NaN: a broken divisor, no bound */
        s0 += a;
        s1 += a * (double)(off + i + 1);
    }
    double up = 1.0 + (double)(k + 2) * 0x1p-52;
    dsum[0] = s0 * up;
    dsum[1] = s1 * up;
}

double abft_bound_lu_dmax(const double *d, int64_t k) {
    double mx = 0.0;
    for (int64_t i = 0; i < k; ++i) {
        double a = fabs(d[i]);
        if (!(a <= mx)) mx = a == a ? a : INFINITY;
    }
    return mx;
}

void abft_bound_lu_dprefix(const double *d, int64_t k, double *pre) {
    double s0 = 0.0, s1 = 0.0, mx = 0.0;
    pre[0] = pre[1] = pre[2] = 0.0;
    for (int64_t i = 0; i < k; ++i) {
        double a = fabs(d[i]);
        if (!(a == a)) a = INFINITY;
        s0 += a;
        s1 += a * (double)(i + 1);
        if (a > mx) mx = a;
        double up = 1.0 + (double)(i + 3) * 0x1p-52;
        pre[3 * (i + 1)] = s0 * up;
        pre[3 * (i + 1) + 1] = s1 * up;
        pre[3 * (i + 1) + 2] = mx;
    }
}

void abft_bound_lu_checksums(abft_handle_t h, int64_t m, int64_t n, double *x_slack,
                             double *sig_coef) {
    *x_slack = 1.0 + 2.0 * abft_gamma(h, (double)n + 2.0, U_CHK);
    *sig_coef = 2.0 * abft_gamma(h, (double)m, U_CHK);
}
