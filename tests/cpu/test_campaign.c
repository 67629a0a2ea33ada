/* Small CPU fault-injection campaigns through abft_campaign_run: zero SDC, zero
 * miscorrection, zero false positives where the protocol guarantees it, in the fixed space
 * and in the full space (every configuration the API accepts, every fault model, any call
 * of a site), with the draws shown to cover that space; a campaign replays trial by trial
 * from its seed; the Wilson interval. */
#include <math.h>
#include <string.h>

#include "testutil.h"

#define MAXT 512

typedef struct rec {
    int64_t n;
    int32_t outcome[MAXT];
    uint64_t seed[MAXT];
    abft_flip_t flip[MAXT];
    double rho[MAXT];
} rec_t;

static void collect(void *user, const abft_trial_t *t) {
    rec_t *r = (rec_t *)user;
    if (t->index >= MAXT) return;
    r->outcome[t->index] = t->outcome;
    r->seed[t->index] = t->seed;
    r->rho[t->index] = t->rho;
    if (t->nflips > 0) r->flip[t->index] = t->flips[0];
    else memset(&r->flip[t->index], 0, sizeof(abft_flip_t));
    r->n += 1;
    int bad = t->outcome == ABFT_OUTCOME_SDC || t->outcome == ABFT_OUTCOME_MISCORRECTED ||
              t->outcome == ABFT_OUTCOME_FALSE_POSITIVE || t->outcome == ABFT_OUTCOME_ERROR;
    if (bad)
        fprintf(stderr, "  trial %lld (seed %llu): %s, site %d which %d, bit %d of [%lld, %lld] "
                        "%.17g -> %.17g, rho %.4g, detected %lld corrected %lld\n",
                (long long)t->index, (unsigned long long)t->seed, abft_outcome_name(t->outcome),
                t->site, t->which, t->nflips ? t->flips[0].bit : -1,
                (long long)(t->nflips ? t->flips[0].row : -1),
                (long long)(t->nflips ? t->flips[0].col : -1),
                t->nflips ? t->flips[0].old_value : 0.0, t->nflips ? t->flips[0].new_value : 0.0,
                t->rho, (long long)t->report.detected, (long long)t->report.corrected);
}

static void expect_clean(const char *what, const abft_campaign_config_t *c,
                         const abft_campaign_summary_t *s) {
    printf("%s (%c, n=%lld, %s, seed %llu): masked %lld corrected %lld uncorrectable %lld gray "
           "%lld sdc %lld miscorrected %lld fp %lld clean %lld not_fired %lld error %lld "
           "undetected %lld, %.2f s\n",
           what, c->precision, (long long)c->n,
           c->checksum_kind == ABFT_CHECKSUM_FULL ? "full" : "row", (unsigned long long)c->seed,
           (long long)s->count[0], (long long)s->count[1], (long long)s->count[2],
           (long long)s->count[3], (long long)s->count[4], (long long)s->count[5],
           (long long)s->count[6], (long long)s->count[7], (long long)s->count[8],
           (long long)s->count[9], (long long)s->count[ABFT_OUTCOME_UNDETECTED], s->seconds);
    TU_CHECK(s->count[ABFT_OUTCOME_SDC] == 0, "%s: %lld SDC", what,
             (long long)s->count[ABFT_OUTCOME_SDC]);
    TU_CHECK(s->count[ABFT_OUTCOME_MISCORRECTED] == 0, "%s: %lld miscorrected", what,
             (long long)s->count[ABFT_OUTCOME_MISCORRECTED]);
    TU_CHECK(s->count[ABFT_OUTCOME_FALSE_POSITIVE] == 0 && s->golden_detections == 0,
             "%s: %lld false positives, %lld golden detections", what,
             (long long)s->count[ABFT_OUTCOME_FALSE_POSITIVE], (long long)s->golden_detections);
    TU_CHECK(s->count[ABFT_OUTCOME_ERROR] == 0 && s->control_errors == 0,
             "%s: %lld errors, %lld control errors", what,
             (long long)s->count[ABFT_OUTCOME_ERROR], (long long)s->control_errors);
    TU_CHECK(s->count[ABFT_OUTCOME_NOT_FIRED] == 0, "%s: %lld trials never fired", what,
             (long long)s->count[ABFT_OUTCOME_NOT_FIRED]);
    TU_CHECK(s->count[ABFT_OUTCOME_CLEAN] == c->controls, "%s: %lld clean controls of %lld", what,
             (long long)s->count[ABFT_OUTCOME_CLEAN], (long long)c->controls);
    TU_CHECK(s->total == c->trials + c->controls, "%s: %lld trials run", what, (long long)s->total);
}

/* ---- full space: what the draws covered, and every bad trial in full ---------------------- */

typedef struct cover {
    int64_t trials, controls;
    int trans[4];            /* transa + 2·transb */
    int alpha0, alpha_neg, alpha_tiny, alpha_huge, alpha_other, beta0, beta1, beta_other;
    int c_nan, c_big, ld_pad, size1, rect, kind[2], bound[2], recompute[2], lu_recovery[2];
    int model[ABFT_FAULT_MODEL_COUNT];
    int site[ABFT_SITE_COUNT];
    int call_gt0[ABFT_SITE_COUNT]; /* a firing call > 0 at that site */
    int nb_set, check_every_gt1, lookahead[3], panel_nb_set;
    int64_t bad;
} cover_t;

