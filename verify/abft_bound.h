/* abft: the bound module. Every error bound of the library (protected GEMM, LU, getrs, the
 * campaign's classification) is computed from the functions here, from one model of the
 * arithmetic that actually ran (abft_arith_t, kernels/abft_kernels.h). The derivations are
 * in docs/bound.md (GEMM) and docs/lu.md (LU, getrs). Private. */
#ifndef ABFT_BOUND_H
#define ABFT_BOUND_H

#include <stdint.h>

#include "abft_internal.h"

/* IEEE arithmetic of the data precision: u_in = 0, u = 2^-53 / 2^-24, eta = the smallest
 * subnormal (2^-1074 / 2^-149). */
abft_arith_t abft_arith_native(abft_prec_t prec);
/* The checksum arithmetic: always fp64 (also for fp32 data). */
abft_arith_t abft_arith_checksum(void);
/* The model of each arithmetic (docs/bound.md): IEEE, TF32 (inputs shortened to 10
 * fraction bits, fp32 sums that may truncate), BF16X9; ABFT_MATH_HANDLE is not an arithmetic
 * (INVALID_VALUE), nor TF32/BF16X9 for fp64 data. */
abft_status_t abft_arith_of(abft_math_t math, abft_prec_t prec, abft_arith_t *a);
/* The arithmetic a cuBLAS handle's math mode allows for data of precision prec (the CUDA
 * backend reads the mode; NOT_SUPPORTED for FP64 fixed-point emulation, and without the CUDA
 * backend). */
abft_status_t abft_bound_arith_cublas(void *cublas_handle, abft_prec_t prec, abft_arith_t *a);
/* The arithmetic the handle's BLAS/LAPACK runs for data of precision prec: IEEE on the CPU
 * backend; on the CUDA backend what the math mode of the handle's cuBLAS handle allows. */
abft_status_t abft_bound_arith(abft_handle_t h, abft_prec_t prec, abft_arith_t *a);

/* The relative error of a sum of n terms (or a dot product of length n) at unit roundoff u,
 * under the handle's bound mode. Worst case: gamma_n = n·u / (1 - n·u) while n·u < 1/2, and
 * (1 + u)^n - 1 beyond (finite for every n: a sum multiplies each term by at most n factors
 * (1 + delta), never divides); times the handle's factor. Probabilistic: factor·sqrt(n)·u. */
double abft_gamma(abft_handle_t h, double n, double u);
/* The relative error of a dot product of length n in arithmetic a, input changes included:
 * (1 + u_in)^2 (1 + gamma_n(u)) - 1. */
double abft_bound_dot(abft_handle_t h, const abft_arith_t *a, double n);

/* ---- GEMM (docs/bound.md) ------------------------------------------------------------ */

/* The bound of one side of a protected GEMM's checksums, for each checksum column q:
 *   tau = coef_s·(|alpha|·Sa + |beta|·Pa) + coef_r·Ra + abs_floor          (the compare)
 *       + eta_amp·(wsum[q]·l1 + ysum[q])                                    (abft_bound_gemm_amp)
 * The first line is what the backend's compare evaluates for every entry; the second bounds
 * the subnormal losses that a BLAS applying alpha to one operand before multiplying
 * amplifies by the other operand (l1: the 1-norm of the entry's row of op(A), or column of
 * op(B); ysum: the sum over the inner dimension of the other operand's |.|·V encoding). It
 * is evaluated on the host for flagged entries only, so the compare may flag an entry the
 * full bound clears, never the reverse. */
typedef struct abft_gemm_bound {
    double coef_s, coef_r, abs_floor;
    double eta_amp;
    double wsum[2]; /* sum of the weights over the entry's vector: len, len·(len + 1)/2 */
} abft_gemm_bound_t;

/* g: the GEMM's arithmetic; inner: the length of the first encoding sum (n for row
 * checksums, m for column checksums); k: the GEMM's inner dimension; out: the length of the
 * sums over C (n for rows, m for columns). */
void abft_bound_gemm(abft_handle_t h, const abft_arith_t *g, double alpha, double beta,
                     int64_t inner, int64_t k, int64_t out, abft_gemm_bound_t *b);
