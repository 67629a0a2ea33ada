/* `abft campaign`: options, progress bar, summary table, CSV / JSON / Markdown / SVG
 * output. The campaign itself is abft_campaign_run (inject/abft_campaign.c). */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "abft_cli.h"
#include "abft_svg.h"

/* What the tool gathers from the trials beyond the library's summary: rel_change of every
 * UNDETECTED trial by site and first flipped bit (the quantiles of the summary and the
 * JSON), and the faulty trials' outcomes by configuration class (full space). */
typedef struct rel_sets {
    double *v[ABFT_SITE_COUNT][64];
    int64_t n[ABFT_SITE_COUNT][64], cap[ABFT_SITE_COUNT][64];
    int oom; /* a value could not be kept: the quantiles say so */
    int64_t by_cfg[16][ABFT_OUTCOME_COUNT]; /* cfg_class() */
} rel_sets_t;

/* The configuration class of a full-space trial: what decides how a fault can be resolved.
 * GEMM: checksum kind, random checksum, beta != 0, recompute; LU: the recovery copy (the LU ignores the
 * checksum kind and recompute a trial draws). */
/* The bound mode as the CSV (short) and the summaries (long) name it. */
static const char *bound_short(int32_t mode) {
    return mode == ABFT_BOUND_PROBABILISTIC ? "prob" : mode == ABFT_BOUND_TIGHT ? "tight" : "worst";
}
static const char *bound_long(int32_t mode) {
    return mode == ABFT_BOUND_PROBABILISTIC ? "probabilistic"
           : mode == ABFT_BOUND_TIGHT       ? "tight"
                                            : "worst-case";
}

static int cfg_class(int op, const abft_trial_config_t *c) {
    if (op != ABFT_CAMPAIGN_GEMM) return c->lu_recovery ? 1 : 0;
    return (c->checksum_kind == ABFT_CHECKSUM_FULL ? 8 : 0) | (c->beta != 0.0 ? 4 : 0) |
           (c->recompute ? 2 : 0) | (c->random_checksum ? 1 : 0);
}

static void cfg_label(int op, int k, char *buf, size_t len) {
    if (op == ABFT_CAMPAIGN_GEMM)
        snprintf(buf, len, "%s checksums%s, beta %s, recompute %s", k & 8 ? "full" : "row",
                 k & 1 ? " + random" : "", k & 4 ? "!= 0" : "= 0", k & 2 ? "on" : "off");
    else
        snprintf(buf, len, "recovery copy %s", k & 1 ? "on" : "off");
}

static void rel_add(rel_sets_t *r, int site, int bit, double x) {
    if (r == NULL || site < 0 || site >= ABFT_SITE_COUNT || bit < 0 || bit >= 64) return;
    if (r->n[site][bit] == r->cap[site][bit]) {
        int64_t cap = r->cap[site][bit] ? 2 * r->cap[site][bit] : 16;
        double *v = (double *)realloc(r->v[site][bit], (size_t)cap * sizeof(double));
        if (v == NULL) {
            r->oom = 1;
            return;
        }
        r->v[site][bit] = v, r->cap[site][bit] = cap;
    }
    r->v[site][bit][r->n[site][bit]++] = x;
}

static void rel_free(rel_sets_t *r) {
    if (r == NULL) return;
    for (int s = 0; s < ABFT_SITE_COUNT; ++s)
        for (int b = 0; b < 64; ++b) free(r->v[s][b]);
    free(r);
}

static int cmp_dbl(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y; /* +Inf last; rel_change is never NaN */
}

/* Count, 50th, 90th and 99th percentiles (nearest rank) and max of the values of site s, bit
 * b (b < 0: every bit). Returns the count (0: q untouched). */
static int64_t rel_stats(const rel_sets_t *r, int s, int b, double q[4]) {
    int64_t n = 0;
    for (int x = 0; x < 64; ++x)
        if (b < 0 || x == b) n += r->n[s][x];
    if (n == 0) return 0;
    double *v = (double *)malloc((size_t)n * sizeof(double));
    if (v == NULL) return 0;
    int64_t k = 0;
    for (int x = 0; x < 64; ++x)
        if (b < 0 || x == b)
            for (int64_t i = 0; i < r->n[s][x]; ++i) v[k++] = r->v[s][x][i];
    qsort(v, (size_t)n, sizeof(double), cmp_dbl);
    const double ps[3] = {0.50, 0.90, 0.99};
    for (int i = 0; i < 3; ++i) {
        int64_t rank = (int64_t)ceil(ps[i] * (double)n);
        q[i] = v[(rank < 1 ? 1 : rank) - 1];
    }
    q[3] = v[n - 1];
    free(v);
    return n;
}

typedef struct run_ctx {
    const abft_campaign_config_t *cfg;
    FILE *csv, *json;
    int first_json;
    int bar;           /* progress bar on stderr */
    int verbose_trial; /* print each trial in full (replay) */
    double t0, last_draw;
    abft_svg_counts_t *svg; /* outcomes by site, operand and bit, for the picture */
    rel_sets_t *rel;        /* undetected trials' relative changes */
} run_ctx_t;