static void print_config(FILE *f, const abft_trial_config_t *c) {
    fprintf(f,
            "    config: m %lld n %lld k %lld, op(A) %c op(B) %c, lda %lld ldb %lld ldc %lld, "
            "alpha %.17g beta %.17g c_scale %.17g, %s checksums, %s bound (factor %g), math %d, "
            "recompute %d, lu_recovery %d, nb %lld check_every %lld panel_nb %lld lookahead "
            "%lld; fault %s width %d, call %d of %d\n",
            (long long)c->m, (long long)c->n, (long long)c->k, c->transa ? 'T' : 'N',
            c->transb ? 'T' : 'N', (long long)c->lda, (long long)c->ldb, (long long)c->ldc,
            c->alpha, c->beta, c->c_scale, c->checksum_kind == ABFT_CHECKSUM_FULL ? "full" : "row",
            c->bound_mode == ABFT_BOUND_PROBABILISTIC ? "prob" : "worst", c->bound_factor,
            c->math_mode, c->recompute, c->lu_recovery, (long long)c->nb,
            (long long)c->check_every, (long long)c->panel_nb, (long long)c->lookahead,
            abft_fault_model_name(c->model), c->width, c->call, c->calls);
}

static void cover_trial(void *user, const abft_trial_t *t) {
    cover_t *v = (cover_t *)user;
    const abft_trial_config_t *c = &t->config;
    int bad = t->outcome == ABFT_OUTCOME_SDC || t->outcome == ABFT_OUTCOME_MISCORRECTED ||
              t->outcome == ABFT_OUTCOME_FALSE_POSITIVE || t->outcome == ABFT_OUTCOME_ERROR;
    if (bad) {
        v->bad += 1;
        fprintf(stderr, "  trial %lld (seed %llu): %s, status %s, site %d which %d, rho %.4g, "
                        "detected %lld corrected %lld uncorrectable %lld recomputed %lld "
                        "checksum faults %lld\n",
                (long long)t->index, (unsigned long long)t->seed, abft_outcome_name(t->outcome),
                abft_status_name((abft_status_t)t->status), t->site, t->which, t->rho,
                (long long)t->report.detected, (long long)t->report.corrected,
                (long long)t->report.uncorrectable, (long long)t->report.recomputed,
                (long long)t->report.checksum_faults);
        print_config(stderr, c);
        for (int64_t e = 0; e < t->nflips; ++e)
            fprintf(stderr, "    flip %lld: site %d which %d [%lld, %lld] bit %d width %d "
                            "%.17g -> %.17g\n",
                    (long long)e, t->flips[e].site, t->flips[e].which,
                    (long long)t->flips[e].row, (long long)t->flips[e].col, t->flips[e].bit,
                    t->flips[e].width, t->flips[e].old_value, t->flips[e].new_value);
    }
    if (t->control) {
        v->controls += 1;
        return;
    }
    v->trials += 1;
    v->trans[c->transa + 2 * c->transb] += 1;
    if (c->alpha == 0.0) v->alpha0 += 1;
    else if (fabs(c->alpha) < 1e-20) v->alpha_tiny += 1;
    else if (fabs(c->alpha) > 1e20) v->alpha_huge += 1;
    else if (c->alpha < 0) v->alpha_neg += 1;
    else if (c->alpha != 1.0) v->alpha_other += 1;
    if (c->beta == 0.0) v->beta0 += 1;
    else if (c->beta == 1.0) v->beta1 += 1;
    else v->beta_other += 1;
    if (isnan(c->c_scale)) v->c_nan += 1;
    if (c->beta != 0.0 && c->c_scale >= 0x1p24 * (c->alpha != 0.0 ? fabs(c->alpha) : 1.0))
        v->c_big += 1;
    if (c->lda > (c->transa ? c->k : c->m) || c->ldc > c->m) v->ld_pad += 1;
    if (c->m == 1 || c->n == 1 || c->k == 1) v->size1 += 1;
    if (c->m != c->n) v->rect += 1;
    v->kind[c->checksum_kind == ABFT_CHECKSUM_FULL] += 1;
    v->bound[c->bound_mode == ABFT_BOUND_PROBABILISTIC] += 1;
    v->recompute[c->recompute != 0] += 1;
    v->lu_recovery[c->lu_recovery != 0] += 1;
    if (c->model >= 0 && c->model < ABFT_FAULT_MODEL_COUNT) v->model[c->model] += 1;
    if (t->site >= 0 && t->site < ABFT_SITE_COUNT) {
        v->site[t->site] += 1;
        if (c->call > 0) v->call_gt0[t->site] += 1;
    }
    if (c->nb > 0) v->nb_set += 1;
    if (c->check_every > 1) v->check_every_gt1 += 1;
    if (c->lookahead >= -1 && c->lookahead <= 1) v->lookahead[c->lookahead + 1] += 1;
    if (c->panel_nb > 0) v->panel_nb_set += 1;
}

/* A full-space campaign of one operation and precision: no SDC above the guarantee, no
 * miscorrection, no false positive (controls and golden runs), no error; and the draws
 * cover the space. */
