/* abft: the command line. `abft <subcommand> [options]`; `abft help` lists them. */
#define _DEFAULT_SOURCE /* sysconf(_SC_PHYS_PAGES) */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "abft_cli.h"

#define SITE(s) (1u << (s))
const cli_op_t cli_ops[] = {
    {"gemm", ABFT_CAMPAIGN_GEMM, "C = A·B, A m x k, B k x n (abft_dgemm, abft_sgemm)",
     SITE(ABFT_SITE_AFTER_ENCODE) | SITE(ABFT_SITE_MID_GEMM) | SITE(ABFT_SITE_AFTER_GEMM) |
         SITE(ABFT_SITE_CHECKSUM),
     0},
    {"getrf", ABFT_CAMPAIGN_GETRF, "LU P·A = L·U, n x n (abft_dgetrf, abft_sgetrf)",
     SITE(ABFT_SITE_CHECKSUM) | SITE(ABFT_SITE_AFTER_LU), 1},
    {"getrf-online", ABFT_CAMPAIGN_GETRF_ONLINE, "the same, checked between panels (abft_dgetrf_online)",
     SITE(ABFT_SITE_CHECKSUM) | SITE(ABFT_SITE_LU_PANEL) | SITE(ABFT_SITE_AFTER_LU), 1},
};
const int cli_nops = (int)(sizeof cli_ops / sizeof cli_ops[0]);

const cli_op_t *cli_find_op(const char *name) {
    for (int t = 0; t < cli_nops; ++t)
        if (strcmp(cli_ops[t].name, name) == 0) return &cli_ops[t];
    return NULL;
}

const char *cli_op_list(char *buf, size_t cap) {
    size_t len = 0;
    buf[0] = '\0';
    for (int t = 0; t < cli_nops && len < cap; ++t)
        len += (size_t)snprintf(buf + len, cap - len, "%s%s", t ? ", " : "", cli_ops[t].name);
    return buf;
}

/* ---- messages -------------------------------------------------------------------------- */

const char *cli_cmd = "abft";
int cli_nerrors = 0;

void cli_err(const char *opt, const char *value, const char *what, ...) {
    va_list ap;
    fprintf(stderr, "%s: ", cli_cmd);
    if (opt != NULL) fprintf(stderr, "%s: ", opt);
    if (value != NULL) fprintf(stderr, "'%s' ", value);
    va_start(ap, what);
    vfprintf(stderr, what, ap);
    va_end(ap);
    fputc('\n', stderr);
    cli_nerrors += 1;
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
        cli_err(name, NULL, "needs a value (`%s --help` lists the values)", cli_cmd);
        *bad = 1;
        return 1;
    }
    *i += 1;
    *value = argv[*i];
    return 1;
}

/* ---- conversions ----------------------------------------------------------------------- */

/* A number as written: a digit first, or '-' then a digit (a real may start with '.'); the
 * strto* functions would also take leading white space and a '+'. */
static int plain_number(const char *s, int real) {
    if (s[0] == '-') ++s;
    return (s[0] >= '0' && s[0] <= '9') || (real && s[0] == '.');
}

int cli_int64(const char *s, int64_t *out) {
    char *end = NULL;
    errno = 0;
    if (!plain_number(s, 0)) return 0;
    long long v = strtoll(s, &end, 0);
    if (errno != 0 || end == s || *end != '\0' || v < 0) return 0;
    *out = (int64_t)v;
    return 1;
}

int cli_uint64(const char *s, uint64_t *out) {
    char *end = NULL;
    errno = 0;
    if (!plain_number(s, 0) || s[0] == '-') return 0;
    unsigned long long v = strtoull(s, &end, 0);
    if (errno != 0 || end == s || *end != '\0') return 0;
    *out = (uint64_t)v;
    return 1;
}

int cli_double(const char *s, double *out) {
    char *end = NULL;
    errno = 0;
    if (!plain_number(s, 1)) return 0;
    double v = strtod(s, &end);
    if (errno != 0 || end == s || *end != '\0' || !isfinite(v)) return 0;
    *out = v;
    return 1;
}