/* The amplified-underflow term of checksum column q (see above). */
double abft_bound_gemm_amp(const abft_gemm_bound_t *b, int q, double l1, double ysum);

/* The tight mode (ABFT_BOUND_TIGHT, docs/bound.md "Tight mode"). The tight pass
 * (kernels/abft_kernels.h, abft_tight_args_t) gives each entry's part from the inputs,
 *   T = lambda·|alpha|·sqrt(u^2·Vg + u_chk^2·Vc),
 * and the compare adds the rest, where T >= 0:
 *   tau = T + coef_s·|alpha|·Sa + coef_p·|beta|·Pa + coef_r·Ra
 *         + coef_x·(|R| + |alpha·S| + |beta·P|) + abs_floor (+ the amplified term)
 * (abs_floor and the amplified-underflow term as in abft_gemm_bound_t). lambda makes an
 * entry's false alarm at most TIGHT_FALSE_ALARM under the model (per checksum column);
 * the handle's factor multiplies it. comp: how the checksums were summed
 * (abft_bound_tight_comp): compensated dot products, whose own rounding is second order
 * (in order on the CPU backend, merged over a tree on the CUDA backend: twice the terms in
 * the second-order coefficients), or plain fp64 sums, which keep their worst-case terms,
 * negligible beside an fp32 GEMM's rounding but not beside an fp64 one's. */
enum { ABFT_TIGHT_COMP_PLAIN = 0, ABFT_TIGHT_COMP_SEQ = 1, ABFT_TIGHT_COMP_TREE = 2 };
#define ABFT_TIGHT_SKETCH 32
#define ABFT_TIGHT_FALSE_ALARM 0x1p-40
typedef struct abft_gemm_tight {
    double lambda, u, u_chk;
    double coef_s, coef_p, coef_r, coef_x;
} abft_gemm_tight_t;
void abft_bound_gemm_tight(abft_handle_t h, const abft_arith_t *g, int64_t inner, int64_t k,
                           int64_t out, int comp, abft_gemm_tight_t *t);
/* The tight mode's allowance for products below the spacing of the partial sum they join,
 * for one entry C_ij = sum_l a_l·b_l (a: row i of op(A), b: column j of op(B), k terms, as
 * doubles; g: the GEMM's arithmetic). Such a product x is absorbed (an error of -x) or
 * rounds the sum by one spacing (an error of spacing - |x|, of x's sign): not noise, and
 * of any sign pattern, but never more than |x| (the sum itself is one of the values
 * rounding could pick). The product of term l joins a node S = P(l) - P(b) of the exact
 * prefix sums P, for the unknown start b of its block (any contiguous blocking), so
 * |S| <= max(P(l) - lo, hi - P(l)) with [lo, hi] the range of P(0..l), plus the GEMM's
 * own error on the node; the same over the prefix sums of the terms a sliced order deals
 * to term l's slice (two interleaved lanes; four slices taking tiles of 8 in turn; the nord
 * lane orders ord of the backend, abft_bound_tight_lanes, whose lanes start afresh at the
 * library's split ksplit, 0 for none), the largest taken; x can be such a product only
 * where |x| < max(2·u·that, eta).
 * Returns the sum of |x| over those terms, rounded up: the entry's part of the allowance
 * (unscaled by |alpha|). The pass's T leaves these terms out; the protocol adds the
 * allowance to the entries its compare flags, the campaign to every entry, both through
 * abft_bound_tight_raise (docs/bound.md, "Tight mode"). */
double abft_bound_tight_small(const abft_arith_t *g, const double *a, const double *b, int64_t k,
                              const abft_tight_order_t *ord, int nord, int64_t ksplit);
/* A checksum entry's tight bound from the pass's part tt (>= 0): tt plus the checksums' own
 * rounding, sa = |alpha|·Sa, pa = |beta|·Pa and ra the |.| sums, x = |R| + |alpha·S| +
 * |beta·P| the values compared, and the subnormal floor (docs/bound.md, "Tight mode"); the
 * compare kernels evaluate the same formula on the device. */
double abft_bound_tight_entry(const abft_gemm_tight_t *tb, double abs_floor, double tt,
                              double sa, double pa, double ra, double x);