static void full_space(int op, char prec, uint64_t seed, int64_t trials, int64_t controls) {
    static cover_t v;
    memset(&v, 0, sizeof v);
    abft_campaign_config_t c = abft_campaign_config_default();
    c.backend = ABFT_BACKEND_CPU;
    c.op = op;
    c.precision = prec;
    c.space = ABFT_SPACE_FULL;
    c.m = 40, c.n = 36, c.k = 44;
    if (op != ABFT_CAMPAIGN_GEMM) c.n = 48; /* m x n, both up to n */
    c.trials = trials;
    c.controls = controls;
    c.seed = seed;
    c.on_trial = cover_trial;
    c.user = &v;
    const char *name = op == ABFT_CAMPAIGN_GEMM    ? "full space gemm"
                       : op == ABFT_CAMPAIGN_GETRF ? "full space getrf"
                                                   : "full space getrf_online";
    abft_campaign_summary_t s;
    TU_CHECK_STATUS(abft_campaign_run(&c, &s), ABFT_STATUS_SUCCESS);
    printf("%s (%c, seed %llu, max m %lld n %lld k %lld): masked %lld corrected %lld "
           "uncorrectable %lld gray %lld sdc %lld miscorrected %lld fp %lld clean %lld "
           "not_fired %lld error %lld control errors %lld golden detections %lld, %.2f s\n",
           name, prec, (unsigned long long)seed, (long long)c.m, (long long)c.n, (long long)c.k,
           (long long)s.count[0], (long long)s.count[1], (long long)s.count[2],
           (long long)s.count[3], (long long)s.count[4], (long long)s.count[5],
           (long long)s.count[6], (long long)s.count[7], (long long)s.count[8],
           (long long)s.count[9], (long long)s.control_errors, (long long)s.golden_detections,
           s.seconds);
    printf("  by model:");
    for (int mo = 0; mo < ABFT_FAULT_MODEL_COUNT; ++mo) {
        int64_t n = 0;
        for (int o = 0; o < ABFT_OUTCOME_COUNT; ++o) n += s.by_model[mo][o];
        printf(" %s %lld (corrected %lld, uncorrectable %lld)", abft_fault_model_name(mo),
               (long long)n, (long long)s.by_model[mo][ABFT_OUTCOME_CORRECTED],
               (long long)s.by_model[mo][ABFT_OUTCOME_UNCORRECTABLE]);
    }
    printf("\n");
    TU_CHECK(s.count[ABFT_OUTCOME_SDC] == 0, "%s %c: %lld SDC", name, prec,
             (long long)s.count[ABFT_OUTCOME_SDC]);
    TU_CHECK(s.count[ABFT_OUTCOME_MISCORRECTED] == 0, "%s %c: %lld miscorrected", name, prec,
             (long long)s.count[ABFT_OUTCOME_MISCORRECTED]);
    TU_CHECK(s.count[ABFT_OUTCOME_FALSE_POSITIVE] == 0 && s.golden_detections == 0,
             "%s %c: %lld false positives, %lld golden detections", name, prec,
             (long long)s.count[ABFT_OUTCOME_FALSE_POSITIVE], (long long)s.golden_detections);
    TU_CHECK(s.count[ABFT_OUTCOME_ERROR] == 0 && s.control_errors == 0,
             "%s %c: %lld errors, %lld control errors", name, prec,
             (long long)s.count[ABFT_OUTCOME_ERROR], (long long)s.control_errors);
    TU_CHECK(s.count[ABFT_OUTCOME_NOT_FIRED] == 0, "%s %c: %lld trials never fired", name, prec,
             (long long)s.count[ABFT_OUTCOME_NOT_FIRED]);
    TU_CHECK(s.total == trials + controls && v.trials == trials && v.controls == controls,
             "%s %c: %lld trials run", name, prec, (long long)s.total);
    TU_CHECK(s.golden_runs == trials, "%s %c: %lld golden runs for %lld trials", name, prec,
             (long long)s.golden_runs, (long long)trials);
    /* coverage */
    for (int mo = 0; mo < ABFT_FAULT_MODEL_COUNT; ++mo)
        TU_CHECK(v.model[mo] > 0, "%s %c: fault model %s never drawn", name, prec,
                 abft_fault_model_name(mo));
    TU_CHECK(v.kind[0] > 0 && v.kind[1] > 0, "%s %c: row %d, full %d", name, prec, v.kind[0],
             v.kind[1]);
    TU_CHECK(v.bound[0] > 0 && v.bound[1] > 0, "%s %c: worst %d, prob %d", name, prec,
             v.bound[0], v.bound[1]);
    TU_CHECK(v.ld_pad > 0 && v.size1 > 0 && v.rect > 0,
             "%s %c: padded ld %d, a size 1 %d, rectangular %d", name, prec, v.ld_pad, v.size1,
             v.rect);
    if (op == ABFT_CAMPAIGN_GEMM) {
        for (int q = 0; q < 4; ++q)
            TU_CHECK(v.trans[q] > 0, "%s %c: transposes (%c, %c) never drawn", name, prec,
                     q & 1 ? 'T' : 'N', q & 2 ? 'T' : 'N');
        TU_CHECK(v.alpha0 > 0 && v.alpha_neg > 0 && v.alpha_tiny > 0 && v.alpha_huge > 0 &&
                     v.alpha_other > 0,
                 "%s %c: alpha 0 %d, negative %d, tiny %d, huge %d, other %d", name, prec,
                 v.alpha0, v.alpha_neg, v.alpha_tiny, v.alpha_huge, v.alpha_other);
        TU_CHECK(v.beta0 > 0 && v.beta1 > 0 && v.beta_other > 0 && v.c_nan > 0 && v.c_big > 0,
                 "%s %c: beta 0 %d, 1 %d, other %d; NaN old C %d, large old C %d", name, prec,
                 v.beta0, v.beta1, v.beta_other, v.c_nan, v.c_big);
        TU_CHECK(v.recompute[0] > 0 && v.recompute[1] > 0, "%s %c: recompute off %d, on %d",
                 name, prec, v.recompute[0], v.recompute[1]);
        for (int st = ABFT_SITE_AFTER_ENCODE; st <= ABFT_SITE_CHECKSUM; ++st)
            TU_CHECK(v.site[st] > 0, "%s %c: site %d never struck", name, prec, st);
        TU_CHECK(v.call_gt0[ABFT_SITE_AFTER_ENCODE] > 0,
                 "%s %c: the second call of the encode site (B) never struck", name, prec);
    } else {
        TU_CHECK(v.lu_recovery[0] > 0 && v.lu_recovery[1] > 0,
                 "%s %c: LU recovery off %d, on %d", name, prec, v.lu_recovery[0],
                 v.lu_recovery[1]);
        TU_CHECK(v.site[ABFT_SITE_CHECKSUM] > 0 && v.site[ABFT_SITE_AFTER_LU] > 0,
                 "%s %c: checksum %d, after-lu %d", name, prec, v.site[ABFT_SITE_CHECKSUM],
                 v.site[ABFT_SITE_AFTER_LU]);
    }
    if (op == ABFT_CAMPAIGN_GETRF_ONLINE) {
        TU_CHECK(v.site[ABFT_SITE_LU_PANEL] > 0 && v.call_gt0[ABFT_SITE_LU_PANEL] > 0 &&
                     v.call_gt0[ABFT_SITE_CHECKSUM] > 0,
                 "%s %c: panel site %d, after a later panel %d, a carried checksum %d", name,
                 prec, v.site[ABFT_SITE_LU_PANEL], v.call_gt0[ABFT_SITE_LU_PANEL],
                 v.call_gt0[ABFT_SITE_CHECKSUM]);
        TU_CHECK(v.nb_set > 0 && v.check_every_gt1 > 0 && v.panel_nb_set > 0 &&
                     v.lookahead[0] > 0 && v.lookahead[1] > 0 && v.lookahead[2] > 0,
                 "%s %c: nb %d, check_every > 1 %d, panel_nb %d, lookahead %d/%d/%d", name,
                 prec, v.nb_set, v.check_every_gt1, v.panel_nb_set, v.lookahead[0],
                 v.lookahead[1], v.lookahead[2]);
    }
}

