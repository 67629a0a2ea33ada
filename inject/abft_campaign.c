/* abft campaign runner: fault-injection trials against fault-free golden runs, classified
 * into the outcomes of docs/campaign.md (masked, undetected, corrected, uncorrectable, gray,
 * SDC, miscorrected, false positive). The `abft campaign` tool and the tests are thin layers
 * over abft_campaign_run.
 *
 * Each operation is one entry in `ops[]` below: how to allocate, load inputs, run the
 * protected call, fetch the result, restore corrupted inputs, and compute the per-row
 * bound tau used to judge a result against golden (from the library's bound module,
 * verify/abft_bound.h: the campaign derives no bound of its own).
 *
 * Two spaces (abft_campaign_space_t). FIXED: every trial runs the config's problem, the
 * injector is the handle's hook and fires at the first call of the drawn site. FULL: each
 * trial draws its configuration (draw_config) and runs its own golden through the
 * campaign's hook (camp_hook), which counts every hook call; the trial then fires at a call
 * drawn among its site's calls, with a fault model drawn for that call's array. */
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "abft_internal.h"
#include "verify/abft_bound.h"
#include "verify/abft_lu_internal.h"

#if ABFT_HAVE_CUDA
#include <cublas_v2.h>
#endif

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

/* A splitmix64 stream for the draws of one trial. */
typedef struct rng {
    uint64_t s;
} rng_t;
static uint64_t rnext(rng_t *r) { return mix64(r->s += 0x9e3779b97f4a7c15ull); }
/* Uniform in [0, n), n >= 1. */
static int64_t rbelow(rng_t *r, int64_t n) { return (int64_t)(rnext(r) % (uint64_t)n); }
/* Uniform in [0, 1). */
static double runit(rng_t *r) { return (double)(rnext(r) >> 11) * 0x1.0p-53; }