/* A checksum entry's tight bound t raised by its small terms, and never above the worst
 * case: min(t + |alpha|·Sm, wc), wc the worst case's bound (a NaN t stays NaN), Sm the weighted sum sum_x w_x·abft_bound_tight_small over the
 * entry's len vectors (as summed in fp64; INFINITY where unknown), at most the entry's
 * |.| sum sa (the encoded sum_l |a_l|·(|op(B)|·w)_l, k terms). */
double abft_bound_tight_raise(double t, double wc, double alpha, double sm, double sa,
                              int64_t len, int64_t k);
/* The tight mode in two stages (docs/bound.md, "Two stages"): an entry's part once the full
 * pass ran after the filter: the larger of the filter's tf and the full pass's t, except
 * where the full pass sends the entry to the worst case (t < 0) or finds no bound (NaN):
 * its verdict stands. */
double abft_bound_tight_merge(double tf, double t);
/* How far two encodings of one checksum entry from the same inputs may differ (the tight
 * mode's second stage recomputes them to find inputs changed after encoding; docs/bound.md,
 * "Two stages"): each within u·|s| + 2·g²·ay (+ u·ay + 2·gi²·sa from its weights' own
 * rounding) of the exact sum when compensated (comp; g = gamma_(2·len), gi =
 * gamma_(2·inner)), within gamma_(len+1)·ay (+ gamma_(inner+1)·sa) when plain, plus
 * (len + 1) subnormal spacings; twice that. s: the larger magnitude of the two; ay:
 * |M|·(|X| + 2·(inner + 1)·eta), the sum of the |terms| with the weights' own underflow;
 * sa: |M|·Xabs, the weights' |.| sums carried through (= ay where the weights are the exact
 * V, inner = 0); len: the sum's terms; inner: those of the sums that made the weights.
 * Worst-case gammas, whatever the handle's mode and factor. */
double abft_bound_reencode(int comp, double s, double ay, double sa, int64_t len, int64_t inner);
/* Does an entry with the tight mode's part t fall back to the worst case (t < 0: the tight
 * pass's guards or tables; NaN: no bound)? The report's worst_case_rows counts them. */
int abft_bound_tight_fell_back(double t);
/* The LU and getrs bound every entry with the worst case in every mode: where the handle
 * asks for the tight mode, every checked entry of rep counts in rep->worst_case_rows. */
void abft_bound_report_lu(abft_handle_t h, abft_report_t *rep);
/* How a protected GEMM's checksums are summed in the tight mode on a backend, for data of
 * precision prec: the CPU backend's always compensated (SEQ); the CUDA backend's
 * compensated (TREE) for fp64 data, plain for fp32 data (where their worst case is
 * negligible). The protocol asks its tsmm ops for compensated sums exactly where this is
 * TREE. */
int abft_bound_tight_comp(abft_backend_t backend, abft_prec_t prec);
/* The lane orders the tight pass (and the small-terms allowance) bounds beside the natural
 * one on a backend, into ord; returns their count (kernels/abft_tight_common.h): those
 * measured for the BLAS it calls. The CUDA
 * backend: cuBLAS's fp32 split-k on an H100 (4 slices taking tiles of 8 terms in turn),
 * for both precisions. The CPU backend: OpenBLAS's small kernels on this project's machine
 * (8 lanes of fp64, 16 of fp32, one term each in turn), both for both precisions. */
int abft_bound_tight_lanes(abft_backend_t backend, abft_tight_order_t ord[ABFT_TIGHT_MAXORD]);
/* Does the tight pass apply to a GEMM in arithmetic g? Not for inputs the arithmetic
 * shortens (TF32, BF16x9): there the worst case is used. (Where it applies, a backend's pass
 * may still send rows to the worst case: T = -1, kernels/abft_kernels.h.) */
int abft_bound_tight_applies(const abft_arith_t *g);