/* on_trial for the stop test: records the trials (in order?) and sets the stop flag once
 * trial `at` is passed on, as a signal handler would between two trials. */
typedef struct stopper {
    volatile sig_atomic_t flag;
    int64_t at;
    int in_order;
    rec_t r;
} stopper_t;
static void stop_at(void *user, const abft_trial_t *t) {
    stopper_t *st = (stopper_t *)user;
    if (st->r.n == 0) st->in_order = 1;
    if (t->index != st->r.n) st->in_order = 0;
    collect(&st->r, t);
    if (t->index == st->at) st->flag = 1;
}

/* A config abft_campaign_run must refuse: INVALID_VALUE naming the config (argument 1),
 * the summary untouched, no trial run. */
static int64_t bad_trials;
static void count_trial(void *user, const abft_trial_t *t) {
    (void)user;
    (void)t;
    bad_trials += 1;
}
static void refused(const char *what, abft_campaign_config_t c) {
    abft_campaign_summary_t s, ref;
    memset(&s, 0xab, sizeof s);
    memcpy(&ref, &s, sizeof s);
    c.on_trial = count_trial;
    bad_trials = 0;
    abft_status_t st = abft_campaign_run(&c, &s);
    TU_CHECK(st == ABFT_STATUS_INVALID_VALUE, "%s: %s, want ABFT_STATUS_INVALID_VALUE", what,
             abft_status_name(st));
    TU_CHECK(abft_last_invalid_argument() == 1, "%s: argument %d named, want 1 (the config)",
             what, abft_last_invalid_argument());
    TU_CHECK(memcmp(&s, &ref, sizeof s) == 0, "%s: the summary was written", what);
    TU_CHECK(bad_trials == 0, "%s: %lld trials ran", what, (long long)bad_trials);
}

