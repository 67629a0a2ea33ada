/* `abft demo`: one protected GEMM with one injected fault; prints the flip, the report and
 * the outcome against a fault-free golden run. It is a campaign of one trial. */
#include <inttypes.h>
#include <string.h>

#include "abft_cli.h"

static void demo_usage(FILE *f) {
    fprintf(f,
            "usage: abft demo [options]\n"
            "\n"
            "  --precision d|s    fp64 (default) or fp32 data\n"
            "  --size N           m = n = k = N (default 256)\n"
            "  --site LIST        where the fault strikes (default after), one or a comma list\n"
            "                     (one is drawn from the seed):\n");
    for (int s = 0; s < ABFT_SITE_COUNT; ++s)
        if (cli_ops[0].sites & (1u << s))
            fprintf(f, "                       %-9s %s\n", cli_site_name(s), cli_site_what(s));
    fprintf(f,
            "  --bits CLASS|B     which bit (default exponent):\n");
    cli_help_bits(f);
    fprintf(f,
            "  --width 1|2        adjacent bits flipped per element (default 1)\n"
            "  --elems N          elements per fault, 1..%d (default 1)\n"
            "  --checksum row|full  row checksums (default) or row and column checksums\n"
            "  --backend auto|cpu|cuda  (default auto: the GPU when present)\n"
            "  --seed S           seed of the fault (default 7)\n"
            "\n"
            "Exit status: 0 when the fault was handled (no SDC, no miscorrection, no error),\n"
            "1 when not, 2 on bad options.\n",
            ABFT_INJECT_MAX_ELEMS);
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
    cli_given_t given;
    memset(&given, 0, sizeof given);
    for (int i = 1; i < argc && !bad; ++i) {
        const char *v = NULL;
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            demo_usage(stdout);
            return 0;
        } else if (cli_common_opt(argc, argv, &i, &cfg, &given, &v, &bad)) {
            /* parsed into cfg */
        } else if (cli_opt(argc, argv, &i, "--site", &v, &bad)) {
            if (v && cli_sites(v, &cfg.sites) == 1 && cfg.sites != 0u) {
                given.sites = v;
                given.sites_opt = "--site";
            } else if (v) {
                char list[128];
                cli_err("--site", v, "is not a site of gemm (accepted: %s, or a comma list)",
                        cli_site_list(cli_ops[0].sites, list, sizeof list));
                bad = 1;
            }
        } else if (argv[i][0] == '-') {
            cli_err(NULL, NULL, "unknown option '%s' (abft demo --help lists them)", argv[i]);
            bad = 1;
        } else {
            cli_err(NULL, NULL, "unexpected argument '%s' (options start with --; abft demo "
                    "--help lists them)", argv[i]);
            bad = 1;
        }
    }
    if (!bad && !cli_check_config(&cfg, &cli_ops[0], &given)) bad = 1;
    if (bad) return 2;
    demo_ctx_t d = {cfg.precision};
    cfg.on_trial = show;
    cfg.user = &d;
    char bits[32];
    if (cfg.spec.bit_class == ABFT_BITS_EXACT) snprintf(bits, sizeof bits, "bit %d", cfg.spec.bit);
    else snprintf(bits, sizeof bits, "%s bits", cli_class_name(cfg.spec.bit_class));
    printf("abft demo: protected %cgemm, m = n = k = %" PRId64 ", %s checksums, one fault (%s), "
           "seed %" PRIu64 "\n",
           cfg.precision, cfg.n, abft_checksum_kind_name((abft_checksum_kind_t)cfg.checksum_kind),
           bits, cfg.seed);
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
