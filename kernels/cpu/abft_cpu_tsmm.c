/* abft CPU backend: tall-and-skinny products, the fused dual pass, the checksum compare.
 * These are the reference the GPU kernels are tested against: straightforward loops with
 * fp64 accumulation, OpenMP over the independent dimension.
 *
 * The products Y are compensated dot products (Ogita, Rump and Oishi's Dot2: each product
 * split exactly with an FMA, each addition with TwoSum, the errors summed beside): the
 * result is within u·|Y| + gamma_n^2·(|A|·|X|) of the exact value, so the checksums' own
 * rounding stays far below a GEMM's in the tight bound mode (docs/bound.md). The absolute
 * companions are plain sums (the bound divides them by their own rounding factor). The
 * build compiles C without floating-point contraction (ISO C mode), which TwoSum needs. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "abft_kernels.h"

#define MAXC 16

/* hi + lo += x·y, compensated (Dot2's step) */
static inline void dot2_step(double *hi, double *lo, double x, double y) {
    double p = x * y;
    double pe = fma(x, y, -p);
    double s = *hi + p;
    double z = s - *hi;
    double e = (*hi - (s - z)) + (p - z);
    *hi = s;
    *lo += e + pe;
}
/* the sum as a double; where the plain sum is not finite (an Inf or NaN input, an overflow)
 * the plain sum, as an uncompensated loop would give it */
static inline double dot2_result(double hi, double lo) { return isfinite(hi) ? hi + lo : hi; }

/* Element (i, j) of the data matrix as double. */
static inline double ld_elem(abft_prec_t prec, const void *A, int64_t lda, int64_t i, int64_t j) {
    return prec == ABFT_PREC_D ? ((const double *)A)[i + j * lda]
                               : (double)((const float *)A)[i + j * lda];
}

/* Weight (row l, column q) of the small operand: explicit X, or the implicit V. */
static inline double weight(const double *X, int64_t ldx, int64_t l, int64_t q) {
    if (X != NULL) return X[l + q * ldx];
    return q == 0 ? 1.0 : (double)(l + 1);
}
static inline double weight_abs(const double *X, int64_t ldx, const double *Xa, int64_t ldxa,
                                int64_t l, int64_t q) {
    if (Xa != NULL) return Xa[l + q * ldxa];
    return fabs(weight(X, ldx, l, q));
}

abft_status_t abft_cpu_tsmm(const abft_kctx_t *ctx, const abft_tsmm_args_t *a) {
    (void)ctx;
    const int64_t c = a->c;
    const int want_abs = a->Yabs != NULL;
    if (a->trans == 0) {
        /* Y(i, q) = sum_j A(i, j) X(j, q): each thread owns a block of rows and streams
         * down the columns of A (contiguous reads). */
#pragma omp parallel for schedule(static)
        for (int64_t i0 = 0; i0 < a->rows; i0 += 256) {
            int64_t i1 = i0 + 256 < a->rows ? i0 + 256 : a->rows;
            double acc[MAXC][256], lo[MAXC][256], acca[MAXC][256];
            for (int64_t q = 0; q < c; ++q)
                for (int64_t i = i0; i < i1; ++i)
                    acc[q][i - i0] = lo[q][i - i0] = acca[q][i - i0] = 0.0;
            for (int64_t j = 0; j < a->cols; ++j) {
                double xw[MAXC], xa[MAXC];
                for (int64_t q = 0; q < c; ++q) {
                    xw[q] = weight(a->X, a->ldx, j, q);
                    xa[q] = want_abs ? weight_abs(a->X, a->ldx, a->Xabs, a->ldxabs, j, q) : 0.0;
                }
                for (int64_t i = i0; i < i1; ++i) {
                    double v = ld_elem(a->prec, a->A, a->lda, i, j);
                    for (int64_t q = 0; q < c; ++q)
                        dot2_step(&acc[q][i - i0], &lo[q][i - i0], v, xw[q]);
                    if (want_abs) {
                        double av = fabs(v);
                        for (int64_t q = 0; q < c; ++q) acca[q][i - i0] += av * xa[q];
                    }
                }
            }
            for (int64_t q = 0; q < c; ++q)
                for (int64_t i = i0; i < i1; ++i) {
                    a->Y[i + q * a->ldy] = dot2_result(acc[q][i - i0], lo[q][i - i0]);
                    if (want_abs) a->Yabs[i + q * a->ldyabs] = acca[q][i - i0];
                }
        }
    } else {
        /* Y(j, q) = sum_i A(i, j) X(i, q): a dot product down each column of A. */
#pragma omp parallel for schedule(static)
        for (int64_t j = 0; j < a->cols; ++j) {
            double acc[MAXC] = {0}, lo[MAXC] = {0}, acca[MAXC] = {0};
            for (int64_t i = 0; i < a->rows; ++i) {
                double v = ld_elem(a->prec, a->A, a->lda, i, j);
                for (int64_t q = 0; q < c; ++q)
                    dot2_step(&acc[q], &lo[q], v, weight(a->X, a->ldx, i, q));
                if (want_abs) {
                    double av = fabs(v);
                    for (int64_t q = 0; q < c; ++q)
                        acca[q] += av * weight_abs(a->X, a->ldx, a->Xabs, a->ldxabs, i, q);
                }
            }
            for (int64_t q = 0; q < c; ++q) {
                a->Y[j + q * a->ldy] = dot2_result(acc[q], lo[q]);
                if (want_abs) a->Yabs[j + q * a->ldyabs] = acca[q];
            }
        }
    }
    return ABFT_STATUS_SUCCESS;
}