static double now_seconds(void) {
    struct timespec ts;
    timespec_get(&ts, TIME_UTC);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* ---- campaign state -------------------------------------------------------------------- */

/* One hook call of a golden run (full space). */
typedef struct call_rec {
    int32_t site, which;
    int64_t rows, cols;
    char prec; /* 'd' or 's': the array's precision (checksums are always 'd') */
} call_rec_t;

/* The fault a full-space trial fires, drawn before the trial from its seed and the golden
 * run's calls. */
typedef struct fault_plan {
    int site, which;       /* the call's site and which */
    int64_t call;          /* its index among the site's calls */
    int model;             /* abft_fault_model_t */
    int width;
    int64_t row, col;      /* ROW2: row; COL2: col; BURST: first row and col */
    int64_t len;           /* SAME_BIT, BURST: elements */
    int32_t bit;           /* SAME_BIT: the lowest flipped bit */
} fault_plan_t;

enum { HOOK_OFF = 0, HOOK_RECORD = 1, HOOK_FIRE = 2 };

typedef struct camp {
    const abft_campaign_config_t *cfg;
    abft_handle_t h;
    abft_injector_t inj;
    abft_prec_t prec;
    size_t es;
    abft_trial_config_t tc; /* the configuration being run */
    abft_arith_t arith;     /* the arithmetic of the handle's BLAS for that configuration */
    double u;               /* unit roundoff the golden run's bound assumed */
    /* host copies: pristine inputs, golden, the trial's result, the old C, the bound */
    void *A, *B, *G, *C, *C0;
    double *tau, *work;
    int64_t *ipiv; /* LU pivots: golden's, then the trial's */
    int64_t maxr, maxc, maxk; /* capacities: gemm m, n, k; getrf m, n */
    /* backend memory */
    void *dA, *dB, *dC;
    /* the campaign's hook (full space) */
    int hook_mode;
    int64_t ncalls[ABFT_SITE_COUNT]; /* calls seen per site in the current run */
    call_rec_t *calls;               /* the golden run's calls, in order */
    int64_t ncall, callcap;
    fault_plan_t plan;
    abft_status_t hook_error; /* a recording failure (memory) */
    uint64_t rnd_seed;        /* the random checksum's seed for c->tc */
} camp_t;

/* The change of a detected trial, apart: in the rows and columns its report resolved
 * (touched), elsewhere (untouched), and elsewhere as the checksums see it. */
typedef struct split {
    double touched, untouched, check_untouched;
} split_t;

typedef struct op_desc {
    const char *name;
    uint32_t default_sites; /* sites a campaign draws from by default */
    uint32_t valid_sites;   /* sites the operation calls */
    abft_status_t (*setup)(camp_t *c);
    abft_status_t (*load)(camp_t *c, uint64_t seed);      /* new inputs, host and backend */
    abft_status_t (*run)(camp_t *c, abft_report_t *rep);  /* the protected call */
    abft_status_t (*fetch)(camp_t *c, void *host);        /* result -> host */
    abft_status_t (*restore)(camp_t *c, int which);       /* undo input corruption */
    abft_status_t (*tolerance)(camp_t *c);                /* tau from inputs and golden */
    double (*change)(const camp_t *c);                    /* rho of c->C against c->G */
    double (*check)(const camp_t *c);                     /* rho_check of c->C against c->G */
    /* an undetected change against the fault-free rounding noise: its relative size, and
     * *beyond = 1 when it exceeds that noise anywhere (docs/campaign.md, "Masked or
     * undetected") */
    double (*noise)(const camp_t *c, int *beyond);
    /* a detected trial's change split between resolved and never-flagged vectors (may be
     * NULL: the trial is judged as a whole) */
    int (*split)(const camp_t *c, const abft_report_t *r, split_t *sp);
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

static void set_elem(abft_prec_t prec, void *X, int64_t t, double v) {
    if (prec == ABFT_PREC_D)
        ((double *)X)[t] = v;
    else
        ((float *)X)[t] = (float)v;
}

/* A rows x cols array with leading dimension ld: uniform in [-scale, scale) (scale NaN: all
 * NaN), and NaN in the rows ld - rows of padding, which no call may read. */
static void fill_matrix(abft_prec_t prec, void *X, int64_t rows, int64_t cols, int64_t ld,
                        double scale, uint64_t seed) {
    fill_uniform(prec, X, ld * cols, seed);
    for (int64_t j = 0; j < cols; ++j)
        for (int64_t i = 0; i < ld; ++i) {
            int64_t t = i + j * ld;
            if (i >= rows || isnan(scale))
                set_elem(prec, X, t, NAN);
            else if (scale != 1.0)
                set_elem(prec, X, t,
                         (prec == ABFT_PREC_D ? ((double *)X)[t] : (double)((float *)X)[t]) *
                             scale);
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

static int64_t max64(int64_t a, int64_t b) { return a > b ? a : b; }
static int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }

/* Padding rows of a drawn leading dimension: at most this many. */
#define LD_PAD_MAX 7

/* ---- GEMM: C = alpha·op(A)·op(B) + beta·C ----------------------------------------------- */

/* Stored shapes: A is (transa ? k x m : m x k), B is (transb ? n x k : k x n). */
static int64_t a_rows(const abft_trial_config_t *t) { return t->transa ? t->k : t->m; }
static int64_t a_cols(const abft_trial_config_t *t) { return t->transa ? t->m : t->k; }
static int64_t b_rows(const abft_trial_config_t *t) { return t->transb ? t->n : t->k; }
static int64_t b_cols(const abft_trial_config_t *t) { return t->transb ? t->k : t->n; }

/* ---- buffer sizes ---------------------------------------------------------------------- */

/* a·b and a + b for sizes (a, b >= 0); an overflow of int64 sets *ovf and gives 0. */
static int64_t smul(int64_t a, int64_t b, int *ovf) {
    if (a < 0 || b < 0 || (a != 0 && b > INT64_MAX / a)) {
        *ovf = 1;
        return 0;
    }
    return a * b;
}
static int64_t sadd(int64_t a, int64_t b, int *ovf) {
    if (a < 0 || b < 0 || b > INT64_MAX - a) {
        *ovf = 1;
        return 0;
    }
    return a + b;
}

/* The bytes of every buffer of one worker (camp_t), exactly what each space needs: the fixed
 * space stores op(A) m x k, op(B) k x n, C m x n with tight leading dimensions (getrf: n x
 * n); the full space either storage of op(A) and op(B) (both transposes can be drawn) and
 * up to LD_PAD_MAX padding rows. One function for the setup and for abft_campaign_memory. */
typedef struct camp_sizes {
    int64_t A, B, C;     /* host: pristine inputs; C for each of golden, result, old C */
    int64_t tau, work, ipiv;
    int64_t dA, dB, dC;  /* backend copies (getrf: dB holds the pivots) */
    int64_t host, backend; /* the sums */
} camp_sizes_t;

/* Needs op, precision, m, n, k, space valid; INVALID_VALUE when a size overflows int64. */
static abft_status_t camp_sizes(const abft_campaign_config_t *g, camp_sizes_t *z) {
    const int64_t es = g->precision == 'd' ? (int64_t)sizeof(double) : (int64_t)sizeof(float);
    const int64_t pad = g->space == ABFT_SPACE_FULL ? LD_PAD_MAX : 0;
    int o = 0;
    memset(z, 0, sizeof *z);
    if (g->op == ABFT_CAMPAIGN_GEMM) {
        const int64_t M = g->m, N = g->n, K = g->k;
        if (g->space == ABFT_SPACE_FULL) {
            z->A = smul(es, max64(smul(sadd(M, pad, &o), K, &o), smul(sadd(K, pad, &o), M, &o)),
                        &o);
            z->B = smul(es, max64(smul(sadd(K, pad, &o), N, &o), smul(sadd(N, pad, &o), K, &o)),
                        &o);
        } else {
            z->A = smul(es, smul(M, K, &o), &o);
            z->B = smul(es, smul(K, N, &o), &o);
        }
        z->C = smul(es, smul(sadd(M, pad, &o), N, &o), &o);
        /* tau: the e and w bounds of the rows, then of the columns */
        z->tau = smul((int64_t)sizeof(double), sadd(smul(2, sadd(M, N, &o), &o), 1, &o), &o);
        z->work = smul((int64_t)sizeof(double),
                       sadd(smul(6, max64(max64(M, N), K), &o), 1, &o), &o);
        z->dA = z->A, z->dB = z->B, z->dC = z->C;
        z->host = sadd(sadd(z->A, z->B, &o), smul(3, z->C, &o), &o);
    } else { /* an n x n matrix (the full space draws m x n within it) */
        const int64_t N = g->n;
        z->A = smul(es, smul(sadd(N, pad, &o), N, &o), &o);
        z->C = z->A; /* golden and result */
        z->tau = smul((int64_t)sizeof(double), sadd(smul(2, N, &o), 1, &o), &o);
        z->work = z->tau;
        z->ipiv = smul((int64_t)sizeof(int64_t), sadd(smul(2, N, &o), 1, &o), &o);
        z->dA = z->A;
        z->dB = smul((int64_t)sizeof(int64_t), N, &o);
        z->host = sadd(z->A, smul(2, z->C, &o), &o);
    }
    z->host = sadd(sadd(sadd(z->host, z->tau, &o), z->work, &o), z->ipiv, &o);
    z->backend = sadd(sadd(z->dA, z->dB, &o), z->dC, &o);
    if (o || (uint64_t)z->host > (uint64_t)SIZE_MAX || (uint64_t)z->backend > (uint64_t)SIZE_MAX)
        return ABFT_STATUS_INVALID_VALUE;
    return ABFT_STATUS_SUCCESS;
}

static abft_status_t gemm_setup(camp_t *c) {
    const int64_t M = c->maxr, N = c->maxc;
    camp_sizes_t z;
    ABFT_TRY(camp_sizes(c->cfg, &z));
    ABFT_TRY(halloc((size_t)z.A, &c->A));
    ABFT_TRY(halloc((size_t)z.B, &c->B));
    ABFT_TRY(halloc((size_t)z.C, &c->G));
    ABFT_TRY(halloc((size_t)z.C, &c->C));
    ABFT_TRY(halloc((size_t)z.C, &c->C0));
    ABFT_TRY(halloc((size_t)z.tau, (void **)&c->tau));
    ABFT_TRY(halloc((size_t)z.work, (void **)&c->work));
    ABFT_TRY(balloc(c, (size_t)z.dA, &c->dA));
    ABFT_TRY(balloc(c, (size_t)z.dB, &c->dB));
    ABFT_TRY(balloc(c, (size_t)z.dC, &c->dC));
    memset(c->C, 0, (size_t)z.C);
    return to_backend(c, c->C, c->dC, M, N, M > 1 ? M : 1, c->es);
}

static abft_status_t gemm_load(camp_t *c, uint64_t seed) {
    const abft_trial_config_t *t = &c->tc;
    if (c->cfg->space != ABFT_SPACE_FULL) { /* as the fixed space always did */
        fill_uniform(c->prec, c->A, t->lda * t->k, seed);
        fill_uniform(c->prec, c->B, t->ldb * t->n, mix64(seed ^ 0xbbbbbbbbbbbbbbbbull));
        ABFT_TRY(to_backend(c, c->A, c->dA, t->m, t->k, t->lda, c->es));
        return to_backend(c, c->B, c->dB, t->k, t->n, t->ldb, c->es);
    }
    fill_matrix(c->prec, c->A, a_rows(t), a_cols(t), t->lda, 1.0, seed);
    fill_matrix(c->prec, c->B, b_rows(t), b_cols(t), t->ldb, 1.0,
                mix64(seed ^ 0xbbbbbbbbbbbbbbbbull));
    fill_matrix(c->prec, c->C0, t->m, t->n, t->ldc, t->c_scale,
                mix64(seed ^ 0xccccccccccccccccull));
    /* whole columns, padding included */
    ABFT_TRY(to_backend(c, c->A, c->dA, t->lda, a_cols(t), t->lda, c->es));
    return to_backend(c, c->B, c->dB, t->ldb, b_cols(t), t->ldb, c->es);
}

static abft_status_t gemm_run(camp_t *c, abft_report_t *rep) {
    const abft_trial_config_t *t = &c->tc;
    /* the old C (it is overwritten by every run), padding included */
    if (c->cfg->space == ABFT_SPACE_FULL)
        ABFT_TRY(to_backend(c, c->C0, c->dC, t->ldc, t->n, t->ldc, c->es));
    abft_operation_t ta = t->transa ? ABFT_OP_T : ABFT_OP_N;
    abft_operation_t tb = t->transb ? ABFT_OP_T : ABFT_OP_N;
    if (c->prec == ABFT_PREC_D)
        return abft_dgemm(c->h, ta, tb, t->m, t->n, t->k, t->alpha, (const double *)c->dA,
                          t->lda, (const double *)c->dB, t->ldb, t->beta, (double *)c->dC,
                          t->ldc, rep);
    return abft_sgemm(c->h, ta, tb, t->m, t->n, t->k, (float)t->alpha, (const float *)c->dA,
                      t->lda, (const float *)c->dB, t->ldb, (float)t->beta, (float *)c->dC,
                      t->ldc, rep);
}

static abft_status_t gemm_fetch(camp_t *c, void *host) {
    return from_backend(c, host, c->dC, c->tc.m, c->tc.n, c->tc.ldc, c->es);
}

static abft_status_t gemm_restore(camp_t *c, int which) {
    const abft_trial_config_t *t = &c->tc;
    if (which == 0) return to_backend(c, c->A, c->dA, a_rows(t), a_cols(t), t->lda, c->es);
    return to_backend(c, c->B, c->dB, b_rows(t), b_cols(t), t->ldb, c->es);
}

/* As the backend's pass: every row of a product whose tables the backend cannot hold
 * (rows x cols, inner dimension k) gets the worst case (T = -1, rows x 2). */
static void worst_where_unfit(const camp_t *c, int64_t rows, int64_t cols, int64_t k, double u,
                              double *T) {
    const abft_backend_ops_t *o = c->h->ops;
    if (o->tight_fits == NULL || o->tight_fits(&c->h->kctx, cols, k, u)) return;
    for (int64_t i = 0; i < 2 * rows; ++i) T[i] = -1.0;
}

/* The tight pass as a protected call takes it in two stages (abft_gemm.c, tight_second;
 * docs/bound.md, "Two stages"): the full pass's part, raised to the filter's where the full
 * pass keeps the tight bound (a row the filter accepts passed against the filter's bound,
 * at most that). */
static abft_status_t tight_two_stage(abft_tight_args_t *a) {
    abft_kctx_t none;
    memset(&none, 0, sizeof none);
    const int64_t n = a->m;
    double *f = (double *)malloc(sizeof(double) * (size_t)n * 2 + 1);
    if (f == NULL) return ABFT_STATUS_ALLOC_FAILED;
    abft_tight_args_t fa = *a;
    fa.filter = 1, fa.T = f, fa.ldt = n;
    abft_status_t st = abft_cpu_tight(&none, &fa);
    a->filter = 0;
    if (st == ABFT_STATUS_SUCCESS) st = abft_cpu_tight(&none, a);
    for (int q = 0; q < 2 && st == ABFT_STATUS_SUCCESS; ++q)
        for (int64_t i = 0; i < n; ++i)
            a->T[i + q * a->ldt] = abft_bound_tight_merge(f[i + q * n], a->T[i + q * a->ldt]);
    free(f);
    return st;
}

/* The tight mode's part from the inputs (abft_tight_args_t), computed as the CPU backend's
 * protected call computes it: Yb = op(B)·V and Za = op(A)^T·V by the same tall-and-skinny
 * products (into yb and za, k x 2 each), then the tight pass for the rows into tr (m x 2)
 * and, full checksums, the columns into tcl (n x 2). */
static abft_status_t gemm_tight_part(camp_t *c, double *tr, double *tcl, double *yb,
                                     double *za) {
    const abft_trial_config_t *t = &c->tc;
    const int64_t m = t->m, n = t->n, k = t->k;
    const int comp = abft_bound_tight_comp(c->h->backend, c->prec); /* as abft_gemm.c */
    /* the trials run with the campaign's hook: the library splits their GEMM along k */
    const int64_t ksplit = abft_gemm_ksplit(c->h, k);
    abft_kctx_t none;
    memset(&none, 0, sizeof none);
    abft_gemm_tight_t tb;
    abft_tsmm_args_t y = {c->prec, t->transb, b_rows(t), b_cols(t), 2, c->B, t->ldb, NULL, 0,
                          NULL, 0, yb, k, NULL, 0, 0};
    abft_status_t st = abft_cpu_tsmm(&none, &y);
    abft_bound_gemm_tight(c->h, &c->arith, n, k, n, comp, &tb);
    abft_tight_args_t a = {c->prec, t->transa, t->transb, m, n, k, c->A, t->lda, c->B, t->ldb,
                           yb, k, t->alpha, tb.u, tb.u_chk, tb.lambda, tr, m, NULL, ksplit, 0, {{0, 0}},
                           0};
    a.nord = abft_bound_tight_lanes(c->h->backend, a.ord); /* the lane orders of the library's backend */
    if (st == ABFT_STATUS_SUCCESS) st = tight_two_stage(&a);
    worst_where_unfit(c, m, n, k, tb.u, tr);
    if (st == ABFT_STATUS_SUCCESS && t->checksum_kind == ABFT_CHECKSUM_FULL) {
        abft_tsmm_args_t z = {c->prec, !t->transa, a_rows(t), a_cols(t), 2, c->A, t->lda, NULL,
                              0, NULL, 0, za, k, NULL, 0, 0};
        st = abft_cpu_tsmm(&none, &z);
        abft_bound_gemm_tight(c->h, &c->arith, m, k, m, comp, &tb);
        abft_tight_args_t b = {c->prec, !t->transb, !t->transa, n, m, k, c->B, t->ldb, c->A,
                               t->lda, za, k, t->alpha, tb.u, tb.u_chk, tb.lambda, tcl, n, NULL,
                               ksplit, 0, {{0, 0}}, 0};
        b.nord = abft_bound_tight_lanes(c->h->backend, b.ord);
        if (st == ABFT_STATUS_SUCCESS) st = tight_two_stage(&b);
        worst_where_unfit(c, n, m, k, tb.u, tcl);
    }
    return st;
}

/* The tight mode's small-terms allowance as the protocol adds it (abft_gemm.c,
 * ensure_small): per entry of C abft_bound_tight_small, summed with the weights e and w over
 * each row (sr, m x 2) and, full checksums, each column (sc, n x 2), unscaled and not yet
 * capped by the |.| sums. Every entry gets it here: the protocol computes it for the
 * entries that fail without it, so an undetected change is judged against the bound that
 * let it pass. */
static abft_status_t gemm_small_part(camp_t *c, double *sr, double *sc) {
    const abft_trial_config_t *t = &c->tc;
    const int64_t m = t->m, n = t->n, k = t->k;
    double *ar = (double *)malloc(sizeof(double) * (size_t)(m + n) * (size_t)k + 1);
    ABFT_RETURN_IF(ar == NULL, ABFT_STATUS_ALLOC_FAILED);
    double *bc = ar + (size_t)m * (size_t)k; /* rows of op(A), columns of op(B): k each */
    for (int64_t i = 0; i < m; ++i)
        for (int64_t l = 0; l < k; ++l)
            ar[i * k + l] = elem(c->prec, c->A, t->transa ? l + i * t->lda : i + l * t->lda);
    for (int64_t j = 0; j < n; ++j)
        for (int64_t l = 0; l < k; ++l)
            bc[j * k + l] = elem(c->prec, c->B, t->transb ? j + l * t->ldb : l + j * t->ldb);
    const int cols = t->checksum_kind == ABFT_CHECKSUM_FULL;
    abft_tight_order_t ord[ABFT_TIGHT_MAXORD];
    const int nord = abft_bound_tight_lanes(c->h->backend, ord);
    /* the trials run with the campaign's hook: the library splits their GEMM along k */
    const int64_t ksplit = abft_gemm_ksplit(c->h, k);
    for (int side = 0; side <= cols; ++side) {
        const int64_t nv = side ? n : m, len = side ? m : n;
        double *out = side ? sc : sr;
#pragma omp parallel for schedule(dynamic, 4)
        for (int64_t v = 0; v < nv; ++v) {
            double acc[2] = {0.0, 0.0};
            for (int64_t x = 0; x < len; ++x) {
                const double *a = side ? ar + x * k : ar + v * k, *b = side ? bc + v * k : bc + x * k;
                const double e = abft_bound_tight_small(&c->arith, a, b, k, ord, nord, ksplit);
                acc[0] += e, acc[1] += (double)(x + 1) * e;
            }
            for (int q = 0; q < 2; ++q) out[v + q * nv] = acc[q];
        }
    }
    free(ar);
    return ABFT_STATUS_SUCCESS;
}

/* One entry's bound in the tight mode where its tight part tt >= 0 (else the worst case's
 * wc): the compare's formula (abft_bound.h) with R, alpha·S and beta·P the golden's, raised
 * by the small terms' allowance sm (gemm_small_part, capped by the |.| sum sa as the protocol
 * caps it; len entries in the vector, k terms each) up to the worst case's wc at most. */
static double tight_tau(const abft_gemm_tight_t *tb, const abft_gemm_bound_t *b, double tt,
                        double wc, double alpha, double beta, double sa, double pa, double ra,
                        double rs, double ss, double ps, double sm, int64_t len, int64_t k) {
    if (!(tt >= 0.0)) return tt != tt ? NAN : wc;
    const double t = abft_bound_tight_entry(tb, b->abs_floor, tt, fabs(alpha) * sa,
                                            fabs(beta) * pa, ra,
                                            fabs(rs) + fabs(alpha * ss) + fabs(beta * ps));
    return abft_bound_tight_raise(t, wc, alpha, sm, sa, len, k); /* as the protocol */
}

/* The bounds of the checksums of C from the bound module, with the trial's alpha, beta,
 * sizes and arithmetic (docs/bound.md). For row i and weights v (e or w):
 *   tau_v,i = coef_s·(|alpha|·(|op(A)|·(|op(B)|·v))_i + |beta|·(|C_old|·v)_i)
 *           + coef_r·(|G|·v)_i + abs_floor + eta_amp·(wsum_v·|op(A)|_i,1 + sum_l (|op(B)|·v)_l)
 * with G the golden result: what the library's compare and its amplified-underflow term
 * allow a fault-free row; columns likewise with v^T on the left (full checksums).
 * tau[0..m): e of the rows (rho is judged in it), tau[m..2m): w of the rows, then e and w
 * of the columns. */
static abft_status_t gemm_tolerance(camp_t *c) {
    const abft_trial_config_t *t = &c->tc;
    const int64_t m = t->m, n = t->n, k = t->k;
    const int use_ab = t->alpha != 0.0;
    const int64_t W = max64(max64(c->maxr, c->maxc), c->maxk);
    double *by[2] = {c->work, c->work + W};          /* |op(B)|·v, k entries */
    double *ay[2] = {c->work + 2 * W, c->work + 3 * W}; /* v^T·|op(A)|, k entries */
    double ysum[2] = {0, 0}, xsum[2] = {0, 0};
    abft_gemm_bound_t br, bc;
    abft_bound_gemm(c->h, &c->arith, t->alpha, t->beta, n, k, n, &br);
    abft_bound_gemm(c->h, &c->arith, t->alpha, t->beta, m, k, m, &bc);
    /* the tight mode where the library applies it (abft_gemm.c: the alpha term exists, the
     * inputs are used as they are) */
    const int tight = t->bound_mode == ABFT_BOUND_TIGHT && use_ab && k > 0 &&
                      abft_bound_tight_applies(&c->arith);
    abft_gemm_tight_t tbr, tbc;
    const int comp = abft_bound_tight_comp(c->h->backend, c->prec); /* as abft_gemm.c */
    /* m x 2 rows and n x 2 columns, k x 2, k x 2, then the small terms' m x 2 and n x 2 */
    double *tt = NULL, *yb = NULL, *za = NULL, *sm = NULL;
    if (tight) {
        tt = (double *)malloc(sizeof(double) * (size_t)(4 * (m + n) + 4 * k + 1));
        ABFT_RETURN_IF(tt == NULL, ABFT_STATUS_ALLOC_FAILED);
        yb = tt + 2 * (m + n), za = yb + 2 * k, sm = za + 2 * k;
        abft_status_t st = gemm_tight_part(c, tt, tt + 2 * m, yb, za);
        if (st == ABFT_STATUS_SUCCESS) st = gemm_small_part(c, sm, sm + 2 * m);
        if (st != ABFT_STATUS_SUCCESS) {
            free(tt);
            return st;
        }
        abft_bound_gemm_tight(c->h, &c->arith, n, k, n, comp, &tbr);
        abft_bound_gemm_tight(c->h, &c->arith, m, k, m, comp, &tbc);
    }
    for (int64_t l = 0; l < k; ++l) {
        double s0 = 0, s1 = 0, a0 = 0, a1 = 0;
        for (int64_t j = 0; j < n; ++j) {
            double x = fabs(elem(c->prec, c->B, t->transb ? j + l * t->ldb : l + j * t->ldb));
            s0 += x;
            s1 += (double)(j + 1) * x;
        }
        for (int64_t i = 0; i < m; ++i) {
            double x = fabs(elem(c->prec, c->A, t->transa ? l + i * t->lda : i + l * t->lda));
            a0 += x;
            a1 += (double)(i + 1) * x;
        }
        by[0][l] = s0, by[1][l] = s1, ay[0][l] = a0, ay[1][l] = a1;
        ysum[0] += s0, ysum[1] += s1, xsum[0] += a0, xsum[1] += a1;
    }
    /* rows */
    for (int64_t i = 0; i < m; ++i) {
        double sa[2] = {0, 0}, pa[2] = {0, 0}, ra[2] = {0, 0}, a1 = 0;
        double ss[2] = {0, 0}, ps[2] = {0, 0}, rs[2] = {0, 0}; /* signed, for the tight mode */
        for (int64_t l = 0; l < k; ++l) {
            double as = elem(c->prec, c->A, t->transa ? l + i * t->lda : i + l * t->lda);
            double a = fabs(as);
            sa[0] += a * by[0][l];
            sa[1] += a * by[1][l];
            a1 += a;
            if (tight) ss[0] += as * yb[l], ss[1] += as * yb[k + l];
        }
        for (int64_t j = 0; j < n; ++j) {
            double w = (double)(j + 1), xs = elem(c->prec, c->G, i + j * t->ldc), x = fabs(xs);
            double os = t->beta != 0.0 ? elem(c->prec, c->C0, i + j * t->ldc) : 0.0, o = fabs(os);
            ra[0] += x, ra[1] += w * x, pa[0] += o, pa[1] += w * o;
            rs[0] += xs, rs[1] += w * xs, ps[0] += os, ps[1] += w * os;
        }
        for (int q = 0; q < 2; ++q) {
            double tau = br.coef_s * (fabs(t->alpha) * sa[q] + fabs(t->beta) * pa[q]) +
                         br.coef_r * ra[q] + br.abs_floor;
            if (tight)
                tau = tight_tau(&tbr, &br, tt[i + q * m], tau, t->alpha, t->beta, sa[q], pa[q],
                                ra[q], rs[q], ss[q], ps[q], sm[i + q * m], n, k);
            if (use_ab) tau += abft_bound_gemm_amp(&br, q, a1, ysum[q]);
            c->tau[i + q * m] = tau;
        }
    }
    /* columns */
    double *tc = c->tau + 2 * m;
    for (int64_t j = 0; j < n; ++j) {
        double sa[2] = {0, 0}, pa[2] = {0, 0}, ra[2] = {0, 0}, b1 = 0;
        double ss[2] = {0, 0}, ps[2] = {0, 0}, rs[2] = {0, 0};
        for (int64_t l = 0; l < k; ++l) {
            double bs = elem(c->prec, c->B, t->transb ? j + l * t->ldb : l + j * t->ldb);
            double b = fabs(bs);
            sa[0] += ay[0][l] * b;
            sa[1] += ay[1][l] * b;
            b1 += b;
            if (tight && t->checksum_kind == ABFT_CHECKSUM_FULL)
                ss[0] += bs * za[l], ss[1] += bs * za[k + l];
        }
        for (int64_t i = 0; i < m; ++i) {
            double w = (double)(i + 1), xs = elem(c->prec, c->G, i + j * t->ldc), x = fabs(xs);
            double os = t->beta != 0.0 ? elem(c->prec, c->C0, i + j * t->ldc) : 0.0, o = fabs(os);
            ra[0] += x, ra[1] += w * x, pa[0] += o, pa[1] += w * o;
            rs[0] += xs, rs[1] += w * xs, ps[0] += os, ps[1] += w * os;
        }
        for (int q = 0; q < 2; ++q) {
            double tau = bc.coef_s * (fabs(t->alpha) * sa[q] + fabs(t->beta) * pa[q]) +
                         bc.coef_r * ra[q] + bc.abs_floor;
            if (tight && t->checksum_kind == ABFT_CHECKSUM_FULL)
                tau = tight_tau(&tbc, &bc, tt[2 * m + j + q * n], tau, t->alpha, t->beta, sa[q],
                                pa[q], ra[q], rs[q], ss[q], ps[q], sm[2 * m + j + q * n], m, k);
            if (use_ab) tau += abft_bound_gemm_amp(&bc, q, b1, xsum[q]);
            tc[j + q * n] = tau;
        }
    }
    free(tt);
    return ABFT_STATUS_SUCCESS;
}

/* |d| / tau with NaN (and a change against a zero bound) as +Inf. */
static double ratio(long double d, double tau) {
    double x = (double)fabsl(d);
    if (x == 0) return 0;
    double r = tau > 0 ? x / tau : INFINITY;
    return isnan(r) ? INFINITY : r;
}

/* rho_check: the change of C as its checksums see it, max over rows (and columns with full
 * checksums) and both weights of |sum_j v_j (C_ij - G_ij)| / tau_v,i, in extended
 * precision. Undetected, a change with rho_check > 2 violates the guarantee. skip_r,
 * skip_c (may be NULL): rows and columns left out (those a report resolved). */
static double gemm_check_skip(const camp_t *c, const unsigned char *skip_r,
                              const unsigned char *skip_c) {
    const abft_trial_config_t *t = &c->tc;
    const int64_t m = t->m, n = t->n;
    double rho = 0;
    for (int64_t i = 0; i < m; ++i) {
        if (skip_r != NULL && skip_r[i]) continue;
        long double d0 = 0, d1 = 0;
        for (int64_t j = 0; j < n; ++j) {
            long double d = (long double)elem(c->prec, c->C, i + j * t->ldc) -
                            (long double)elem(c->prec, c->G, i + j * t->ldc);
            d0 += d, d1 += (long double)(j + 1) * d;
        }
        rho = fmax(rho, fmax(ratio(d0, c->tau[i]), ratio(d1, c->tau[i + m])));
        if (isnan((double)d0) || isnan((double)d1)) rho = INFINITY;
    }
    if (t->checksum_kind != ABFT_CHECKSUM_FULL) return rho;
    const double *tc = c->tau + 2 * m;
    for (int64_t j = 0; j < n; ++j) {
        if (skip_c != NULL && skip_c[j]) continue;
        long double d0 = 0, d1 = 0;
        for (int64_t i = 0; i < m; ++i) {
            long double d = (long double)elem(c->prec, c->C, i + j * t->ldc) -
                            (long double)elem(c->prec, c->G, i + j * t->ldc);
            d0 += d, d1 += (long double)(i + 1) * d;
        }
        rho = fmax(rho, fmax(ratio(d0, tc[j]), ratio(d1, tc[j + n])));
        if (isnan((double)d0) || isnan((double)d1)) rho = INFINITY;
    }
    return rho;
}

static double gemm_check(const camp_t *c) { return gemm_check_skip(c, NULL, NULL); }

/* rho = max_ij |C_ij - G_ij| / tau_i; a NaN anywhere gives +Inf. mark_r, mark_c (may be
 * NULL: every element): only the elements whose row or column is marked (in = 1), or whose
 * row and column are both unmarked (in = 0). */
static double gemm_change_sel(const camp_t *c, const unsigned char *mark_r,
                              const unsigned char *mark_c, int in) {
    const abft_trial_config_t *t = &c->tc;
    double rho = 0;
    for (int64_t j = 0; j < t->n; ++j)
        for (int64_t i = 0; i < t->m; ++i) {
            if (mark_r != NULL && (mark_r[i] || mark_c[j]) != (in != 0)) continue;
            int64_t x = i + j * t->ldc;
            double d = fabs(elem(c->prec, c->C, x) - elem(c->prec, c->G, x));
            if (d == 0) continue;
            double r = c->tau[i] > 0 ? d / c->tau[i] : INFINITY;
            if (!(r <= rho)) rho = isnan(r) ? INFINITY : r;
        }
    return rho;
}

static double gemm_change(const camp_t *c) { return gemm_change_sel(c, NULL, NULL, 1); }

/* A detected trial whose change exceeds the bound, with every flagged vector resolved: is
 * the change in what the report resolved, or in rows and columns it never flagged (two
 * faults of one row cancelling in its checksums while faults elsewhere were found)? The
 * latter is an undetected change, judged as such (classify). Every action of the GEMM
 * engine (corrected element, recomputed vector, checksum fault, uncorrectable entry) adds
 * one entry to the report's list; the list is complete when it holds them all and was not
 * cut at ABFT_REPORT_MAX_FAULTS. Returns 0 when it is not (then the trial is judged as a
 * whole). */
static int gemm_split(const camp_t *c, const abft_report_t *r, split_t *sp) {
    const int64_t m = c->tc.m, n = c->tc.n;
    const int64_t actions = r->corrected + r->recomputed + r->checksum_faults + r->uncorrectable;
    if (r->nfaults != actions || r->nfaults >= ABFT_REPORT_MAX_FAULTS) return 0;
    unsigned char *mr = (unsigned char *)calloc((size_t)(m + n), 1);
    if (mr == NULL) return 0;
    unsigned char *mc = mr + m;
    for (int64_t f = 0; f < r->nfaults; ++f) {
        const abft_fault_t *q = &r->faults[f];
        if (q->side == 0 && q->row >= 0 && q->row < m) mr[q->row] = 1;
        if (q->side == 1 && q->col >= 0 && q->col < n) mc[q->col] = 1;
        /* a correction writes its element: its row and column both saw it */
        if (q->row >= 0 && q->row < m && q->col >= 0 && q->col < n) mr[q->row] = mc[q->col] = 1;
    }
    sp->touched = gemm_change_sel(c, mr, mc, 1);
    sp->untouched = gemm_change_sel(c, mr, mc, 0);
    sp->check_untouched = gemm_check_skip(c, mr, mc);
    free(mr);
    return 1;
}

/* The spacing of the precision's numbers at |x| (the smallest subnormal at 0). */
static long double ulp_at(abft_prec_t prec, double x) {
    x = fabs(x);
    if (prec == ABFT_PREC_S) return (long double)nextafterf((float)x, INFINITY) - (long double)(float)x;
    return (long double)nextafter(x, INFINITY) - (long double)x;
}

/* Masked or undetected (docs/campaign.md): every element of C that differs from golden G is
 * compared with the exact result R_ij = alpha·op(A)_i·op(B)_j + beta·C0_ij, computed in long
 * double from the pristine inputs, and with the rounding scale of that element,
 * nu_ij = u·sqrt(k + 1)·sqrt(sum_l (alpha·a_il·b_lj)^2 + (beta·C0_ij)^2) (u the golden call's
 * unit roundoff): the size of the error of a length-k dot product whose roundings are
 * independent (the standard probabilistic model), so that a golden element that happens to
 * be exactly rounded does not make a 2-ulp change look like a fault. The change is within
 * the fault-free rounding noise when
 *   |C_ij - G_ij| <= max(|G_ij - R_ij|, nu_ij) + ulp(G_ij).
 * Returns the largest |C_ij - G_ij| / rms_i(G) (rms_i: the root mean square of row i of G,
 * at least the smallest normal number, so a change to a zero row is measured against that;
 * +Inf for a NaN). */
static double gemm_noise(const camp_t *c, int *beyond) {
    const abft_trial_config_t *t = &c->tc;
    const int64_t m = t->m, n = t->n, k = t->k;
    double rel = 0;
    *beyond = 0;
    for (int64_t i = 0; i < m; ++i) {
        long double rms = -1; /* computed on the row's first differing element */
        for (int64_t j = 0; j < n; ++j) {
            const int64_t x = i + j * t->ldc;
            const double cv = elem(c->prec, c->C, x), gv = elem(c->prec, c->G, x);
            if (cv == gv || (isnan(cv) && isnan(gv))) continue;
            if (rms < 0) { /* scaled by the row's largest entry: no overflow of the squares */
                long double top = 0, s2 = 0;
                for (int64_t q = 0; q < n; ++q) {
                    long double v = fabsl((long double)elem(c->prec, c->G, i + q * t->ldc));
                    if (v > top) top = v;
                }
                for (int64_t q = 0; q < n && top > 0 && isfinite((double)top); ++q) {
                    long double v = (long double)elem(c->prec, c->G, i + q * t->ldc) / top;
                    s2 += v * v;
                }
                rms = top > 0 && isfinite((double)top) ? top * sqrtl(s2 / (long double)n) : top;
            }
            long double r = 0, p2 = 0;
            if (t->alpha != 0.0) {
                for (int64_t l = 0; l < k; ++l) {
                    long double p =
                        (long double)t->alpha *
                        (long double)elem(c->prec, c->A, t->transa ? l + i * t->lda : i + l * t->lda) *
                        (long double)elem(c->prec, c->B, t->transb ? j + l * t->ldb : l + j * t->ldb);
                    r += p, p2 += p * p;
                }
            }
            if (t->beta != 0.0) {
                long double p = (long double)t->beta * (long double)elem(c->prec, c->C0, x);
                r += p, p2 += p * p;
            }
            long double d = fabsl((long double)cv - (long double)gv);
            long double nu = (long double)c->u * sqrtl((long double)(k + 1)) * sqrtl(p2);
            long double err = fabsl((long double)gv - r);
            long double noise = (err > nu ? err : nu) + ulp_at(c->prec, gv);
            if (!(d <= noise)) *beyond = 1;
            long double floor_n = c->prec == ABFT_PREC_S ? 0x1p-126L : 0x1p-1022L;
            double e = (double)(d / (rms > floor_n ? rms : floor_n));
            if (!(e <= rel)) rel = isnan(e) ? INFINITY : e;
        }
    }
    return rel;
}

/* ---- GETRF: P·A = L·U of an m x n matrix, in place ------------------------------------ */

/* The factorization overwrites A, so every run starts from the pristine copy; the result
 * is the factors and the pivots. */
static abft_status_t getrf_setup(camp_t *c) {
    camp_sizes_t z;
    ABFT_TRY(camp_sizes(c->cfg, &z));
    ABFT_TRY(halloc((size_t)z.A, &c->A));
    ABFT_TRY(halloc((size_t)z.C, &c->G));
    ABFT_TRY(halloc((size_t)z.C, &c->C));
    ABFT_TRY(halloc((size_t)z.tau, (void **)&c->tau));
    ABFT_TRY(halloc((size_t)z.work, (void **)&c->work));
    ABFT_TRY(halloc((size_t)z.ipiv, (void **)&c->ipiv));
    ABFT_TRY(balloc(c, (size_t)z.dA, &c->dA));
    return balloc(c, (size_t)z.dB, &c->dB); /* dB holds the pivots */
}

static abft_status_t getrf_load(camp_t *c, uint64_t seed) {
    const abft_trial_config_t *t = &c->tc;
    if (c->cfg->space != ABFT_SPACE_FULL)
        fill_uniform(c->prec, c->A, t->lda * t->n, seed);
    else
        fill_matrix(c->prec, c->A, t->m, t->n, t->lda, 1.0, seed);
    return ABFT_STATUS_SUCCESS;
}

static abft_status_t getrf_run(camp_t *c, abft_report_t *rep) {
    const abft_trial_config_t *t = &c->tc;
    int64_t m = t->m, n = t->n, lda = t->lda, info = 0;
    ABFT_TRY(to_backend(c, c->A, c->dA, lda, n, lda, c->es));
    int online = c->cfg->op == ABFT_CAMPAIGN_GETRF_ONLINE;
    abft_lu_options_t o = {t->nb, t->check_every, t->panel_nb, t->lookahead};
    const abft_lu_options_t *opt = c->cfg->space == ABFT_SPACE_FULL ? &o : NULL;
    if (c->prec == ABFT_PREC_D)
        return online ? abft_dgetrf_online(c->h, m, n, (double *)c->dA, lda, (int64_t *)c->dB,
                                           opt, &info, rep)
                      : abft_dgetrf(c->h, m, n, (double *)c->dA, lda, (int64_t *)c->dB, &info,
                                    rep);
    return online ? abft_sgetrf_online(c->h, m, n, (float *)c->dA, lda, (int64_t *)c->dB, opt,
                                       &info, rep)
                  : abft_sgetrf(c->h, m, n, (float *)c->dA, lda, (int64_t *)c->dB, &info, rep);
}

static abft_status_t getrf_fetch(camp_t *c, void *host) {
    const abft_trial_config_t *t = &c->tc;
    int64_t k = min64(t->m, t->n);
    ABFT_TRY(from_backend(c, host, c->dA, t->m, t->n, t->lda, c->es));
    /* golden's pivots in ipiv[0..k), the trial's in ipiv[k..2k) */
    int64_t *piv = c->ipiv + (host == c->G ? 0 : k);
    return from_backend(c, piv, c->dB, k, 1, k, sizeof(int64_t));
}

static abft_status_t getrf_restore(camp_t *c, int which) {
    (void)c;
    (void)which;
    return ABFT_STATUS_SUCCESS; /* every run starts from the pristine A */
}

/* An LU is judged by what it guarantees: its backward error. The row bounds of the two
 * checksums of L·(U·v) = P·(A·v), v = e and v = w (w_j = j + 1), from the bound module with
 * the arithmetic of the call (abft_lu_arith: the BLAS's and the getrf's) and k = min(m, n)
 * (docs/lu.md):
 *   tau_q,i = coef_r·(|L|·(|U|·v_q))_i + coef_s·(P·|A|·v_q)_i + abs_floor + eta_amp·dsum[q]
 * with the golden factors and pivots, dsum[q] the weighted sum of golden's |U(k, k)|
 * (abft_bound_lu_dsum); tau[0..m) for e, tau[m..2m) for w. */
static abft_status_t getrf_tolerance(camp_t *c) {
    const abft_trial_config_t *t = &c->tc;
    const int64_t m = t->m, n = t->n, lda = t->lda, k = min64(m, n);
    abft_arith_t f;
    ABFT_TRY(abft_lu_arith(c->h, c->prec, 1, &f));
    abft_lu_bound_t b;
    abft_bound_lu(c->h, &f, c->prec, m, n, &b);
    double dsum[2];
    double *ua = c->work, *pa = c->work + max64(m, n);
    for (int64_t i = 0; i < k; ++i) ua[i] = elem(c->prec, c->G, i + i * lda); /* U(i, i) */
    abft_bound_lu_dsum(ua, k, 0, dsum);
    for (int q = 0; q < 2; ++q) {
        double *tau = c->tau + q * m;
        for (int64_t i = 0; i < k; ++i) ua[i] = 0;
        for (int64_t j = 0; j < n; ++j) {
            double w = q == 0 ? 1.0 : (double)(j + 1);
            for (int64_t i = 0; i <= j && i < k; ++i)
                ua[i] += fabs(elem(c->prec, c->G, i + j * lda)) * w;
        }
        for (int64_t i = 0; i < m; ++i) {
            double s = 0;
            for (int64_t j = 0; j < n; ++j)
                s += fabs(elem(c->prec, c->A, i + j * lda)) * (q == 0 ? 1.0 : (double)(j + 1));
            pa[i] = s;
        }
        for (int64_t i = 0; i < k; ++i) { /* P·|A|·v: the golden row interchanges */
            int64_t r = c->ipiv[i] - 1;
            if (r > i && r < m) {
                double x = pa[i];
                pa[i] = pa[r];
                pa[r] = x;
            }
        }
        for (int64_t i = 0; i < m; ++i) {
            double lu = i < k ? ua[i] : 0.0; /* the unit diagonal of L */
            for (int64_t j = 0; j < i && j < k; ++j)
                lu += fabs(elem(c->prec, c->G, i + j * lda)) * ua[j];
            tau[i] = b.coef_r * lu + b.coef_s * pa[i] + b.abs_floor + b.eta_amp * dsum[q];
        }
    }
    return ABFT_STATUS_SUCCESS;
}

/* The residual of factors F (pivots piv) against the pristine A for weights v_q (q = 0: e,
 * 1: w), row by row, in extended precision: res[i] = |(L·(U·v_q))_i - (P·(A·v_q))_i|;
 * mag[i] = (|L|·(|U|·v_q))_i when mag is not NULL. Returns 0, or -1 for invalid pivots or
 * memory. */
static int lu_residual(const camp_t *c, const void *F, const int64_t *piv, int q,
                       long double *res, long double *mag) {
    const abft_trial_config_t *t = &c->tc;
    const int64_t m = t->m, n = t->n, lda = t->lda, k = min64(m, n);
    long double *y = (long double *)malloc(sizeof(long double) * (size_t)(2 * k + m + 1));
    if (y == NULL) return -1;
    long double *ya = y + k, *x = y + 2 * k;
    for (int64_t i = 0; i < k; ++i) y[i] = 0, ya[i] = 0;
    for (int64_t i = 0; i < m; ++i) x[i] = 0;
    for (int64_t j = 0; j < n; ++j) {
        long double w = q == 0 ? 1.0L : (long double)(j + 1);
        for (int64_t i = 0; i < m; ++i) {
            if (i <= j && i < k) {
                long double f = (long double)elem(c->prec, F, i + j * lda);
                y[i] += f * w, ya[i] += fabsl(f) * w;
            }
            x[i] += (long double)elem(c->prec, c->A, i + j * lda) * w;
        }
    }
    for (int64_t i = 0; i < k; ++i) { /* P·(A·v): the row interchanges */
        int64_t r = piv[i] - 1;
        if (r < i || r >= m) {
            free(y);
            return -1;
        }
        long double s = x[i];
        x[i] = x[r];
        x[r] = s;
    }
    for (int64_t i = 0; i < m; ++i) {
        long double s = i < k ? y[i] : 0.0L, sa = i < k ? ya[i] : 0.0L;
        for (int64_t j = 0; j < i && j < k; ++j) {
            long double l = (long double)elem(c->prec, F, i + j * lda);
            s += l * y[j], sa += fabsl(l) * ya[j];
        }
        res[i] = fabsl(s - x[i]);
        if (mag != NULL) mag[i] = sa;
    }
    free(y);
    return 0;
}

/* rho = max over rows and both checksums of |L·(U·v) - P·(A·v)| / tau for the trial's
 * factors and pivots against the pristine A, in extended precision: the backward error the
 * factorization is guaranteed to have. (The factors themselves need not be close to
 * golden's: a perturbation within the bound may change a later pivot, and LU factors
 * amplify input changes by the conditioning; what must hold is that they are an LU of a
 * matrix within the bound of A.) */
static double getrf_change(const camp_t *c) {
    const int64_t m = c->tc.m, k = min64(m, c->tc.n);
    long double *res = (long double *)malloc(sizeof(long double) * (size_t)(m + 1));
    if (res == NULL) return INFINITY;
    double rho = 0;
    for (int q = 0; q < 2; ++q) {
        if (lu_residual(c, c->C, c->ipiv + k, q, res, NULL) != 0) {
            free(res);
            return INFINITY;
        }
        for (int64_t i = 0; i < m; ++i) {
            double d = (double)res[i], tt = c->tau[i + q * m];
            double r = d == 0 ? 0 : (tt > 0 ? d / tt : INFINITY);
            if (!(r <= rho)) rho = isnan(r) ? INFINITY : r;
        }
    }
    free(res);
    return rho;
}

/* Masked or undetected for an LU (docs/campaign.md): judged, like rho, by the backward error.
 * Row i of checksum q is within the fault-free rounding noise when the trial's residual
 * |L·(U·v_q) - P·(A·v_q)|_i is at most golden's plus 2u·(|L|·(|U|·v_q))_i with golden's
 * factors (one unit in the last place of every product; u the golden call's unit
 * roundoff). Returns the largest excess of the trial's residual over golden's, relative to
 * golden's (|L|·(|U|·v_q))_i (at least the smallest normal number). When the trial pivoted
 * differently its row i is another row of A than golden's row i: every row is then held to
 * golden's largest residual, noise and magnitude. */
static double getrf_noise(const camp_t *c, int *beyond) {
    const int64_t m = c->tc.m, k = min64(m, c->tc.n);
    long double *rt = (long double *)malloc(sizeof(long double) * (size_t)(3 * m + 1));
    *beyond = 1;
    if (rt == NULL) return INFINITY;
    long double *rg = rt + m, *mg = rt + 2 * m;
    double rel = 0;
    int beyond_any = 0, same_pivots = 1;
    for (int64_t i = 0; i < k; ++i) same_pivots &= c->ipiv[i] == c->ipiv[k + i];
    for (int q = 0; q < 2; ++q) {
        if (lu_residual(c, c->C, c->ipiv + k, q, rt, NULL) != 0 ||
            lu_residual(c, c->G, c->ipiv, q, rg, mg) != 0) {
            free(rt);
            return INFINITY;
        }
        long double top_noise = 0, top_r = 0, top_m = 0; /* golden's largest, other pivots */
        for (int64_t i = 0; i < m && !same_pivots; ++i) {
            long double x = rg[i] + 2.0L * (long double)c->u * mg[i];
            if (x > top_noise) top_noise = x;
            if (rg[i] > top_r) top_r = rg[i];
            if (mg[i] > top_m) top_m = mg[i];
        }
        const long double floor_n = c->prec == ABFT_PREC_S ? 0x1p-126L : 0x1p-1022L;
        for (int64_t i = 0; i < m; ++i) {
            long double noise = same_pivots ? rg[i] + 2.0L * (long double)c->u * mg[i] : top_noise;
            long double base = same_pivots ? rg[i] : top_r, mag = same_pivots ? mg[i] : top_m;
            if (!(rt[i] <= noise)) beyond_any = 1;
            long double excess = rt[i] - base;
            double e = isnan((double)rt[i]) ? INFINITY
                       : excess <= 0      ? 0.0
                                          : (double)(excess / (mag > floor_n ? mag : floor_n));
            if (!(e <= rel)) rel = isnan(e) ? INFINITY : e;
        }
    }
    free(rt);
    *beyond = beyond_any;
    return rel;
}

#define SITE(s) (1u << (s))
static const op_desc_t ops[ABFT_CAMPAIGN_OP_COUNT] = {
    [ABFT_CAMPAIGN_GEMM] = {"gemm",
                            SITE(ABFT_SITE_AFTER_ENCODE) | SITE(ABFT_SITE_MID_GEMM) |
                                SITE(ABFT_SITE_AFTER_GEMM) | SITE(ABFT_SITE_CHECKSUM),
                            SITE(ABFT_SITE_AFTER_ENCODE) | SITE(ABFT_SITE_MID_GEMM) |
                                SITE(ABFT_SITE_AFTER_GEMM) | SITE(ABFT_SITE_CHECKSUM),
                            gemm_setup, gemm_load, gemm_run, gemm_fetch, gemm_restore,
                            gemm_tolerance, gemm_change, gemm_check, gemm_noise, gemm_split},
    [ABFT_CAMPAIGN_GETRF] = {"getrf", SITE(ABFT_SITE_CHECKSUM) | SITE(ABFT_SITE_AFTER_LU),
                             SITE(ABFT_SITE_CHECKSUM) | SITE(ABFT_SITE_AFTER_LU), getrf_setup,
                             getrf_load, getrf_run, getrf_fetch, getrf_restore, getrf_tolerance,
                             getrf_change, getrf_change, getrf_noise},
    [ABFT_CAMPAIGN_GETRF_ONLINE] = {"getrf-online",
                                    SITE(ABFT_SITE_CHECKSUM) | SITE(ABFT_SITE_LU_PANEL) |
                                        SITE(ABFT_SITE_AFTER_LU),
                                    SITE(ABFT_SITE_CHECKSUM) | SITE(ABFT_SITE_LU_PANEL) |
                                        SITE(ABFT_SITE_AFTER_LU),
                                    getrf_setup, getrf_load, getrf_run, getrf_fetch,
                                    getrf_restore, getrf_tolerance, getrf_change, getrf_change,
                                    getrf_noise},
};

/* ---- public helpers -------------------------------------------------------------------- */

const char *abft_outcome_name(int o) {
    static const char *names[ABFT_OUTCOME_COUNT] = {
        "masked", "corrected", "uncorrectable", "gray", "sdc", "miscorrected",
        "false_positive", "clean", "not_fired", "error", "undetected"};
    return o >= 0 && o < ABFT_OUTCOME_COUNT ? names[o] : "unknown";
}

const char *abft_fault_model_name(int model) {
    static const char *names[ABFT_FAULT_MODEL_COUNT] = {"one", "row2", "col2", "same_bit",
                                                        "burst"};
    if (model == ABFT_FAULT_SPEC) return "spec";
    return model >= 0 && model < ABFT_FAULT_MODEL_COUNT ? names[model] : "unknown";
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
    c.space = ABFT_SPACE_FIXED;
    c.jobs = 1;
    return c;
}

/* ---- configurations -------------------------------------------------------------------- */

/* The fixed space: the config's problem, alpha = 1, beta = 0, tight leading dimensions. */
static void fixed_config(camp_t *c) {
    const abft_campaign_config_t *g = c->cfg;
    abft_trial_config_t *t = &c->tc;
    memset(t, 0, sizeof *t);
    if (g->op == ABFT_CAMPAIGN_GEMM) {
        t->m = g->m, t->n = g->n, t->k = g->k;
        t->lda = max64(g->m, 1), t->ldb = max64(g->k, 1), t->ldc = max64(g->m, 1);
    } else { /* an n x n matrix */
        t->m = t->n = g->n;
        t->lda = max64(g->n, 1);
    }
    t->alpha = 1.0, t->beta = 0.0, t->c_scale = 1.0;
    t->checksum_kind = g->checksum_kind;
    t->bound_mode = g->bound_mode;
    t->bound_factor = g->bound_factor;
    t->recompute = 1;
    t->lu_recovery = g->lu_recovery ? 1 : 0;
    t->random_checksum = g->op == ABFT_CAMPAIGN_GEMM && g->random_checksum ? 1 : 0;
    c->rnd_seed = mix64(g->seed ^ 0x72616e646f6d2121ull);
    t->model = ABFT_FAULT_SPEC;
    t->width = g->spec.width;
    t->call = 0;
}

/* A size in [1, max]: 1 and max an eighth of the time each, else uniform. */
static int64_t draw_size(rng_t *r, int64_t max) {
    int64_t p = rbelow(r, 8);
    if (p == 0 || max <= 1) return 1;
    if (p == 1) return max;
    return 1 + rbelow(r, max);
}
/* A leading dimension for `rows` rows: tight half of the time, else 1 to LD_PAD_MAX more. */
static int64_t draw_ld(rng_t *r, int64_t rows) {
    if (rbelow(r, 2) == 0) return max64(rows, 1);
    return rows + 1 + rbelow(r, LD_PAD_MAX);
}
static double draw_sign(rng_t *r) { return rbelow(r, 2) ? -1.0 : 1.0; }

/* The full space: every configuration the API accepts, drawn from `seed` (docs/campaign.md
 * lists the draws). fp32 scalars are drawn as floats, so the classification uses the values
 * the call received. */
static void draw_config(camp_t *c, uint64_t seed) {
    const abft_campaign_config_t *g = c->cfg;
    abft_trial_config_t *t = &c->tc;
    const int sp = c->prec == ABFT_PREC_S;
    rng_t r = {mix64(seed ^ 0xc0f1c0f1c0f1c0f1ull)};
    memset(t, 0, sizeof *t);
    t->checksum_kind = rbelow(&r, 2) ? ABFT_CHECKSUM_FULL : ABFT_CHECKSUM_ROW;
    t->bound_mode = rbelow(&r, 2) ? ABFT_BOUND_PROBABILISTIC : ABFT_BOUND_WORST_CASE;
    t->bound_factor = t->bound_mode == ABFT_BOUND_PROBABILISTIC ? 4.0 : 1.0;
    /* TF32 changes fp32 GEMMs of the CUDA backend only */
    t->math_mode = (int32_t)rbelow(&r, 2);
    if (c->h->backend != ABFT_BACKEND_CUDA || !sp) t->math_mode = 0;
    t->recompute = 1;
    t->c_scale = 1.0;
    t->alpha = 1.0;
    if (g->op == ABFT_CAMPAIGN_GEMM) {
        t->m = draw_size(&r, g->m), t->n = draw_size(&r, g->n), t->k = draw_size(&r, g->k);
        t->transa = (int32_t)rbelow(&r, 2), t->transb = (int32_t)rbelow(&r, 2);
        t->lda = draw_ld(&r, a_rows(t));
        t->ldb = draw_ld(&r, b_rows(t));
        t->ldc = draw_ld(&r, t->m);
        const double tiny = sp ? 0x1p-110 : 0x1p-1000, huge = sp ? 0x1p+90 : 0x1p+600;
        switch (rbelow(&r, 6)) {
        case 0: t->alpha = 0.0; break;
        case 1: t->alpha = 1.0; break;
        case 2: t->alpha = -1.0; break;
        case 3: t->alpha = draw_sign(&r) * 0.25 * pow(16.0, runit(&r)); break;
        case 4: t->alpha = draw_sign(&r) * tiny * (1.0 + runit(&r)); break;
        default: t->alpha = draw_sign(&r) * huge * (1.0 + runit(&r)); break;
        }
        switch (rbelow(&r, 3)) {
        case 0: t->beta = 0.0; break;
        case 1: t->beta = 1.0; break;
        default: t->beta = draw_sign(&r) * 0.25 * pow(16.0, runit(&r)); break;
        }
        if (sp) t->alpha = (double)(float)t->alpha, t->beta = (double)(float)t->beta;
        int big = (int)rbelow(&r, 2);
        if (t->beta == 0.0) /* must be ignored: NaN half of the time */
            t->c_scale = big ? NAN : 1.0;
        else /* the old C as large as alpha·op(A)·op(B), or 2^24 times larger */
            t->c_scale = (big ? 0x1p24 : 1.0) * (t->alpha != 0.0 ? fabs(t->alpha) : 1.0);
        t->recompute = (int32_t)rbelow(&r, 2);
    } else {
        t->m = draw_size(&r, g->n), t->n = draw_size(&r, g->n); /* m x n within n x n */
        t->lda = draw_ld(&r, t->m);
        t->lu_recovery = (int32_t)rbelow(&r, 2);
        if (g->op == ABFT_CAMPAIGN_GETRF_ONLINE) {
            t->nb = rbelow(&r, 3) == 0 ? 0 : 1 + rbelow(&r, 16);   /* 0: the default */
            t->check_every = rbelow(&r, 4);                         /* 0: the default (1) */
            t->panel_nb = rbelow(&r, 2) == 0 ? 0 : 1 + rbelow(&r, 8);
            t->lookahead = rbelow(&r, 3) - 1;
        }
    }
    /* the random checksum, from a stream of its own (the draws above are those of a trial
     * seed before it existed, so earlier trials keep their configurations) */
    uint64_t z = mix64(seed ^ 0x72616e646f6d2121ull);
    t->random_checksum = g->op == ABFT_CAMPAIGN_GEMM ? (int32_t)(z & 1u) : 0;
    c->rnd_seed = mix64(z);
    /* the tight bound mode (GEMM), a third of the trials, from a stream of its own likewise */
    uint64_t zt = mix64(seed ^ 0x7469676874212121ull);
    if (g->op == ABFT_CAMPAIGN_GEMM && zt % 3u == 0u) {
        t->bound_mode = ABFT_BOUND_TIGHT;
        t->bound_factor = 1.0;
    }
    t->model = -1;
    t->call = -1;
}

/* The handle's options (and the math mode of its cuBLAS handle) for c->tc, and the
 * arithmetic the bound module derives from them. */
static abft_status_t apply_config(camp_t *c) {
    const abft_trial_config_t *t = &c->tc;
    ABFT_TRY(abft_set_checksum_kind(c->h, (abft_checksum_kind_t)t->checksum_kind));
    ABFT_TRY(abft_set_bound_mode(c->h, (abft_bound_mode_t)t->bound_mode, t->bound_factor));
    ABFT_TRY(abft_set_lu_recovery(c->h, t->lu_recovery ? 1 : 0));
    ABFT_TRY(abft_set_random_checksum(c->h, t->random_checksum ? 1 : 0, c->rnd_seed));
    if (c->cfg->space == ABFT_SPACE_FULL) ABFT_TRY(abft_set_recompute(c->h, t->recompute));
#if ABFT_HAVE_CUDA
    if (c->h->backend == ABFT_BACKEND_CUDA && c->cfg->space == ABFT_SPACE_FULL) {
        cublasMath_t mode = t->math_mode ? CUBLAS_TF32_TENSOR_OP_MATH : CUBLAS_DEFAULT_MATH;
        if (cublasSetMathMode((cublasHandle_t)c->h->kctx.blas, mode) != CUBLAS_STATUS_SUCCESS)
            return ABFT_STATUS_CUBLAS_ERROR;
    }
#endif
    return abft_bound_arith(c->h, c->prec, &c->arith);
}

/* ---- the campaign's hook (full space) ------------------------------------------------- */

static abft_status_t fire_once(camp_t *c, const abft_fault_spec_t *s, abft_hook_site_t site,
                               int which, char precision, void *ptr, int64_t rows, int64_t cols,
                               int64_t ld) {
    ABFT_TRY(abft_injector_set_spec(c->inj, s));
    return abft_injector_hook(c->inj, site, which, precision, ptr, rows, cols, ld);
}

/* The planned fault, fired through the injector (one firing per element group, each from
 * the injector's stream of the trial seed, so the trial replays). */
static abft_status_t fire_plan(camp_t *c, abft_hook_site_t site, int which, char precision,
                               void *ptr, int64_t rows, int64_t cols, int64_t ld) {
    const fault_plan_t *p = &c->plan;
    abft_fault_spec_t s = c->cfg->spec;
    s.width = p->width;
    s.nelems = 1;
    s.row = -1;
    s.col = -1;
    switch (p->model) {
    case ABFT_FAULT_ROW2: s.nelems = 2, s.row = p->row; break;
    case ABFT_FAULT_COL2: s.nelems = 2, s.col = p->col; break;
    case ABFT_FAULT_SAME_BIT:
        s.bit_class = ABFT_BITS_EXACT, s.bit = p->bit, s.nelems = (int32_t)p->len;
        break;
    case ABFT_FAULT_BURST:
        for (int64_t e = 0; e < p->len; ++e) {
            s.row = p->row + e;
            s.col = p->col;
            ABFT_TRY(fire_once(c, &s, site, which, precision, ptr, rows, cols, ld));
        }
        return ABFT_STATUS_SUCCESS;
    default: break;
    }
    return fire_once(c, &s, site, which, precision, ptr, rows, cols, ld);
}

/* Counts every call per site; records the golden run's calls; fires the planned fault at
 * the planned call of a trial. */
static abft_status_t camp_hook(void *user, abft_hook_site_t site, int which, char precision,
                               void *ptr, int64_t rows, int64_t cols, int64_t ld) {
    camp_t *c = (camp_t *)user;
    if ((unsigned)site >= ABFT_SITE_COUNT) return ABFT_STATUS_SUCCESS;
    int64_t idx = c->ncalls[site]++;
    if (c->hook_mode == HOOK_RECORD) {
        if (c->ncall == c->callcap) {
            int64_t cap = c->callcap > 0 ? 2 * c->callcap : 64;
            call_rec_t *q = (call_rec_t *)realloc(c->calls, sizeof *q * (size_t)cap);
            ABFT_RETURN_IF(q == NULL, ABFT_STATUS_ALLOC_FAILED);
            c->calls = q;
            c->callcap = cap;
        }
        call_rec_t rec = {(int32_t)site, which, rows, cols, precision};
        c->calls[c->ncall++] = rec;
        return ABFT_STATUS_SUCCESS;
    }
    if (c->hook_mode != HOOK_FIRE || (int)site != c->plan.site || idx != c->plan.call)
        return ABFT_STATUS_SUCCESS;
    return fire_plan(c, site, which, precision, ptr, rows, cols, ld);
}

/* The fault of a full-space trial, from its seed and the golden run's calls: a site among
 * `sites` that the golden run reached, a call among that site's calls, a fault model among
 * those the call's array admits, and the model's positions. site = -1: nothing reached. */
static void plan_fault(camp_t *c, uint32_t sites, uint64_t seed) {
    fault_plan_t *p = &c->plan;
    abft_trial_config_t *t = &c->tc;
    rng_t r = {mix64(seed ^ 0xfa017fa017fa017full)};
    memset(p, 0, sizeof *p);
    p->site = -1;
    p->which = -1;
    uint32_t reached = 0;
    int64_t per_site[ABFT_SITE_COUNT] = {0};
    for (int64_t i = 0; i < c->ncall; ++i) {
        reached |= 1u << c->calls[i].site;
        per_site[c->calls[i].site] += 1;
    }
    uint32_t cand = sites & reached;
    int nsite = 0;
    for (uint32_t x = cand; x; x &= x - 1) ++nsite;
    if (nsite == 0) return;
    int pick = (int)rbelow(&r, nsite);
    for (int s = 0; s < ABFT_SITE_COUNT; ++s)
        if ((cand & (1u << s)) && pick-- == 0) {
            p->site = s;
            break;
        }
    p->call = rbelow(&r, per_site[p->site]);
    const call_rec_t *rec = NULL;
    for (int64_t i = 0, j = 0; i < c->ncall && rec == NULL; ++i)
        if (c->calls[i].site == p->site && j++ == p->call) rec = &c->calls[i];
    p->which = rec->which;
    const int64_t rows = rec->rows, cols = rec->cols;
    const int nbits = rec->prec == 'd' ? 64 : 32;
    const abft_fault_spec_t *spec = &c->cfg->spec;
    p->width = 1 + (int)rbelow(&r, 2);
    if (spec->bit_class == ABFT_BITS_EXACT && spec->bit + p->width > nbits) p->width = 1;
    int models[ABFT_FAULT_MODEL_COUNT], nm = 0;
    models[nm++] = ABFT_FAULT_ONE;
    if (cols >= 2) models[nm++] = ABFT_FAULT_ROW2;
    if (rows >= 2) models[nm++] = ABFT_FAULT_COL2;
    if (rows * cols >= 2) models[nm++] = ABFT_FAULT_SAME_BIT;
    if (rows >= 2) models[nm++] = ABFT_FAULT_BURST;
    p->model = models[rbelow(&r, nm)];
    switch (p->model) {
    case ABFT_FAULT_ROW2: p->row = rbelow(&r, rows); break;
    case ABFT_FAULT_COL2: p->col = rbelow(&r, cols); break;
    case ABFT_FAULT_SAME_BIT: {
        p->len = min64(2 + rbelow(&r, 3), rows * cols);
        int32_t lo = 0, hi = nbits - 1;
        if (abft_fault_bit_range(spec, rec->prec, &lo, &hi) != ABFT_STATUS_SUCCESS)
            lo = 0, hi = nbits - 1;
        p->bit = lo + (int32_t)rbelow(&r, hi - lo + 1);
        if (p->bit + p->width > nbits) p->bit = nbits - p->width;
        break;
    }
    case ABFT_FAULT_BURST:
        p->len = min64(2 + rbelow(&r, 3), rows);
        p->row = rbelow(&r, rows - p->len + 1);
        p->col = rbelow(&r, cols);
        break;
    default: break;
    }
    t->model = p->model;
    t->width = p->width;
    t->call = (int32_t)p->call;
    t->calls = (int32_t)per_site[p->site];
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
    free(c->C0);
    free(c->tau);
    free(c->work);
    free(c->ipiv);
    free(c->calls);
}

static int popcount32(uint32_t x) {
    int n = 0;
    for (; x; x &= x - 1) ++n;
    return n;
}

/* The site (and operand) of a fixed-space faulty trial, drawn from its seed. */
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

/* 1 when every array the injector may be given at `site` in the fixed space holds the spec's
 * row, column and element count (the arrays of the CLI's checks, docs/campaign.md). */
static int site_holds(const abft_campaign_config_t *g, int site) {
    const int gemm = g->op == ABFT_CAMPAIGN_GEMM;
    const int64_t m = gemm ? g->m : g->n, n = g->n, k = g->k;
    int64_t dims[2][2];
    int na = 1;
    switch (site) {
    case ABFT_SITE_AFTER_ENCODE: /* A or B */
        dims[0][0] = m, dims[0][1] = k, dims[1][0] = k, dims[1][1] = n, na = 2;
        break;
    case ABFT_SITE_MID_GEMM:
    case ABFT_SITE_AFTER_GEMM:
        dims[0][0] = m, dims[0][1] = n;
        break;
    case ABFT_SITE_CHECKSUM: /* the row checksums; with full checksums the column ones too */
        dims[0][0] = m, dims[0][1] = 2;
        if (gemm && g->checksum_kind == ABFT_CHECKSUM_FULL) dims[1][0] = n, dims[1][1] = 2, na = 2;
        break;
    default: /* the n x n matrix */
        dims[0][0] = n, dims[0][1] = n;
        break;
    }
    const abft_fault_spec_t *s = &g->spec;
    for (int a = 0; a < na; ++a) {
        if (s->row >= dims[a][0] || s->col >= dims[a][1]) return 0;
        int o = 0;
        int64_t cand = smul(s->row >= 0 ? 1 : dims[a][0], s->col >= 0 ? 1 : dims[a][1], &o);
        if (!o && cand < s->nelems) return 0;
    }
    return 1;
}

/* Every rule of abft_campaign_config_t (include/abft/abft_inject.h, docs/campaign.md), and
 * the buffers' sizes, before anything is written or allocated. INVALID_VALUE names the
 * config (argument 1 of abft_campaign_run). */
static abft_status_t check_config(const abft_campaign_config_t *g) {
    ABFT_ARG_IF(g == NULL, 1);
    ABFT_ARG_IF(g->op < 0 || g->op >= ABFT_CAMPAIGN_OP_COUNT, 1);
    ABFT_RETURN_IF(ops[g->op].run == NULL, ABFT_STATUS_NOT_SUPPORTED);
    ABFT_ARG_IF(g->precision != 'd' && g->precision != 's', 1);
    ABFT_ARG_IF(g->m < 1 || g->n < 1 || g->k < 1, 1);
    ABFT_ARG_IF(g->trials < 0 || g->controls < 0 || g->refresh < 1, 1);
    ABFT_ARG_IF(g->trials > INT64_MAX - g->controls, 1); /* trial indices fit in int64 */
    ABFT_ARG_IF((g->sites & ~ops[g->op].valid_sites) != 0u, 1);
    ABFT_ARG_IF(!(g->guarantee >= 1.0) || isinf(g->guarantee), 1);
    ABFT_ARG_IF(g->only_trial < -1 || g->only_trial >= g->trials + g->controls, 1);
    ABFT_ARG_IF(g->space != ABFT_SPACE_FIXED && g->space != ABFT_SPACE_FULL, 1);
    ABFT_ARG_IF(g->jobs < 0 || g->jobs > 64, 1); /* 0: one */
    ABFT_ARG_IF(g->backend != ABFT_BACKEND_AUTO && g->backend != ABFT_BACKEND_CPU &&
                    g->backend != ABFT_BACKEND_CUDA, 1);
    /* the handle's options (the full space draws them, but the handle starts with these) */
    ABFT_ARG_IF(g->checksum_kind != ABFT_CHECKSUM_ROW && g->checksum_kind != ABFT_CHECKSUM_FULL, 1);
    ABFT_ARG_IF(g->bound_mode != ABFT_BOUND_WORST_CASE &&
                    g->bound_mode != ABFT_BOUND_PROBABILISTIC && g->bound_mode != ABFT_BOUND_TIGHT,
                1);
    ABFT_ARG_IF(!(g->bound_factor > 0.0 && g->bound_factor <= 1e6), 1); /* abft_set_bound_mode */
    ABFT_ARG_IF(g->lu_recovery != 0 && g->lu_recovery != 1, 1);
    ABFT_ARG_IF(g->random_checksum != 0 && g->random_checksum != 1, 1);
    /* the random checksum is an option of the fixed-space GEMM (the full space draws it) */
    ABFT_ARG_IF(g->random_checksum == 1 &&
                    (g->op != ABFT_CAMPAIGN_GEMM || g->space == ABFT_SPACE_FULL), 1);
    /* the fault spec (abft_injector_set_spec's rules), its row and column -1 or an index */
    const abft_fault_spec_t *s = &g->spec;
    ABFT_ARG_IF(s->bit_class < ABFT_BITS_ANY || s->bit_class > ABFT_BITS_EXACT, 1);
    ABFT_ARG_IF(s->width != 1 && s->width != 2, 1);
    ABFT_ARG_IF(s->nelems < 1 || s->nelems > ABFT_INJECT_MAX_ELEMS, 1);
    ABFT_ARG_IF(s->bit_class == ABFT_BITS_EXACT && (s->bit < 0 || s->bit + s->width > 64), 1);
    ABFT_ARG_IF(s->row < -1 || s->col < -1, 1);
    /* fixed space: every site drawn from holds the row, the column and the elements (the
     * full space draws them) */
    if (g->space == ABFT_SPACE_FIXED) {
        const uint32_t sites = g->sites != 0u ? g->sites : ops[g->op].default_sites;
        for (int st = 0; st < ABFT_SITE_COUNT; ++st)
            ABFT_ARG_IF((sites & (1u << st)) && !site_holds(g, st), 1);
    }
    camp_sizes_t z;
    ABFT_ARG_IF(camp_sizes(g, &z) != ABFT_STATUS_SUCCESS, 1);
    return ABFT_STATUS_SUCCESS;
}

static void tally(abft_campaign_summary_t *s, const abft_trial_t *t, double guarantee) {
    s->total += 1;
    if (t->control && t->outcome == ABFT_OUTCOME_ERROR) { /* apart from the faulty trials */
        s->control_errors += 1;
        return;
    }
    s->count[t->outcome] += 1;
    if (t->control) {
        if (t->outcome == ABFT_OUTCOME_CLEAN && t->report.max_ratio > s->max_control_ratio)
            s->max_control_ratio = t->report.max_ratio;
        return;
    }
    if (t->site >= 0 && t->site < ABFT_SITE_COUNT) s->by_site[t->site][t->outcome] += 1;
    if (t->config.model >= 0 && t->config.model < ABFT_FAULT_MODEL_COUNT)
        s->by_model[t->config.model][t->outcome] += 1;
    if (t->nflips > 0 && t->flips[0].bit >= 0 && t->flips[0].bit < 64)
        s->by_bit[t->flips[0].bit][t->outcome] += 1;
    if (t->nflips == 0 || t->outcome == ABFT_OUTCOME_ERROR) return;
    int detected = t->report.detected > 0 || t->report.nonfinite_input;
    /* left after a correction: a change beside the corrections, in rows and columns the
     * report never flagged (gray or SDC by the split, above g), is not the correction's */
    if (detected && t->outcome != ABFT_OUTCOME_UNCORRECTABLE && t->rho > s->max_corrected_rho &&
        (t->outcome == ABFT_OUTCOME_CORRECTED || t->outcome == ABFT_OUTCOME_MISCORRECTED ||
         t->rho <= guarantee))
        s->max_corrected_rho = t->rho;
    if (!detected && !(t->rho <= s->max_undetected_rho)) s->max_undetected_rho = t->rho;
    if (t->outcome == ABFT_OUTCOME_UNDETECTED && !(t->rel_change <= s->max_undetected_rel))
        s->max_undetected_rel = t->rel_change;
    /* gray beyond g·tau elementwise: a change the checksums see within the guarantee, spread
     * over a row (undetected, or beside faults found elsewhere) */
    if (t->outcome == ABFT_OUTCOME_GRAY && !(t->rho <= guarantee)) s->spread_undetected += 1;
}

static int classify(const abft_campaign_config_t *g, const abft_trial_t *t, int beyond,
                    const split_t *sp) {
    abft_status_t st = (abft_status_t)t->status;
    if (t->control) {
        if (st == ABFT_STATUS_NON_FINITE_INPUT || t->report.detected > 0)
            return ABFT_OUTCOME_FALSE_POSITIVE;
        return st == ABFT_STATUS_SUCCESS ? ABFT_OUTCOME_CLEAN : ABFT_OUTCOME_ERROR;
    }
    /* SINGULAR completes the call (factors, pivots and the report are written): a fault
     * that made a pivot zero is judged by what the report says, like any other */
    if (st != ABFT_STATUS_SUCCESS && st != ABFT_STATUS_NON_FINITE_INPUT &&
        st != ABFT_STATUS_SINGULAR)
        return ABFT_OUTCOME_ERROR;
    if (t->nflips == 0) return ABFT_OUTCOME_NOT_FIRED;
    const abft_report_t *r = &t->report;
    /* Reported to the caller: an uncorrectable entry, or a non-finite input refused. */
    if (st == ABFT_STATUS_NON_FINITE_INPUT || r->nonfinite_input || r->uncorrectable > 0)
        return ABFT_OUTCOME_UNCORRECTABLE;
    int detected = r->detected > 0;
    if (!detected && g->space == ABFT_SPACE_FULL) {
        /* the guarantee is stated in the change the checksums see (docs/campaign.md) */
        if (!(t->rho_check <= g->guarantee)) return ABFT_OUTCOME_SDC;
        if (t->rho <= 1.0) return beyond ? ABFT_OUTCOME_UNDETECTED : ABFT_OUTCOME_MASKED;
        return ABFT_OUTCOME_GRAY;
    }
    if (t->rho <= 1.0)
        return detected ? ABFT_OUTCOME_CORRECTED
                        : (beyond ? ABFT_OUTCOME_UNDETECTED : ABFT_OUTCOME_MASKED);
    if (detected && sp != NULL && sp->touched <= g->guarantee) {
        /* what the report resolved is right; the rest of the change lies in rows and
         * columns it never flagged, and is judged as an undetected change */
        double seen = g->space == ABFT_SPACE_FULL ? sp->check_untouched : sp->untouched;
        return seen <= g->guarantee ? ABFT_OUTCOME_GRAY : ABFT_OUTCOME_SDC;
    }
    if (t->rho <= g->guarantee) return ABFT_OUTCOME_GRAY;
    return detected ? ABFT_OUTCOME_MISCORRECTED : ABFT_OUTCOME_SDC;
}

/* The outcome of a faulty trial that ran. An undetected one is first measured against the
 * fault-free rounding noise (op->noise: tr->rel_change, and whether it is MASKED or
 * UNDETECTED), from the pristine host copies of the inputs (the backend's may be the
 * corrupted ones until op->restore puts them back). */
static int judge(const camp_t *c, const op_desc_t *op, abft_trial_t *tr) {
    const abft_report_t *r = &tr->report;
    const abft_status_t st = (abft_status_t)tr->status;
    int beyond = 0;
    if (tr->nflips > 0 && r->detected == 0 && !r->nonfinite_input && r->uncorrectable == 0 &&
        (st == ABFT_STATUS_SUCCESS || st == ABFT_STATUS_SINGULAR))
        tr->rel_change = op->noise != NULL ? op->noise(c, &beyond) : 0.0;
    split_t sp;
    const split_t *use = NULL;
    if (tr->nflips > 0 && r->detected > 0 && !r->nonfinite_input && r->uncorrectable == 0 &&
        st == ABFT_STATUS_SUCCESS && !(tr->rho <= 1.0) && op->split != NULL &&
        op->split(c, r, &sp))
        use = &sp;
    return classify(c->cfg, tr, beyond, use);
}

/* Fixed space: load input set `set` and run its golden: the injector attached but firing
 * nowhere, so the golden takes the same path (a k-split GEMM) as the faulty trials. */
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
    return op->tolerance(c);
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
    tr->config = c->tc;
    ABFT_TRY(abft_injector_set_targets(c->inj, 1u << site, which, 1));
    ABFT_TRY(abft_injector_arm(c->inj, tr->seed));
    double t0 = now_seconds();
    tr->status = (int32_t)op->run(c, &tr->report);
    tr->seconds = now_seconds() - t0;
    ABFT_TRY(abft_injector_flips(c->inj, &tr->flips, &tr->nflips));
    ABFT_TRY(op->fetch(c, c->C));
    tr->rho = op->change(c);
    tr->outcome = judge(c, op, tr);
    /* Inputs corrupted in place must be put back before the next trial. */
    for (int64_t f = 0; f < tr->nflips; ++f)
        if (tr->flips[f].site == ABFT_SITE_AFTER_ENCODE) {
            ABFT_TRY(op->restore(c, tr->flips[f].which));
        }
    return ABFT_STATUS_SUCCESS;
}

static abft_status_t run_control(camp_t *c, const op_desc_t *op, int64_t t, abft_trial_t *tr) {
    const abft_campaign_config_t *g = c->cfg;
    tr->control = 1;
    tr->seed = control_seed(g->seed, t);
    tr->set = -1;
    tr->site = -1;
    tr->which = -1;
    if (g->space == ABFT_SPACE_FULL) {
        draw_config(c, tr->seed);
        ABFT_TRY(apply_config(c));
    }
    tr->config = c->tc;
    /* The production path: fresh inputs, no hook (so no k split either). */
    ABFT_TRY(op->load(c, tr->seed));
    if (g->space == ABFT_SPACE_FULL)
        ABFT_TRY(abft_set_hook(c->h, NULL, NULL));
    else
        ABFT_TRY(abft_injector_detach(c->inj));
    double t0 = now_seconds();
    tr->status = (int32_t)op->run(c, &tr->report);
    tr->seconds = now_seconds() - t0;
    tr->outcome = classify(g, tr, 0, NULL);
    return ABFT_STATUS_SUCCESS;
}

/* Full space: trial t draws its configuration, loads its own inputs, runs its own golden
 * through the campaign's hook (which records every call), then fires the planned fault at
 * the planned call. A golden run that fails is the trial's ERROR outcome (with the golden's
 * status); one that flags something is a golden detection. */
static abft_status_t run_full(camp_t *c, const op_desc_t *op, int64_t t, uint32_t sites,
                              int64_t *golden_fp, abft_trial_t *tr) {
    const abft_campaign_config_t *g = c->cfg;
    tr->seed = trial_seed(g->seed, t);
    tr->set = t;
    tr->site = -1;
    tr->which = -1;
    draw_config(c, tr->seed);
    ABFT_TRY(apply_config(c));
    ABFT_TRY(op->load(c, mix64(tr->seed ^ 0x1a1a1a1a1a1a1a1aull)));
    ABFT_TRY(abft_set_hook(c->h, camp_hook, c));
    memset(c->ncalls, 0, sizeof c->ncalls);
    c->ncall = 0;
    c->hook_mode = HOOK_RECORD;
    abft_report_t rep;
    memset(&rep, 0, sizeof rep);
    abft_status_t st = op->run(c, &rep);
    c->hook_mode = HOOK_OFF;
    if (st == ABFT_STATUS_ALLOC_FAILED) return st;
    if (rep.detected > 0 || rep.nonfinite_input) *golden_fp += 1;
    if (st != ABFT_STATUS_SUCCESS) {
        tr->config = c->tc;
        tr->status = (int32_t)st;
        tr->report = rep;
        tr->outcome = ABFT_OUTCOME_ERROR;
        return ABFT_STATUS_SUCCESS;
    }
    c->u = rep.unit_roundoff > 0 ? rep.unit_roundoff
                                 : (c->prec == ABFT_PREC_D ? 0x1p-53 : 0x1p-24);
    ABFT_TRY(op->fetch(c, c->G));
    ABFT_TRY(op->tolerance(c));

    plan_fault(c, sites, tr->seed);
    tr->config = c->tc;
    tr->site = c->plan.site;
    tr->which = c->plan.which;
    ABFT_TRY(abft_injector_arm(c->inj, tr->seed));
    if (c->plan.site < 0) { /* no site of the set was reached: NOT_FIRED */
        ABFT_TRY(abft_injector_flips(c->inj, &tr->flips, &tr->nflips));
        tr->outcome = classify(g, tr, 0, NULL);
        return ABFT_STATUS_SUCCESS;
    }
    ABFT_TRY(abft_injector_set_targets(c->inj, 1u << c->plan.site, -1, 0));
    memset(c->ncalls, 0, sizeof c->ncalls);
    c->hook_mode = HOOK_FIRE;
    double t0 = now_seconds();
    tr->status = (int32_t)op->run(c, &tr->report);
    tr->seconds = now_seconds() - t0;
    c->hook_mode = HOOK_OFF;
    ABFT_TRY(abft_injector_flips(c->inj, &tr->flips, &tr->nflips));
    ABFT_TRY(op->fetch(c, c->C));
    tr->rho = op->change(c);
    tr->rho_check = op->check(c);
    tr->outcome = judge(c, op, tr);
    for (int64_t f = 0; f < tr->nflips; ++f)
        if (tr->flips[f].site == ABFT_SITE_AFTER_ENCODE) {
            ABFT_TRY(op->restore(c, tr->flips[f].which));
        }
    return ABFT_STATUS_SUCCESS;
}

/* ---- running the trials: blocks on worker threads, results in index order ------------ */

/* A trial's record, kept until the calling thread has passed it on: the trial with its own
 * copy of the flips, and the golden run that came before it in its block (if any). */
typedef struct trial_rec {
    abft_trial_t tr;
    abft_flip_t *flips;
    int golden;    /* a golden run preceded this trial */
    int golden_fp; /* ... and flagged something */
    double u;      /* the golden's unit roundoff (0: no golden) */
} trial_rec_t;

/* A block: consecutive trials that one worker runs. Fixed space: up to SET_BLOCK faulty
 * trials of one input set (its golden first: a set larger than that runs its golden again
 * in each of its blocks, counted once), or up to BLOCK controls; full space: up to BLOCK
 * trials. Blocks are made as the workers take them (block_end), at most WINDOW ahead of
 * what the calling thread has passed on, so the memory stays bounded whatever the number
 * of trials. */
enum { BLOCK = 16, SET_BLOCK = 256, WINDOW = 64 /* blocks in flight: memory stays bounded */ };
typedef struct block {
    int64_t first, last;
    int count_golden; /* fixed space: this block's golden is its set's first (counted) */
    trial_rec_t *rec;
    int done;
    int cut;          /* the stop flag ended it early: last is where it stopped */
    abft_status_t st;
} block_t;

/* The caller's stop flag (abft_campaign_config_t.stop) is set. */
static int stop_asked(const abft_campaign_config_t *g) {
    return g->stop != NULL && *g->stop != 0;
}

typedef struct shared {
    const abft_campaign_config_t *cfg;
    int64_t first, last;   /* the trials to run */
    block_t slot[WINDOW];  /* block i in slot i % WINDOW */
    int64_t next, cursor;  /* blocks made so far; the first trial of the next one */
    int64_t emitted;       /* blocks passed on so far */
    int stop;
    pthread_mutex_t mu;
    pthread_cond_t cv;
} shared_t;

/* Waits on sh->cv (its mutex held); with a stop flag, for at most 50 ms: the flag, set by
 * a signal handler that cannot signal the condition, is seen within that time. */
static void wait_cv(shared_t *sh) {
    struct timespec ts; /* TIME_UTC: the realtime clock the condition's default clock is */
    if (sh->cfg->stop == NULL || timespec_get(&ts, TIME_UTC) != TIME_UTC) {
        pthread_cond_wait(&sh->cv, &sh->mu);
        return;
    }
    ts.tv_nsec += 50000000L;
    if (ts.tv_nsec >= 1000000000L) ts.tv_sec += 1, ts.tv_nsec -= 1000000000L;
    (void)pthread_cond_timedwait(&sh->cv, &sh->mu, &ts);
}

/* One handle, injector and set of buffers per worker. */
static abft_status_t camp_init(camp_t *c, const abft_campaign_config_t *g) {
    memset(c, 0, sizeof *c);
    c->cfg = g;
    c->prec = g->precision == 'd' ? ABFT_PREC_D : ABFT_PREC_S;
    c->es = g->precision == 'd' ? sizeof(double) : sizeof(float);
    ABFT_TRY(abft_create(&c->h, (abft_backend_t)g->backend));
    fixed_config(c);
    ABFT_TRY(apply_config(c));
    ABFT_TRY(abft_injector_create(c->h, &c->inj));
    ABFT_TRY(abft_injector_set_spec(c->inj, &g->spec));
    if (g->op == ABFT_CAMPAIGN_GEMM) {
        c->maxr = g->m, c->maxc = g->n, c->maxk = g->k;
    } else {
        c->maxr = g->n, c->maxc = g->n, c->maxk = 1;
    }
    return ops[g->op].setup(c);
}

static abft_status_t keep(trial_rec_t *r, const abft_trial_t *tr) {
    r->tr = *tr;
    r->flips = NULL;
    if (tr->nflips > 0) {
        r->flips = (abft_flip_t *)malloc((size_t)tr->nflips * sizeof(abft_flip_t));
        if (r->flips == NULL) return ABFT_STATUS_ALLOC_FAILED;
        memcpy(r->flips, tr->flips, (size_t)tr->nflips * sizeof(abft_flip_t));
    }
    r->tr.flips = r->flips;
    return ABFT_STATUS_SUCCESS;
}

static abft_status_t run_block(camp_t *c, block_t *b) {
    const abft_campaign_config_t *g = c->cfg;
    const op_desc_t *op = &ops[g->op];
    const uint32_t sites = g->sites != 0u ? g->sites : op->default_sites;
    const int full = g->space == ABFT_SPACE_FULL;
    for (int64_t t = b->first; t < b->last; ++t) {
        if (stop_asked(g)) { /* no trial starts after the stop: the block ends here */
            b->last = t;
            b->cut = 1;
            break;
        }
        trial_rec_t *r = &b->rec[t - b->first];
        abft_trial_t tr;
        memset(&tr, 0, sizeof tr);
        tr.index = t;
        int64_t fp = 0;
        if (t < g->trials && full) {
            ABFT_TRY(run_full(c, op, t, sites, &fp, &tr));
            r->golden = 1, r->u = c->u;
        } else if (t < g->trials) {
            if (t == b->first) { /* the block's input set */
                ABFT_TRY(golden(c, op, t / g->refresh, &fp));
                r->golden = b->count_golden, r->u = c->u;
                if (!b->count_golden) fp = 0; /* the same golden run again */
            }
            ABFT_TRY(run_faulty(c, op, t, sites, &tr));
        } else {
            ABFT_TRY(run_control(c, op, t, &tr));
        }
        r->golden_fp = fp > 0;
        ABFT_TRY(keep(r, &tr));
    }
    return ABFT_STATUS_SUCCESS;
}

/* The block that starts at trial t of the trials [first, last): its end, and whether its
 * golden run is its input set's first (counted). */
static int64_t block_end(const abft_campaign_config_t *g, int64_t t, int64_t first,
                         int64_t last, int *count_golden) {
    int64_t len = BLOCK;
    *count_golden = 0;
    if (t < g->trials && g->space != ABFT_SPACE_FULL) { /* at most to the end of t's set */
        len = min64(g->refresh - t % g->refresh, SET_BLOCK);
        *count_golden = t % g->refresh == 0 || t == first;
    }
    if (t < g->trials) len = min64(len, g->trials - t);
    return t + min64(len, last - t);
}

/* (A cut block's records past its last were never filled: they hold nothing to free.) */
static void free_block(block_t *b) {
    if (b->rec == NULL) return;
    for (int64_t i = 0; i < b->last - b->first; ++i) free(b->rec[i].flips);
    free(b->rec);
    b->rec = NULL;
}

/* A worker: makes and takes the next block (at most WINDOW ahead of what was passed on),
 * runs it on its own camp, marks it done. A failure stops every worker. */
static void work(shared_t *sh, camp_t *c) {
    for (;;) {
        pthread_mutex_lock(&sh->mu);
        while (!sh->stop && !stop_asked(sh->cfg) && sh->cursor < sh->last &&
               sh->next >= sh->emitted + WINDOW)
            wait_cv(sh);
        if (sh->stop || stop_asked(sh->cfg) || sh->cursor >= sh->last) {
            pthread_mutex_unlock(&sh->mu);
            return;
        }
        block_t *b = &sh->slot[sh->next % WINDOW];
        memset(b, 0, sizeof *b);
        b->first = sh->cursor;
        b->last = block_end(sh->cfg, sh->cursor, sh->first, sh->last, &b->count_golden);
        sh->cursor = b->last;
        sh->next += 1;
        pthread_mutex_unlock(&sh->mu);
        abft_status_t st = ABFT_STATUS_SUCCESS;
        b->rec = (trial_rec_t *)calloc((size_t)(b->last - b->first), sizeof(trial_rec_t));
        if (b->rec == NULL) st = ABFT_STATUS_ALLOC_FAILED;
        if (st == ABFT_STATUS_SUCCESS) st = run_block(c, b);
        pthread_mutex_lock(&sh->mu);
        b->st = st;
        b->done = 1;
        if (st != ABFT_STATUS_SUCCESS) sh->stop = 1;
        pthread_cond_broadcast(&sh->cv);
        pthread_mutex_unlock(&sh->mu);
    }
}

typedef struct worker {
    shared_t *sh;
    camp_t c;
    abft_status_t init;
    pthread_t th;
} worker_t;

static void *worker_main(void *arg) {
    worker_t *w = (worker_t *)arg;
    w->init = camp_init(&w->c, w->sh->cfg);
    if (w->init != ABFT_STATUS_SUCCESS) {
        pthread_mutex_lock(&w->sh->mu);
        w->sh->stop = 1;
        pthread_cond_broadcast(&w->sh->cv);
        pthread_mutex_unlock(&w->sh->mu);
        return NULL;
    }
    work(w->sh, &w->c);
    return NULL;
}

/* Passes block b's trials on, in order: the summary, the callbacks. */
static void emit(const abft_campaign_config_t *g, block_t *b, abft_campaign_summary_t *s,
                 int64_t first, int64_t total) {
    for (int64_t t = b->first; t < b->last; ++t) {
        const trial_rec_t *r = &b->rec[t - b->first];
        if (r->golden) {
            s->golden_runs += 1;
            s->golden_detections += r->golden_fp;
            if (r->u > s->unit_roundoff) s->unit_roundoff = r->u;
        }
        tally(s, &r->tr, g->guarantee);
        if (g->on_trial) g->on_trial(g->user, &r->tr);
        if (g->progress) g->progress(g->user, t - first + 1, total);
    }
}

static abft_status_t campaign(const abft_campaign_config_t *g, abft_campaign_summary_t *s,
                              int *stopped) {
    int64_t first = 0, last = g->trials + g->controls;
    if (g->only_trial >= 0) {
        first = g->only_trial;
        last = first + 1;
    }
    const int64_t total = last - first;
    /* the blocks, counted up to the number of workers that could use them */
    int64_t nb = 0;
    for (int64_t t = first; t < last && nb <= g->jobs; ++nb) {
        int cg;
        t = block_end(g, t, first, last, &cg);
    }
    abft_status_t st = ABFT_STATUS_SUCCESS;
    if (g->jobs <= 1 || nb <= 1) {
        /* on this thread: block after block, each passed on as soon as it is done */
        camp_t c;
        st = camp_init(&c, g);
        if (st == ABFT_STATUS_SUCCESS) st = abft_get_backend(c.h, (abft_backend_t *)&s->backend);
        for (int64_t t = first; t < last && st == ABFT_STATUS_SUCCESS;) {
            block_t b;
            memset(&b, 0, sizeof b);
            b.first = t;
            b.last = block_end(g, t, first, last, &b.count_golden);
            b.rec = (trial_rec_t *)calloc((size_t)(b.last - b.first), sizeof(trial_rec_t));
            st = b.rec == NULL ? ABFT_STATUS_ALLOC_FAILED : run_block(&c, &b);
            if (st == ABFT_STATUS_SUCCESS) emit(g, &b, s, first, total);
            free_block(&b);
            t = b.last;
            if (st == ABFT_STATUS_SUCCESS && b.cut) {
                *stopped = 1;
                break;
            }
        }
        camp_free(&c);
        return st;
    }

    shared_t *sh = (shared_t *)calloc(1, sizeof(shared_t));
    const int nw = g->jobs < nb ? g->jobs : (int)nb;
    worker_t *w = (worker_t *)calloc((size_t)nw, sizeof(worker_t));
    if (sh == NULL || w == NULL || pthread_mutex_init(&sh->mu, NULL) != 0) {
        free(w);
        free(sh);
        return ABFT_STATUS_ALLOC_FAILED;
    }
    if (pthread_cond_init(&sh->cv, NULL) != 0) {
        pthread_mutex_destroy(&sh->mu);
        free(w);
        free(sh);
        return ABFT_STATUS_ALLOC_FAILED;
    }
    sh->cfg = g;
    sh->first = first, sh->last = last, sh->cursor = first;
    int started = 0;
    for (; started < nw; ++started) {
        w[started].sh = sh;
        if (pthread_create(&w[started].th, NULL, worker_main, &w[started]) != 0) break;
    }
    if (started == 0) st = ABFT_STATUS_ALLOC_FAILED;
    /* pass the blocks on in order as they complete */
    int all = 0; /* every block passed on */
    for (int64_t i = 0; st == ABFT_STATUS_SUCCESS; ++i) {
        block_t *b = &sh->slot[i % WINDOW];
        pthread_mutex_lock(&sh->mu);
        /* a stop: no block is made after the workers see it, so once every block made was
         * passed on, none will come */
        while (!sh->stop && !(i < sh->next && b->done) && !(i >= sh->next && sh->cursor >= last) &&
               !(i >= sh->next && stop_asked(g)))
            wait_cv(sh);
        int done = i < sh->next && b->done;
        all = !done && i >= sh->next && sh->cursor >= last;
        int halted = !done && !all && !sh->stop && i >= sh->next && stop_asked(g);
        abft_status_t bst = b->st;
        pthread_mutex_unlock(&sh->mu);
        if (halted) {
            *stopped = 1;
            break;
        }
        if (!done) break; /* all passed on, or a worker failed: its status is found below */
        if (bst != ABFT_STATUS_SUCCESS) {
            st = bst;
            break;
        }
        emit(g, b, s, first, total);
        int cut = b->cut;
        free_block(b);
        if (cut) { /* the trials after it are not passed on: the summary stays a prefix */
            pthread_mutex_lock(&sh->mu);
            sh->emitted = i + 1;
            pthread_mutex_unlock(&sh->mu);
            *stopped = 1;
            break;
        }
        pthread_mutex_lock(&sh->mu);
        sh->emitted = i + 1;
        pthread_cond_broadcast(&sh->cv);
        pthread_mutex_unlock(&sh->mu);
    }
    pthread_mutex_lock(&sh->mu);
    sh->stop = 1;
    pthread_cond_broadcast(&sh->cv);
    pthread_mutex_unlock(&sh->mu);
    for (int i = 0; i < started; ++i) pthread_join(w[i].th, NULL);
    for (int64_t i = sh->emitted; i < sh->next; ++i) { /* the first failure, in block order */
        block_t *b = &sh->slot[i % WINDOW];
        if (st == ABFT_STATUS_SUCCESS && !*stopped && b->done && b->st != ABFT_STATUS_SUCCESS)
            st = b->st; /* (after a stop the blocks not passed on are dropped, failed or not) */
        free_block(b);
    }
    for (int i = 0; i < started; ++i)
        if (st == ABFT_STATUS_SUCCESS && w[i].init != ABFT_STATUS_SUCCESS) st = w[i].init;
    if (st == ABFT_STATUS_SUCCESS && !all && !*stopped) /* no thread could start */
        st = started < nw ? ABFT_STATUS_ALLOC_FAILED : ABFT_STATUS_INTERNAL_ERROR;
    if (started > 0 && w[0].init == ABFT_STATUS_SUCCESS)
        (void)abft_get_backend(w[0].c.h, (abft_backend_t *)&s->backend);
    for (int i = 0; i < started; ++i) camp_free(&w[i].c);
    pthread_cond_destroy(&sh->cv);
    pthread_mutex_destroy(&sh->mu);
    free(w);
    free(sh);
    return st;
}

/* The records of the trials in flight: a block on one thread; with workers, up to WINDOW
 * blocks of the longest kind (flips: the elements of one firing). */
static int64_t records_bytes(const abft_campaign_config_t *g, int workers, int *o) {
    int64_t total = g->only_trial >= 0 ? 1 : sadd(g->trials, g->controls, o);
    int64_t len = BLOCK;
    if (g->space != ABFT_SPACE_FULL) len = max64(len, min64(g->refresh, SET_BLOCK));
    int64_t n = min64(total, workers > 1 ? WINDOW * len : len);
    int64_t flips = g->space == ABFT_SPACE_FULL ? 4 : g->spec.nelems > 0 ? g->spec.nelems : 1;
    return smul(n, sadd((int64_t)sizeof(trial_rec_t),
                        smul(flips, (int64_t)sizeof(abft_flip_t), o), o), o);
}

abft_status_t abft_campaign_memory(const abft_campaign_config_t *cfg, int64_t *host_bytes,
                                   int64_t *backend_bytes) {
    ABFT_ARG_IF(cfg == NULL, 1);
    ABFT_ARG_IF(host_bytes == NULL, 2);
    ABFT_ARG_IF(backend_bytes == NULL, 3);
    const abft_campaign_config_t *g = cfg;
    ABFT_ARG_IF(g->op < 0 || g->op >= ABFT_CAMPAIGN_OP_COUNT, 1);
    ABFT_ARG_IF(g->precision != 'd' && g->precision != 's', 1);
    ABFT_ARG_IF(g->m < 1 || g->n < 1 || g->k < 1, 1);
    ABFT_ARG_IF(g->trials < 0 || g->controls < 0 || g->refresh < 1, 1);
    ABFT_ARG_IF(g->space != ABFT_SPACE_FIXED && g->space != ABFT_SPACE_FULL, 1);
    ABFT_ARG_IF(g->jobs < 0 || g->jobs > 64, 1);
    camp_sizes_t z;
    ABFT_ARG_IF(camp_sizes(g, &z) != ABFT_STATUS_SUCCESS, 1);
    const int workers = g->jobs > 1 ? g->jobs : 1;
    int o = 0;
    int64_t host = sadd(smul(workers, z.host, &o), records_bytes(g, workers, &o), &o);
    int64_t backend = smul(workers, z.backend, &o);
    ABFT_ARG_IF(o, 1);
    *host_bytes = host;
    *backend_bytes = backend;
    return ABFT_STATUS_SUCCESS;
}

abft_status_t abft_campaign_run(const abft_campaign_config_t *cfg, abft_campaign_summary_t *s) {
    ABFT_TRY(check_config(cfg));
    ABFT_ARG_IF(s == NULL, 2);
    /* the summary is written only when the campaign completed */
    abft_campaign_summary_t sum;
    memset(&sum, 0, sizeof sum);
    double t0 = now_seconds();
    int stopped = 0;
    abft_status_t st = campaign(cfg, &sum, &stopped);
    sum.seconds = now_seconds() - t0;
    sum.partial = stopped;
    /* a call inside refused something the config asked for: the config is at fault */
    if (st == ABFT_STATUS_INVALID_VALUE) abft_set_bad_arg(1);
    if (st == ABFT_STATUS_SUCCESS) *s = sum;
    return st;
}
