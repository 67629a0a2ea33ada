/* abft campaign runner: fault-injection trials against fault-free golden runs, classified
 * into the outcomes of DESIGN section 7. The `abft campaign` tool and the tests are thin
 * layers over abft_campaign_run.
 *
 * Each operation is one entry in `ops[]` below: how to allocate, load inputs, run the
 * protected call, fetch the result, restore corrupted inputs, and compute the per-row
 * bound tau used to judge a result against golden. Adding LU is one more entry. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "abft_internal.h"
#include "verify/abft_bound.h"

/* ---- seeds ----------------------------------------------------------------------------- */

static uint64_t mix64(uint64_t z) {
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}
/* Distinct streams per purpose: trial seeds, input sets, control inputs. */
static uint64_t trial_seed(uint64_t seed, int64_t t) {
    return mix64(seed + 0x9e3779b97f4a7c15ull * (uint64_t)(t + 1));
}
static uint64_t set_seed(uint64_t seed, int64_t set) {
    return mix64((seed ^ 0x5e75e75e75e75e75ull) + 0x9e3779b97f4a7c15ull * (uint64_t)(set + 1));
}
static uint64_t control_seed(uint64_t seed, int64_t t) {
    return mix64((seed ^ 0xc0c0c0c0c0c0c0c0ull) + 0x9e3779b97f4a7c15ull * (uint64_t)(t + 1));
}

