/* `abft demo`: one protected GEMM with one injected fault; prints the flip, the report and
 * the outcome against a fault-free golden run. It is a campaign of one trial. */
#include <inttypes.h>
#include <string.h>

#include "abft_cli.h"

static void demo_usage(FILE *f) {
    fprintf(f, "usage: abft demo [--precision d|s] [--size N] [--site encode|mid|after|checksum]\n"
               "                 [--bits CLASS|BIT] [--width 1|2] [--elems N] [--checksum row|full]\n"
               "                 [--backend auto|cpu|cuda] [--seed S]\n"
               "Defaults: fp64, N = 256, site after (C after the GEMM), an exponent bit, seed 7.\n");
}

typedef struct demo_ctx {
    char precision;
} demo_ctx_t;

static void show(void *user, const abft_trial_t *t) {
    demo_ctx_t *d = (demo_ctx_t *)user;
    cli_print_trial(stdout, t, d->precision);
}

int abft_cmd_demo(int argc, char **argv) {
    abft_campaign_config_t cfg = abft_campaign_config_default();
    cfg.m = cfg.n = cfg.k = 256;
    cfg.trials = 1;
    cfg.controls = 0;
    cfg.sites = 1u << ABFT_SITE_AFTER_GEMM;
    cfg.spec.bit_class = ABFT_BITS_EXPONENT;
    cfg.seed = 7;
    int bad = 0;
    for (int i = 1; i < argc && !bad; ++i) {
        const char *v = NULL;
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            demo_usage(stdout);
            return 0;
        } else if (cli_common_opt(argc, argv, &i, &cfg, &v, &bad)) {
            /* parsed into cfg */
        } else if (cli_opt(argc, argv, &i, "--site", &v, &bad)) {
            if (!(v && cli_sites(v, &cfg.sites))) bad = 1;
        } else {
            fprintf(stderr, "abft demo: unknown option '%s'\n", argv[i]);
            bad = 1;
        }
    }
    if (bad) {
        demo_usage(stderr);
        return 2;
    }
    demo_ctx_t d = {cfg.precision};
    cfg.on_trial = show;
    cfg.user = &d;
    printf("abft demo: protected %cgemm, m = n = k = %" PRId64 ", one fault (%s bits), seed %" PRIu64
           "\n",
           cfg.precision, cfg.n, cli_class_name(cfg.spec.bit_class), cfg.seed);
    abft_campaign_summary_t sum;
    abft_status_t st = abft_campaign_run(&cfg, &sum);
    if (st != ABFT_STATUS_SUCCESS) {
        fprintf(stderr, "abft demo: %s: %s\n", abft_status_name(st), abft_status_string(st));
        return 2;
    }
    printf("backend: %s; golden run detections: %" PRId64 "\n", cli_backend_name(sum.backend),
           sum.golden_detections);
    int bad_outcome = sum.count[ABFT_OUTCOME_SDC] + sum.count[ABFT_OUTCOME_MISCORRECTED] +
                          sum.count[ABFT_OUTCOME_ERROR] + sum.golden_detections >
                      0;
    return bad_outcome ? 1 : 0;
}
