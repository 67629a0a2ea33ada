/* abft: the command line. `abft <subcommand> [options]`; `abft help` lists them. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "abft_cli.h"

const cli_op_t cli_ops[] = {
    {"gemm", ABFT_CAMPAIGN_GEMM, "protected GEMM C = A·B (abft_dgemm / abft_sgemm)"},
    {"getrf", ABFT_CAMPAIGN_GETRF, "protected LU P·A = L·U, n x n (abft_dgetrf / abft_sgetrf)"},
    {"getrf-online", ABFT_CAMPAIGN_GETRF_ONLINE, "the same with checks between panels "
                                                 "(abft_dgetrf_online)"},
};
const int cli_nops = (int)(sizeof cli_ops / sizeof cli_ops[0]);

const cli_op_t *cli_find_op(const char *name) {
    for (int t = 0; t < cli_nops; ++t)
        if (strcmp(cli_ops[t].name, name) == 0) return &cli_ops[t];
    return NULL;
}

int cli_opt(int argc, char **argv, int *i, const char *name, const char **value, int *bad) {
    const char *a = argv[*i];
    size_t len = strlen(name);
    if (strncmp(a, name, len) != 0) return 0;
    if (a[len] == '=') {
        *value = a + len + 1;
        return 1;
    }
    if (a[len] != '\0') return 0;
    if (*i + 1 >= argc) {
        fprintf(stderr, "abft: option %s needs a value\n", name);
        *bad = 1;
        return 1;
    }
    *i += 1;
    *value = argv[*i];
    return 1;
}

int cli_int64(const char *s, int64_t *out) {
    char *end = NULL;
    errno = 0;
    long long v = strtoll(s, &end, 0);
    if (errno != 0 || end == s || *end != '\0' || v < 0) return 0;
    *out = (int64_t)v;
    return 1;
}

int cli_uint64(const char *s, uint64_t *out) {
    char *end = NULL;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 0);
    if (errno != 0 || end == s || *end != '\0' || s[0] == '-') return 0;
    *out = (uint64_t)v;
    return 1;
}

int cli_double(const char *s, double *out) {
    char *end = NULL;
    errno = 0;
    double v = strtod(s, &end);
    if (errno != 0 || end == s || *end != '\0' || !isfinite(v)) return 0;
    *out = v;
    return 1;
}

static const char *class_names[] = {"any", "sign", "exponent", "mant-high", "mant-low", "exact"};

const char *cli_class_name(int c) { return c >= 0 && c <= ABFT_BITS_EXACT ? class_names[c] : "?"; }

int cli_bits(const char *s, abft_fault_spec_t *spec) {
    for (int c = 0; c < ABFT_BITS_EXACT; ++c)
        if (strcmp(s, class_names[c]) == 0) {
            spec->bit_class = c;
            return 1;
        }
    int64_t b;
    if (!cli_int64(s, &b) || b > 63) return 0;
    spec->bit_class = ABFT_BITS_EXACT;
    spec->bit = (int32_t)b;
    return 1;
}

static const char *site_names[ABFT_SITE_COUNT] = {"encode", "mid", "after", "checksum",
                                                  "lu-panel", "after-lu"};

const char *cli_site_name(int s) { return s >= 0 && s < ABFT_SITE_COUNT ? site_names[s] : "-"; }

int cli_common_opt(int argc, char **argv, int *i, abft_campaign_config_t *cfg,
                   const char **value, int *bad) {
    const char *v = NULL;
    int64_t x;
    int hit = 1;
    if (cli_opt(argc, argv, i, "--precision", &v, bad)) {
        if (v && (strcmp(v, "d") == 0 || strcmp(v, "s") == 0)) cfg->precision = v[0];
        else *bad = 1;
    } else if (cli_opt(argc, argv, i, "--size", &v, bad)) {
        if (v && cli_int64(v, &x)) cfg->m = cfg->n = cfg->k = x;
        else *bad = 1;
    } else if (cli_opt(argc, argv, i, "--bits", &v, bad)) {
        if (!(v && cli_bits(v, &cfg->spec))) *bad = 1;
    } else if (cli_opt(argc, argv, i, "--width", &v, bad)) {
        if (v && cli_int64(v, &x)) cfg->spec.width = (int32_t)x;
        else *bad = 1;
    } else if (cli_opt(argc, argv, i, "--elems", &v, bad)) {
        if (v && cli_int64(v, &x) && x <= ABFT_INJECT_MAX_ELEMS) cfg->spec.nelems = (int32_t)x;
        else *bad = 1;
    } else if (cli_opt(argc, argv, i, "--checksum", &v, bad)) {
        if (v && strcmp(v, "row") == 0) cfg->checksum_kind = ABFT_CHECKSUM_ROW;
        else if (v && strcmp(v, "full") == 0) cfg->checksum_kind = ABFT_CHECKSUM_FULL;
        else *bad = 1;
    } else if (cli_opt(argc, argv, i, "--backend", &v, bad)) {
        if (!(v && cli_backend(v, &cfg->backend))) *bad = 1;
    } else if (cli_opt(argc, argv, i, "--seed", &v, bad)) {
        if (!(v && cli_uint64(v, &cfg->seed))) *bad = 1;
    } else {
        hit = 0;
    }
    *value = v;
    return hit;
}

int cli_sites(const char *s, uint32_t *mask) {
    if (strcmp(s, "all") == 0) {
        *mask = 0u; /* the operation's default sites */
        return 1;
    }
    uint32_t m = 0;
    char buf[256];
    if (strlen(s) >= sizeof buf) return 0;
    strcpy(buf, s);
    for (char *tok = strtok(buf, ","); tok != NULL; tok = strtok(NULL, ",")) {
        int found = 0;
        for (int t = 0; t < ABFT_SITE_COUNT; ++t)
            if (strcmp(tok, site_names[t]) == 0) {
                m |= 1u << t;
                found = 1;
            }
        if (!found) return 0;
    }
    *mask = m;
    return m != 0u;
}