int cli_parse_int(const char *opt, const char *s, int64_t lo, int64_t hi, int64_t *out) {
    char *end = NULL;
    errno = 0;
    long long v = plain_number(s, 0) ? strtoll(s, &end, 10) : 0;
    if (!plain_number(s, 0) || end == s || *end != '\0') {
        cli_err(opt, s, "is not a whole number (accepted: %" PRId64 "..%" PRId64 ")", lo, hi);
        return 0;
    }
    if (errno == ERANGE || v < lo || v > hi) {
        cli_err(opt, s, "is out of range (accepted: %" PRId64 "..%" PRId64 ")", lo, hi);
        return 0;
    }
    *out = (int64_t)v;
    return 1;
}

int cli_parse_real_range(const char *opt, const char *s, double lo, int lo_open, double hi,
                         double *out) {
    double v;
    if (!cli_double(s, &v) || (lo_open ? !(v > lo) : !(v >= lo)) || !(v <= hi)) {
        cli_err(opt, s, "is %s (accepted: a number %s %g and <= %g)",
                cli_double(s, &v) ? "out of range" : "not a finite number", lo_open ? ">" : ">=",
                lo, hi);
        return 0;
    }
    *out = v;
    return 1;
}

int cli_parse_switch(const char *opt, const char *s, int32_t *out) {
    if (strcmp(s, "on") == 0 || strcmp(s, "off") == 0) {
        *out = s[1] == 'n';
        return 1;
    }
    cli_err(opt, s, "is not a switch (accepted: on, off)");
    return 0;
}

int cli_parse_real(const char *opt, const char *s, double lo, int lo_open, double *out) {
    double v;
    if (!cli_double(s, &v)) {
        cli_err(opt, s, "is not a finite number (accepted: a number %s %g)", lo_open ? ">" : ">=",
                lo);
        return 0;
    }
    if (lo_open ? !(v > lo) : !(v >= lo)) {
        cli_err(opt, s, "is out of range (accepted: a number %s %g)", lo_open ? ">" : ">=", lo);
        return 0;
    }
    *out = v;
    return 1;
}

/* ---- bits, sites, backends ------------------------------------------------------------- */

static const char *class_names[] = {"any", "sign", "exponent", "mant-high", "mant-low", "exact"};

const char *cli_class_name(int c) { return c >= 0 && c <= ABFT_BITS_EXACT ? class_names[c] : "?"; }

int cli_bits(const char *s, abft_fault_spec_t *spec) {
    for (int c = 0; c < ABFT_BITS_EXACT; ++c)
        if (strcmp(s, class_names[c]) == 0) {
            spec->bit_class = c;
            return 1;
        }
    int64_t b;
    if (!cli_int64(s, &b) || b > 1000000) return 0; /* the word's size is checked later */
    spec->bit_class = ABFT_BITS_EXACT;
    spec->bit = (int32_t)b;
    return 1;
}

void cli_help_bits(FILE *f) {
    fprintf(f, "                       any       every bit of the word, uniformly\n"
               "                       sign      fp64 bit 63, fp32 bit 31\n"
               "                       exponent  fp64 bits 52..62, fp32 23..30\n"
               "                       mant-high high half of the mantissa: fp64 26..51, fp32 12..22\n"
               "                       mant-low  low half of the mantissa: fp64 0..25, fp32 0..11\n"
               "                       B         exactly bit B, 0 = least significant (fp64 0..63,\n"
               "                                 fp32 0..31; with --width 2 at most 62 / 30)\n");
}

static const char *site_names[ABFT_SITE_COUNT] = {"encode", "mid", "after", "checksum",
                                                  "lu-panel", "after-lu"};
static const char *site_whats[ABFT_SITE_COUNT] = {
    "A or B (drawn per trial) after their checksums: input faults",
    "C between the two halves of a k-split GEMM",
    "C after the GEMM, before verification",
    "the encoded checksums (fp64, m x 2; full: also n x 2)",
    "the matrix between two panels of the online LU",
    "the factors L and U after the factorization"};

const char *cli_site_name(int s) { return s >= 0 && s < ABFT_SITE_COUNT ? site_names[s] : "-"; }
const char *cli_site_what(int s) { return s >= 0 && s < ABFT_SITE_COUNT ? site_whats[s] : "-"; }