/* ---- LU and getrs ---- */
/* The bounds of docs/lu.md. f: the arithmetic of the factorization or solve (from
 * abft_bound_arith, with the cuSOLVER math mode for getrf on the CUDA backend); prec: the
 * data precision; sizes as plain numbers, so the campaign classifies with the same
 * functions. Every bound has a part the backend's compare evaluates for each row, and two
 * gradual-underflow parts that depend on the divisors d_k of the call (the pivots U(k, k),
 * or the diagonal of a triangular solve), which the host adds for flagged rows only: the
 * compare may flag a row the full bound clears, never the reverse.
 *   eta_amp·dsum[q],  dsum[q] = sum_k w_q(k)·|d_k|   (abft_bound_lu_dsum)
 * (w_0(k) = 1, w_1(k) = k + 1, k the global index of the column, or of the row for a
 * triangular solve): a quotient that rounds into the subnormals loses up to eta, which the
 * identity multiplies by |d_k|; and, when some |d_k| >= rcp_limit (its reciprocal is then
 * subnormal, relatively off by up to eta·Omega = 8 native unit roundoffs), rcp_coef times
 * the magnitude term named below. */

/* Offline check of P·A = L·U (m x n), row i, checksum column q:
 *   tau = coef_r·Za + coef_s·P·Xa + abs_floor + eta_amp·dsum[q] (+ rcp_coef·Za),
 * divisors: U(k, k). */
typedef struct abft_lu_bound {
    double coef_r, coef_s, abs_floor, eta_amp, rcp_coef, rcp_limit;
} abft_lu_bound_t;
void abft_bound_lu(abft_handle_t h, const abft_arith_t *f, abft_prec_t prec, int64_t m,
                   int64_t n, abft_lu_bound_t *b);

/* Online trailing check after the panels ending at column K1 of an m x n LU:
 *   tau = coef_b·B2 + coef_t·|A22|·V2 + abs_floor + eta_amp·dsum[q] (+ rcp_coef·B2),
 * divisors U(k, k), k < K1. */
typedef struct abft_lu_trailing_bound {
    double coef_b, coef_t, abs_floor, eta_amp, rcp_coef, rcp_limit;
} abft_lu_trailing_bound_t;
void abft_bound_lu_trailing(abft_handle_t h, const abft_arith_t *f, abft_prec_t prec,
                            int64_t m, int64_t n, abft_lu_trailing_bound_t *b);

/* Checked triangular solve op(T)·y = b, T n x n, column checksums, per right-hand side:
 *   tau = coef_y·Ya + coef_b·Ba + abs_floor + eta_amp·dsum[q] (+ rcp_coef·(Ya + Ba)),
 * Ya = |ŷ|^T·|op(T)|^T·V, Ba = |b|^T·V, divisors T(i, i) (none for a unit triangle:
 * eta_amp = rcp_coef = 0). */
typedef struct abft_trs_bound {
    double coef_y, coef_b, abs_floor, eta_amp, rcp_coef, rcp_limit;
} abft_trs_bound_t;
void abft_bound_trs(abft_handle_t h, const abft_arith_t *f, abft_prec_t prec, int64_t n,
                    int unit, abft_trs_bound_t *b);

/* dsum[0], dsum[1] of k divisors d (host memory, in any precision converted to double),
 * the first at global index off; rounded up, never below the exact sums. A NaN divisor
 * makes both +Inf. */
void abft_bound_lu_dsum(const double *d, int64_t k, int64_t off, double dsum[2]);
/* The largest |d_k| (+Inf for a NaN): rcp_coef applies when it is >= rcp_limit. */
double abft_bound_lu_dmax(const double *d, int64_t k);
/* The same per prefix, for checks whose row i only involves the divisors before it (the
 * offline LU: row i divides by U(c, c), c < min(i, k)): pre[3c], pre[3c + 1], pre[3c + 2]
 * are dsum[0], dsum[1] and the largest |d| over d_0 .. d_{c-1}, c = 0 .. k (pre: 3(k + 1)
 * doubles). A corrupted divisor then widens only the rows that divide by it. */
void abft_bound_lu_dprefix(const double *d, int64_t k, double *pre);

/* The fp64 checksums' own consistency tests of the LU check: an intact row of X obeys
 * |X_q| <= Xa_q·x_slack (n terms, with the weights); two encodings of X^T·V of m rows
 * agree within sig_coef·(|X|^T·V of both). */
void abft_bound_lu_checksums(abft_handle_t h, int64_t m, int64_t n, double *x_slack,
                             double *sig_coef);

#endif /* ABFT_BOUND_H */
