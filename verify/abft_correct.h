/* abft: the correction engine. One state machine for every protected result that carries
 * row (and optionally column) checksums: it refines the compare's flags with the full bound,
 * locates single errors, writes a correction only when an independent check confirms it,
 * re-verifies everything a write touched to a fixed point (or rolls every write back), and
 * then tells corrupted checksums, recomputable vectors and uncorrectable entries apart. The
 * protocol supplies the data access, the bound and the recomputations through callbacks;
 * the engine holds every decision (docs/bound.md, "Location and correction"). Private. */
#ifndef ABFT_CORRECT_H
#define ABFT_CORRECT_H

#include <stdint.h>

#include "abft_internal.h"

/* Side 0: the rows of the result (entry i is row i, a vector of len[0] elements); side 1: its
 * columns. Element (i, j) lies in row i at position j and in column j at position i. */
typedef struct abft_corr_ops {
    /* Vector idx of side cs as doubles (len[cs] of them). */
    abft_status_t (*get)(void *ctx, int cs, int64_t idx, double *v);
    /* Write vector idx of side cs back (restoring what get returned). */
    abft_status_t (*put_vec)(void *ctx, int cs, int64_t idx, const double *v);
    /* Write element (i, j); *stored: the value as stored (rounded to the data precision). */
    abft_status_t (*put)(void *ctx, int64_t i, int64_t j, double v, double *stored);
    /* The expected checksums s[q] of entry idx and their bounds t[q] (q = 0: weights 1,
     * q = 1: weights position + 1) for a vector whose sums are r[q] (compensated) and whose
     * |.|-sums are ra[q] (written values get no allowance). An infinite t verifies nothing. */
    void (*expect)(void *ctx, int cs, int64_t idx, const double r[2], const double ra[2],
                   double s[2], double t[2]);
    /* Element (i, j) recomputed from the inputs, with a bound on its error; *ok = 0 when the
     * inputs cannot give it (then the op may be NULL). */
    abft_status_t (*elem)(void *ctx, int64_t i, int64_t j, double *v, double *noise, int *ok);
    /* Vector idx of side cs recomputed from the inputs and written; *ok = 0 when not
     * possible (then the op may be NULL). The engine reads it back and checks it. */
    abft_status_t (*vec)(void *ctx, int cs, int64_t idx, int *ok);
    /* Re-derive the expected checksum of entry idx from what it was encoded from; *changed = 1
     * when it differs from the kept one beyond the rounding of the two (expect then uses the
     * re-derived one). *changed = 0 also when it cannot be re-derived. May be NULL. */
    abft_status_t (*checksum)(void *ctx, int cs, int64_t idx, int *changed);
    /* Compare vector idx of side cs (values v) element by element with its recomputation
     * from the inputs, each within its own rounding bound: *ok = 0 when an element differs
     * beyond it. *available = 0 when the inputs cannot give it (then the op may be NULL).
     * Two checksums cannot see every pattern of several errors in one vector (three errors
     * of suitable sizes cancel in both); a vector the engine wrote into is confirmed this
     * way whenever the inputs allow. */
    abft_status_t (*check_vec)(void *ctx, int cs, int64_t idx, const double *v, int *ok,
                               int *available);
    /* Recompute every checksum of the result and compare it against the compare's bound:
     * the flagged entries of each side, ascending, into list[cs] (capacity n[cs]), their
     * count into nf[cs]. */
    abft_status_t (*recheck)(void *ctx, int64_t *list[2], int64_t nf[2]);
    /* A detection-only checksum of the rows (side 0), beside the two above: *ratio gets the
     * largest |residual| / bound of row idx (values v) over its columns (+Inf for NaN or an
     * infinite bound); a row passes only when it is <= 1. It never locates anything: a row
     * it alone fails is recomputed (when allowed and confirmed) or reported. May be NULL.
     * The recheck op's list[0] must include the rows it flags. */
    void (*extra)(void *ctx, int64_t idx, const double *v, double *ratio);
} abft_corr_ops_t;

typedef struct abft_corr_cfg {
    int nsides;        /* 1: row checksums only; 2: row and column checksums */
    int64_t n[2];      /* entries of each side */
    int64_t len[2];    /* length of each side's vectors (len[0] = n[1], len[1] = n[0]) */
    double u_store;    /* unit roundoff of the stored data */
    int recompute_vec; /* flagged vectors may be recomputed from the inputs */
} abft_corr_cfg_t;

/* Run the engine on the compare's flags (flags[cs], nflag[cs] entries, ascending; the
 * arrays must hold n[cs] entries: the engine reuses them). Fills the report's detected (the
 * entries the full bound flags), corrected, recomputed, checksum_faults, uncorrectable and
 * faults; *max_ratio gets the largest |residual| / full bound among the compare's flagged
 * entries. On an error status the data may hold writes of the engine: the caller's
 * contract decides (the protected GEMM returns the status). */
abft_status_t abft_correct(const abft_corr_ops_t *ops, void *ctx, const abft_corr_cfg_t *cfg,
                           int64_t *flags[2], int64_t nflag[2], abft_report_t *rep,
                           double *max_ratio);

#endif /* ABFT_CORRECT_H */