const char *cli_site_list(uint32_t mask, char *buf, size_t cap) {
    size_t len = 0;
    buf[0] = '\0';
    for (int s = 0; s < ABFT_SITE_COUNT && len < cap; ++s)
        if (mask & SITE(s))
            len += (size_t)snprintf(buf + len, cap - len, "%s%s", len ? ", " : "", site_names[s]);
    return buf;
}

void cli_help_sites(FILE *f, const char *indent) {
    for (int s = 0; s < ABFT_SITE_COUNT; ++s)
        fprintf(f, "%s%-9s %s\n", indent, site_names[s], site_whats[s]);
}

int cli_sites(const char *s, uint32_t *mask) {
    if (strcmp(s, "all") == 0) {
        *mask = 0u; /* the operation's default sites */
        return 1;
    }
    uint32_t m = 0;
    /* names separated by single commas: no empty entry, no name twice */
    for (const char *p = s;;) {
        const char *e = strchr(p, ',');
        size_t len = e != NULL ? (size_t)(e - p) : strlen(p);
        if (len == 0) return CLI_SITES_EMPTY;
        int found = -1;
        for (int t = 0; t < ABFT_SITE_COUNT; ++t)
            if (strlen(site_names[t]) == len && strncmp(p, site_names[t], len) == 0) found = t;
        if (found < 0) return 0;
        if (m & (1u << found)) return CLI_SITES_TWICE;
        m |= 1u << found;
        if (e == NULL) break;
        p = e + 1;
    }
    *mask = m;
    return 1;
}

int cli_backend(const char *s, int32_t *backend) {
    if (strcmp(s, "auto") == 0) *backend = ABFT_BACKEND_AUTO;
    else if (strcmp(s, "cpu") == 0) *backend = ABFT_BACKEND_CPU;
    else if (strcmp(s, "cuda") == 0) *backend = ABFT_BACKEND_CUDA;
    else return 0;
    return 1;
}

const char *cli_backend_name(int b) { return abft_backend_name((abft_backend_t)b); }

/* ---- the options campaign and demo share ----------------------------------------------- */

/* A size option: a whole number >= 1 (the products are checked by cli_check_config). */
static int size_value(const char *opt, const char *v, int64_t *out) {
    return cli_parse_int(opt, v, 1, INT64_MAX, out);
}

int cli_common_opt(int argc, char **argv, int *i, abft_campaign_config_t *cfg,
                   cli_given_t *given, const char **value, int *bad) {
    const char *v = NULL;
    int64_t x;
    int hit = 1;
    if (cli_opt(argc, argv, i, "--precision", &v, bad)) {
        if (v && (strcmp(v, "d") == 0 || strcmp(v, "s") == 0)) cfg->precision = v[0];
        else if (v) {
            cli_err("--precision", v, "is not a precision (accepted: d for fp64, s for fp32)");
            *bad = 1;
        }
    } else if (cli_opt(argc, argv, i, "--size", &v, bad)) {
        if (v && size_value("--size", v, &x)) {
            cfg->m = cfg->n = cfg->k = x;
            given->size = v;
        } else *bad = 1;
    } else if (cli_opt(argc, argv, i, "--bits", &v, bad)) {
        if (v && cli_bits(v, &cfg->spec)) {
            given->bits = v;
        } else if (v) {
            cli_err("--bits", v, "is not a bit position (fp64 0..63, fp32 0..31) or a class "
                                 "(any, sign, exponent, mant-high, mant-low)");
            *bad = 1;
        }
    } else if (cli_opt(argc, argv, i, "--width", &v, bad)) {
        if (v && (strcmp(v, "1") == 0 || strcmp(v, "2") == 0)) {
            cfg->spec.width = v[0] - '0';
            given->width = v;
        } else if (v) {
            cli_err("--width", v, "is not a width (accepted: 1 or 2 adjacent bits)");
            *bad = 1;
        }
    } else if (cli_opt(argc, argv, i, "--elems", &v, bad)) {
        if (v && cli_parse_int("--elems", v, 1, ABFT_INJECT_MAX_ELEMS, &x)) {
            cfg->spec.nelems = (int32_t)x;
            given->elems = v;
        } else *bad = 1;
    } else if (cli_opt(argc, argv, i, "--checksum", &v, bad)) {
        if (v && strcmp(v, "row") == 0) cfg->checksum_kind = ABFT_CHECKSUM_ROW;
        else if (v && strcmp(v, "full") == 0) cfg->checksum_kind = ABFT_CHECKSUM_FULL;
        else if (v) {
            cli_err("--checksum", v, "is not a checksum kind (accepted: row, full)");
            *bad = 1;
        }
        if (v) given->checksum = v;
    } else if (cli_opt(argc, argv, i, "--backend", &v, bad)) {
        if (v && cli_backend(v, &cfg->backend)) {
            given->backend = v;
        } else if (v) {
            cli_err("--backend", v, "is not a backend (accepted: auto, cpu, cuda)");
            *bad = 1;
        }
    } else if (cli_opt(argc, argv, i, "--seed", &v, bad)) {
        if (v && !cli_uint64(v, &cfg->seed)) {
            cli_err("--seed", v, "is not a seed (accepted: a whole number 0..18446744073709551615)");
            *bad = 1;
        }
    } else {
        hit = 0;
    }
    *value = v;
    return hit;
}

