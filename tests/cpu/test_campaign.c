/* Small CPU fault-injection campaigns through abft_campaign_run: zero SDC, zero
 * miscorrection, zero false positives where the protocol guarantees it; a campaign replays
 * trial by trial from its seed; the Wilson interval. */
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
           "%lld sdc %lld miscorrected %lld fp %lld clean %lld not_fired %lld error %lld, %.2f s\n",
           what, c->precision, (long long)c->n,
           c->checksum_kind == ABFT_CHECKSUM_FULL ? "full" : "row", (unsigned long long)c->seed,
           (long long)s->count[0], (long long)s->count[1], (long long)s->count[2],
           (long long)s->count[3], (long long)s->count[4], (long long)s->count[5],
           (long long)s->count[6], (long long)s->count[7], (long long)s->count[8],
           (long long)s->count[9], s->seconds);
    TU_CHECK(s->count[ABFT_OUTCOME_SDC] == 0, "%s: %lld SDC", what,
             (long long)s->count[ABFT_OUTCOME_SDC]);
    TU_CHECK(s->count[ABFT_OUTCOME_MISCORRECTED] == 0, "%s: %lld miscorrected", what,
             (long long)s->count[ABFT_OUTCOME_MISCORRECTED]);
    TU_CHECK(s->count[ABFT_OUTCOME_FALSE_POSITIVE] == 0 && s->golden_detections == 0,
             "%s: %lld false positives, %lld golden detections", what,
             (long long)s->count[ABFT_OUTCOME_FALSE_POSITIVE], (long long)s->golden_detections);
    TU_CHECK(s->count[ABFT_OUTCOME_ERROR] == 0, "%s: %lld errors", what,
             (long long)s->count[ABFT_OUTCOME_ERROR]);
    TU_CHECK(s->count[ABFT_OUTCOME_NOT_FIRED] == 0, "%s: %lld trials never fired", what,
             (long long)s->count[ABFT_OUTCOME_NOT_FIRED]);
    TU_CHECK(s->count[ABFT_OUTCOME_CLEAN] == c->controls, "%s: %lld clean controls of %lld", what,
             (long long)s->count[ABFT_OUTCOME_CLEAN], (long long)c->controls);
    TU_CHECK(s->total == c->trials + c->controls, "%s: %lld trials run", what, (long long)s->total);
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
