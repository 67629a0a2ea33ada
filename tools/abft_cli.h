/* abft command line: declarations shared by the subcommand files. Uses the public API
 * only (the tool links the shared library). */
#ifndef ABFT_CLI_H
#define ABFT_CLI_H

#include <stdint.h>
#include <stdio.h>

#include "abft/abft.h"

/* Subcommands: argv[0] is the subcommand name. Return the process exit code. */
int abft_cmd_campaign(int argc, char **argv);
int abft_cmd_demo(int argc, char **argv);

/* ---- error messages -------------------------------------------------------------------- */

/* The subcommand the messages speak for ("abft campaign", "abft demo"). */
extern const char *cli_cmd;
/* Number of error messages printed by cli_err so far. */
extern int cli_nerrors;
/* Prints "<cli_cmd>: <opt>: '<value>' <what>" (without the value part when value is NULL)
 * on stderr and counts it. what is a printf format. */
void cli_err(const char *opt, const char *value, const char *what, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* ---- option parsing shared by campaign and demo -------------------------------------- */

/* Matches argv[*i] against --name (value in the next argument) or --name=value; on a match
 * stores the value, advances *i and returns 1. A missing value prints an error and sets
 * *bad. */
int cli_opt(int argc, char **argv, int *i, const char *name, const char **value, int *bad);
/* Plain conversions without messages: 1 on success. cli_int64 takes whole numbers >= 0. */
int cli_int64(const char *s, int64_t *out);
int cli_uint64(const char *s, uint64_t *out);
int cli_double(const char *s, double *out);
/* Conversions that print what is accepted when the value is not: a whole number in
 * [lo, hi]; a finite number > lo (lo_open) or >= lo. Return 1 on success. */
int cli_parse_int(const char *opt, const char *s, int64_t lo, int64_t hi, int64_t *out);
int cli_parse_real(const char *opt, const char *s, double lo, int lo_open, double *out);
/* The same with an upper bound: lo < (or <=) value <= hi. */
int cli_parse_real_range(const char *opt, const char *s, double lo, int lo_open, double hi,
                         double *out);
/* on|off into 1|0, printing what is accepted otherwise. Returns 1 on success. */
int cli_parse_switch(const char *opt, const char *s, int32_t *out);
/* --bits: any|sign|exponent|mant-high|mant-low|<bit number 0..63>; checked against the
 * precision and width by cli_check_config. */
int cli_bits(const char *s, abft_fault_spec_t *spec);
/* --sites: "all" (mask 0: the operation's sites) or site names separated by commas. 1 on
 * success; 0 for an unknown name,
 * CLI_SITES_EMPTY for an empty entry ("after,", ",,"), CLI_SITES_TWICE for a name given
 * twice. */
enum { CLI_SITES_EMPTY = -1, CLI_SITES_TWICE = -2 };
int cli_sites(const char *s, uint32_t *mask);
int cli_backend(const char *s, int32_t *backend);
const char *cli_backend_name(int backend);
const char *cli_site_name(int site);       /* "encode", "mid", "after", "checksum", ... */
const char *cli_site_what(int site);       /* one line: what the site corrupts */
const char *cli_class_name(int bit_class); /* "any", "sign", ... */
/* Writes the comma-separated names of the sites in mask into buf. */
const char *cli_site_list(uint32_t mask, char *buf, size_t cap);

/* The options given on the command line that later checks need to name (NULL: not given). */
typedef struct cli_given {
    const char *size, *m, *n, *k, *bits, *width, *elems, *row, *col, *sites, *checksum,
        *lu_recovery, *backend, *bound_factor, *random_checksum, *bound;
    const char *sites_opt; /* the option that named the sites: "--sites" or "--site" */
} cli_given_t;

/* The options campaign and demo share (--precision, --size, --bits, --width, --elems,
 * --checksum, --backend, --seed): when argv[*i] is one of them, parse it into cfg (and note
 * it in given), advance *i, print an error and set *bad on a bad value, return 1; else
 * return 0. *value gets the value seen. */
int cli_common_opt(int argc, char **argv, int *i, abft_campaign_config_t *cfg,
                   cli_given_t *given, const char **value, int *bad);

/* The operations `abft campaign --op` knows: one table entry per operation. */
typedef struct cli_op {
    const char *name;
    int32_t op;         /* abft_campaign_op_t */
    const char *what;   /* one-line description for help */
    uint32_t sites;     /* the hook sites the operation calls (bit 1u << site) */
    int square;         /* 1: an n x n matrix (--n or --size only) */
} cli_op_t;
const cli_op_t *cli_find_op(const char *name);
extern const cli_op_t cli_ops[];
extern const int cli_nops;
/* "gemm, getrf, getrf-online" */
const char *cli_op_list(char *buf, size_t cap);

/* Everything about a parsed configuration that can be checked before running, with a
 * message naming the option, the value and what is accepted: options that do not apply
 * to the operation, sizes and their products (int64 overflow, host memory), the bit against
 * the precision and width, --elems/--row/--col against the arrays of the sites (sites
 * given with --sites that cannot hold them are an error; when no sites were given, the
 * sites that cannot are left out with a note), the backend (CUDA not built, no device).
 * May set cfg->sites. Returns 1 when the campaign can run. */
int cli_check_config(abft_campaign_config_t *cfg, const cli_op_t *op, const cli_given_t *given);

/* Help text shared by campaign and demo: the values of --bits, the sites per operation. */
void cli_help_bits(FILE *f);
void cli_help_sites(FILE *f, const char *indent);

/* Print one trial in full (flips and report), for demo and --replay. */
void cli_print_trial(FILE *f, const abft_trial_t *t, char precision);

#endif /* ABFT_CLI_H */