int cli_backend(const char *s, int32_t *backend) {
    if (strcmp(s, "auto") == 0) *backend = ABFT_BACKEND_AUTO;
    else if (strcmp(s, "cpu") == 0) *backend = ABFT_BACKEND_CPU;
    else if (strcmp(s, "cuda") == 0) *backend = ABFT_BACKEND_CUDA;
    else return 0;
    return 1;
}

const char *cli_backend_name(int b) {
    return b == ABFT_BACKEND_CPU ? "cpu" : b == ABFT_BACKEND_CUDA ? "cuda" : "auto";
}

void cli_print_trial(FILE *f, const abft_trial_t *t, char precision) {
    fprintf(f, "trial %" PRId64 " (%s), seed %" PRIu64 ", input set %" PRId64 "\n", t->index,
            t->control ? "control" : "faulty", t->seed, t->set);
    if (!t->control)
        fprintf(f, "  site: %s%s\n", cli_site_name(t->site),
                t->which == 0 ? " (A)" : t->which == 1 ? " (B)" : "");
    int w = precision == 's' ? 8 : 16;
    for (int64_t e = 0; e < t->nflips; ++e) {
        const abft_flip_t *p = &t->flips[e];
        fprintf(f,
                "  flip %" PRId64 ": %s%s [%" PRId64 ", %" PRId64 "] bit %d%s: %.17g -> %.17g "
                "(0x%0*" PRIx64 " -> 0x%0*" PRIx64 ")\n",
                e, cli_site_name(p->site),
                p->site == ABFT_SITE_AFTER_ENCODE ? (p->which ? " B" : " A") : "", p->row,
                p->col, p->bit, p->width == 2 ? "+1" : "", p->old_value, p->new_value,
                p->precision == 'd' ? 16 : w, p->old_bits, p->precision == 'd' ? 16 : w,
                p->new_bits);
    }
    if (!t->control && t->nflips == 0) fprintf(f, "  no flip: the site was not reached\n");
    const abft_report_t *r = &t->report;
    fprintf(f, "  status: %s\n", abft_status_name((abft_status_t)t->status));
    fprintf(f,
            "  report: checked %" PRId64 ", detected %" PRId64 ", corrected %" PRId64
            ", uncorrectable %" PRId64 ", recomputed %" PRId64 ", checksum faults %" PRId64
            ", max |residual|/bound %.3g, u = %.3g\n",
            r->checked, r->detected, r->corrected, r->uncorrectable, r->recomputed,
            r->checksum_faults, r->max_ratio, r->unit_roundoff);
    static const char *actions[] = {"none", "corrected", "uncorrectable", "recomputed",
                                    "checksum fault"};
    for (int64_t e = 0; e < r->nfaults && e < ABFT_REPORT_MAX_FAULTS; ++e) {
        const abft_fault_t *q = &r->faults[e];
        fprintf(f,
                "    fault %" PRId64 ": %s [%" PRId64 ", %" PRId64 "] delta %.6g, "
                "|residual|/bound %.3g: %s\n",
                e, q->side ? "column" : "row", q->row, q->col, q->delta, q->ratio,
                q->action >= 0 && q->action <= 4 ? actions[q->action] : "?");
    }
    if (!t->control)
        fprintf(f, "  result: rho = %.4g (change against golden, or LU backward error, over tau)\n", t->rho);
    fprintf(f, "  outcome: %s\n", abft_outcome_name(t->outcome));
}

static void usage(FILE *f) {
    fprintf(f,
            "usage: abft <command> [options]\n"
            "\n"
            "commands:\n"
            "  campaign   bit-flip fault-injection campaign against protected operations;\n"
            "             summary table, CSV/JSON of every trial, SVG of outcomes by bit\n"
            "  demo       one protected GEMM with one injected fault, and its report\n"
            "  version    library version and backends\n"
            "  help       this text; `abft <command> --help` for the options of one\n"
            "\n"
            "operations (campaign --op):\n");
    for (int t = 0; t < cli_nops; ++t) fprintf(f, "  %-10s %s\n", cli_ops[t].name, cli_ops[t].what);
    fprintf(f, "\nQuick start: abft campaign --backend cpu   (about 10 s; docs/campaign.md)\n");
}

int main(int argc, char **argv) {
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    const char *cmd = argv[1];
    if (strcmp(cmd, "campaign") == 0) return abft_cmd_campaign(argc - 1, argv + 1);
    if (strcmp(cmd, "demo") == 0) return abft_cmd_demo(argc - 1, argv + 1);
    if (strcmp(cmd, "version") == 0 || strcmp(cmd, "--version") == 0) {
        printf("abft %s (header %s), CUDA backend %s\n", abft_version_string(),
               ABFT_VERSION_STRING, abft_cuda_built() ? "built" : "not built");
        return 0;
    }
    if (strcmp(cmd, "help") == 0 || strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0) {
        usage(stdout);
        return 0;
    }
    fprintf(stderr, "abft: unknown command '%s'\n\n", cmd);
    usage(stderr);
    return 2;
}