/* ---- checks before a run ---------------------------------------------------------------- */

/* a·b when it fits in int64 (a, b >= 0), else -1 */
static int64_t mul64(int64_t a, int64_t b) {
    if (a < 0 || b < 0) return -1;
    if (a != 0 && b > INT64_MAX / a) return -1;
    return a * b;
}

/* The arrays the injector may be given at `site` (rows x cols each); returns their count. */
static int site_arrays(const abft_campaign_config_t *c, const cli_op_t *op, int site,
                       int64_t dims[2][2], const char *names[2]) {
    int64_t m = op->square ? c->n : c->m, n = c->n, k = c->k;
    switch (site) {
    case ABFT_SITE_AFTER_ENCODE:
        dims[0][0] = m, dims[0][1] = k, names[0] = "A (m x k)";
        dims[1][0] = k, dims[1][1] = n, names[1] = "B (k x n)";
        return 2;
    case ABFT_SITE_MID_GEMM:
    case ABFT_SITE_AFTER_GEMM:
        dims[0][0] = m, dims[0][1] = n, names[0] = "C (m x n)";
        return 1;
    case ABFT_SITE_CHECKSUM:
        dims[0][0] = m, dims[0][1] = 2, names[0] = "the row checksums (m x 2)";
        if (!op->square && c->checksum_kind == ABFT_CHECKSUM_FULL) {
            dims[1][0] = n, dims[1][1] = 2, names[1] = "the column checksums (n x 2)";
            return 2;
        }
        return 1;
    default:
        dims[0][0] = n, dims[0][1] = n, names[0] = "the n x n matrix";
        return 1;
    }
}

/* 1 when every array of the site holds the given row, column and element count; else
 * writes why not into why (naming the option). */
static int site_fits(const abft_campaign_config_t *c, const cli_op_t *op, int site,
                     const cli_given_t *g, const char **opt, const char **val, char *why,
                     size_t cap) {
    int64_t dims[2][2];
    const char *names[2];
    int na = site_arrays(c, op, site, dims, names);
    const abft_fault_spec_t *s = &c->spec;
    for (int a = 0; a < na; ++a) {
        int64_t r = dims[a][0], q = dims[a][1];
        if (s->row >= r) {
            *opt = "--row", *val = g->row;
            snprintf(why, cap, "is not a row of %s at site %s (%" PRId64 " x %" PRId64
                     ": rows 0..%" PRId64 ")", names[a], site_names[site], r, q, r - 1);
            return 0;
        }
        if (s->col >= q) {
            *opt = "--col", *val = g->col;
            snprintf(why, cap, "is not a column of %s at site %s (%" PRId64 " x %" PRId64
                     ": columns 0..%" PRId64 ")", names[a], site_names[site], r, q, q - 1);
            return 0;
        }
        int64_t cand = mul64(s->row >= 0 ? 1 : r, s->col >= 0 ? 1 : q);
        if (cand >= 0 && cand < s->nelems) {
            *opt = "--elems", *val = g->elems;
            snprintf(why, cap, "elements do not fit in %s at site %s: it has %" PRId64
                     " candidate element%s%s", names[a], site_names[site], cand,
                     cand == 1 ? "" : "s",
                     s->row >= 0 || s->col >= 0 ? " with the given --row/--col" : "");
            return 0;
        }
    }
    return 1;
}