int main(void) {
    uint64_t seed = tu_seed("test_campaign");
    static rec_t a, b;

    /* 1. Faults in C (mid-GEMM and after the GEMM), row checksums: every element change
     * beyond the guarantee is a single error per row, which the protocol must detect and
     * correct. Every bit class, fp64 and fp32. */
    for (int p = 0; p < 2; ++p) {
        abft_campaign_config_t c = abft_campaign_config_default();
        c.backend = ABFT_BACKEND_CPU;
        c.precision = p ? 's' : 'd';
        c.m = 64, c.n = 48, c.k = 80;
        c.trials = 150;
        c.controls = 60;
        c.refresh = 40;
        c.sites = (1u << ABFT_SITE_MID_GEMM) | (1u << ABFT_SITE_AFTER_GEMM);
        c.seed = seed + (uint64_t)p;
        abft_campaign_summary_t s;
        TU_CHECK_STATUS(abft_campaign_run(&c, &s), ABFT_STATUS_SUCCESS);
        expect_clean("C faults, row checksums", &c, &s);
        TU_CHECK(s.count[ABFT_OUTCOME_CORRECTED] > 0, "no trial was corrected");
    }

    /* 2. Every site (inputs, checksums, C), full checksums, two-bit and two-element faults. */
    {
        abft_campaign_config_t c = abft_campaign_config_default();
        c.backend = ABFT_BACKEND_CPU;
        c.m = c.n = c.k = 64;
        c.trials = 200;
        c.controls = 50;
        c.checksum_kind = ABFT_CHECKSUM_FULL;
        c.spec.width = 2;
        c.seed = seed + 2;
        abft_campaign_summary_t s;
        TU_CHECK_STATUS(abft_campaign_run(&c, &s), ABFT_STATUS_SUCCESS);
        expect_clean("all sites, full checksums, 2 bits", &c, &s);
        c.spec.width = 1;
        c.spec.nelems = 2;
        c.spec.bit_class = ABFT_BITS_EXPONENT;
        c.seed = seed + 3;
        TU_CHECK_STATUS(abft_campaign_run(&c, &s), ABFT_STATUS_SUCCESS);
        expect_clean("all sites, full checksums, 2 elements", &c, &s);
    }

    /* 2b. LU, offline and online: faults in the factors, the checksums, between panels. */
    for (int op = ABFT_CAMPAIGN_GETRF; op <= ABFT_CAMPAIGN_GETRF_ONLINE; ++op) {
        abft_campaign_config_t c = abft_campaign_config_default();
        c.backend = ABFT_BACKEND_CPU;
        c.op = op;
        c.precision = op == ABFT_CAMPAIGN_GETRF ? 'd' : 's';
        c.m = c.n = c.k = 96;
        c.trials = 150;
        c.controls = 40;
        c.seed = seed + 10 + (uint64_t)op;
        abft_campaign_summary_t s;
        TU_CHECK_STATUS(abft_campaign_run(&c, &s), ABFT_STATUS_SUCCESS);
        expect_clean(op == ABFT_CAMPAIGN_GETRF ? "getrf" : "getrf_online", &c, &s);
    }

    /* 2b'. Masked or undetected (docs/campaign.md): a flip of the last bit of an element of
     * C, or of a factor, is within the fault-free rounding noise (masked whenever it goes
     * undetected); a flip of bit 16 of an fp32 element of C (a change of 2^-7 to 2^-8 of
     * it, thousands of roundings) that goes undetected is beyond it (undetected, with its
     * relative size), and the worst-case bound lets a large share of them pass at this
     * size (about half). */
    for (int op = ABFT_CAMPAIGN_GEMM; op <= ABFT_CAMPAIGN_GETRF; ++op)
        for (int bit = 0; bit <= 16; bit += 16) {
            if (op == ABFT_CAMPAIGN_GETRF && bit != 0) continue;
            abft_campaign_config_t c = abft_campaign_config_default();
            c.backend = ABFT_BACKEND_CPU;
            c.op = op;
            c.precision = op == ABFT_CAMPAIGN_GEMM ? 's' : 'd';
            c.m = c.n = c.k = 96;
            c.trials = 120;
            c.controls = 0;
            c.refresh = 40;
            c.sites = op == ABFT_CAMPAIGN_GEMM ? 1u << ABFT_SITE_AFTER_GEMM : 1u << ABFT_SITE_AFTER_LU;
            c.spec.bit_class = ABFT_BITS_EXACT;
            c.spec.bit = bit;
            c.seed = seed + 30 + (uint64_t)(op * 2 + bit / 16);
            abft_campaign_summary_t s;
            TU_CHECK_STATUS(abft_campaign_run(&c, &s), ABFT_STATUS_SUCCESS);
            printf("%s bit %d: masked %lld undetected %lld corrected %lld uncorrectable %lld, "
                   "largest undetected relative change %.3g\n",
                   op == ABFT_CAMPAIGN_GEMM ? "gemm fp32" : "getrf fp64", bit,
                   (long long)s.count[ABFT_OUTCOME_MASKED],
                   (long long)s.count[ABFT_OUTCOME_UNDETECTED],
                   (long long)s.count[ABFT_OUTCOME_CORRECTED],
                   (long long)s.count[ABFT_OUTCOME_UNCORRECTABLE], s.max_undetected_rel);
            if (bit == 0) {
                TU_CHECK(s.count[ABFT_OUTCOME_UNDETECTED] == 0 &&
                             s.count[ABFT_OUTCOME_MASKED] > 0,
                         "last-bit flips: %lld undetected, %lld masked (want 0, > 0)",
                         (long long)s.count[ABFT_OUTCOME_UNDETECTED],
                         (long long)s.count[ABFT_OUTCOME_MASKED]);
            } else {
                TU_CHECK(s.count[ABFT_OUTCOME_MASKED] == 0 &&
                             s.count[ABFT_OUTCOME_UNDETECTED] > c.trials / 4 &&
                             s.max_undetected_rel > 1e-4,
                         "bit 16 flips: %lld masked, %lld undetected (want 0, > %lld), largest "
                         "relative change %.3g",
                         (long long)s.count[ABFT_OUTCOME_MASKED],
                         (long long)s.count[ABFT_OUTCOME_UNDETECTED], (long long)c.trials / 4,
                         s.max_undetected_rel);
            }
        }

    /* 2c. The full space, every operation, fp64 and fp32 (the seed printed above replays
     * every trial; a bad trial is printed with its whole configuration and fault). */
    {
        static const int opl[3] = {ABFT_CAMPAIGN_GEMM, ABFT_CAMPAIGN_GETRF,
                                   ABFT_CAMPAIGN_GETRF_ONLINE};
        for (int o = 0; o < 3; ++o)
            for (int p = 0; p < 2; ++p)
                full_space(opl[o], p ? 's' : 'd', seed + 20 + (uint64_t)(2 * o + p), 400, 100);
    }

    /* 2d. Worker threads: jobs = 3 gives the trials, in the same order, and the summary of
     * jobs = 1 (fixed space with input sets split across workers, and the full space). */
    for (int sp = 0; sp < 2; ++sp) {
        abft_campaign_config_t c = abft_campaign_config_default();
        c.backend = ABFT_BACKEND_CPU;
        c.op = sp ? ABFT_CAMPAIGN_GETRF_ONLINE : ABFT_CAMPAIGN_GEMM;
        c.space = sp ? ABFT_SPACE_FULL : ABFT_SPACE_FIXED;
        c.precision = 's';
        c.m = c.n = c.k = 48;
        c.trials = 200;
        c.controls = 50;
        c.refresh = 30;
        c.seed = seed + 40 + (uint64_t)sp;
        c.on_trial = collect;
        abft_campaign_summary_t s1, s3;
        memset(&a, 0, sizeof a);
        memset(&b, 0, sizeof b);
        c.user = &a;
        TU_CHECK_STATUS(abft_campaign_run(&c, &s1), ABFT_STATUS_SUCCESS);
        c.user = &b;
        c.jobs = 3;
        TU_CHECK_STATUS(abft_campaign_run(&c, &s3), ABFT_STATUS_SUCCESS);
        TU_CHECK(a.n == 250 && b.n == 250, "jobs: trials seen %lld and %lld", (long long)a.n,
                 (long long)b.n);
        int same = 1;
        for (int64_t t = 0; t < a.n && t < b.n; ++t)
            same &= a.seed[t] == b.seed[t] && a.outcome[t] == b.outcome[t] &&
                    a.rho[t] == b.rho[t] && memcmp(&a.flip[t], &b.flip[t], sizeof(abft_flip_t)) == 0;
        TU_CHECK(same, "%s space: jobs 3 gave other trials than jobs 1 (seed %llu)",
                 sp ? "full" : "fixed", (unsigned long long)c.seed);
        TU_CHECK(memcmp(s1.count, s3.count, sizeof s1.count) == 0 &&
                     memcmp(s1.by_site, s3.by_site, sizeof s1.by_site) == 0 &&
                     memcmp(s1.by_bit, s3.by_bit, sizeof s1.by_bit) == 0 &&
                     s1.golden_runs == s3.golden_runs &&
                     s1.golden_detections == s3.golden_detections &&
                     s1.max_undetected_rho == s3.max_undetected_rho &&
                     s1.max_undetected_rel == s3.max_undetected_rel &&
                     s1.unit_roundoff == s3.unit_roundoff,
                 "%s space: the summary of jobs 3 differs from jobs 1", sp ? "full" : "fixed");
        printf("jobs 1 and 3, %s space: %lld trials alike, golden runs %lld\n",
               sp ? "full" : "fixed", (long long)a.n, (long long)s3.golden_runs);
        c.jobs = 65;
        TU_CHECK_STATUS(abft_campaign_run(&c, &s3), ABFT_STATUS_INVALID_VALUE);
    }

    /* 2e. The stop flag (abft_campaign_config_t.stop), as a SIGINT handler sets it: set by
     * on_trial at trial 40, the campaign starts no further trial and returns SUCCESS with
     * the summary of the trials it passed on, marked partial; those are trials 0 .. total-1
     * in order, the same as a run without the flag gives; jobs 1 and 3, both spaces. A flag
     * set before the run: no trial, partial. A run without it is never partial. */
    for (int sp = 0; sp < 2; ++sp) {
        abft_campaign_config_t c = abft_campaign_config_default();
        c.backend = ABFT_BACKEND_CPU;
        c.space = sp ? ABFT_SPACE_FULL : ABFT_SPACE_FIXED;
        c.m = c.n = c.k = 32;
        c.trials = 200;
        c.controls = 20;
        c.refresh = 30;
        c.seed = seed + 50 + (uint64_t)sp;
        c.on_trial = collect;
        c.user = &a;
        memset(&a, 0, sizeof a);
        abft_campaign_summary_t s;
        TU_CHECK_STATUS(abft_campaign_run(&c, &s), ABFT_STATUS_SUCCESS);
        TU_CHECK(s.partial == 0 && s.total == 220, "a run without a stop: partial %d, total %lld",
                 s.partial, (long long)s.total);
        for (int jobs = 1; jobs <= 3; jobs += 2) {
            stopper_t st;
            memset(&st, 0, sizeof st);
            st.at = 40;
            c.jobs = jobs;
            c.on_trial = stop_at;
            c.user = &st;
            c.stop = &st.flag;
            memset(&s, 0, sizeof s);
            TU_CHECK_STATUS(abft_campaign_run(&c, &s), ABFT_STATUS_SUCCESS);
            int64_t counted = s.control_errors;
            for (int o = 0; o < ABFT_OUTCOME_COUNT; ++o) counted += s.count[o];
            TU_CHECK(s.partial == 1 && s.total == st.r.n && s.total > st.at &&
                         s.total < c.trials + c.controls && counted == s.total && st.in_order,
                     "%s space, jobs %d, stopped at trial 40: partial %d, total %lld, seen "
                     "%lld, counted %lld, in order %d",
                     sp ? "full" : "fixed", jobs, s.partial, (long long)s.total,
                     (long long)st.r.n, (long long)counted, st.in_order);
            int same = 1;
            for (int64_t t = 0; t < st.r.n && t < MAXT; ++t)
                same &= st.r.seed[t] == a.seed[t] && st.r.outcome[t] == a.outcome[t] &&
                        st.r.rho[t] == a.rho[t];
            TU_CHECK(same, "%s space, jobs %d: the stopped run's trials differ from the full "
                     "run's", sp ? "full" : "fixed", jobs);
            printf("stop at trial 40, %s space, jobs %d: %lld trials passed on, partial\n",
                   sp ? "full" : "fixed", jobs, (long long)s.total);
            /* set before the run */
            memset(&st, 0, sizeof st);
            st.flag = 1;
            st.at = -1;
            memset(&s, 0, sizeof s);
            TU_CHECK_STATUS(abft_campaign_run(&c, &s), ABFT_STATUS_SUCCESS);
            TU_CHECK(s.partial == 1 && s.total == 0 && st.r.n == 0,
                     "a stop set before the run: partial %d, total %lld, seen %lld", s.partial,
                     (long long)s.total, (long long)st.r.n);
        }
    }

    /* 3. Replay: the same config gives the same trials; --replay of one trial gives the
     * same flip and outcome as in the full run. */
    {
        abft_campaign_config_t c = abft_campaign_config_default();
        c.backend = ABFT_BACKEND_CPU;
        c.m = c.n = c.k = 40;
        c.trials = 60;
        c.controls = 5;
        c.refresh = 25;
        c.seed = seed + 4;
        c.on_trial = collect;
        abft_campaign_summary_t s;
        memset(&a, 0, sizeof a);
        memset(&b, 0, sizeof b);
        c.user = &a;
        TU_CHECK_STATUS(abft_campaign_run(&c, &s), ABFT_STATUS_SUCCESS);
        c.user = &b;
        TU_CHECK_STATUS(abft_campaign_run(&c, &s), ABFT_STATUS_SUCCESS);
        TU_CHECK(a.n == 65 && b.n == 65, "trials seen %lld and %lld", (long long)a.n,
                 (long long)b.n);
        for (int64_t t = 0; t < a.n && t < b.n; ++t)
            TU_CHECK(a.seed[t] == b.seed[t] && a.outcome[t] == b.outcome[t] &&
                         memcmp(&a.flip[t], &b.flip[t], sizeof(abft_flip_t)) == 0,
                     "trial %lld differs between two runs of seed %llu", (long long)t,
                     (unsigned long long)c.seed);
        int64_t picks[3] = {0, 37, 59};
        for (int q = 0; q < 3; ++q) {
            int64_t t = picks[q];
            memset(&b, 0, sizeof b);
            c.only_trial = t;
            TU_CHECK_STATUS(abft_campaign_run(&c, &s), ABFT_STATUS_SUCCESS);
            TU_CHECK(b.n == 1 && b.seed[t] == a.seed[t] && b.outcome[t] == a.outcome[t] &&
                         b.rho[t] == a.rho[t] &&
                         memcmp(&a.flip[t], &b.flip[t], sizeof(abft_flip_t)) == 0,
                     "replay of trial %lld: bit %d of [%lld, %lld] (%s), full run bit %d of "
                     "[%lld, %lld] (%s)",
                     (long long)t, b.flip[t].bit, (long long)b.flip[t].row,
                     (long long)b.flip[t].col, abft_outcome_name(b.outcome[t]), a.flip[t].bit,
                     (long long)a.flip[t].row, (long long)a.flip[t].col,
                     abft_outcome_name(a.outcome[t]));
        }
    }

    /* 4. Bad configs and an operation that is not there yet. */
    {
        abft_campaign_config_t c = abft_campaign_config_default();
        abft_campaign_summary_t s;
        c.backend = ABFT_BACKEND_CPU;
        c.precision = 'z';
        TU_CHECK_STATUS(abft_campaign_run(&c, &s), ABFT_STATUS_INVALID_VALUE);
        c = abft_campaign_config_default();
        c.sites = 1u << ABFT_SITE_LU_PANEL; /* not a GEMM site */
        TU_CHECK_STATUS(abft_campaign_run(&c, &s), ABFT_STATUS_INVALID_VALUE);
        c = abft_campaign_config_default();
        c.refresh = 0;
        TU_CHECK_STATUS(abft_campaign_run(&c, &s), ABFT_STATUS_INVALID_VALUE);
        TU_CHECK_STATUS(abft_campaign_run(NULL, &s), ABFT_STATUS_INVALID_VALUE);
    }

    /* 4b. The rules of the config (docs/campaign.md, "The config's rules"), each checked
     * before anything is allocated or written; the buffers' sizes (exact, overflow refused);
     * a campaign that cannot run leaves the summary as it was. */
    {
        abft_campaign_config_t d = abft_campaign_config_default(), c;
        d.backend = ABFT_BACKEND_CPU;
        d.m = d.n = d.k = 8;
        d.trials = 20;
        d.controls = 5;
        d.refresh = 5;
        c = d, c.only_trial = -7, refused("only_trial = -7", c);
        c = d, c.spec.row = -5, refused("spec.row = -5", c);
        c = d, c.spec.col = -2, refused("spec.col = -2", c);
        c = d, c.spec.row = 8, c.sites = 1u << ABFT_SITE_AFTER_GEMM, refused("spec.row = 8 of C 8 x 8", c);
        c = d, c.spec.row = 1000, refused("spec.row = 1000", c);
        c = d, c.spec.col = 2, c.sites = 1u << ABFT_SITE_CHECKSUM, refused("spec.col = 2 of the checksums", c);
        c = d, c.spec.row = 3, c.spec.nelems = 9, c.sites = 1u << ABFT_SITE_AFTER_GEMM;
        refused("9 elements in a row of 8", c);
        c = d, c.lu_recovery = 5, refused("lu_recovery = 5", c);
        c = d, c.random_checksum = 3, refused("random_checksum = 3", c);
        c = d, c.random_checksum = 1, c.space = ABFT_SPACE_FULL, refused("random_checksum, full space", c);
        c = d, c.random_checksum = 1, c.op = ABFT_CAMPAIGN_GETRF, refused("random_checksum, getrf", c);
        c = d, c.guarantee = INFINITY, refused("guarantee = inf", c);
        c = d, c.bound_factor = 2e6, refused("bound_factor = 2e6 (the handle's limit is 1e6)", c);
        c = d, c.checksum_kind = 7, refused("checksum_kind = 7", c);
        c = d, c.spec.width = 3, refused("spec.width = 3", c);
        c = d, c.trials = INT64_MAX, c.controls = 1, c.only_trial = 0, refused("trials + controls overflow", c);
        /* buffers whose size overflows: A of m x k = 1 x 2^62 (the sizes were once
         * max(m, k)^2, which wrapped to a small buffer and overflowed it) */
        c = d, c.m = 1, c.n = 1, c.k = (int64_t)1 << 62, c.trials = 1, c.controls = 0;
        refused("k = 2^62", c);
        c = d, c.space = ABFT_SPACE_FULL, c.m = INT64_MAX - 3, c.n = c.k = 1, refused("full space, m + padding overflows", c);
        c = d, c.op = ABFT_CAMPAIGN_GETRF, c.n = (int64_t)1 << 32, refused("getrf n = 2^32", c);
        /* the summary argument */
        TU_CHECK_STATUS(abft_campaign_run(&d, NULL), ABFT_STATUS_INVALID_VALUE);
        TU_CHECK(abft_last_invalid_argument() == 2, "a NULL summary: argument %d named, want 2",
                 abft_last_invalid_argument());
        /* exact sizes: fixed space op(A) m x k, op(B) k x n, C m x n; the full space both
         * storages of A and B and 7 padding rows */
        int64_t host = 0, dev = 0;
        c = d, c.m = 4, c.n = 3, c.k = 2;
        TU_CHECK_STATUS(abft_campaign_memory(&c, &host, &dev), ABFT_STATUS_SUCCESS);
        TU_CHECK(dev == 8 * (4 * 2 + 2 * 3 + 4 * 3) && host >= 8 * (4 * 2 + 2 * 3 + 3 * 4 * 3),
                 "fixed 4 x 3 x 2: backend %lld bytes, host %lld", (long long)dev, (long long)host);
        c.space = ABFT_SPACE_FULL;
        TU_CHECK_STATUS(abft_campaign_memory(&c, &host, &dev), ABFT_STATUS_SUCCESS);
        TU_CHECK(dev == 8 * (9 * 4 + 9 * 3 + 11 * 3), "full 4 x 3 x 2: backend %lld bytes",
                 (long long)dev);
        c = d, c.m = 56210, c.n = c.k = 1; /* lopsided: once sized 56210^2 */
        TU_CHECK_STATUS(abft_campaign_memory(&c, &host, &dev), ABFT_STATUS_SUCCESS);
        TU_CHECK(host < (1 << 24) && dev == 8 * (56210 + 1 + 56210), "m = 56210, n = k = 1: "
                 "host %lld bytes, backend %lld", (long long)host, (long long)dev);
        c.trials = 3, c.controls = 1;
        abft_campaign_summary_t s;
        TU_CHECK_STATUS(abft_campaign_run(&c, &s), ABFT_STATUS_SUCCESS);
        c.k = (int64_t)1 << 62;
        TU_CHECK_STATUS(abft_campaign_memory(&c, &host, &dev), ABFT_STATUS_INVALID_VALUE);
        TU_CHECK(abft_last_invalid_argument() == 1, "abft_campaign_memory: argument %d named",
                 abft_last_invalid_argument());
        /* a campaign that cannot run (here: a backend that is not there) leaves the summary */
        if (!abft_cuda_built()) {
            abft_campaign_summary_t r;
            memset(&s, 0xab, sizeof s);
            memcpy(&r, &s, sizeof s);
            c = d, c.backend = ABFT_BACKEND_CUDA;
            TU_CHECK_STATUS(abft_campaign_run(&c, &s), ABFT_STATUS_NOT_SUPPORTED);
            TU_CHECK(memcmp(&s, &r, sizeof s) == 0, "a campaign that could not run wrote the summary");
        }
    }

    /* 5. Wilson interval: 0 of 1000 gives about [0, 0.38 %]; 500 of 1000 about 50 +- 3.1 %. */
    {
        double lo, hi;
        abft_wilson_interval(0, 1000, 1.96, &lo, &hi);
        TU_CHECK(lo == 0.0 && fabs(hi - 0.003827) < 2e-5, "wilson(0, 1000) = [%g, %g]", lo, hi);
        abft_wilson_interval(500, 1000, 1.96, &lo, &hi);
        TU_CHECK(fabs(lo - 0.46907) < 2e-4 && fabs(hi - 0.53093) < 2e-4,
                 "wilson(500, 1000) = [%g, %g]", lo, hi);
        abft_wilson_interval(0, 0, 1.96, &lo, &hi);
        TU_CHECK(lo == 0.0 && hi == 1.0, "wilson(0, 0) = [%g, %g]", lo, hi);
    }
    return tu_finish("test_campaign");
}
