/* abft command line: the campaign picture, one panel per site, outcomes by bit position. */
#include "abft_svg.h"

#include <inttypes.h>
#include <string.h>

#include "abft_cli.h"

/* Stack order from the bottom and colours: the good outcomes at the bottom in calm
 * colours, the ones that must be 0 on top in red so a single one stands out. */
static const struct {
    int outcome;
    const char *label; /* legend */
    const char *shortl; /* panel totals */
    const char *color;
} layers[] = {
    {ABFT_OUTCOME_MASKED, "masked (within the fault-free rounding noise)", "masked", "#b8c4ce"},
    {ABFT_OUTCOME_UNDETECTED, "undetected (beyond the noise, within the bound)", "undetected",
     "#d98cb3"},
    {ABFT_OUTCOME_CORRECTED, "detected, element corrected", "corrected", "#2e8b57"},
    {ABFT_SVG_RECOMPUTED, "detected, row or column recomputed", "recomputed", "#7fc97f"},
    {ABFT_SVG_CHECKSUM_FAULT, "detected: a corrupted checksum, data intact", "checksum fault",
     "#4a90d9"},
    {ABFT_OUTCOME_UNCORRECTABLE, "detected, reported uncorrectable to the caller",
     "reported uncorrectable", "#e0a526"},
    {ABFT_OUTCOME_GRAY, "gray zone (tau < change <= g·tau)", "gray", "#8e7cc3"},
    {ABFT_OUTCOME_NOT_FIRED, "site not reached", "not reached", "#dddddd"},
    {ABFT_OUTCOME_ERROR, "error status (must be 0)", "error", "#444444"},
    {ABFT_OUTCOME_MISCORRECTED, "miscorrected (must be 0)", "miscorrected", "#8b0000"},
    {ABFT_OUTCOME_SDC, "silent data corruption (must be 0)", "SDC", "#e41a1c"},
};
#define NLAYERS ((int)(sizeof layers / sizeof layers[0]))

void abft_svg_add(abft_svg_counts_t *c, const abft_trial_t *t) {
    if (t->control || t->site < 0 || t->site >= ABFT_SITE_COUNT) return;
    if (t->outcome < 0 || t->outcome >= ABFT_OUTCOME_COUNT) return;
    int slot = t->site == ABFT_SITE_AFTER_ENCODE && t->which == 1 ? 1 : 0, cls = t->outcome;
    const abft_report_t *r = &t->report;
    if (cls == ABFT_OUTCOME_CORRECTED && r->corrected == 0) {
        if (r->recomputed > 0) cls = ABFT_SVG_RECOMPUTED;
        else if (r->checksum_faults > 0) cls = ABFT_SVG_CHECKSUM_FAULT;
    }
    if (t->nflips > 0 && t->flips[0].bit >= 0 && t->flips[0].bit < 64) {
        c->by_bit[t->site][slot][t->flips[0].bit][cls] += 1;
        double *mx = &c->max_rel[t->site][slot][t->flips[0].bit];
        if (cls == ABFT_OUTCOME_UNDETECTED && !(t->rel_change <= *mx)) *mx = t->rel_change;
    } else
        c->unplaced[t->site][slot][cls] += 1;
}

static void xml_text(FILE *f, const char *s) {
    for (; *s; ++s) {
        if (*s == '<') fputs("&lt;", f);
        else if (*s == '>') fputs("&gt;", f);
        else if (*s == '&') fputs("&amp;", f);
        else fputc(*s, f);
    }
}

/* What the panel shows and what a fault there is expected to end as. */
static void panel_text(int site, int slot, const char **what, const char **expect) {
    switch (site) {
    case ABFT_SITE_AFTER_ENCODE:
        *what = slot ? "input B changed after its checksums were encoded"
                     : "input A changed after its checksums were encoded";
        *expect = "the checksums no longer match the inputs: expected reported (or not "
                  "detected when below the bound), never corrected towards them";
        return;
    case ABFT_SITE_MID_GEMM:
        *what = "C between the two halves of a k-split GEMM";
        *expect = "expected corrected where beta = 0 and A, B are at hand, else reported "
                  "(or not detected when below the bound)";
        return;
    case ABFT_SITE_AFTER_GEMM:
        *what = "C after the GEMM, before verification";
        *expect = "expected corrected where beta = 0 and A, B are at hand, else reported "
                  "(or not detected when below the bound)";
        return;
    case ABFT_SITE_CHECKSUM:
        *what = "the encoded checksums";
        *expect = "the data are intact: expected a checksum fault found (or not detected "
                  "when below the bound), else reported";
        return;
    case ABFT_SITE_LU_PANEL:
        *what = "the matrix between two panels of the online LU";
        *expect = "expected corrected before it spreads, else reported";
        return;
    case ABFT_SITE_AFTER_LU:
        *what = "the factors L and U after the factorization";
        *expect = "expected corrected (or recomputed with the recovery copy), else reported";
        return;
    default:
        *what = "";
        *expect = "";
    }
}