static double phys_memory(void) {
#if defined(_SC_PHYS_PAGES) && defined(_SC_PAGESIZE)
    long pages = sysconf(_SC_PHYS_PAGES), psz = sysconf(_SC_PAGESIZE);
    if (pages > 0 && psz > 0) return (double)pages * (double)psz;
#endif
    return 0.0;
}

/* The size options as given, for messages: "--size 5000" or "--m 10 --n 20". */
static const char *size_opts(const cli_given_t *g, const cli_op_t *op, char *buf, size_t cap) {
    size_t len = 0;
    buf[0] = '\0';
    if (g->size) len += (size_t)snprintf(buf + len, cap - len, "--size %s", g->size);
    const char *names[3] = {"--m", "--n", "--k"};
    const char *vals[3] = {g->m, g->n, g->k};
    for (int t = 0; t < 3 && len < cap; ++t)
        if (vals[t] && !(op->square && t != 1))
            len += (size_t)snprintf(buf + len, cap - len, "%s%s %s", len ? " " : "", names[t],
                                    vals[t]);
    if (len == 0) snprintf(buf, cap, "the default size");
    return buf;
}

int cli_check_config(abft_campaign_config_t *c, const cli_op_t *op, const cli_given_t *g) {
    char buf[512], opts[160];
    int ok = 1;
    /* options that do not apply to the operation */
    if (op->square) {
        if (g->m)
            ok = 0, cli_err("--m", g->m, "does not apply to --op %s: it factors an n x n matrix "
                                         "(give --n or --size)", op->name);
        if (g->k)
            ok = 0, cli_err("--k", g->k, "does not apply to --op %s: it factors an n x n matrix "
                                         "(give --n or --size)", op->name);
        if (g->checksum)
            ok = 0, cli_err("--checksum", g->checksum, "does not apply to --op %s: the LU "
                            "checks use row checksums only (--checksum is for gemm)", op->name);
        if (g->random_checksum)
            ok = 0, cli_err("--random-checksum", g->random_checksum, "does not apply to --op "
                            "%s (it is for gemm)", op->name);
        c->m = c->k = c->n;
    } else if (g->lu_recovery) {
        ok = 0, cli_err("--lu-recovery", g->lu_recovery, "does not apply to --op %s (it is for "
                        "getrf and getrf-online)", op->name);
    }
    if (!ok) return 0;

    /* sizes: every array's element count and byte size must fit in int64 */
    int64_t es = c->precision == 'd' ? 8 : 4;
    int64_t prods[3][2] = {{c->m, c->n}, {c->m, c->k}, {c->k, c->n}};
    const char *pnames[3] = {"m·n", "m·k", "k·n"};
    for (int t = 0; t < (op->square ? 1 : 3); ++t) {
        int64_t e = mul64(prods[t][0], prods[t][1]);
        if (e < 0 || mul64(e, 2 * es) < 0) {
            cli_err(NULL, NULL,
                    "%s is too large: %s = %" PRId64 " x %" PRId64 " elements of %d bytes do "
                    "not fit in a 64-bit size", size_opts(g, op, opts, sizeof opts),
                    op->square ? "n·n" : pnames[t], prods[t][0], prods[t][1], (int)es);
            return 0;
        }
    }
    /* the bit against the precision and the width */
    int nbits = c->precision == 'd' ? 64 : 32;
    const char *prec_name = c->precision == 'd' ? "fp64" : "fp32";
    if (c->spec.bit_class == ABFT_BITS_EXACT && c->spec.bit + c->spec.width > nbits) {
        if (c->spec.bit >= nbits)
            cli_err("--bits", g->bits, "is not a bit position of %s data (0..%d) or a class "
                    "(any, sign, exponent, mant-high, mant-low)", prec_name, nbits - 1);
        else
            cli_err("--bits", g->bits, "with --width 2 leaves the %d-bit word of %s data (an "
                    "exact bit with --width 2 is 0..%d)", nbits, prec_name, nbits - 2);
        return 0;
    }

    /* sites: valid for the operation, and holding --row / --col / --elems */
    if (c->sites != 0u) {
        uint32_t wrong = c->sites & ~op->sites;
        if (wrong != 0u) {
            char ws[128];
            cli_err(g->sites_opt ? g->sites_opt : "--sites", g->sites,
                    "names %s, not %s of --op %s (its sites: %s)",
                    cli_site_list(wrong, ws, sizeof ws), (wrong & (wrong - 1)) ? "sites" : "a site",
                    op->name, cli_site_list(op->sites, buf, sizeof buf));
            return 0;
        }
        for (int s = 0; s < ABFT_SITE_COUNT; ++s) {
            const char *opt = NULL, *val = NULL;
            if ((c->sites & SITE(s)) && !site_fits(c, op, s, g, &opt, &val, buf, sizeof buf)) {
                cli_err(opt, val, "%s; leave %s out of %s or change %s", buf, site_names[s],
                        g->sites_opt ? g->sites_opt : "--sites", opt);
                return 0;
            }
        }
    } else {
        uint32_t keep = 0u, dropped = 0u;
        const char *opt = NULL, *val = NULL;
        char why[256] = "";
        for (int s = 0; s < ABFT_SITE_COUNT; ++s) {
            if (!(op->sites & SITE(s))) continue;
            const char *o2 = NULL, *v2 = NULL;
            char w2[256];
            if (site_fits(c, op, s, g, &o2, &v2, w2, sizeof w2)) {
                keep |= SITE(s);
            } else {
                dropped |= SITE(s);
                if (opt == NULL) opt = o2, val = v2, snprintf(why, sizeof why, "%s", w2);
            }
        }
        if (keep == 0u) {
            cli_err(opt, val, "%s, and no other site of %s holds it", why, op->name);
            return 0;
        }
        if (dropped != 0u) {
            char ks[128], ds[128];
            fprintf(stderr, "%s: note: %s %s %s; running at %s only (leaving out %s)\n", cli_cmd,
                    opt, val ? val : "", why, cli_site_list(keep, ks, sizeof ks),
                    cli_site_list(dropped, ds, sizeof ds));
            c->sites = keep;
        }
    }

    /* memory: the campaign's own count of what it allocates (abft_campaign_memory: the
     * buffers of every worker, exact), host memory and the backend's copies (host memory
     * too, unless the backend is CUDA) */
    int64_t host = 0, dev = 0;
    if (abft_campaign_memory(c, &host, &dev) != ABFT_STATUS_SUCCESS) {
        cli_err(NULL, NULL, "%s is too large: the campaign's buffers (%s) do not fit in a 64-bit "
                "size", size_opts(g, op, opts, sizeof opts), c->space == ABFT_SPACE_FULL
                ? "both storages of A and B, 7 padding rows" : "inputs, golden, result");
        return 0;
    }
    double need = (double)host + (c->backend == ABFT_BACKEND_CUDA ? 0.0 : (double)dev);
    double have = phys_memory();
    if (have > 0 && need > have) {
        cli_err(NULL, NULL,
                "%s is too large: the campaign needs about %.1f GB of host memory%s, this "
                "machine has %.1f GB", size_opts(g, op, opts, sizeof opts), need / 1e9,
                c->jobs > 1 ? " (every --jobs worker has its own buffers)" : "", have / 1e9);
        return 0;
    }

    /* the backend: built, and a device present */
    if (c->backend == ABFT_BACKEND_CUDA) {
        if (!abft_cuda_built()) {
            cli_err("--backend", "cuda", "is not available: the CUDA backend is not in this build "
                    "(it was configured without a CUDA compiler); use --backend cpu or auto");
            return 0;
        }
        abft_handle_t h = NULL;
        abft_status_t st = abft_create(&h, ABFT_BACKEND_CUDA);
        abft_destroy(h);
        if (st == ABFT_STATUS_NOT_SUPPORTED) {
            cli_err("--backend", "cuda", "is not available: the CUDA backend is built, but no "
                    "CUDA device is present; use --backend cpu or auto");
            return 0;
        }
        if (st != ABFT_STATUS_SUCCESS) {
            cli_err("--backend", "cuda", "could not start: %s (%s)", abft_status_name(st),
                    abft_status_string(st));
            return 0;
        }
    }
    return 1;
}

