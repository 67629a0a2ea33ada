/* abft command line: the outcome-by-bit picture, as SVG written by hand. */
#ifndef ABFT_SVG_H
#define ABFT_SVG_H

#include <stdint.h>
#include <stdio.h>

#include "abft/abft.h"

/* Stacked bars, one per bit position (most significant on the left, as IEEE-754 is drawn),
 * each bar the share of each outcome among the faulty trials whose first flipped bit is
 * that bit; the trial count above each bar; sign / exponent / mantissa bands below. */
void abft_svg_by_bit(FILE *f, const char *title, int nbits,
                     const int64_t by_bit[64][ABFT_OUTCOME_COUNT]);

#endif /* ABFT_SVG_H */