static double wall(void) {
    struct timespec ts;
    timespec_get(&ts, TIME_UTC);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void campaign_usage(FILE *f) {
    fprintf(f,
            "usage: abft campaign [options]\n"
            "\n"
            "  --op NAME          the protected operation (default gemm):\n");
    for (int t = 0; t < cli_nops; ++t) {
        char sites[128];
        fprintf(f, "                       %-13s %s\n"
                   "                       %-13s sites: %s\n",
                cli_ops[t].name, cli_ops[t].what, "",
                cli_site_list(cli_ops[t].sites, sites, sizeof sites));
    }
    fprintf(f,
            "  --precision d|s    fp64 (default) or fp32 data (checksums are fp64 in both)\n"
            "  --size N           m = n = k = N (default 128); gemm: or --m, --n, --k;\n"
            "                     getrf, getrf-online: n x n, --n or --size\n"
            "  --trials N         faulty trials (default 300)\n"
            "  --controls N       fault-free control trials, fresh inputs each (default 300)\n"
            "  --refresh N        faulty trials per input set and golden run (default 50)\n"
            "  --bits CLASS|B     which bit of an element is flipped (default any):\n");
    cli_help_bits(f);
    fprintf(f,
            "  --width 1|2        adjacent bits flipped per element (default 1)\n"
            "  --elems N          elements per fault, 1..%d (default 1)\n"
            "  --row R, --col C   fix the row / column of the faulty elements (default uniform);\n"
            "                     positions index the array struck at each site; sites whose\n"
            "                     arrays do not hold them are left out (or refused when named)\n"
            "  --sites LIST       all (default: every site of the operation) or a comma list:\n",
            ABFT_INJECT_MAX_ELEMS);
    cli_help_sites(f, "                       ");
    fprintf(f,
            "  --checksum row|full  gemm: row checksums (default) or row and column checksums\n"
            "  --random-checksum on|off  gemm: the detection-only random checksum\n"
            "                     (abft_set_random_checksum; default off, drawn in --space full)\n"
            "  --bound worst|prob|tight  bound mode: worst (default; rigorous, zero false\n"
            "                     positives), prob (probabilistic), or tight (gemm, CPU and\n"
            "                     CUDA: sketched second moments, guarded; docs/bound.md)\n"
            "  --bound-factor F   scale of the bound, 0 < F <= 1e6 (default 1; 4 with\n"
            "                     --bound prob)\n"
            "  --guarantee G      changes above G·tau must be detected, G >= 1 (default 2)\n"
            "  --space fixed|full fixed (default): every trial runs the options above; full:\n"
            "                     each trial draws sizes up to m, n, k, transposes, alpha,\n"
            "                     beta, leading dimensions, checksum kind, bound mode, math\n"
            "                     mode (CUDA), LU options, a fault model and the call of its\n"
            "                     site to strike, and runs its own golden (docs/campaign.md);\n"
            "                     --checksum, --bound, --bound-factor, --random-checksum and\n"
            "                     --lu-recovery are drawn too, and refused with it\n"
            "  --lu-recovery on|off  getrf, getrf-online: keep a copy of A to recompute a\n"
            "                     flagged row the checksums cannot locate within (default off)\n"
            "  --backend auto|cpu|cuda  auto (default): the GPU when the CUDA backend is built\n"
            "                     and a device is present, else the CPU\n"
            "  --seed S           campaign seed (default 1); every trial derives from it\n"
            "  --jobs N           worker threads, 1..64 (default 1), each with its own handle;\n"
            "                     the results are those of --jobs 1 (only timings differ). On\n"
            "                     the CPU set OMP_NUM_THREADS=1 and OPENBLAS_NUM_THREADS=1 too\n"
            "  --out DIR          output directory (default campaign-out)\n"
            "  --name NAME        file name stem (default campaign_<op>_<precision>)\n"
            "  --replay T         run only trial T (same other options) and print it in full\n"
            "  --quiet            no progress bar\n"
            "\n"
            "Outputs (in DIR, replaced only when the run completes or is interrupted):\n"
            "NAME.csv (one line per trial), NAME.json (schema abft-campaign/2), NAME.svg\n"
            "(outcomes by site and bit), NAME.md (the summary). SIGINT (Ctrl-C) or SIGTERM\n"
            "stops the campaign after the trial in progress and writes the trials finished,\n"
            "the summary marked PARTIAL (JSON summary.partial); a second one quits at once.\n"
            "Exit status: 0 when SDC, miscorrections, false positives and errors are all 0;\n"
            "1 when any is not; 2 on bad options or when the campaign cannot run; 130 (SIGINT)\n"
            "or 143 (SIGTERM) for an interrupted run with none of those failures.\n");
}

/* ---- progress ------------------------------------------------------------------------ */

static void progress(void *user, int64_t done, int64_t total) {
    run_ctx_t *rc = (run_ctx_t *)user;
    if (!rc->bar) return;
    double now = wall();
    if (done < total && now - rc->last_draw < 0.1) return;
    rc->last_draw = now;
    double el = now - rc->t0, frac = total > 0 ? (double)done / (double)total : 1.0;
    double eta = frac > 0 ? el * (1.0 - frac) / frac : 0.0;
    char bar[41];
    int fill = (int)(frac * 40.0);
    for (int t = 0; t < 40; ++t) bar[t] = t < fill ? '#' : '.';
    bar[40] = '\0';
    fprintf(stderr, "\r[%s] %" PRId64 "/%" PRId64 " %3.0f%%  %.1f s, eta %.1f s   ", bar, done,
            total, 100.0 * frac, el, eta);
    if (done == total) fprintf(stderr, "\n");
    fflush(stderr);
}

/* ---- per-trial output ------------------------------------------------------------------ */

static void json_num(FILE *f, double v) {
    if (isnan(v)) fputs("\"nan\"", f);
    else if (isinf(v)) fputs(v > 0 ? "\"inf\"" : "\"-inf\"", f);
    else fprintf(f, "%.17g", v);
}

/* Full space: the configuration and fault a trial drew (abft_trial_config_t), as CSV
 * columns after `rel_change` (FULL_CSV_HEADER: one name per column; the model's width is
 * `model_width`, beside the first flip's `width`) and as a JSON object. */
#define FULL_CSV_HEADER                                                                         \
    ",rho_check,m,n,k,transa,transb,lda,ldb,ldc,alpha,beta,c_scale,checksum,bound,bound_factor," \
    "math,recompute,lu_recovery,nb,check_every,panel_nb,lookahead,model,model_width,call,"  \
    "calls,"                                                                                 \
    "random_checksum"
static void trial_config_csv(FILE *f, const abft_trial_t *t) {
    const abft_trial_config_t *c = &t->config;
    fprintf(f, ",%.6g,%" PRId64 ",%" PRId64 ",%" PRId64 ",%c,%c,%" PRId64 ",%" PRId64 ",%" PRId64
               ",%.17g,%.17g,%.17g,%s,%s,%g,%s,%d,%d,%" PRId64 ",%" PRId64 ",%" PRId64 ",%" PRId64
               ",%s,%d,%d,%d,%d",
            t->rho_check, c->m, c->n, c->k, c->transa ? 'T' : 'N', c->transb ? 'T' : 'N', c->lda,
            c->ldb, c->ldc, c->alpha, c->beta, c->c_scale,
            c->checksum_kind == ABFT_CHECKSUM_FULL ? "full" : "row",
            bound_short(c->bound_mode), c->bound_factor,
            c->math_mode ? "tf32" : "default", c->recompute, c->lu_recovery, c->nb,
            c->check_every, c->panel_nb, c->lookahead,
            t->control ? "-" : abft_fault_model_name(c->model), c->width, c->call, c->calls,
            c->random_checksum);
}
static void trial_config_json(FILE *f, const abft_trial_t *t) {
    const abft_trial_config_t *c = &t->config;
    fputs(",\n     \"rho_check\": ", f);
    json_num(f, t->rho_check);
    fprintf(f, ", \"config\": {\"m\": %" PRId64 ", \"n\": %" PRId64 ", \"k\": %" PRId64
               ", \"transa\": \"%c\", \"transb\": \"%c\", \"lda\": %" PRId64 ", \"ldb\": %" PRId64
               ", \"ldc\": %" PRId64 ", \"alpha\": ",
            c->m, c->n, c->k, c->transa ? 'T' : 'N', c->transb ? 'T' : 'N', c->lda, c->ldb,
            c->ldc);
    json_num(f, c->alpha);
    fputs(", \"beta\": ", f);
    json_num(f, c->beta);
    fputs(", \"c_scale\": ", f);
    json_num(f, c->c_scale);
    fprintf(f, ", \"checksum\": \"%s\", \"bound\": \"%s\", \"bound_factor\": %g, \"math\": "
               "\"%s\", \"recompute\": %d, \"lu_recovery\": %d, \"nb\": %" PRId64
               ", \"check_every\": %" PRId64 ", \"panel_nb\": %" PRId64 ", \"lookahead\": %" PRId64
               ", \"model\": \"%s\", \"width\": %d, \"call\": %d, \"calls\": %d"
               ", \"random_checksum\": %d}",
            c->checksum_kind == ABFT_CHECKSUM_FULL ? "full" : "row",
            bound_long(c->bound_mode),
            c->bound_factor, c->math_mode ? "tf32" : "default", c->recompute, c->lu_recovery,
            c->nb, c->check_every, c->panel_nb, c->lookahead,
            t->control ? "-" : abft_fault_model_name(c->model), c->width, c->call, c->calls,
            c->random_checksum);
}

static void on_trial(void *user, const abft_trial_t *t) {
    run_ctx_t *rc = (run_ctx_t *)user;
    const abft_report_t *r = &t->report;
    char prec = rc->cfg->precision;
    int bw = prec == 'd' ? 16 : 8;
    if (rc->verbose_trial) cli_print_trial(stdout, t, prec);
    if (rc->svg) abft_svg_add(rc->svg, t);
    if (t->outcome == ABFT_OUTCOME_UNDETECTED && t->nflips > 0)
        rel_add(rc->rel, t->site, t->flips[0].bit, t->rel_change);
    if (rc->rel != NULL && !t->control && t->nflips > 0 && t->outcome >= 0 &&
        t->outcome < ABFT_OUTCOME_COUNT)
        rc->rel->by_cfg[cfg_class(rc->cfg->op, &t->config)][t->outcome] += 1;
    if (rc->csv) {
        const abft_flip_t *p = t->nflips > 0 ? &t->flips[0] : NULL;
        fprintf(rc->csv, "%" PRId64 ",%d,%" PRIu64 ",%" PRId64 ",%s,%d,%s,%s,%" PRId64 ",",
                t->index, t->control, t->seed, t->set, t->control ? "-" : cli_site_name(t->site),
                t->which, abft_outcome_name(t->outcome),
                abft_status_name((abft_status_t)t->status), t->nflips);
        if (p != NULL) {
            int w = p->precision == 'd' ? 16 : 8;
            fprintf(rc->csv, "%" PRId64 ",%" PRId64 ",%d,%d,%.17g,%.17g,0x%0*" PRIx64
                             ",0x%0*" PRIx64 ",",
                    p->row, p->col, p->bit, p->width, p->old_value, p->new_value, w, p->old_bits,
                    w, p->new_bits);
        } else {
            fputs(",,,,,,,,", rc->csv);
        }
        fprintf(rc->csv, "%.6g,%.6g,%" PRId64 ",%" PRId64 ",%" PRId64 ",%" PRId64 ",%" PRId64
                         ",%.6g,%.6g",
                t->rho, r->max_ratio, r->detected, r->corrected, r->uncorrectable, r->recomputed,
                r->checksum_faults, t->seconds, t->rel_change);
        if (rc->cfg->space == ABFT_SPACE_FULL) trial_config_csv(rc->csv, t);
        fputc('\n', rc->csv);
    }
    (void)bw;
    if (rc->json) {
        FILE *f = rc->json;
        fprintf(f, "%s\n    {\"trial\": %" PRId64 ", \"control\": %d, \"seed\": %" PRIu64
                   ", \"set\": %" PRId64 ", \"site\": \"%s\", \"which\": %d, \"outcome\": \"%s\", "
                   "\"status\": \"%s\", \"rho\": ",
                rc->first_json ? "" : ",", t->index, t->control, t->seed, t->set,
                t->control ? "-" : cli_site_name(t->site), t->which,
                abft_outcome_name(t->outcome), abft_status_name((abft_status_t)t->status));
        rc->first_json = 0;
        json_num(f, t->rho);
        fputs(", \"rel_change\": ", f);
        json_num(f, t->rel_change);
        fprintf(f, ", \"seconds\": %.6g,\n     \"report\": {\"checked\": %" PRId64
                   ", \"detected\": %" PRId64 ", \"corrected\": %" PRId64
                   ", \"uncorrectable\": %" PRId64 ", \"recomputed\": %" PRId64
                   ", \"checksum_faults\": %" PRId64 ", \"max_ratio\": ",
                t->seconds, r->checked, r->detected, r->corrected, r->uncorrectable,
                r->recomputed, r->checksum_faults);
        json_num(f, r->max_ratio);
        fputs("}", f);
        if (rc->cfg->space == ABFT_SPACE_FULL) trial_config_json(f, t);
        fputs(",\n     \"flips\": [", f);
        for (int64_t e = 0; e < t->nflips; ++e) {
            const abft_flip_t *p = &t->flips[e];
            int w = p->precision == 'd' ? 16 : 8;
            fprintf(f, "%s{\"site\": \"%s\", \"which\": %d, \"row\": %" PRId64 ", \"col\": %" PRId64
                       ", \"bit\": %d, \"width\": %d, \"old\": ",
                    e ? ", " : "", cli_site_name(p->site), p->which, p->row, p->col, p->bit,
                    p->width);
            json_num(f, p->old_value);
            fputs(", \"new\": ", f);
            json_num(f, p->new_value);
            fprintf(f, ", \"old_bits\": \"0x%0*" PRIx64 "\", \"new_bits\": \"0x%0*" PRIx64 "\"}", w,
                    p->old_bits, w, p->new_bits);
        }
        fputs("]}", f);
    }
}

/* ---- summary ---------------------------------------------------------------------------- */

static const int faulty_order[] = {ABFT_OUTCOME_MASKED,        ABFT_OUTCOME_UNDETECTED,
                                   ABFT_OUTCOME_CORRECTED,     ABFT_OUTCOME_UNCORRECTABLE,
                                   ABFT_OUTCOME_GRAY,          ABFT_OUTCOME_SDC,
                                   ABFT_OUTCOME_MISCORRECTED,  ABFT_OUTCOME_NOT_FIRED,
                                   ABFT_OUTCOME_ERROR};
static const char *faulty_label[] = {"masked (within the fault-free noise)",
                                     "undetected (beyond the noise, within the bound)",
                                     "corrected",
                                     "detected, uncorrectable",
                                     "gray zone (tau < change <= g·tau)",
                                     "SDC",
                                     "miscorrected",
                                     "not fired (site not reached)",
                                     "error"};

typedef struct totals {
    int64_t faulty, controls, fp, bad;
} totals_t;

static totals_t totals(const abft_campaign_summary_t *s) {
    totals_t t;
    t.controls = s->count[ABFT_OUTCOME_CLEAN] + s->count[ABFT_OUTCOME_FALSE_POSITIVE];
    t.faulty = 0;
    for (int o = 0; o < ABFT_OUTCOME_COUNT; ++o) t.faulty += s->count[o];
    t.faulty -= t.controls;
    /* control trials that returned an error status are not in count[]: their own count */
    t.controls += s->control_errors;
    t.fp = s->count[ABFT_OUTCOME_FALSE_POSITIVE] + s->golden_detections;
    t.bad = s->count[ABFT_OUTCOME_SDC] + s->count[ABFT_OUTCOME_MISCORRECTED] + t.fp +
            s->count[ABFT_OUTCOME_ERROR] + s->control_errors;
    return t;
}

/* The signal that stopped the campaign (SIGINT, SIGTERM), 0 when none did. */
static volatile sig_atomic_t stop_flag, stop_signal;

static const char *stop_name(void) {
    return stop_signal == SIGTERM ? "SIGTERM" : "SIGINT";
}

/* The first line of a partial run's summary (trials run of those asked for). */
static void describe_partial(FILE *f, const abft_campaign_config_t *c,
                             const abft_campaign_summary_t *s, const char *sep) {
    if (!s->partial) return;
    fprintf(f, "PARTIAL: interrupted (%s) after %" PRId64 " of %" PRId64 " trials (%" PRId64
               " faulty, then %" PRId64 " controls were asked for); every count below is of "
               "the trials run%s",
            stop_name(), s->total, c->trials + c->controls, c->trials, c->controls, sep);
}

static void describe(FILE *f, const abft_campaign_config_t *c, const abft_campaign_summary_t *s,
                     const char *op_name, int md) {
    const char *sep = md ? "\n\n" : "\n";
    char dims[96];
    if (c->op == ABFT_CAMPAIGN_GEMM)
        snprintf(dims, sizeof dims, "m = %" PRId64 ", n = %" PRId64 ", k = %" PRId64, c->m, c->n,
                 c->k);
    else /* LU: an n x n matrix */
        snprintf(dims, sizeof dims, "n = %" PRId64, c->n);
    describe_partial(f, c, s, sep);
    if (c->space == ABFT_SPACE_FULL) {
        /* nothing of the handle is fixed: say what each trial drew, not the defaults */
        fprintf(f, "%s%s %s, space full: every trial draws its own configuration and fault "
                   "(docs/campaign.md, \"The full space\"); sizes up to %s, backend %s, "
                   "guarantee g = %g, seed %" PRIu64 "%s",
                md ? "" : "abft campaign: ", op_name, c->precision == 'd' ? "fp64" : "fp32", dims,
                cli_backend_name(s->backend), c->guarantee, c->seed, sep);
        fprintf(f, "drawn per trial: sizes, transposes, alpha, beta, leading dimensions, checksum "
                   "kind (row or full), random checksum, bound mode and factor (worst case 1, "
                   "probabilistic 4, tight 1), recompute, math mode (CUDA), LU options%s",
                sep);
        fprintf(f, "fault: %s bit%s (kept), fault model (one, row2, col2, same_bit, burst), "
                   "width 1 or 2, elements, row, column and firing call drawn per trial; sites: ",
                cli_class_name(c->spec.bit_class),
                c->spec.bit_class == ABFT_BITS_EXACT ? "" : "s");
    } else {
        fprintf(f, "%s%s %s, %s, backend %s, %s checksums%s, "
                   "%s bound (factor %g), guarantee g = %g, seed %" PRIu64 "%s%s",
                md ? "" : "abft campaign: ", op_name, c->precision == 'd' ? "fp64" : "fp32", dims,
                cli_backend_name(s->backend),
                c->checksum_kind == ABFT_CHECKSUM_FULL ? "full" : "row",
                c->op == ABFT_CAMPAIGN_GEMM && c->random_checksum && c->space != ABFT_SPACE_FULL
                    ? " + random"
                    : "",
                bound_long(c->bound_mode),
                c->bound_factor, c->guarantee, c->seed,
                c->op == ABFT_CAMPAIGN_GEMM ? "" : c->lu_recovery ? ", LU recovery copy on"
                                                                   : ", LU recovery copy off", sep);
        fprintf(f, "fault: %s bit%s, %d element%s, width %d, row %s, col %s; sites: ",
                cli_class_name(c->spec.bit_class), c->spec.bit_class == ABFT_BITS_EXACT ? "" : "s",
                c->spec.nelems, c->spec.nelems > 1 ? "s" : "", c->spec.width,
                c->spec.row < 0 ? "uniform" : "given", c->spec.col < 0 ? "uniform" : "given");
    }
    int firstsite = 1;
    for (int st = 0; st < ABFT_SITE_COUNT; ++st)
        if (s->by_site[st][0] + s->by_site[st][1] + s->by_site[st][2] + s->by_site[st][3] +
                s->by_site[st][4] + s->by_site[st][5] + s->by_site[st][8] + s->by_site[st][9] +
                s->by_site[st][ABFT_OUTCOME_UNDETECTED] >
            0) {
            fprintf(f, "%s%s", firstsite ? "" : ", ", cli_site_name(st));
            firstsite = 0;
        }
    if (firstsite) fprintf(f, "none (no faulty trial ran)");
    fprintf(f, "%s", sep);
    if (s->unit_roundoff > 0) /* (a run without golden runs has no u to show) */
        fprintf(f, "%" PRId64 " trials in %.1f s (u = %.3g, %" PRId64 " golden runs)%s", s->total,
                s->seconds, s->unit_roundoff, s->golden_runs, sep);
    else
        fprintf(f, "%" PRId64 " trials in %.1f s (%" PRId64 " golden runs)%s", s->total,
                s->seconds, s->golden_runs, sep);
}

/* What the summary's words mean, one line each (docs/campaign.md, "What the outcomes mean"
 * and "The guarantee and the gray zone", say it at length). */
static void print_terms(FILE *f, const abft_campaign_config_t *c, int md) {
    char g[32];
    snprintf(g, sizeof g, "%g", c->guarantee);
    const char *terms[][2] = {
        {"tau", "a row's checksum bound: the most that rounding alone can move the row's "
                "checksum (docs/bound.md); rho = the change / tau"},
        {"g·tau", "the guarantee (g = GUAR): a change above g·tau in an element of a row is "
                  "always detected"},
        {"masked", "nothing detected, and the change is within the rounding noise of a "
                   "fault-free run: harmless"},
        {"undetected", "nothing detected; the change is beyond that noise but within the bound "
                       "tau, below what the check can see: not a failure, its size is shown"},
        {"corrected", "detected and resolved: the element corrected, a row or column "
                      "recomputed, or a corrupted checksum found"},
        {"uncorrectable", "detected and reported to the caller as not trustworthy (\"reported\" "
                          "in the tables): nothing silent"},
        {"gray zone", "nothing reported and the change between tau and g·tau, where detection "
                      "is not promised (full space: or spread over a row)"},
        {"SDC", "silent data corruption: nothing detected and a change above g·tau; must be 0"},
        {"miscorrected", "reported as resolved, yet a change above g·tau remains; must be 0"},
        {"false positive", "a detection in a fault-free run (control or golden run); must be 0"},
        {"Wilson interval", "the 95 % confidence interval of a rate from its count and the "
                            "number of trials (Wilson score)"},
        {"PASS", "no SDC, no miscorrection, no false positive, no error status; masked, "
                 "undetected, uncorrectable and gray trials do not fail a run"},
    };
    fprintf(f, md ? "\nTerms (docs/campaign.md, \"What the outcomes mean\"):\n\n"
                  : "\nterms (docs/campaign.md, \"What the outcomes mean\"):\n");
    for (size_t i = 0; i < sizeof terms / sizeof terms[0]; ++i) {
        /* the guarantee's g as configured */
        char line[256];
        const char *d = terms[i][1], *at = strstr(d, "GUAR");
        if (at != NULL)
            snprintf(line, sizeof line, "%.*s%s%s", (int)(at - d), d, g, at + 4);
        else
            snprintf(line, sizeof line, "%s", d);
        int pad = 16; /* columns, not bytes: UTF-8 continuation bytes take none */
        for (const char *q = terms[i][0]; *q; ++q) pad += ((unsigned char)*q & 0xC0) == 0x80;
        if (md) fprintf(f, "- **%s**: %s\n", terms[i][0], line);
        else fprintf(f, "  %-*s %s\n", pad, terms[i][0], line);
    }
}

static void print_summary(FILE *f, const abft_campaign_config_t *c, const abft_campaign_summary_t *s,
                          const rel_sets_t *rel, const char *op_name, const char *svg_path,
                          int md) {
    totals_t t = totals(s);
    double lo, hi;
    describe(f, c, s, op_name, md);
    if (t.faulty == 0) { /* no rates of nothing: say what the run was */
        if (s->partial)
            fprintf(f, "%sfaulty trials: none finished before the interrupt\n", md ? "" : "\n");
        else
            fprintf(f, "%sfaulty trials: none (--trials 0): this run checks fault-free runs for "
                       "false positives only\n",
                    md ? "" : "\n");
        if (md) fprintf(f, "\n");
    }
    if (t.faulty > 0 && md) {
        fprintf(f, "| outcome | count | rate | 95 %% CI (Wilson) |\n| --- | ---: | ---: | --- |\n");
    } else if (t.faulty > 0) {
        fprintf(f, "\n%-48s %8s %9s   %s\n", "faulty trials", "count", "rate", "95% CI (Wilson)");
    } else if (md) {
        fprintf(f, "| fault-free runs | count | rate | 95 %% CI (Wilson) |\n"
                   "| --- | ---: | ---: | --- |\n");
    }
    for (size_t o = 0; o < sizeof faulty_order / sizeof faulty_order[0] && t.faulty > 0; ++o) {
        int64_t k = s->count[faulty_order[o]];
        if ((faulty_order[o] == ABFT_OUTCOME_NOT_FIRED || faulty_order[o] == ABFT_OUTCOME_ERROR) &&
            k == 0)
            continue;
        abft_wilson_interval(k, t.faulty, 1.96, &lo, &hi);
        double rate = t.faulty > 0 ? 100.0 * (double)k / (double)t.faulty : 0.0;
        const char *must = faulty_order[o] == ABFT_OUTCOME_SDC ||
                                   faulty_order[o] == ABFT_OUTCOME_MISCORRECTED
                               ? "  must be 0"
                               : "";
        if (md)
            fprintf(f, "| %s | %" PRId64 " | %.2f %% | [%.2f, %.2f] %%%s |\n", faulty_label[o], k,
                    rate, 100 * lo, 100 * hi, must);
        else
            fprintf(f, "%-48s %8" PRId64 " %8.2f%%   [%6.2f, %6.2f] %%%s\n", faulty_label[o], k,
                    rate, 100 * lo, 100 * hi, must);
    }
    abft_wilson_interval(t.fp, t.controls + s->golden_runs, 1.96, &lo, &hi);
    double fprate = t.controls + s->golden_runs > 0
                        ? 100.0 * (double)t.fp / (double)(t.controls + s->golden_runs)
                        : 0.0;
    if (md)
        fprintf(f, "| false positive (controls + golden runs: %" PRId64 ") | %" PRId64
                   " | %.2f %% | [%.2f, %.2f] %%  must be 0 |\n\n",
                t.controls + s->golden_runs, t.fp, fprate, 100 * lo, 100 * hi);
    else
        fprintf(f, "%-48s %8" PRId64 " %8.2f%%   [%6.2f, %6.2f] %%  must be 0\n",
                "false positive (controls+golden)", t.fp, fprate, 100 * lo, 100 * hi);
    if (!md) fprintf(f, "%-48s %8" PRId64 "\n", "  fault-free runs checked", t.controls + s->golden_runs);
    if (md)
        fprintf(f, "control trials with an error status: %" PRId64 " (must be 0)\n",
                s->control_errors);
    else
        fprintf(f, "%-48s %8" PRId64 "   must be 0\n", "control trials: error status",
                s->control_errors);
    if (c->space == ABFT_SPACE_FULL && s->spread_undetected > 0)
        fprintf(f, "%sundetected changes spread over a row (largest element > %g·tau, the "
                   "checksums' view <= %g·tau, counted gray): %" PRId64 "\n",
                md ? "\n" : "", c->guarantee, c->guarantee, s->spread_undetected);

    if (t.faulty == 0) {
        fprintf(f, "%slargest control |residual|/bound: %.3g\n", md ? "\n" : "\n",
                s->max_control_ratio);
        print_terms(f, c, md);
        if (svg_path != NULL) fprintf(f, "\npicture (no faulty trial in it): %s\n", svg_path);
        return;
    }
    fprintf(f, "%sguarantee: a change > %g·tau_i in an element of row i is detected, where tau_i "
               "is the row's checksum bound (docs/campaign.md); %s\n",
            md ? "\n" : "\n", c->guarantee,
            s->count[ABFT_OUTCOME_SDC] + s->count[ABFT_OUTCOME_MISCORRECTED] == 0
                ? "held in every trial"
                : "VIOLATED (see the sdc / miscorrected trials in the CSV)");
    if (md) fprintf(f, "\n");
    fprintf(f, "largest change left undetected: %.3g·tau; left after a correction: %.3g·tau; "
               "largest control |residual|/bound: %.3g\n",
            s->max_undetected_rho, s->max_corrected_rho, s->max_control_ratio);
    if (md) {
        fprintf(f, "\n| site | masked | undetected | corrected | uncorrectable | gray | SDC | "
                   "miscorrected |\n| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n");
    } else {
        fprintf(f, "\n%-10s %8s %10s %10s %14s %6s %6s %13s\n", "by site", "masked",
                "undetected", "corrected", "uncorrectable", "gray", "SDC", "miscorrected");
    }
    for (int st = 0; st < ABFT_SITE_COUNT; ++st) {
        const int64_t *b = s->by_site[st];
        int64_t n = 0;
        for (int o = 0; o < ABFT_OUTCOME_COUNT; ++o) n += b[o];
        if (n == 0) continue;
        const int64_t u = b[ABFT_OUTCOME_UNDETECTED];
        if (md)
            fprintf(f, "| %s | %" PRId64 " | %" PRId64 " | %" PRId64 " | %" PRId64 " | %" PRId64
                       " | %" PRId64 " | %" PRId64 " |\n",
                    cli_site_name(st), b[0], u, b[1], b[2], b[3], b[4], b[5]);
        else
            fprintf(f, "%-10s %8" PRId64 " %10" PRId64 " %10" PRId64 " %14" PRId64 " %6" PRId64
                       " %6" PRId64 " %13" PRId64 "\n",
                    cli_site_name(st), b[0], u, b[1], b[2], b[3], b[4], b[5]);
    }
    /* how large the undetected changes are (docs/campaign.md, "Masked or undetected") */
    int any = 0;
    for (int st = 0; st < ABFT_SITE_COUNT && rel != NULL; ++st) {
        double q[4];
        int64_t n = rel_stats(rel, st, -1, q);
        if (n == 0) continue;
        if (!any) {
            if (md)
                fprintf(f, "\nrelative change of the undetected faults (%s; by bit in the "
                           "JSON):\n\n| site | undetected | median | 90 %% | 99 %% | max |\n"
                           "| --- | ---: | ---: | ---: | ---: | ---: |\n",
                        c->op == ABFT_CAMPAIGN_GEMM
                            ? "|C_ij - G_ij| / rms of golden's row i"
                            : "residual of the factors / (|L|·|U|·v) of golden's, per row");
            else
                fprintf(f, "\n%-10s %10s %10s %10s %10s %10s   relative change, undetected\n",
                        "site", "count", "median", "90%", "99%", "max");
            any = 1;
        }
        if (md)
            fprintf(f, "| %s | %" PRId64 " | %.3g | %.3g | %.3g | %.3g |\n", cli_site_name(st), n,
                    q[0], q[1], q[2], q[3]);
        else
            fprintf(f, "%-10s %10" PRId64 " %10.3g %10.3g %10.3g %10.3g\n", cli_site_name(st), n,
                    q[0], q[1], q[2], q[3]);
    }
    if (rel != NULL && rel->oom)
        fprintf(f, "(memory ran out: the quantiles leave some undetected trials out)\n");
    /* what the confirmation rules cost in corrections, by configuration (full space) */
    if (c->space == ABFT_SPACE_FULL && rel != NULL) {
        if (md)
            fprintf(f, "\nfaults that struck, by configuration: the share corrected (resolved) "
                       "and reported\n\n| configuration | trials | corrected | reported "
                       "(uncorrectable) | corrected share |\n| --- | ---: | ---: | ---: | ---: |\n");
        else
            fprintf(f, "\n%-56s %8s %10s %10s %9s\n", "by configuration", "trials", "corrected",
                    "reported", "share");
        for (int k = 0; k < 16; ++k) {
            const int64_t *b = rel->by_cfg[k];
            int64_t n = 0;
            for (int o = 0; o < ABFT_OUTCOME_COUNT; ++o) n += b[o];
            if (n == 0) continue;
            char lab[96];
            cfg_label(c->op, k, lab, sizeof lab);
            double share = 100.0 * (double)b[ABFT_OUTCOME_CORRECTED] / (double)n;
            if (md)
                fprintf(f, "| %s | %" PRId64 " | %" PRId64 " | %" PRId64 " | %.1f %% |\n", lab, n,
                        b[ABFT_OUTCOME_CORRECTED], b[ABFT_OUTCOME_UNCORRECTABLE], share);
            else
                fprintf(f, "%-56s %8" PRId64 " %10" PRId64 " %10" PRId64 " %8.1f%%\n", lab, n,
                        b[ABFT_OUTCOME_CORRECTED], b[ABFT_OUTCOME_UNCORRECTABLE], share);
        }
    }
    print_terms(f, c, md);
    if (svg_path != NULL)
        fprintf(f, "\noutcomes by site and bit position: %s\n", svg_path);
}

static void write_json_tail(FILE *f, const abft_campaign_config_t *c,
                            const abft_campaign_summary_t *s, const rel_sets_t *rel) {
    totals_t t = totals(s);
    double lo, hi;
    fprintf(f, "\n  ],\n  \"summary\": {\n    \"partial\": %s, \"trials_run\": %" PRId64 ",\n"
               "    \"backend\": \"%s\", \"seconds\": %.3f, "
               "\"unit_roundoff\": %.17g, \"faulty_trials\": %" PRId64 ", \"control_trials\": %" PRId64
               ", \"golden_runs\": %" PRId64 ", \"golden_detections\": %" PRId64 ",\n",
            s->partial ? "true" : "false", s->total, cli_backend_name(s->backend), s->seconds,
            s->unit_roundoff, t.faulty, t.controls, s->golden_runs, s->golden_detections);
    fprintf(f, "    \"max_control_ratio\": ");
    json_num(f, s->max_control_ratio);
    fprintf(f, ", \"max_corrected_rho\": ");
    json_num(f, s->max_corrected_rho);
    fprintf(f, ", \"max_undetected_rho\": ");
    json_num(f, s->max_undetected_rho);
    fprintf(f, ",\n    \"control_errors\": %" PRId64, s->control_errors);
    if (c->space == ABFT_SPACE_FULL) {
        fprintf(f, ", \"spread_undetected\": %" PRId64 ", \"by_model\": {", s->spread_undetected);
        for (int mo = 0; mo < ABFT_FAULT_MODEL_COUNT; ++mo) {
            fprintf(f, "%s\"%s\": {", mo ? ", " : "", abft_fault_model_name(mo));
            for (int o = 0; o < ABFT_OUTCOME_COUNT; ++o)
                fprintf(f, "%s\"%s\": %" PRId64, o ? ", " : "", abft_outcome_name(o),
                        s->by_model[mo][o]);
            fputs("}", f);
        }
        fputs("}", f);
    }
    fprintf(f, ",\n    \"outcomes\": {");
    for (int o = 0; o < ABFT_OUTCOME_COUNT; ++o) {
        int control = o == ABFT_OUTCOME_CLEAN || o == ABFT_OUTCOME_FALSE_POSITIVE;
        int64_t n = control ? t.controls : t.faulty;
        abft_wilson_interval(s->count[o], n, 1.96, &lo, &hi);
        fprintf(f, "%s\n      \"%s\": {\"count\": %" PRId64 ", \"of\": %" PRId64
                   ", \"rate\": %.6g, \"ci95\": [%.6g, %.6g]}",
                o ? "," : "", abft_outcome_name(o), s->count[o], n,
                n > 0 ? (double)s->count[o] / (double)n : 0.0, lo, hi);
    }
    fprintf(f, "\n    },\n    \"by_site\": {");
    int first = 1;
    for (int st = 0; st < ABFT_SITE_COUNT; ++st) {
        int64_t n = 0;
        for (int o = 0; o < ABFT_OUTCOME_COUNT; ++o) n += s->by_site[st][o];
        if (n == 0) continue;
        fprintf(f, "%s\n      \"%s\": {", first ? "" : ",", cli_site_name(st));
        first = 0;
        for (int o = 0; o < ABFT_OUTCOME_COUNT; ++o)
            fprintf(f, "%s\"%s\": %" PRId64, o ? ", " : "", abft_outcome_name(o), s->by_site[st][o]);
        fputs("}", f);
    }
    int nbits = c->precision == 'd' ? 64 : 32;
    fprintf(f, "\n    },\n    \"by_bit\": [");
    for (int b = 0; b < nbits; ++b) {
        fprintf(f, "%s\n      {\"bit\": %d", b ? "," : "", b);
        for (int o = 0; o < ABFT_OUTCOME_COUNT; ++o)
            fprintf(f, ", \"%s\": %" PRId64, abft_outcome_name(o), s->by_bit[b][o]);
        fputs("}", f);
    }
    /* the undetected faults' relative changes: by site, and by site and first flipped bit */
    if (c->space == ABFT_SPACE_FULL) { /* faulty trials that struck, by configuration class */
        fprintf(f, "\n    ],\n    \"by_config\": [");
        int fc = 1;
        for (int k = 0; k < 16; ++k) {
            int64_t n = 0;
            for (int o = 0; o < ABFT_OUTCOME_COUNT; ++o) n += rel->by_cfg[k][o];
            if (n == 0) continue;
            char lab[96];
            cfg_label(c->op, k, lab, sizeof lab);
            fprintf(f, "%s\n      {\"configuration\": \"%s\", \"trials\": %" PRId64, fc ? "" : ",",
                    lab, n);
            for (int o = 0; o < ABFT_OUTCOME_COUNT; ++o)
                fprintf(f, ", \"%s\": %" PRId64, abft_outcome_name(o), rel->by_cfg[k][o]);
            fputs("}", f);
            fc = 0;
        }
    }
    fprintf(f, "\n    ],\n    \"max_undetected_rel\": ");
    json_num(f, s->max_undetected_rel);
    fprintf(f, ",\n    \"undetected_rel_change\": {\"quantiles\": [0.5, 0.9, 0.99, 1], "
               "\"by_site\": {");
    first = 1;
    int complete = !rel->oom;
    for (int st = 0; st < ABFT_SITE_COUNT; ++st) {
        double q[4];
        int64_t n = rel_stats(rel, st, -1, q), kept = 0;
        for (int b = 0; b < 64; ++b) kept += rel->n[st][b];
        if (n < kept) complete = 0; /* no memory for the sort */
        if (n == 0) continue;
        fprintf(f, "%s\n      \"%s\": {\"count\": %" PRId64 ", \"values\": [", first ? "" : ",",
                cli_site_name(st), n);
        for (int i = 0; i < 4; ++i) {
            if (i) fputs(", ", f);
            json_num(f, q[i]);
        }
        fputs("], \"by_bit\": [", f);
        int fb = 1;
        for (int b = 0; b < 64; ++b) { /* checksums are fp64 in fp32 campaigns too */
            int64_t nb = rel_stats(rel, st, b, q);
            if (nb == 0) continue;
            fprintf(f, "%s{\"bit\": %d, \"count\": %" PRId64 ", \"values\": [", fb ? "" : ", ",
                    b, nb);
            for (int i = 0; i < 4; ++i) {
                if (i) fputs(", ", f);
                json_num(f, q[i]);
            }
            fputs("]}", f);
            fb = 0;
        }
        fputs("]}", f);
        first = 0;
    }
    fprintf(f, "}, \"complete\": %s},\n    \"pass\": %s\n  }\n}\n", complete ? "true" : "false",
            t.bad == 0 ? "true" : "false");
}

static void write_json_head(FILE *f, const abft_campaign_config_t *c, const char *op_name) {
    char date[64];
    time_t now = time(NULL);
    strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
    fprintf(f, "{\n  \"schema\": \"abft-campaign/2\", \"tool\": \"abft campaign\", "
               "\"library_version\": \"%s\", \"date\": \"%s\",\n",
            abft_version_string(), date);
    fprintf(f, "  \"config\": {\"op\": \"%s\", \"precision\": \"%c\", \"m\": %" PRId64 ", \"n\": %" PRId64
               ", \"k\": %" PRId64 ", \"trials\": %" PRId64 ", \"controls\": %" PRId64
               ", \"refresh\": %" PRId64 ", \"sites_mask\": %u, \"bits\": \"%s\", \"bit\": %d"
               ", \"width\": %d, \"elems\": %d, \"row\": %" PRId64 ", \"col\": %" PRId64
               ", \"checksum\": \"%s\", \"bound\": \"%s\", \"bound_factor\": %g, \"guarantee\": %g"
               ", \"lu_recovery\": %d, \"random_checksum\": %d, \"seed\": %" PRIu64
               "%s},\n  \"trials\": [",
            op_name, c->precision, c->m, c->n, c->k, c->trials, c->controls, c->refresh, c->sites,
            cli_class_name(c->spec.bit_class), c->spec.bit, c->spec.width, c->spec.nelems,
            c->spec.row, c->spec.col, c->checksum_kind == ABFT_CHECKSUM_FULL ? "full" : "row",
            bound_long(c->bound_mode),
            c->bound_factor, c->guarantee, c->lu_recovery, c->random_checksum, c->seed,
            c->space == ABFT_SPACE_FULL ? ", \"space\": \"full\"" : "");
}

/* ---- output files ------------------------------------------------------------------------
 * Each output is written to a temporary file beside its final name and renamed over it only
 * when the whole run succeeded, so a failed or interrupted run leaves an earlier run's files
 * as they were. An interrupt (SIGINT, SIGTERM, SIGHUP) removes the temporary files. */

enum { OUT_CSV, OUT_JSON, OUT_SVG, OUT_MD, OUT_COUNT };
static const char *out_ext[OUT_COUNT] = {"csv", "json", "svg", "md"};
enum { OUT_PATH = 4096 };
static char out_final[OUT_COUNT][OUT_PATH];
static char out_tmp[OUT_COUNT][OUT_PATH];
static char out_old[OUT_COUNT][OUT_PATH]; /* an earlier run's file, moved aside in commit_out */
static volatile sig_atomic_t out_live[OUT_COUNT];

/* The paths of output `which`: its final name, its temporary file and the name an earlier
 * run's file is moved to while the outputs are committed. 0 when they fit. */
static int out_paths(const char *dir, const char *name, int which) {
    int a = snprintf(out_final[which], OUT_PATH, "%s/%s.%s", dir, name, out_ext[which]);
    int b = snprintf(out_tmp[which], OUT_PATH, "%s/.%s.%s.%ld.tmp", dir, name, out_ext[which],
                     (long)getpid());
    int c = snprintf(out_old[which], OUT_PATH, "%s/.%s.%s.%ld.old", dir, name, out_ext[which],
                     (long)getpid());
    return a < 0 || b < 0 || c < 0 || a >= OUT_PATH || b >= OUT_PATH || c >= OUT_PATH ? -1 : 0;
}

static void out_remove_all(void) {
    for (int t = 0; t < OUT_COUNT; ++t)
        if (out_live[t]) {
            unlink(out_tmp[t]);
            out_live[t] = 0;
        }
}

static void on_signal(int sig) {
    for (int t = 0; t < OUT_COUNT; ++t)
        if (out_live[t]) unlink(out_tmp[t]); /* async-signal-safe */
    signal(sig, SIG_DFL);
    raise(sig);
}

/* SIGINT, SIGTERM: the campaign polls the flag (abft_campaign_config_t.stop), starts no
 * further trial and returns what it ran; the outputs are then written, marked partial. A
 * second signal ends the tool at once, as on_signal does. */
static void on_stop(int sig) {
    stop_flag = 1;
    stop_signal = sig;
    signal(sig, on_signal); /* async-signal-safe */
}

static FILE *open_out(const char *dir, int which) {
    FILE *f = fopen(out_tmp[which], "w");
    if (f == NULL) {
        fprintf(stderr, "abft campaign: --out: cannot write in '%s': %s\n", dir, strerror(errno));
        return NULL;
    }
    out_live[which] = 1;
    return f;
}

/* Closes f; 0 when everything written reached the file. */
static int close_out(FILE *f, int which) {
    int bad = ferror(f);
    if (fclose(f) != 0) bad = 1;
    if (bad)
        fprintf(stderr, "abft campaign: writing %s failed: %s\n", out_final[which],
                strerror(errno));
    return bad ? -1 : 0;
}

/* Puts the temporary files in place of the final names, all or nothing: an earlier run's
 * files are moved aside first, the new ones renamed in, and on any failure every new file
 * is removed and every earlier file moved back. Signals wait until it is done. Returns 0 on
 * success; -1 when nothing changed; -2 when an earlier file could not be moved back (the
 * message names where it is). */
static int commit_out(void) {
    int moved[OUT_COUNT] = {0}, placed[OUT_COUNT] = {0}, rc = 0;
    sigset_t all, prev;
    sigfillset(&all);
    sigprocmask(SIG_BLOCK, &all, &prev);
    /* a final name that is there but no regular file (a directory) is never replaced */
    for (int t = 0; t < OUT_COUNT && rc == 0; ++t) {
        struct stat st;
        if (out_live[t] && lstat(out_final[t], &st) == 0 && !S_ISREG(st.st_mode) &&
            !S_ISLNK(st.st_mode)) {
            fprintf(stderr, "abft campaign: cannot replace %s: it is not a regular file\n",
                    out_final[t]);
            rc = -1;
        }
    }
    for (int t = 0; t < OUT_COUNT && rc == 0; ++t) {
        if (!out_live[t]) continue;
        if (rename(out_final[t], out_old[t]) == 0) {
            moved[t] = 1;
        } else if (errno != ENOENT) {
            fprintf(stderr, "abft campaign: cannot move %s aside: %s\n", out_final[t],
                    strerror(errno));
            rc = -1;
        }
    }
    for (int t = 0; t < OUT_COUNT && rc == 0; ++t) {
        if (!out_live[t]) continue;
        if (rename(out_tmp[t], out_final[t]) != 0) {
            fprintf(stderr, "abft campaign: cannot rename %s to %s: %s\n", out_tmp[t],
                    out_final[t], strerror(errno));
            rc = -1;
        } else {
            placed[t] = 1;
        }
    }
    for (int t = 0; t < OUT_COUNT; ++t) {
        if (rc != 0 && placed[t]) unlink(out_final[t]); /* the new file goes */
        if (rc != 0 && moved[t] && rename(out_old[t], out_final[t]) != 0) {
            fprintf(stderr, "abft campaign: cannot move the earlier %s back: %s; it is %s\n",
                    out_final[t], strerror(errno), out_old[t]);
            rc = -2;
        }
        if (rc == 0 && moved[t]) unlink(out_old[t]); /* the earlier file, replaced */
        if (placed[t]) out_live[t] = 0;
    }
    out_remove_all();
    sigprocmask(SIG_SETMASK, &prev, NULL);
    return rc;
}

int abft_cmd_campaign(int argc, char **argv) {
    abft_campaign_config_t cfg = abft_campaign_config_default();
    cfg.trials = 300;
    cfg.controls = 300;
    const char *out_dir = "campaign-out", *name = NULL, *op_name = "gemm", *replay = NULL;
    int quiet = 0, bad = 0;
    cli_given_t given;
    memset(&given, 0, sizeof given);
    for (int i = 1; i < argc && !bad; ++i) {
        const char *v = NULL;
        int errors_before = cli_nerrors;
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            campaign_usage(stdout);
            return 0;
        } else if (strcmp(argv[i], "--quiet") == 0) {
            quiet = 1;
        } else if (cli_common_opt(argc, argv, &i, &cfg, &given, &v, &bad)) {
            /* parsed into cfg */
        } else if (cli_opt(argc, argv, &i, "--op", &v, &bad)) {
            const cli_op_t *op = v ? cli_find_op(v) : NULL;
            if (op != NULL) {
                op_name = op->name;
                cfg.op = op->op;
            } else if (v) {
                char list[128];
                cli_err("--op", v, "is not an operation (accepted: %s)",
                        cli_op_list(list, sizeof list));
                bad = 1;
            }
        } else if (cli_opt(argc, argv, &i, "--m", &v, &bad)) {
            if (v && cli_parse_int("--m", v, 1, INT64_MAX, &cfg.m)) given.m = v;
            else bad = 1;
        } else if (cli_opt(argc, argv, &i, "--n", &v, &bad)) {
            if (v && cli_parse_int("--n", v, 1, INT64_MAX, &cfg.n)) given.n = v;
            else bad = 1;
        } else if (cli_opt(argc, argv, &i, "--k", &v, &bad)) {
            if (v && cli_parse_int("--k", v, 1, INT64_MAX, &cfg.k)) given.k = v;
            else bad = 1;
        } else if (cli_opt(argc, argv, &i, "--trials", &v, &bad)) {
            if (!(v && cli_parse_int("--trials", v, 0, 1000000000000, &cfg.trials))) bad = 1;
        } else if (cli_opt(argc, argv, &i, "--controls", &v, &bad)) {
            if (!(v && cli_parse_int("--controls", v, 0, 1000000000000, &cfg.controls))) bad = 1;
        } else if (cli_opt(argc, argv, &i, "--refresh", &v, &bad)) {
            if (!(v && cli_parse_int("--refresh", v, 1, INT64_MAX, &cfg.refresh))) bad = 1;
        } else if (cli_opt(argc, argv, &i, "--jobs", &v, &bad)) {
            int64_t jobs = 1;
            if (v && cli_parse_int("--jobs", v, 1, 64, &jobs)) cfg.jobs = (int32_t)jobs;
            else bad = 1;
        } else if (cli_opt(argc, argv, &i, "--row", &v, &bad)) {
            if (v && cli_parse_int("--row", v, 0, INT64_MAX, &cfg.spec.row)) given.row = v;
            else bad = 1;
        } else if (cli_opt(argc, argv, &i, "--col", &v, &bad)) {
            if (v && cli_parse_int("--col", v, 0, INT64_MAX, &cfg.spec.col)) given.col = v;
            else bad = 1;
        } else if (cli_opt(argc, argv, &i, "--sites", &v, &bad)) {
            int sr = v ? cli_sites(v, &cfg.sites) : 0;
            if (sr == 1) {
                given.sites = v;
                given.sites_opt = "--sites";
            } else if (sr == CLI_SITES_EMPTY || sr == CLI_SITES_TWICE) {
                cli_err("--sites", v, "%s (accepted: all, or site names separated by single "
                        "commas, each once)", sr == CLI_SITES_EMPTY ? "has an empty entry"
                                                                     : "names a site twice");
                bad = 1;
            } else if (v) {
                char list[128];
                cli_err("--sites", v, "is not a list of sites (accepted: all, or a comma list "
                        "of %s; abft campaign --help tells which operation has which)",
                        cli_site_list((1u << ABFT_SITE_COUNT) - 1u, list, sizeof list));
                bad = 1;
            }
        } else if (cli_opt(argc, argv, &i, "--bound", &v, &bad)) {
            if (v) given.bound = v;
            if (v && strcmp(v, "worst") == 0) cfg.bound_mode = ABFT_BOUND_WORST_CASE;
            else if (v && strcmp(v, "prob") == 0) cfg.bound_mode = ABFT_BOUND_PROBABILISTIC;
            else if (v && strcmp(v, "tight") == 0) cfg.bound_mode = ABFT_BOUND_TIGHT;
            else if (v) {
                cli_err("--bound", v, "is not a bound mode (accepted: worst, prob, tight)");
                bad = 1;
            }
        } else if (cli_opt(argc, argv, &i, "--bound-factor", &v, &bad)) {
            /* the handle's range (abft_set_bound_mode) */
            if (v && cli_parse_real_range("--bound-factor", v, 0.0, 1, 1e6, &cfg.bound_factor))
                given.bound_factor = v;
            else bad = 1;
        } else if (cli_opt(argc, argv, &i, "--lu-recovery", &v, &bad)) {
            if (v && !cli_parse_switch("--lu-recovery", v, &cfg.lu_recovery)) bad = 1;
            if (v) given.lu_recovery = v;
        } else if (cli_opt(argc, argv, &i, "--random-checksum", &v, &bad)) {
            if (v && !cli_parse_switch("--random-checksum", v, &cfg.random_checksum)) bad = 1;
            if (v) given.random_checksum = v;
        } else if (cli_opt(argc, argv, &i, "--space", &v, &bad)) {
            if (v && strcmp(v, "fixed") == 0) cfg.space = ABFT_SPACE_FIXED;
            else if (v && strcmp(v, "full") == 0) cfg.space = ABFT_SPACE_FULL;
            else if (v) {
                cli_err("--space", v, "is not a space (accepted: fixed, full)");
                bad = 1;
            }
        } else if (cli_opt(argc, argv, &i, "--guarantee", &v, &bad)) {
            if (!(v && cli_parse_real("--guarantee", v, 1.0, 0, &cfg.guarantee))) bad = 1;
        } else if (cli_opt(argc, argv, &i, "--replay", &v, &bad)) {
            if (v && cli_parse_int("--replay", v, 0, INT64_MAX, &cfg.only_trial)) replay = v;
            else bad = 1;
        } else if (cli_opt(argc, argv, &i, "--out", &v, &bad)) {
            out_dir = v;
        } else if (cli_opt(argc, argv, &i, "--name", &v, &bad)) {
            if (v && (v[0] == '\0' || strchr(v, '/') != NULL)) {
                cli_err("--name", v, "is not a file name stem (accepted: a name without '/'; "
                        "--out sets the directory)");
                bad = 1;
            }
            name = v;
        } else if (argv[i][0] == '-') {
            cli_err(NULL, NULL, "unknown option '%s' (abft campaign --help lists them)", argv[i]);
            bad = 1;
        } else {
            cli_err(NULL, NULL, "unexpected argument '%s' (options start with --; abft campaign "
                    "--help lists them)", argv[i]);
            bad = 1;
        }
        /* an option whose parser printed nothing itself */
        if (bad && cli_nerrors == errors_before)
            cli_err(argv[i], v, "is not accepted (abft campaign --help lists the values)");
    }
    if (bad) return 2;
    const cli_op_t *op = cli_find_op(op_name);
    if (cfg.trials == 0 && cfg.controls == 0) {
        cli_err("--trials", "0", "with --controls 0 leaves nothing to run");
        return 2;
    }
    if (replay != NULL && cfg.only_trial >= cfg.trials + cfg.controls) {
        cli_err("--replay", replay, "is not a trial of this campaign (trials 0..%" PRId64
                ": %" PRId64 " faulty, then %" PRId64 " controls)",
                cfg.trials + cfg.controls - 1, cfg.trials, cfg.controls);
        return 2;
    }
    if (!cli_check_config(&cfg, op, &given)) return 2;
    /* the options the full space draws for every trial: refused, not echoed as if used */
    if (cfg.space == ABFT_SPACE_FULL) {
        const char *drawn[5][2] = {{"--random-checksum", given.random_checksum},
                                   {"--checksum", given.checksum},
                                   {"--bound", given.bound},
                                   {"--bound-factor", given.bound_factor},
                                   {"--lu-recovery", given.lu_recovery}};
        for (int t = 0; t < 5; ++t)
            if (drawn[t][1] != NULL) {
                cli_err(drawn[t][0], drawn[t][1], "does not apply to --space full, which draws "
                        "it for every trial (docs/campaign.md, \"The full space\")");
                return 2;
            }
    }
    /* the probabilistic bound's usual factor, unless one was given */
    if (cfg.bound_mode == ABFT_BOUND_PROBABILISTIC && given.bound_factor == NULL)
        cfg.bound_factor = 4.0;

    run_ctx_t rc;
    memset(&rc, 0, sizeof rc);
    rc.cfg = &cfg;
    rc.first_json = 1;
    rc.bar = !quiet && cfg.only_trial < 0 && isatty(fileno(stderr));
    rc.verbose_trial = cfg.only_trial >= 0;
    rc.t0 = wall();
    cfg.progress = progress;
    cfg.on_trial = on_trial;
    cfg.user = &rc;

    char stem[256];
    if (name == NULL) snprintf(stem, sizeof stem, "campaign_%s_%c", op_name, cfg.precision);
    else if (snprintf(stem, sizeof stem, "%s", name) >= (int)sizeof stem) {
        cli_err("--name", name, "is too long (accepted: at most %d characters)",
                (int)sizeof stem - 1);
        return 2;
    }
    for (int t = 0; t < OUT_COUNT && cfg.only_trial < 0; ++t)
        if (out_paths(out_dir, stem, t) != 0) {
            cli_err("--out", out_dir, "is too long: the output paths in it would exceed %d "
                    "characters", OUT_PATH - 1);
            return 2;
        }
    const char *csv_path = out_final[OUT_CSV], *json_path = out_final[OUT_JSON],
               *svg_path = out_final[OUT_SVG], *md_path = out_final[OUT_MD];
    if (cfg.only_trial < 0) {
        if (mkdir(out_dir, 0777) != 0 && errno != EEXIST) {
            cli_err("--out", out_dir, "cannot be created: %s", strerror(errno));
            return 2;
        }
        signal(SIGINT, on_stop);
        signal(SIGTERM, on_stop);
        signal(SIGHUP, on_signal);
        cfg.stop = &stop_flag;
        rc.csv = open_out(out_dir, OUT_CSV);
        rc.json = rc.csv ? open_out(out_dir, OUT_JSON) : NULL;
        rc.svg = (abft_svg_counts_t *)calloc(1, sizeof *rc.svg);
        rc.rel = (rel_sets_t *)calloc(1, sizeof *rc.rel);
        if (rc.csv == NULL || rc.json == NULL || rc.svg == NULL || rc.rel == NULL) {
            if (rc.csv) fclose(rc.csv);
            if (rc.json) fclose(rc.json);
            out_remove_all();
            free(rc.svg);
            rel_free(rc.rel);
            return 2;
        }
        fprintf(rc.csv, "trial,control,seed,set,site,which,outcome,status,nflips,row,col,bit,"
                        "width,old_value,new_value,old_bits,new_bits,rho,report_max_ratio,"
                        "detected,corrected,uncorrectable,recomputed,checksum_faults,seconds,"
                        "rel_change%s\n",
                cfg.space == ABFT_SPACE_FULL ? FULL_CSV_HEADER : "");
        write_json_head(rc.json, &cfg, op_name);
    }

    abft_campaign_summary_t sum;
    abft_status_t st = abft_campaign_run(&cfg, &sum);
    if (st != ABFT_STATUS_SUCCESS) {
        if (rc.bar) fprintf(stderr, "\n");
        fprintf(stderr, "abft campaign: the campaign could not run: %s (%s)\n",
                abft_status_name(st), abft_status_string(st));
        if (rc.csv) fclose(rc.csv);
        if (rc.json) fclose(rc.json);
        out_remove_all();
        free(rc.svg);
        rel_free(rc.rel);
        if (cfg.only_trial < 0)
            fprintf(stderr, "abft campaign: nothing written; files of an earlier run in %s are "
                            "unchanged\n", out_dir);
        return 2;
    }
    totals_t t = totals(&sum);
    if (cfg.only_trial >= 0) return t.bad == 0 ? 0 : 1;
    if (sum.partial) {
        if (rc.bar) fprintf(stderr, "\n");
        fprintf(stderr, "abft campaign: interrupted (%s) after %" PRId64 " of %" PRId64
                        " trials: writing them, marked partial (again to quit at once)\n",
                stop_name(), sum.total, cfg.trials + cfg.controls);
    }

    write_json_tail(rc.json, &cfg, &sum, rc.rel);
    int wbad = close_out(rc.json, OUT_JSON);
    wbad |= close_out(rc.csv, OUT_CSV);
    FILE *svg = open_out(out_dir, OUT_SVG);
    if (svg != NULL) {
        char title[256], dims[96];
        if (op->square)
            snprintf(dims, sizeof dims, "n = %" PRId64, cfg.n);
        else
            snprintf(dims, sizeof dims, "m = %" PRId64 ", n = %" PRId64 ", k = %" PRId64, cfg.m,
                     cfg.n, cfg.k);
        char part[96] = "";
        if (sum.partial)
            snprintf(part, sizeof part, " (PARTIAL: interrupted after %" PRId64 " of %" PRId64
                     " trials)", sum.total, cfg.trials + cfg.controls);
        if (cfg.space == ABFT_SPACE_FULL)
            snprintf(title, sizeof title, "abft campaign: %s %s, space full (each trial draws "
                     "its sizes up to %s, its configuration and its fault), %" PRId64
                     " faulty trials, backend %s%s",
                     op_name, cfg.precision == 'd' ? "fp64" : "fp32", dims, t.faulty,
                     cli_backend_name(sum.backend), part);
        else
            snprintf(title, sizeof title, "abft campaign: %s %s, %s, %" PRId64
                     " faulty trials, %s checksums, %s bound, backend %s%s",
                     op_name, cfg.precision == 'd' ? "fp64" : "fp32", dims, t.faulty,
                     abft_checksum_kind_name((abft_checksum_kind_t)cfg.checksum_kind),
                     bound_long(cfg.bound_mode), cli_backend_name(sum.backend), part);
        abft_svg_by_site(svg, title, cfg.precision == 'd' ? 64 : 32, cfg.guarantee, rc.svg);
        wbad |= close_out(svg, OUT_SVG);
    } else {
        wbad = 1;
    }
    free(rc.svg);
    FILE *md = wbad ? NULL : open_out(out_dir, OUT_MD);
    if (md != NULL) {
        char date[32];
        time_t now = time(NULL);
        strftime(date, sizeof date, "%Y-%m-%d", gmtime(&now));
        fprintf(md, "# abft campaign: %s %s (%s)%s\n\n", op_name,
                cfg.precision == 'd' ? "fp64" : "fp32", date, sum.partial ? ", partial" : "");
        print_summary(md, &cfg, &sum, rc.rel, op_name, svg_path, 1);
        fprintf(md, "\nFiles: %s, %s. Replay trial T: `abft campaign <same options> --replay T`.\n",
                csv_path, json_path);
        wbad |= close_out(md, OUT_MD);
    } else {
        wbad = 1;
    }
    int crc = wbad ? -1 : commit_out();
    if (crc != 0) {
        rel_free(rc.rel);
        out_remove_all();
        if (crc == -1)
            fprintf(stderr, "abft campaign: the outputs could not be written; files of an "
                            "earlier run in %s are unchanged\n", out_dir);
        else
            fprintf(stderr, "abft campaign: the outputs could not be written, and an earlier "
                            "run's file could not be put back (named above)\n");
        return 2;
    }
    print_summary(stdout, &cfg, &sum, rc.rel, op_name, svg_path, 0);
    rel_free(rc.rel);
    printf("trials: %s, %s; summary: %s\n", csv_path, json_path, md_path);
    if (t.bad != 0)
        printf("FAIL: %" PRId64 " SDC, %" PRId64 " miscorrected, %" PRId64 " false positives, %" PRId64
               " errors%s\n",
               sum.count[ABFT_OUTCOME_SDC], sum.count[ABFT_OUTCOME_MISCORRECTED], t.fp,
               sum.count[ABFT_OUTCOME_ERROR], sum.partial ? " (PARTIAL run)" : "");
    else if (sum.partial)
        printf("PARTIAL (interrupted, %s): no SDC, no miscorrection, no false positive in the "
               "%" PRId64 " trials run of %" PRId64 "\n",
               stop_name(), sum.total, cfg.trials + cfg.controls);
    else
        printf("PASS: no SDC, no miscorrection, no false positive\n");
    if (t.bad != 0) return 1;
    return sum.partial ? 128 + (int)stop_signal : 0;
}
