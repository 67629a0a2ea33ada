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

/* ---- option parsing shared by campaign and demo -------------------------------------- */

/* Matches argv[*i] against --name (value in the next argument) or --name=value; on a match
 * stores the value, advances *i and returns 1. A missing value prints an error and sets
 * *bad. */
int cli_opt(int argc, char **argv, int *i, const char *name, const char **value, int *bad);
int cli_int64(const char *s, int64_t *out);    /* 1 on success (>= 0 only) */
int cli_uint64(const char *s, uint64_t *out);
int cli_double(const char *s, double *out);
/* --bits: any|sign|exponent|mant-high|mant-low|<bit number> */
int cli_bits(const char *s, abft_fault_spec_t *spec);
/* --sites: all|encode|mid|after|checksum, comma-separated */
int cli_sites(const char *s, uint32_t *mask);
int cli_backend(const char *s, int32_t *backend);
const char *cli_backend_name(int backend);
const char *cli_site_name(int site);       /* "encode", "mid", "after", "checksum", ... */
const char *cli_class_name(int bit_class); /* "any", "sign", ... */
/* The options campaign and demo share (--precision, --size, --bits, --width, --elems,
 * --checksum, --backend, --seed): when argv[*i] is one of them, parse it into cfg, advance
 * *i, set *bad on a bad value, return 1; else return 0. *value gets the value seen. */
int cli_common_opt(int argc, char **argv, int *i, abft_campaign_config_t *cfg,
                   const char **value, int *bad);
/* The operations `abft campaign --op` knows: one table entry per operation. */
typedef struct cli_op {
    const char *name;
    int32_t op;         /* abft_campaign_op_t */
    const char *what;   /* one-line description for help */
} cli_op_t;
const cli_op_t *cli_find_op(const char *name);
extern const cli_op_t cli_ops[];
extern const int cli_nops;

/* Print one trial in full (flips and report), for demo and --replay. */
void cli_print_trial(FILE *f, const abft_trial_t *t, char precision);

#endif /* ABFT_CLI_H */
