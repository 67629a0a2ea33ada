/* abft command line: the campaign picture, as SVG written by hand. */
#ifndef ABFT_SVG_H
#define ABFT_SVG_H

#include <stdint.h>
#include <stdio.h>

#include "abft/abft.h"

/* The picture's classes: the outcomes, with "corrected" (detected and resolved) split by
 * how the report resolved it: an element corrected, a vector recomputed, or a corrupted
 * checksum found (the data intact). */
enum {
    ABFT_SVG_RECOMPUTED = ABFT_OUTCOME_COUNT,
    ABFT_SVG_CHECKSUM_FAULT = ABFT_OUTCOME_COUNT + 1,
    ABFT_SVG_NCLASS = ABFT_OUTCOME_COUNT + 2
};

/* Faulty trials counted by site, operand (slot 1: B at the encode site, else 0), first
 * flipped bit and class. Trials without a flip (the site was not reached, or
 * an error before it) are counted in unplaced[]. */
typedef struct abft_svg_counts {
    int64_t by_bit[ABFT_SITE_COUNT][2][64][ABFT_SVG_NCLASS];
    int64_t unplaced[ABFT_SITE_COUNT][2][ABFT_SVG_NCLASS];
    double max_rel[ABFT_SITE_COUNT][2][64]; /* largest rel_change of an UNDETECTED trial */
} abft_svg_counts_t;

/* Counts one trial (controls are ignored). */
void abft_svg_add(abft_svg_counts_t *c, const abft_trial_t *t);

/* Small multiples: one panel per site (and operand) that has trials, top to bottom in the
 * order of the sites, under a legend and one line per term (tau, g·tau with g = guarantee,
 * the outcomes) pointing to docs/campaign.md. Each panel has a title naming the site, a line
 * of its totals per outcome, a verdict line (whether anything that must be 0 happened, and
 * what its reported and undetected counts mean), and stacked bars: one per bit position
 * (most significant on the left, as IEEE-754 is drawn), each bar the share of each outcome
 * among the panel's trials whose first flipped bit is that bit (the count in the bar's
 * tooltip); sign / exponent / mantissa bands under each panel. */
void abft_svg_by_site(FILE *f, const char *title, int nbits, double guarantee,
                      const abft_svg_counts_t *c);

#endif /* ABFT_SVG_H */