abft_status_t abft_cpu_dual(const abft_kctx_t *ctx, const abft_dual_args_t *a) {
    /* The reference computes the two halves as two tall-and-skinny products; only the GPU
     * kernel fuses them into one read. */
    abft_tsmm_args_t n = {a->prec, 0, a->rows, a->cols, a->c1, a->M, a->ldm, a->X, a->ldx,
                          a->Xabs, a->ldxabs, a->P, a->ldp, a->Pabs, a->ldpabs, a->comp};
    abft_status_t st = abft_cpu_tsmm(ctx, &n);
    if (st != ABFT_STATUS_SUCCESS) return st;
    abft_tsmm_args_t t = {a->prec, 1, a->rows, a->cols, a->c2, a->M, a->ldm, a->Z, a->ldz,
                          a->Zabs, a->ldzabs, a->Q, a->ldq, a->Qabs, a->ldqabs, a->comp};
    return abft_cpu_tsmm(ctx, &t);
}

static void compare_job(const abft_compare_args_t *a) {
    int64_t nflag = 0;
    double maxr = 0.0;
    const int use_p = a->beta != 0.0 && a->P != NULL;
    for (int64_t i = 0; i < a->n; ++i) {
        int flagged = 0;
        for (int q = 0; q < 2; ++q) {
            const double as = a->alpha * a->S[i + q * a->lds];
            const double sa = fabs(a->alpha) * a->Sa[i + q * a->ldsa];
            const double bp = use_p ? a->beta * a->P[i + q * a->ldp] : 0.0;
            const double pa = use_p ? fabs(a->beta) * a->Pa[i + q * a->ldpa] : 0.0;
            const double s = as + bp, rv = a->R[i + q * a->ldr], ra = a->Ra[i + q * a->ldra];
            const double tt = a->T != NULL ? a->T[i + q * a->ldt] : -1.0;
            const double wc = a->coef_s * (sa + pa) + a->coef_r * ra + a->abs_floor;
            double t;
            if (tt >= 0.0) { /* the tight bound, at most the worst case's */
                t = tt * a->tscale + a->tcoef_s * sa + a->tcoef_p * pa + a->tcoef_r * ra +
                    a->tcoef_x * (fabs(rv) + fabs(as) + fabs(bp)) + a->abs_floor;
                if (wc < t) t = wc;
            } else if (tt != tt) { /* a NaN T verifies nothing */
                t = NAN;
            } else {
                t = wc;
            }
            double d = fabs(rv - s);
            /* an infinite bound (|C| or the encodings overflowed, an Inf in C) verifies
             * nothing */
            if (!(d <= t) || isinf(t)) flagged = 1;
            double r = d == 0.0 ? 0.0 : d / t;
            if (isnan(r) || !(t < INFINITY)) r = INFINITY;
            if (r > maxr) maxr = r;
        }
        if (flagged) {
            if (nflag < a->max_list) a->list[nflag] = i;
            ++nflag;
        }
    }
    *a->nflagged = nflag;
    *a->max_ratio = maxr;
}

abft_status_t abft_cpu_compare(const abft_kctx_t *ctx, const abft_compare_args_t *a, int njobs) {
    (void)ctx;
    if (njobs < 1 || njobs > 2) return ABFT_STATUS_INTERNAL_ERROR;
    for (int j = 0; j < njobs; ++j) compare_job(&a[j]);
    return ABFT_STATUS_SUCCESS;
}