void cli_print_trial(FILE *f, const abft_trial_t *t, char precision) {
    fprintf(f, "trial %" PRId64 " (%s), seed %" PRIu64 ", input set %" PRId64 "\n", t->index,
            t->control ? "control" : "faulty", t->seed, t->set);
    if (!t->control)
        fprintf(f, "  site: %s%s\n", cli_site_name(t->site),
                t->site != ABFT_SITE_AFTER_ENCODE ? "" : t->which == 0 ? " (A)"
                                                  : t->which == 1 ? " (B)" : "");
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
    for (int64_t e = 0; e < r->nfaults && e < ABFT_REPORT_MAX_FAULTS; ++e) {
        const abft_fault_t *q = &r->faults[e];
        fprintf(f,
                "    fault %" PRId64 ": %s checksum [%" PRId64 ", %" PRId64 "]%s%s delta %.6g, "
                "|residual|/bound %.3g: %s\n",
                e, q->side ? "column" : "row", q->row, q->col,
                q->factor != ABFT_FACTOR_NONE ? " in " : "",
                q->factor != ABFT_FACTOR_NONE ? abft_factor_name((abft_factor_t)q->factor) : "",
                q->delta, q->ratio, abft_action_name((abft_action_t)q->action));
    }
    if (!t->control)
        fprintf(f, "  result: rho = %.4g (change against golden, or LU backward error, over tau)\n", t->rho);
    if (t->outcome == ABFT_OUTCOME_UNDETECTED || t->outcome == ABFT_OUTCOME_MASKED)
        fprintf(f, "  relative change: %.4g (docs/campaign.md, \"Masked or undetected\")\n",
                t->rel_change);
    fprintf(f, "  outcome: %s\n", abft_outcome_name(t->outcome));
}