static double now_seconds(void) {
    struct timespec ts;
    timespec_get(&ts, TIME_UTC);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* ---- campaign state -------------------------------------------------------------------- */

typedef struct camp {
    const abft_campaign_config_t *cfg;
    abft_handle_t h;
    abft_injector_t inj;
    abft_prec_t prec;
    size_t es;
    double u; /* unit roundoff the golden run's bound assumed */
    /* host copies: pristine inputs, golden, the trial's result, the bound per row */
    void *A, *B, *G, *C;
    double *tau, *work;
    int64_t *ipiv; /* LU pivots: golden's, then the trial's */
    /* backend memory */
    void *dA, *dB, *dC;
    int64_t lda, ldb, ldc;
} camp_t;

typedef struct op_desc {
    const char *name;
    uint32_t default_sites; /* sites a campaign draws from by default */
    uint32_t valid_sites;   /* sites the operation calls */
    abft_status_t (*setup)(camp_t *c);
    abft_status_t (*load)(camp_t *c, uint64_t seed);      /* new inputs, host and backend */
    abft_status_t (*run)(camp_t *c, abft_report_t *rep);  /* the protected call */
    abft_status_t (*fetch)(camp_t *c, void *host);        /* result -> host */
    abft_status_t (*restore)(camp_t *c, int which);       /* undo input corruption */
    void (*tolerance)(camp_t *c);                         /* tau from inputs and golden */
    double (*change)(const camp_t *c);                    /* rho of c->C against c->G */
} op_desc_t;

/* Uniform [-1, 1) from a splitmix64 counter: fast, and every value is exact in fp32 after
 * rounding to float, so the fp32 inputs are what the golden run used. */
static void fill_uniform(abft_prec_t prec, void *X, int64_t count, uint64_t seed) {
    uint64_t s = seed;
    for (int64_t t = 0; t < count; ++t) {
        s += 0x9e3779b97f4a7c15ull;
        double v = (double)(mix64(s) >> 11) * 0x1.0p-52 - 1.0;
        if (prec == ABFT_PREC_D)
            ((double *)X)[t] = v;
        else
            ((float *)X)[t] = (float)v;
    }
}

static abft_status_t to_backend(camp_t *c, const void *host, void *dev, int64_t rows,
                                int64_t cols, int64_t ld, size_t es) {
    abft_copy_args_t a = {1, es, rows, cols, (void *)host, ld, dev, ld};
    return c->h->ops->copy(&c->h->kctx, &a);
}
static abft_status_t from_backend(camp_t *c, void *host, const void *dev, int64_t rows,
                                  int64_t cols, int64_t ld, size_t es) {
    abft_copy_args_t a = {0, es, rows, cols, host, ld, (void *)dev, ld};
    return c->h->ops->copy(&c->h->kctx, &a);
}

static abft_status_t balloc(camp_t *c, size_t bytes, void **p) {
    return c->h->ops->alloc(&c->h->kctx, bytes > 0 ? bytes : 1, p);
}

static abft_status_t halloc(size_t bytes, void **p) {
    *p = malloc(bytes > 0 ? bytes : 1);
    return *p != NULL ? ABFT_STATUS_SUCCESS : ABFT_STATUS_ALLOC_FAILED;
}

static double elem(abft_prec_t prec, const void *X, int64_t t) {
    return prec == ABFT_PREC_D ? ((const double *)X)[t] : (double)((const float *)X)[t];
}

/* ---- GEMM: C = A·B, A m x k, B k x n, alpha 1, beta 0 ---------------------------------- */

static abft_status_t gemm_setup(camp_t *c) {
    const abft_campaign_config_t *g = c->cfg;
    c->lda = g->m > 1 ? g->m : 1;
    c->ldb = g->k > 1 ? g->k : 1;
    c->ldc = g->m > 1 ? g->m : 1;
    size_t sa = c->es * (size_t)(c->lda * g->k), sb = c->es * (size_t)(c->ldb * g->n);
    size_t sc = c->es * (size_t)(c->ldc * g->n);
    ABFT_TRY(halloc(sa, &c->A));
    ABFT_TRY(halloc(sb, &c->B));
    ABFT_TRY(halloc(sc, &c->G));
    ABFT_TRY(halloc(sc, &c->C));
    ABFT_TRY(halloc(sizeof(double) * (size_t)(g->m + 1), (void **)&c->tau));
    ABFT_TRY(halloc(sizeof(double) * (size_t)(g->k + 1), (void **)&c->work));
    ABFT_TRY(balloc(c, sa, &c->dA));
    ABFT_TRY(balloc(c, sb, &c->dB));
    ABFT_TRY(balloc(c, sc, &c->dC));
    memset(c->C, 0, sc);
    return to_backend(c, c->C, c->dC, g->m, g->n, c->ldc, c->es);
}

static abft_status_t gemm_load(camp_t *c, uint64_t seed) {
    const abft_campaign_config_t *g = c->cfg;
    fill_uniform(c->prec, c->A, c->lda * g->k, seed);
    fill_uniform(c->prec, c->B, c->ldb * g->n, mix64(seed ^ 0xbbbbbbbbbbbbbbbbull));
    ABFT_TRY(to_backend(c, c->A, c->dA, g->m, g->k, c->lda, c->es));
    return to_backend(c, c->B, c->dB, g->k, g->n, c->ldb, c->es);
}

static abft_status_t gemm_run(camp_t *c, abft_report_t *rep) {
    const abft_campaign_config_t *g = c->cfg;
    if (c->prec == ABFT_PREC_D)
        return abft_dgemm(c->h, ABFT_OP_N, ABFT_OP_N, g->m, g->n, g->k, 1.0,
                          (const double *)c->dA, c->lda, (const double *)c->dB, c->ldb, 0.0,
                          (double *)c->dC, c->ldc, rep);
    return abft_sgemm(c->h, ABFT_OP_N, ABFT_OP_N, g->m, g->n, g->k, 1.0f, (const float *)c->dA,
                      c->lda, (const float *)c->dB, c->ldb, 0.0f, (float *)c->dC, c->ldc, rep);
}

static abft_status_t gemm_fetch(camp_t *c, void *host) {
    return from_backend(c, host, c->dC, c->cfg->m, c->cfg->n, c->ldc, c->es);
}

static abft_status_t gemm_restore(camp_t *c, int which) {
    const abft_campaign_config_t *g = c->cfg;
    if (which == 0) return to_backend(c, c->A, c->dA, g->m, g->k, c->lda, c->es);
    return to_backend(c, c->B, c->dB, g->k, g->n, c->ldb, c->es);
}

/* The row bound of the unweighted (e) checksum, as verify/ derives it for alpha = 1,
 * beta = 0 (docs/bound.md):
 *   tau_i = coef_s·(|A|·(|B|·e))_i + coef_r·(|C|·e)_i,
 *   coef_s = gamma_{k+3}(u) + gamma_k(u64)(1 + gamma_n(u64)) + gamma_n(u64) + gamma_3(u64),
 *   coef_r = gamma_n(u64),
 * with u the unit roundoff of the GEMM's arithmetic (the golden report's), u64 = 2^-53 for
 * the fp64 checksum arithmetic, and the handle's bound mode in gamma. |C| is the golden
 * result's. The small padding factors verify/ adds for the rounding of the bound itself
 * are left out: they make tau here smaller by a relative 1e-13, which can only make the
 * campaign stricter. */
static void gemm_tolerance(camp_t *c) {
    const abft_campaign_config_t *g = c->cfg;
    const double u64 = 0x1p-53;
    double gk = abft_gamma(c->h, (double)g->k, u64), gn = abft_gamma(c->h, (double)g->n, u64);
    double coef_s = abft_gamma(c->h, (double)g->k + 3.0, c->u) + gk * (1.0 + gn) + gn +
                    abft_gamma(c->h, 3.0, u64);
    double coef_r = gn;
    double *bsum = c->work; /* |B|·e, k entries */
    for (int64_t l = 0; l < g->k; ++l) {
        double s = 0;
        for (int64_t j = 0; j < g->n; ++j) s += fabs(elem(c->prec, c->B, l + j * c->ldb));
        bsum[l] = s;
    }
    for (int64_t i = 0; i < g->m; ++i) c->tau[i] = 0;
    for (int64_t l = 0; l < g->k; ++l)
        for (int64_t i = 0; i < g->m; ++i)
            c->tau[i] += fabs(elem(c->prec, c->A, i + l * c->lda)) * bsum[l];
    for (int64_t i = 0; i < g->m; ++i) c->tau[i] *= coef_s;
    for (int64_t j = 0; j < g->n; ++j)
        for (int64_t i = 0; i < g->m; ++i)
            c->tau[i] += coef_r * fabs(elem(c->prec, c->G, i + j * c->ldc));
}

/* rho = max_ij |C_ij - G_ij| / tau_i; a NaN anywhere gives +Inf. */
static double gemm_change(const camp_t *c) {
    const abft_campaign_config_t *g = c->cfg;
    double rho = 0;
    for (int64_t j = 0; j < g->n; ++j)
        for (int64_t i = 0; i < g->m; ++i) {
            int64_t t = i + j * c->ldc;
            double d = fabs(elem(c->prec, c->C, t) - elem(c->prec, c->G, t));
            if (d == 0) continue;
            double r = c->tau[i] > 0 ? d / c->tau[i] : INFINITY;
            if (!(r <= rho)) rho = isnan(r) ? INFINITY : r;
        }
    return rho;
}

/* ---- GETRF: P·A = L·U of an n x n matrix, in place ------------------------------------ */

/* The factorization overwrites A, so every run starts from the pristine copy; the result
 * is the factors (and the pivots, which must match golden's for the factors to compare). */
static abft_status_t getrf_setup(camp_t *c) {
    const abft_campaign_config_t *g = c->cfg;
    int64_t n = g->n;
    c->lda = c->ldc = n;
    size_t sa = c->es * (size_t)(n * n);
    ABFT_TRY(halloc(sa, &c->A));
    ABFT_TRY(halloc(sa, &c->G));
    ABFT_TRY(halloc(sa, &c->C));
    ABFT_TRY(halloc(sizeof(double) * (size_t)(2 * n + 1), (void **)&c->tau));
    ABFT_TRY(halloc(sizeof(double) * (size_t)(2 * n + 1), (void **)&c->work));
    ABFT_TRY(halloc(sizeof(int64_t) * (size_t)(2 * n + 1), (void **)&c->ipiv));
    ABFT_TRY(balloc(c, sa, &c->dA));
    return balloc(c, sizeof(int64_t) * (size_t)n, &c->dB); /* dB holds the pivots */
}

static abft_status_t getrf_load(camp_t *c, uint64_t seed) {
    fill_uniform(c->prec, c->A, c->cfg->n * c->cfg->n, seed);
    return ABFT_STATUS_SUCCESS;
}

static abft_status_t getrf_run(camp_t *c, abft_report_t *rep) {
    const abft_campaign_config_t *g = c->cfg;
    int64_t n = g->n, info = 0;
    ABFT_TRY(to_backend(c, c->A, c->dA, n, n, n, c->es));
    int online = g->op == ABFT_CAMPAIGN_GETRF_ONLINE;
    if (c->prec == ABFT_PREC_D)
        return online ? abft_dgetrf_online(c->h, n, n, (double *)c->dA, n, (int64_t *)c->dB,
                                           NULL, &info, rep)
                      : abft_dgetrf(c->h, n, n, (double *)c->dA, n, (int64_t *)c->dB, &info, rep);
    return online ? abft_sgetrf_online(c->h, n, n, (float *)c->dA, n, (int64_t *)c->dB, NULL,
                                       &info, rep)
                  : abft_sgetrf(c->h, n, n, (float *)c->dA, n, (int64_t *)c->dB, &info, rep);
}

static abft_status_t getrf_fetch(camp_t *c, void *host) {
    int64_t n = c->cfg->n;
    ABFT_TRY(from_backend(c, host, c->dA, n, n, n, c->es));
    /* golden's pivots in ipiv[0..n), the trial's in ipiv[n..2n) */
    int64_t *piv = c->ipiv + (host == c->G ? 0 : n);
    return from_backend(c, piv, c->dB, n, 1, n, sizeof(int64_t));
}

static abft_status_t getrf_restore(camp_t *c, int which) {
    (void)c;
    (void)which;
    return ABFT_STATUS_SUCCESS; /* every run starts from the pristine A */
}

/* An LU is judged by what it guarantees: its backward error. The row bounds of the two
 * checksums of L·(U·v) = P·(A·v), v = e and v = w (w_j = j + 1), as verify/ derives them
 * (docs/lu.md): tau_q,i = coef_s·(P·|A|·v_q)_i + coef_r·(|L|·(|U|·v_q))_i with
 * coef_r = gamma_{n+1}(u) + 2·gamma_n(u64), coef_s = gamma_n(u64), from the golden factors
 * and pivots; tau[0..n) for e, tau[n..2n) for w. */
static void getrf_tolerance(camp_t *c) {
    int64_t n = c->cfg->n;
    const double u64 = 0x1p-53;
    double gn = abft_gamma(c->h, (double)n, u64);
    double coef_r = abft_gamma(c->h, (double)n + 1.0, c->u) + 2.0 * gn, coef_s = gn;
    for (int q = 0; q < 2; ++q) {
        double *ua = c->work, *pa = c->work + n, *tau = c->tau + q * n;
        for (int64_t i = 0; i < n; ++i) ua[i] = 0;
        for (int64_t j = 0; j < n; ++j) {
            double w = q == 0 ? 1.0 : (double)(j + 1);
            for (int64_t i = 0; i <= j; ++i) ua[i] += fabs(elem(c->prec, c->G, i + j * n)) * w;
        }
        for (int64_t i = 0; i < n; ++i) {
            double s = 0;
            for (int64_t j = 0; j < n; ++j)
                s += fabs(elem(c->prec, c->A, i + j * n)) * (q == 0 ? 1.0 : (double)(j + 1));
            pa[i] = s;
        }
        for (int64_t i = 0; i < n; ++i) { /* P·|A|·v: the golden row interchanges */
            int64_t r = c->ipiv[i] - 1;
            if (r > i && r < n) {
                double t = pa[i];
                pa[i] = pa[r];
                pa[r] = t;
            }
        }
        for (int64_t i = 0; i < n; ++i) {
            double lu = ua[i]; /* the unit diagonal of L */
            for (int64_t j = 0; j < i; ++j) lu += fabs(elem(c->prec, c->G, i + j * n)) * ua[j];
            tau[i] = coef_s * pa[i] + coef_r * lu;
        }
    }
}

/* rho = max over rows and both checksums of |L·(U·v) - P·(A·v)| / tau for the trial's
 * factors and pivots against the pristine A, in extended precision: the backward error the
 * factorization is guaranteed to have. (The factors themselves need not be close to
 * golden's: a perturbation within the bound may change a later pivot, and LU factors
 * amplify input changes by the conditioning; what must hold is that they are an LU of a
 * matrix within the bound of A.) */
static double getrf_change(const camp_t *c) {
    int64_t n = c->cfg->n;
    const int64_t *piv = c->ipiv + n;
    long double *y = (long double *)malloc(sizeof(long double) * (size_t)n * 3);
    if (y == NULL) return INFINITY;
    long double *z = y + n, *x = y + 2 * n;
    double rho = 0;
    for (int q = 0; q < 2; ++q) {
        for (int64_t i = 0; i < n; ++i) y[i] = x[i] = 0;
        for (int64_t j = 0; j < n; ++j) {
            long double w = q == 0 ? 1.0L : (long double)(j + 1);
            for (int64_t i = 0; i < n; ++i) {
                if (i <= j) y[i] += (long double)elem(c->prec, c->C, i + j * n) * w;
                x[i] += (long double)elem(c->prec, c->A, i + j * n) * w;
            }
        }
        for (int64_t i = 0; i < n; ++i) { /* P·(A·v): the trial's row interchanges */
            int64_t r = piv[i] - 1;
            if (r < i || r >= n) {
                free(y);
                return INFINITY;
            }
            long double t = x[i];
            x[i] = x[r];
            x[r] = t;
        }
        for (int64_t i = 0; i < n; ++i) {
            long double s = y[i];
            for (int64_t j = 0; j < i; ++j) s += (long double)elem(c->prec, c->C, i + j * n) * y[j];
            z[i] = s;
        }
        for (int64_t i = 0; i < n; ++i) {
            double d = (double)fabsl(z[i] - x[i]), t = c->tau[i + q * n];
            double r = d == 0 ? 0 : (t > 0 ? d / t : INFINITY);
            if (!(r <= rho)) rho = isnan(r) ? INFINITY : r;
        }
    }
    free(y);
    return rho;
}

#define SITE(s) (1u << (s))
static const op_desc_t ops[ABFT_CAMPAIGN_OP_COUNT] = {
    [ABFT_CAMPAIGN_GEMM] = {"gemm",
                            SITE(ABFT_SITE_AFTER_ENCODE) | SITE(ABFT_SITE_MID_GEMM) |
                                SITE(ABFT_SITE_AFTER_GEMM) | SITE(ABFT_SITE_CHECKSUM),
                            SITE(ABFT_SITE_AFTER_ENCODE) | SITE(ABFT_SITE_MID_GEMM) |
                                SITE(ABFT_SITE_AFTER_GEMM) | SITE(ABFT_SITE_CHECKSUM),
                            gemm_setup, gemm_load, gemm_run, gemm_fetch, gemm_restore,
                            gemm_tolerance, gemm_change},
    [ABFT_CAMPAIGN_GETRF] = {"getrf", SITE(ABFT_SITE_CHECKSUM) | SITE(ABFT_SITE_AFTER_LU),
                             SITE(ABFT_SITE_CHECKSUM) | SITE(ABFT_SITE_AFTER_LU), getrf_setup,
                             getrf_load, getrf_run, getrf_fetch, getrf_restore, getrf_tolerance,
                             getrf_change},
    [ABFT_CAMPAIGN_GETRF_ONLINE] = {"getrf-online",
                                    SITE(ABFT_SITE_CHECKSUM) | SITE(ABFT_SITE_LU_PANEL) |
                                        SITE(ABFT_SITE_AFTER_LU),
                                    SITE(ABFT_SITE_CHECKSUM) | SITE(ABFT_SITE_LU_PANEL) |
                                        SITE(ABFT_SITE_AFTER_LU),
                                    getrf_setup, getrf_load, getrf_run, getrf_fetch,
                                    getrf_restore, getrf_tolerance, getrf_change},
};

/* ---- public helpers -------------------------------------------------------------------- */

const char *abft_outcome_name(int o) {
    static const char *names[ABFT_OUTCOME_COUNT] = {
        "masked", "corrected", "uncorrectable", "gray", "sdc", "miscorrected",
        "false_positive", "clean", "not_fired", "error"};
    return o >= 0 && o < ABFT_OUTCOME_COUNT ? names[o] : "unknown";
}

void abft_wilson_interval(int64_t k, int64_t n, double z, double *lo, double *hi) {
    if (n <= 0) {
        *lo = 0.0;
        *hi = 1.0;
        return;
    }
    double p = (double)k / (double)n, nn = (double)n, z2 = z * z;
    double den = 1.0 + z2 / nn;
    double mid = (p + z2 / (2.0 * nn)) / den;
    double half = z * sqrt(p * (1.0 - p) / nn + z2 / (4.0 * nn * nn)) / den;
    *lo = fmax(0.0, mid - half);
    *hi = fmin(1.0, mid + half);
    if (k == 0) *lo = 0.0;
    if (k == n) *hi = 1.0;
}

abft_campaign_config_t abft_campaign_config_default(void) {
    abft_campaign_config_t c;
    memset(&c, 0, sizeof c);
    c.op = ABFT_CAMPAIGN_GEMM;
    c.precision = 'd';
    c.m = c.n = c.k = 128;
    c.trials = 200;
    c.controls = 200;
    c.refresh = 50;
    c.sites = 0;
    c.backend = ABFT_BACKEND_AUTO;
    c.spec = abft_fault_spec_default();
    c.checksum_kind = ABFT_CHECKSUM_ROW;
    c.bound_mode = ABFT_BOUND_WORST_CASE;
    c.bound_factor = 1.0;
    c.guarantee = 2.0;
    c.seed = 1;
    c.only_trial = -1;
    return c;
}

/* ---- the runner ------------------------------------------------------------------------ */

static void camp_free(camp_t *c) {
    if (c->h != NULL) {
        if (c->dA) c->h->ops->free(&c->h->kctx, c->dA);
        if (c->dB) c->h->ops->free(&c->h->kctx, c->dB);
        if (c->dC) c->h->ops->free(&c->h->kctx, c->dC);
    }
    abft_injector_destroy(c->inj);
    abft_destroy(c->h);
    free(c->A);
    free(c->B);
    free(c->G);
    free(c->C);
    free(c->tau);
    free(c->work);
    free(c->ipiv);
}

static int popcount32(uint32_t x) {
    int n = 0;
    for (; x; x &= x - 1) ++n;
    return n;
}

/* The site (and operand) of a faulty trial, drawn from its seed. */
static void draw_site(uint32_t sites, uint64_t seed, int *site, int *which) {
    uint64_t r = mix64(seed ^ 0x517e517e517e517eull);
    int pick = (int)((r & 0xffffffffu) % (uint64_t)popcount32(sites));
    for (int s = 0; s < ABFT_SITE_COUNT; ++s)
        if (sites & (1u << s)) {
            if (pick-- == 0) {
                *site = s;
                break;
            }
        }
    *which = *site == ABFT_SITE_AFTER_ENCODE ? (int)((r >> 32) & 1u) : -1;
}

static abft_status_t check_config(const abft_campaign_config_t *g) {
    ABFT_RETURN_IF(g == NULL, ABFT_STATUS_INVALID_VALUE);
    ABFT_RETURN_IF(g->op < 0 || g->op >= ABFT_CAMPAIGN_OP_COUNT, ABFT_STATUS_INVALID_VALUE);
    ABFT_RETURN_IF(ops[g->op].run == NULL, ABFT_STATUS_NOT_SUPPORTED);
    ABFT_RETURN_IF(g->precision != 'd' && g->precision != 's', ABFT_STATUS_INVALID_VALUE);
    ABFT_RETURN_IF(g->m < 1 || g->n < 1 || g->k < 1, ABFT_STATUS_INVALID_VALUE);
    ABFT_RETURN_IF(g->trials < 0 || g->controls < 0 || g->refresh < 1, ABFT_STATUS_INVALID_VALUE);
    ABFT_RETURN_IF((g->sites & ~ops[g->op].valid_sites) != 0u, ABFT_STATUS_INVALID_VALUE);
    ABFT_RETURN_IF(!(g->guarantee >= 1.0), ABFT_STATUS_INVALID_VALUE);
    ABFT_RETURN_IF(g->only_trial >= g->trials + g->controls, ABFT_STATUS_INVALID_VALUE);
    return ABFT_STATUS_SUCCESS;
}

static void tally(abft_campaign_summary_t *s, const abft_trial_t *t) {
    s->total += 1;
    s->count[t->outcome] += 1;
    if (t->control) {
        if (t->outcome == ABFT_OUTCOME_CLEAN && t->report.max_ratio > s->max_control_ratio)
            s->max_control_ratio = t->report.max_ratio;
        return;
    }
    if (t->site >= 0 && t->site < ABFT_SITE_COUNT) s->by_site[t->site][t->outcome] += 1;
    if (t->nflips > 0 && t->flips[0].bit >= 0 && t->flips[0].bit < 64)
        s->by_bit[t->flips[0].bit][t->outcome] += 1;
    if (t->nflips == 0 || t->outcome == ABFT_OUTCOME_ERROR) return;
    int detected = t->report.detected > 0 || t->report.nonfinite_input;
    if (detected && t->outcome != ABFT_OUTCOME_UNCORRECTABLE && t->rho > s->max_corrected_rho)
        s->max_corrected_rho = t->rho;
    if (!detected && !(t->rho <= s->max_undetected_rho)) s->max_undetected_rho = t->rho;
}

static int classify(const abft_campaign_config_t *g, const abft_trial_t *t) {
    abft_status_t st = (abft_status_t)t->status;
    if (t->control) {
        if (st == ABFT_STATUS_NON_FINITE_INPUT || t->report.detected > 0)
            return ABFT_OUTCOME_FALSE_POSITIVE;
        return st == ABFT_STATUS_SUCCESS ? ABFT_OUTCOME_CLEAN : ABFT_OUTCOME_ERROR;
    }
    if (st != ABFT_STATUS_SUCCESS && st != ABFT_STATUS_NON_FINITE_INPUT) return ABFT_OUTCOME_ERROR;
    if (t->nflips == 0) return ABFT_OUTCOME_NOT_FIRED;
    const abft_report_t *r = &t->report;
    /* Reported to the caller: an uncorrectable entry, or a non-finite input refused. */
    if (st == ABFT_STATUS_NON_FINITE_INPUT || r->nonfinite_input || r->uncorrectable > 0)
        return ABFT_OUTCOME_UNCORRECTABLE;
    int detected = r->detected > 0;
    if (t->rho <= 1.0) return detected ? ABFT_OUTCOME_CORRECTED : ABFT_OUTCOME_MASKED;
    if (t->rho <= g->guarantee) return ABFT_OUTCOME_GRAY;
    return detected ? ABFT_OUTCOME_MISCORRECTED : ABFT_OUTCOME_SDC;
}

/* Load input set `set` and run its golden: the injector attached but firing nowhere, so
 * the golden takes the same path (a k-split GEMM) as the faulty trials. */
static abft_status_t golden(camp_t *c, const op_desc_t *op, int64_t set, int64_t *golden_fp) {
    ABFT_TRY(op->load(c, set_seed(c->cfg->seed, set)));
    ABFT_TRY(abft_injector_set_targets(c->inj, 0u, -1, 0));
    ABFT_TRY(abft_injector_arm(c->inj, 0));
    ABFT_TRY(abft_injector_attach(c->inj));
    abft_report_t rep;
    ABFT_TRY(op->run(c, &rep));
    if (rep.detected > 0) *golden_fp += 1;
    c->u = rep.unit_roundoff > 0 ? rep.unit_roundoff
                                 : (c->prec == ABFT_PREC_D ? 0x1p-53 : 0x1p-24);
    ABFT_TRY(op->fetch(c, c->G));
    op->tolerance(c);
    return ABFT_STATUS_SUCCESS;
}

static abft_status_t run_faulty(camp_t *c, const op_desc_t *op, int64_t t, uint32_t sites,
                                abft_trial_t *tr) {
    const abft_campaign_config_t *g = c->cfg;
    tr->seed = trial_seed(g->seed, t);
    tr->set = t / g->refresh;
    int site = 0, which = -1;
    draw_site(sites, tr->seed, &site, &which);
    tr->site = site;
    tr->which = which;
    ABFT_TRY(abft_injector_set_targets(c->inj, 1u << site, which, 1));
    ABFT_TRY(abft_injector_arm(c->inj, tr->seed));
    double t0 = now_seconds();
    tr->status = (int32_t)op->run(c, &tr->report);
    tr->seconds = now_seconds() - t0;
    ABFT_TRY(abft_injector_flips(c->inj, &tr->flips, &tr->nflips));
    ABFT_TRY(op->fetch(c, c->C));
    tr->rho = op->change(c);
    /* Inputs corrupted in place must be put back before the next trial. */
    for (int64_t f = 0; f < tr->nflips; ++f)
        if (tr->flips[f].site == ABFT_SITE_AFTER_ENCODE) {
            ABFT_TRY(op->restore(c, tr->flips[f].which));
        }
    tr->outcome = classify(g, tr);
    return ABFT_STATUS_SUCCESS;
}

static abft_status_t run_control(camp_t *c, const op_desc_t *op, int64_t t, abft_trial_t *tr) {
    const abft_campaign_config_t *g = c->cfg;
    tr->control = 1;
    tr->seed = control_seed(g->seed, t);
    tr->set = -1;
    tr->site = -1;
    tr->which = -1;
    /* The production path: fresh inputs, no hook (so no k split either). */
    ABFT_TRY(op->load(c, tr->seed));
    ABFT_TRY(abft_injector_detach(c->inj));
    double t0 = now_seconds();
    tr->status = (int32_t)op->run(c, &tr->report);
    tr->seconds = now_seconds() - t0;
    tr->outcome = classify(g, tr);
    return ABFT_STATUS_SUCCESS;
}

static abft_status_t campaign(camp_t *c, abft_campaign_summary_t *s) {
    const abft_campaign_config_t *g = c->cfg;
    const op_desc_t *op = &ops[g->op];
    uint32_t sites = g->sites != 0u ? g->sites : op->default_sites;
    ABFT_TRY(abft_create(&c->h, (abft_backend_t)g->backend));
    ABFT_TRY(abft_get_backend(c->h, (abft_backend_t *)&s->backend));
    ABFT_TRY(abft_set_checksum_kind(c->h, (abft_checksum_kind_t)g->checksum_kind));
    ABFT_TRY(abft_set_bound_mode(c->h, (abft_bound_mode_t)g->bound_mode, g->bound_factor));
    ABFT_TRY(abft_set_lu_recovery(c->h, g->lu_recovery ? 1 : 0));
    ABFT_TRY(abft_injector_create(c->h, &c->inj));
    ABFT_TRY(abft_injector_set_spec(c->inj, &g->spec));
    ABFT_TRY(op->setup(c));

    int64_t first = 0, last = g->trials + g->controls;
    if (g->only_trial >= 0) {
        first = g->only_trial;
        last = first + 1;
    }
    int64_t total = last - first, cur_set = -1, golden_fp = 0;
    for (int64_t t = first; t < last; ++t) {
        abft_trial_t tr;
        memset(&tr, 0, sizeof tr);
        tr.index = t;
        if (t < g->trials) {
            if (t / g->refresh != cur_set) {
                cur_set = t / g->refresh;
                ABFT_TRY(golden(c, op, cur_set, &golden_fp));
                if (c->u > s->unit_roundoff) s->unit_roundoff = c->u;
            }
            ABFT_TRY(run_faulty(c, op, t, sites, &tr));
        } else {
            ABFT_TRY(run_control(c, op, t, &tr));
        }
        tally(s, &tr);
        if (g->on_trial) g->on_trial(g->user, &tr);
        if (g->progress) g->progress(g->user, t - first + 1, total);
    }
    s->golden_runs = cur_set + 1;
    s->golden_detections = golden_fp;
    return ABFT_STATUS_SUCCESS;
}

abft_status_t abft_campaign_run(const abft_campaign_config_t *cfg, abft_campaign_summary_t *s) {
    ABFT_RETURN_IF(s == NULL, ABFT_STATUS_INVALID_VALUE);
    ABFT_TRY(check_config(cfg));
    memset(s, 0, sizeof *s);
    camp_t c;
    memset(&c, 0, sizeof c);
    c.cfg = cfg;
    c.prec = cfg->precision == 'd' ? ABFT_PREC_D : ABFT_PREC_S;
    c.es = cfg->precision == 'd' ? sizeof(double) : sizeof(float);
    double t0 = now_seconds();
    abft_status_t st = campaign(&c, s);
    camp_free(&c);
    s->seconds = now_seconds() - t0;
    return st;
}
