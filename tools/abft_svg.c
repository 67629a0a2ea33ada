/* abft command line: outcome-by-bit stacked bar chart in SVG. */
#include "abft_svg.h"

#include <string.h>

/* Stack order from the bottom and colours: the good outcomes at the bottom in calm
 * colours, the ones that must be 0 on top in red so a single one stands out. */
static const struct {
    int outcome;
    const char *label;
    const char *color;
} layers[] = {
    {ABFT_OUTCOME_MASKED, "masked (no effect beyond the bound)", "#b8c4ce"},
    {ABFT_OUTCOME_CORRECTED, "detected and corrected", "#2e8b57"},
    {ABFT_OUTCOME_UNCORRECTABLE, "detected, reported uncorrectable", "#e0a526"},
    {ABFT_OUTCOME_GRAY, "gray zone (tau < change <= g·tau)", "#8e7cc3"},
    {ABFT_OUTCOME_NOT_FIRED, "site not reached", "#eeeeee"},
    {ABFT_OUTCOME_ERROR, "error status", "#444444"},
    {ABFT_OUTCOME_MISCORRECTED, "miscorrected (must be 0)", "#8b0000"},
    {ABFT_OUTCOME_SDC, "silent data corruption (must be 0)", "#e41a1c"},
};
#define NLAYERS ((int)(sizeof layers / sizeof layers[0]))

static void xml_text(FILE *f, const char *s) {
    for (; *s; ++s) {
        if (*s == '<') fputs("&lt;", f);
        else if (*s == '>') fputs("&gt;", f);
        else if (*s == '&') fputs("&amp;", f);
        else fputc(*s, f);
    }
}

void abft_svg_by_bit(FILE *f, const char *title, int nbits,
                     const int64_t by_bit[64][ABFT_OUTCOME_COUNT]) {
    const double bw = nbits == 64 ? 14.0 : 26.0; /* bar pitch */
    const double left = 60, top = 64, ph = 300, pw = bw * nbits;
    const double legend_x = left + pw + 24, width = legend_x + 300, height = top + ph + 110;
    const int mant = nbits == 64 ? 52 : 23, half = nbits == 64 ? 26 : 12;

    fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" "
               "viewBox=\"0 0 %.0f %.0f\" font-family=\"Helvetica, Arial, sans-serif\">\n",
            width, height, width, height);
    fprintf(f, "<rect x=\"0\" y=\"0\" width=\"%.0f\" height=\"%.0f\" fill=\"white\"/>\n", width,
            height);
    fprintf(f, "<text x=\"%.0f\" y=\"26\" font-size=\"16\" font-weight=\"bold\">", left);
    xml_text(f, title);
    fprintf(f, "</text>\n<text x=\"%.0f\" y=\"46\" font-size=\"12\" fill=\"#555\">Outcome share "
               "by flipped bit (most significant bit on the left); the number above a bar is "
               "its trial count</text>\n",
            left);

    /* y grid and axis */
    for (int g = 0; g <= 4; ++g) {
        double y = top + ph - ph * g / 4.0;
        fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#ddd\"/>\n", left,
                y, left + pw, y);
        fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"11\" text-anchor=\"end\">%d%%</text>\n",
                left - 6, y + 4, 25 * g);
    }
    fprintf(f, "<text x=\"16\" y=\"%.1f\" font-size=\"12\" transform=\"rotate(-90 16 %.1f)\" "
               "text-anchor=\"middle\">share of trials</text>\n",
            top + ph / 2, top + ph / 2);

    /* bars: x position p = 0 at the left holds bit nbits-1 */
    for (int p = 0; p < nbits; ++p) {
        int bit = nbits - 1 - p;
        int64_t n = 0;
        for (int o = 0; o < ABFT_OUTCOME_COUNT; ++o) n += by_bit[bit][o];
        double x = left + p * bw + 1, y = top + ph;
        if (n > 0) {
            for (int l = 0; l < NLAYERS; ++l) {
                int64_t c = by_bit[bit][layers[l].outcome];
                if (c == 0) continue;
                double hgt = ph * (double)c / (double)n;
                y -= hgt;
                fprintf(f, "<rect x=\"%.1f\" y=\"%.2f\" width=\"%.1f\" height=\"%.2f\" "
                           "fill=\"%s\"><title>bit %d: %s %lld of %lld</title></rect>\n",
                        x, y, bw - 2, hgt, layers[l].color, bit, layers[l].label, (long long)c,
                        (long long)n);
            }
        }
        fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"%.1f\" text-anchor=\"middle\" "
                   "fill=\"#555\">%lld</text>\n",
                x + (bw - 2) / 2, top - 4, nbits == 64 ? 5.5 : 9, (long long)n);
        if (bit % 4 == 0 || bit == nbits - 1)
            fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"10\" "
                       "text-anchor=\"middle\">%d</text>\n",
                    x + (bw - 2) / 2, top + ph + 14, bit);
    }
    fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#333\"/>\n", left,
            top + ph, left + pw, top + ph);
    fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"12\" text-anchor=\"middle\">bit "
               "position</text>\n",
            left + pw / 2, top + ph + 30);

    /* field bands: sign, exponent, high mantissa, low mantissa */
    struct {
        int hi, lo;
        const char *name, *color;
    } bands[] = {{nbits - 1, nbits - 1, "sign", "#d9d9d9"},
                 {nbits - 2, mant, "exponent", "#c6dbef"},
                 {mant - 1, half, "mantissa (high)", "#e5f5e0"},
                 {half - 1, 0, "mantissa (low)", "#f2f0f7"}};
    for (int b = 0; b < 4; ++b) {
        double x0 = left + (nbits - 1 - bands[b].hi) * bw, x1 = left + (nbits - bands[b].lo) * bw;
        double y0 = top + ph + 40;
        fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"20\" fill=\"%s\" "
                   "stroke=\"white\"/>\n",
                x0, y0, x1 - x0, bands[b].color);
        if (x1 - x0 > 40)
            fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"11\" "
                       "text-anchor=\"middle\">%s</text>\n",
                    (x0 + x1) / 2, y0 + 14, bands[b].name);
        else
            fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"9\" "
                       "text-anchor=\"middle\">%s</text>\n",
                    (x0 + x1) / 2, y0 + 32, bands[b].name);
    }

    /* legend (top to bottom in the order of the stack, top first) */
    fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"12\" font-weight=\"bold\">outcome</text>\n",
            legend_x, top + 4);
    for (int l = NLAYERS - 1, row = 0; l >= 0; --l, ++row) {
        double y = top + 16 + 22 * row;
        fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"14\" height=\"14\" fill=\"%s\" "
                   "stroke=\"#999\" stroke-width=\"0.5\"/>\n",
                legend_x, y, layers[l].color);
        fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"12\">", legend_x + 20, y + 11);
        xml_text(f, layers[l].label);
        fputs("</text>\n", f);
    }
    fputs("</svg>\n", f);
}