static void usage(FILE *f) {
    fprintf(f,
            "usage: abft <command> [options]\n"
            "\n"
            "commands:\n"
            "  campaign   bit-flip fault-injection campaign against protected operations;\n"
            "             summary table, CSV/JSON of every trial, SVG of outcomes by site and bit\n"
            "  demo       one protected GEMM with one injected fault, and its report\n"
            "  version    library version and backends (also --version)\n"
            "  help       this text; `abft <command> --help` for the options of one\n"
            "\n"
            "operations (campaign --op):\n");
    for (int t = 0; t < cli_nops; ++t) fprintf(f, "  %-13s %s\n", cli_ops[t].name, cli_ops[t].what);
    fprintf(f, "\nQuick start: abft campaign --backend cpu   (about 10 s; docs/campaign.md)\n");
}

static int version(void) {
    printf("abft %s (header %s), CUDA backend %s", abft_version_string(), ABFT_VERSION_STRING,
           abft_cuda_built() ? "built" : "not built");
    if (abft_cuda_built()) {
        abft_handle_t h = NULL;
        abft_status_t st = abft_create(&h, ABFT_BACKEND_CUDA);
        abft_destroy(h);
        printf(st == ABFT_STATUS_SUCCESS ? ", CUDA device present"
               : st == ABFT_STATUS_NOT_SUPPORTED ? ", no CUDA device present"
                                                 : ", the CUDA backend does not start");
    }
    printf("\n");
    return 0;
}

int main(int argc, char **argv) {
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    const char *cmd = argv[1];
    if (strcmp(cmd, "campaign") == 0) {
        cli_cmd = "abft campaign";
        return abft_cmd_campaign(argc - 1, argv + 1);
    }
    if (strcmp(cmd, "demo") == 0) {
        cli_cmd = "abft demo";
        return abft_cmd_demo(argc - 1, argv + 1);
    }
    if (strcmp(cmd, "version") == 0 || strcmp(cmd, "--version") == 0 || strcmp(cmd, "-V") == 0) {
        if (argc > 2) {
            fprintf(stderr, "abft: %s takes no options (got '%s')\n", cmd, argv[2]);
            return 2;
        }
        return version();
    }
    if (strcmp(cmd, "help") == 0 || strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0) {
        usage(stdout);
        return 0;
    }
    fprintf(stderr, "abft: unknown command '%s' (commands: campaign, demo, version, help)\n\n",
            cmd);
    usage(stderr);
    return 2;
}