/* Rough width of a string at 12px in a sans-serif font (for placing the totals). */
static double text_w(const char *s, double px) { return 0.56 * px * (double)strlen(s); }

/* One line per term of the legend and the panels (docs/campaign.md says it at length). */
static const char *const terms[] = {
    "tau: a row's checksum bound, the most that rounding alone can move the row's checksum "
    "(docs/bound.md).",
    "g·tau: the guarantee (g = %g): a change above g·tau in an element of a row is always "
    "detected.",
    "masked: nothing detected, the change within the rounding noise of a fault-free run.",
    "undetected: nothing detected, the change beyond that noise but within tau: below what the "
    "check can see, not a failure.",
    "reported uncorrectable: detected and handed to the caller as not trustworthy: nothing "
    "silent.",
    "gray zone: nothing reported, the change between tau and g·tau, where detection is not "
    "promised.",
    "SDC (silent data corruption): nothing detected and a change above g·tau; must be 0.",
    "miscorrected: reported as resolved, yet a change above g·tau remains; must be 0.",
    "More: docs/campaign.md, \"What the outcomes mean\".",
};
#define NTERMS ((int)(sizeof terms / sizeof terms[0]))

void abft_svg_by_site(FILE *f, const char *title, int nbits, double guarantee,
                      const abft_svg_counts_t *c) {
    const double bw = nbits == 64 ? 12.0 : 24.0; /* bar pitch */
    const double left = 64, pw = bw * nbits, width = left + pw + 40;
    const double ph = 110;                       /* bar height */
    const double head = 94; /* title, expectation, totals, verdict and what it means */
    const double panel_h = head + ph + 52;       /* + bit labels and field bands */
    const int mant = nbits == 64 ? 52 : 23, half = nbits == 64 ? 26 : 12;

    /* the panels: every site and slot with trials */
    int psite[2 * ABFT_SITE_COUNT], pslot[2 * ABFT_SITE_COUNT], np = 0;
    for (int s = 0; s < ABFT_SITE_COUNT; ++s)
        for (int q = 0; q < 2; ++q) {
            int64_t n = 0;
            for (int o = 0; o < ABFT_SVG_NCLASS; ++o) {
                n += c->unplaced[s][q][o];
                for (int b = 0; b < 64; ++b) n += c->by_bit[s][q][b][o];
            }
            if (n > 0) psite[np] = s, pslot[np] = q, ++np;
        }

    /* legend: entries in the stack's order, wrapped to the width */
    const double legend_y = 70;
    double lx[NLAYERS], ly[NLAYERS], xcur = 16, ycur = legend_y;
    for (int l = 0; l < NLAYERS; ++l) {
        double w = 18 + text_w(layers[l].label, 12) + 22;
        if (xcur > 16 && xcur + w > width - 16) xcur = 16, ycur += 20;
        lx[l] = xcur, ly[l] = ycur;
        xcur += w;
    }
    const double terms_y = ycur + 26; /* one line per term under the legend */
    const double top = terms_y + NTERMS * 16 + 14;
    const double height = top + (np > 0 ? np : 1) * panel_h + 10;
    fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" "
               "viewBox=\"0 0 %.0f %.0f\" font-family=\"Helvetica, Arial, sans-serif\">\n",
            width, height, width, height);
    fprintf(f, "<rect x=\"0\" y=\"0\" width=\"%.0f\" height=\"%.0f\" fill=\"white\"/>\n", width,
            height);
    double tsize = 16;
    while (tsize > 12 && 16 + text_w(title, tsize) * 1.08 > width - 16) tsize -= 0.5;
    fprintf(f, "<text x=\"16\" y=\"26\" font-size=\"%.1f\" font-weight=\"bold\">", tsize);
    xml_text(f, title);
    fprintf(f, "</text>\n<text x=\"16\" y=\"46\" font-size=\"12\" fill=\"#444\">One panel per "
               "fault site. Bars: outcome share of the panel's faulty trials by flipped bit "
               "(most significant on the left; hover a bar for its counts).</text>\n");
    for (int l = 0; l < NLAYERS; ++l) {
        fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"13\" height=\"13\" fill=\"%s\" "
                   "stroke=\"#999\" stroke-width=\"0.5\"/>\n",
                lx[l], ly[l] - 11, layers[l].color);
        fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"12\">", lx[l] + 18, ly[l]);
        xml_text(f, layers[l].label);
        fputs("</text>\n", f);
    }
    for (int l = 0; l < NTERMS; ++l) {
        char line[256];
        snprintf(line, sizeof line, terms[l], guarantee);
        fprintf(f, "<text x=\"16\" y=\"%.1f\" font-size=\"12\" fill=\"#333\">", terms_y + 16 * l);
        xml_text(f, line);
        fputs("</text>\n", f);
    }
    if (np == 0)
        fprintf(f, "<text x=\"16\" y=\"%.1f\" font-size=\"13\">no faulty trial in this run "
                   "(the summary gives the fault-free runs' false positives)</text>\n",
                top + 20);

    for (int p = 0; p < np; ++p) {
        int s = psite[p], q = pslot[p];
        double y0 = top + p * panel_h, by = y0 + head; /* top of the bars */
        int64_t tot[ABFT_SVG_NCLASS], n = 0;
        for (int o = 0; o < ABFT_SVG_NCLASS; ++o) {
            tot[o] = c->unplaced[s][q][o];
            for (int b = 0; b < 64; ++b) tot[o] += c->by_bit[s][q][b][o];
            n += tot[o];
        }
        const char *what, *expect;
        panel_text(s, q, &what, &expect);
        if (p > 0)
            fprintf(f, "<line x1=\"16\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#bbb\"/>\n",
                    y0 - 6, width - 16, y0 - 6);
        fprintf(f, "<text x=\"16\" y=\"%.1f\" font-size=\"14\"><tspan font-weight=\"bold\">%s"
                   "</tspan>: ",
                y0 + 12, cli_site_name(s));
        xml_text(f, what);
        fprintf(f, " (%" PRId64 " trial%s)</text>\n", n, n == 1 ? "" : "s");
        fprintf(f, "<text x=\"16\" y=\"%.1f\" font-size=\"12\" fill=\"#444\">", y0 + 29);
        xml_text(f, expect);
        fputs("</text>\n", f);

        /* totals per outcome, in the legend's colours, then the verdict */
        double x = 16, ty = y0 + 47;
        for (int l = 0; l < NLAYERS; ++l) {
            int64_t k = tot[layers[l].outcome];
            if (k == 0) continue;
            char lab[96];
            if (layers[l].outcome == ABFT_OUTCOME_UNDETECTED) {
                double mx = 0;
                for (int b = 0; b < 64; ++b)
                    if (!(c->max_rel[s][q][b] <= mx)) mx = c->max_rel[s][q][b];
                snprintf(lab, sizeof lab, "%s %" PRId64 " (up to %.2g)", layers[l].shortl, k,
                         mx);
            } else {
                snprintf(lab, sizeof lab, "%s %" PRId64, layers[l].shortl, k);
            }
            fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"11\" height=\"11\" fill=\"%s\" "
                       "stroke=\"#999\" stroke-width=\"0.5\"/>\n",
                    x, ty - 10, layers[l].color);
            fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"13\" font-weight=\"bold\">%s"
                       "</text>\n",
                    x + 15, ty, lab);
            x += 15 + text_w(lab, 13) + 18;
        }
        /* the verdict, on a line of its own, and under it what the counts beside it mean: a
         * reported or undetected count is no failure, and the line says why */
        int64_t bad = tot[ABFT_OUTCOME_SDC] + tot[ABFT_OUTCOME_MISCORRECTED] +
                      tot[ABFT_OUTCOME_ERROR];
        char verdict[160], why[320] = "";
        if (bad == 0)
            snprintf(verdict, sizeof verdict, "verdict: no SDC, no miscorrection, no error");
        else
            snprintf(verdict, sizeof verdict, "verdict: %" PRId64 " SDC, %" PRId64
                     " miscorrected, %" PRId64 " error%s: must be 0", tot[ABFT_OUTCOME_SDC],
                     tot[ABFT_OUTCOME_MISCORRECTED], tot[ABFT_OUTCOME_ERROR],
                     tot[ABFT_OUTCOME_ERROR] == 1 ? "" : "s");
        int wl = 0;
        if (tot[ABFT_OUTCOME_UNCORRECTABLE] > 0)
            wl = snprintf(why, sizeof why, "reported uncorrectable %" PRId64 ": detected and "
                          "handed to the caller, none silent",
                          tot[ABFT_OUTCOME_UNCORRECTABLE]);
        if (tot[ABFT_OUTCOME_UNDETECTED] > 0 && wl >= 0 && wl < (int)sizeof why)
            snprintf(why + wl, sizeof why - (size_t)wl, "%sundetected %" PRId64 ": within tau, "
                     "not a failure",
                     wl > 0 ? "; " : "", tot[ABFT_OUTCOME_UNDETECTED]);
        fprintf(f, "<text x=\"16\" y=\"%.1f\" font-size=\"13\" font-weight=\"bold\" "
                   "fill=\"%s\">",
                ty + 18, bad == 0 ? "#2e6b3f" : "#c00000");
        xml_text(f, verdict);
        fputs("</text>\n", f);
        if (why[0] != '\0') {
            double wsize = 12;
            while (wsize > 9 && 16 + text_w(why, wsize) > width - 16) wsize -= 0.5;
            fprintf(f, "<text x=\"16\" y=\"%.1f\" font-size=\"%.1f\" fill=\"#444\">",
                    ty + 34, wsize);
            xml_text(f, why);
            fputs("</text>\n", f);
        }

        /* grid */
        for (int g = 0; g <= 2; ++g) {
            double y = by + ph - ph * g / 2.0;
            fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#e4e4e4\"/>\n",
                    left, y, left + pw, y);
            fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"11\" text-anchor=\"end\" "
                       "fill=\"#555\">%d%%</text>\n",
                    left - 6, y + 4, 50 * g);
        }
        /* bars: x position b = 0 at the left holds bit nbits-1 */
        for (int xb = 0; xb < nbits; ++xb) {
            int bit = nbits - 1 - xb;
            const int64_t *cnt = c->by_bit[s][q][bit];
            int64_t nb = 0;
            for (int o = 0; o < ABFT_SVG_NCLASS; ++o) nb += cnt[o];
            double bx = left + xb * bw + 1, y = by + ph;
            for (int l = 0; l < NLAYERS && nb > 0; ++l) {
                int64_t k = cnt[layers[l].outcome];
                if (k == 0) continue;
                double hgt = ph * (double)k / (double)nb;
                y -= hgt;
                char extra[64] = "";
                if (layers[l].outcome == ABFT_OUTCOME_UNDETECTED)
                    snprintf(extra, sizeof extra, ", largest relative change %.3g",
                             c->max_rel[s][q][bit]);
                fprintf(f, "<rect x=\"%.1f\" y=\"%.2f\" width=\"%.1f\" height=\"%.2f\" "
                           "fill=\"%s\"><title>bit %d: %s %" PRId64 " of %" PRId64
                           "%s</title></rect>\n",
                        bx, y, bw - 2, hgt, layers[l].color, bit, layers[l].shortl, k, nb, extra);
            }
            if (bit % 4 == 3 || bit == 0)
                fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"11\" text-anchor=\"middle\" "
                           "fill=\"#333\">%d</text>\n",
                        bx + (bw - 2) / 2, by + ph + 13, bit);
        }
        fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#333\"/>\n",
                left, by + ph, left + pw, by + ph);
        int64_t placed = 0;
        for (int b = 0; b < 64; ++b)
            for (int o = 0; o < ABFT_SVG_NCLASS; ++o) placed += c->by_bit[s][q][b][o];
        if (placed == 0)
            fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"13\" text-anchor=\"middle\" "
                       "fill=\"#555\">no fault landed here: the site was not reached in these "
                       "trials</text>\n",
                    left + pw / 2, by + ph / 2);

        /* field bands: sign, exponent, high mantissa, low mantissa */
        struct {
            int hi, lo;
            const char *name, *color;
        } bands[] = {{nbits - 1, nbits - 1, "sign", "#d9d9d9"},
                     {nbits - 2, mant, "exponent", "#c6dbef"},
                     {mant - 1, half, "mantissa (high half)", "#e5f5e0"},
                     {half - 1, 0, "mantissa (low half)", "#f2f0f7"}};
        for (int b = 0; b < 4; ++b) {
            double x0 = left + (nbits - 1 - bands[b].hi) * bw,
                   x1 = left + (nbits - bands[b].lo) * bw, yb = by + ph + 18;
            fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"16\" fill=\"%s\" "
                       "stroke=\"white\"/>\n",
                    x0, yb, x1 - x0, bands[b].color);
            if (x1 - x0 > 40)
                fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"11\" "
                           "text-anchor=\"middle\">%s</text>\n",
                        (x0 + x1) / 2, yb + 12, bands[b].name);
        }
        fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"11\" text-anchor=\"end\" "
                   "fill=\"#555\">bit</text>\n",
                left - 6, by + ph + 13);
    }
    fputs("</svg>\n", f);
}
