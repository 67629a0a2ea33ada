/* libabft_blas.so: the CPU backend's tall-and-skinny product Y = A·X (abft_cpu_tsmm,
 * kernels/cpu/abft_cpu_tsmm.c, trans = 0) written so that the compiler vectorizes it, for
 * the drop-in's copy of the library objects (docs/dropin.md, "Overhead").
 *
 * Every output row is the reference's: the same compensated (Dot2) step per term, in the
 * same order over the columns, the same plain sum for |A|·|X|, the same final rounding; the
 * rows are independent, so computing several rows at once in vector lanes, or in blocks of
 * another size, changes no bit (test_dropin_tsmm compares the two bit for bit). What differs
 * is the loop structure: the reference's inner loop over the checksum columns q (a run-time
 * count) keeps the compiler from vectorizing its loop over the rows; here the count is a
 * compile-time constant (1, 2, 3 or 4 columns), the data type and the |.| sums are
 * separate functions, and each row's sums live in plain arrays.
 *
 * trans = 1 (the columns' dot products) keeps the reference's loops, each column's sums in
 * order, only without its OpenMP team.
 *
 * This file is compiled once per instruction set (abft_blas_kernels.c chooses at run
 * time): the baseline, x86-64-v3 (AVX2, FMA) and x86-64-v4 (AVX-512), with
 * ABFT_BLAS_TSMM_ENTRY naming the entry point of each. Floating-point contraction is off
 * (-ffp-contract=off, as ISO C mode has it): the Dot2 step needs each product and sum
 * rounded on its own. */
#include <math.h>
#include <stdint.h>

#include "abft_blas_internal.h"
#include "abft_kernels.h"

#ifndef ABFT_BLAS_TSMM_ENTRY
#define ABFT_BLAS_TSMM_ENTRY abft_blas_tsmm_rows
#endif

/* hi + lo += x·y, compensated: the reference's dot2_step, statement for statement */
#define DOT2(hi, lo, x, y)                                                                  \
    do {                                                                                    \
        const double p_ = (x) * (y);                                                        \
        const double pe_ = fma((x), (y), -p_);                                              \
        const double s_ = (hi) + p_;                                                        \
        const double z_ = s_ - (hi);                                                        \
        const double e_ = ((hi) - (s_ - z_)) + (p_ - z_);                                   \
        (hi) = s_;                                                                          \
        (lo) += e_ + pe_;                                                                   \
    } while (0)

/* The same step where the product x·y is exact (a weight 1, or fp32 data times an integer
 * weight below 2^29): the reference's fma(x, y, -x·y) is then +0 for finite x, and for an
 * x that is not finite the running sum hi is not finite from then on, which makes the
 * result hi whatever lo holds (dot2_result). So the correction term is skipped; its
 * "+ 0.0", which turns a -0 into +0 as the reference's addition of pe does, is kept. */
#define DOT2_EXACT(hi, lo, p)                                                               \
    do {                                                                                    \
        const double q_ = (p);                                                              \
        const double s_ = (hi) + q_;                                                        \
        const double z_ = s_ - (hi);                                                        \
        const double e_ = ((hi) - (s_ - z_)) + (q_ - z_);                                   \
        (hi) = s_;                                                                          \
        (lo) += e_ + 0.0;                                                                   \
    } while (0)

enum { BLK = 512, MAXQ = 4 };

/* The implicit weights v_0 = 1, v_1(j) = j + 1 (X == NULL, 2 columns): the first column's
 * products are the data themselves (x·1 is exact, as is |x|·1), and for fp32 data
 * (EXACT1) the second column's products are exact too. */
#define ABFT_BLAS_ROWS_IMPLICIT(NAME, T, ABS, EXACT1)                                       \
    static void NAME(const T *A, int64_t lda, int64_t len, int64_t cols, const double *X,   \
                     int64_t ldx, const double *Xa, int64_t ldxa, double (*h)[BLK],          \
                     double (*l)[BLK], double (*s)[BLK]) {                                   \
        (void)X, (void)ldx, (void)Xa, (void)ldxa;                                           \
        for (int q = 0; q < 2; ++q)                                                         \
            for (int64_t i = 0; i < len; ++i) h[q][i] = l[q][i] = s[q][i] = 0.0;            \
        double *h0 = h[0], *l0 = l[0], *s0 = s[0], *h1 = h[1], *l1 = l[1], *s1 = s[1];      \
        for (int64_t j = 0; j < cols; ++j) {                                                \
            const double x1 = (double)(j + 1);                                              \
            const T *col = A + (size_t)j * (size_t)lda;                                     \
            for (int64_t i = 0; i < len; ++i) {                                             \
                const double v = (double)col[i];                                            \
                DOT2_EXACT(h0[i], l0[i], v);                                                \
                if (EXACT1) DOT2_EXACT(h1[i], l1[i], v * x1);                               \
                else DOT2(h1[i], l1[i], v, x1);                                             \
                if (ABS) {                                                                  \
                    const double av = fabs(v);                                              \
                    s0[i] += av;                                                            \
                    s1[i] += av * x1;                                                       \
                }                                                                           \
            }                                                                               \
        }                                                                                   \
    }

/* One block of len rows (A points at its first row), C checksum columns, the |.| sums when
 * ABS: h, l, s (C x BLK each) get the running sums over the cols columns. */
#define ABFT_BLAS_ROWS_BLOCK(NAME, T, C, ABS)                                               \
    static void NAME(const T *A, int64_t lda, int64_t len, int64_t cols, const double *X,   \
                     int64_t ldx, const double *Xa, int64_t ldxa, double (*h)[BLK],          \
                     double (*l)[BLK], double (*s)[BLK]) {                                   \
        for (int q = 0; q < C; ++q)                                                         \
            for (int64_t i = 0; i < len; ++i) h[q][i] = l[q][i] = s[q][i] = 0.0;            \
        for (int64_t j = 0; j < cols; ++j) {                                                \
            double xw[MAXQ], xa[MAXQ];                                                      \
            for (int q = 0; q < C; ++q) {                                                   \
                xw[q] = X != NULL ? X[j + q * ldx] : q == 0 ? 1.0 : (double)(j + 1);        \
                xa[q] = !ABS ? 0.0 : Xa != NULL ? Xa[j + q * ldxa] : fabs(xw[q]);           \
            }                                                                               \
            const T *col = A + (size_t)j * (size_t)lda;                                     \
            double *h0 = h[0], *l0 = l[0], *s0 = s[0];                                      \
            double *h1 = h[C > 1 ? 1 : 0], *l1 = l[C > 1 ? 1 : 0], *s1 = s[C > 1 ? 1 : 0];  \
            double *h2 = h[C > 2 ? 2 : 0], *l2 = l[C > 2 ? 2 : 0], *s2 = s[C > 2 ? 2 : 0];  \
            double *h3 = h[C > 3 ? 3 : 0], *l3 = l[C > 3 ? 3 : 0], *s3 = s[C > 3 ? 3 : 0];  \
            const double x0 = xw[0], x1 = xw[C > 1 ? 1 : 0], x2 = xw[C > 2 ? 2 : 0];        \
            const double x3 = xw[C > 3 ? 3 : 0];                                            \
            const double a0 = xa[0], a1 = xa[C > 1 ? 1 : 0], a2 = xa[C > 2 ? 2 : 0];        \
            const double a3 = xa[C > 3 ? 3 : 0];                                            \
            for (int64_t i = 0; i < len; ++i) {                                             \
                const double v = (double)col[i];                                            \
                DOT2(h0[i], l0[i], v, x0);                                                  \
                if (C > 1) DOT2(h1[i], l1[i], v, x1);                                       \
                if (C > 2) DOT2(h2[i], l2[i], v, x2);                                       \
                if (C > 3) DOT2(h3[i], l3[i], v, x3);                                       \
                if (ABS) {                                                                  \
                    const double av = fabs(v);                                              \
                    s0[i] += av * a0;                                                       \
                    if (C > 1) s1[i] += av * a1;                                            \
                    if (C > 2) s2[i] += av * a2;                                            \
                    if (C > 3) s3[i] += av * a3;                                            \
                }                                                                           \
            }                                                                               \
        }                                                                                   \
    }

#define ABFT_BLAS_ROWS_TYPE(P, T)                                                           \
    ABFT_BLAS_ROWS_BLOCK(P##_1, T, 1, 0)                                                    \
    ABFT_BLAS_ROWS_BLOCK(P##_1a, T, 1, 1)                                                   \
    ABFT_BLAS_ROWS_BLOCK(P##_2, T, 2, 0)                                                    \
    ABFT_BLAS_ROWS_BLOCK(P##_2a, T, 2, 1)                                                   \
    ABFT_BLAS_ROWS_BLOCK(P##_3, T, 3, 0)                                                    \
    ABFT_BLAS_ROWS_BLOCK(P##_3a, T, 3, 1)                                                   \
    ABFT_BLAS_ROWS_BLOCK(P##_4, T, 4, 0)                                                    \
    ABFT_BLAS_ROWS_BLOCK(P##_4a, T, 4, 1)
ABFT_BLAS_ROWS_TYPE(rows_d, double)
ABFT_BLAS_ROWS_TYPE(rows_s, float)
/* Plain fp64 sums (plain, below): the running sums are the reference's hi (the Dot2 step's
 * s = hi + x·y), without its correction lo. */
#define ABFT_BLAS_ROWS_PLAIN(NAME, T, C, ABS)                                               \
    static void NAME(const T *A, int64_t lda, int64_t len, int64_t cols, const double *X,   \
                     int64_t ldx, const double *Xa, int64_t ldxa, double (*h)[BLK],          \
                     double (*l)[BLK], double (*s)[BLK]) {                                   \
        for (int q = 0; q < C; ++q)                                                         \
            for (int64_t i = 0; i < len; ++i) h[q][i] = l[q][i] = s[q][i] = 0.0;            \
        double *h0 = h[0], *s0 = s[0], *h1 = h[C > 1 ? 1 : 0], *s1 = s[C > 1 ? 1 : 0];      \
        double *h2 = h[C > 2 ? 2 : 0], *s2 = s[C > 2 ? 2 : 0];                              \
        double *h3 = h[C > 3 ? 3 : 0], *s3 = s[C > 3 ? 3 : 0];                              \
        for (int64_t j = 0; j < cols; ++j) {                                                \
            double xw[MAXQ], xa[MAXQ];                                                      \
            for (int q = 0; q < C; ++q) {                                                   \
                xw[q] = X != NULL ? X[j + q * ldx] : q == 0 ? 1.0 : (double)(j + 1);        \
                xa[q] = !ABS ? 0.0 : Xa != NULL ? Xa[j + q * ldxa] : fabs(xw[q]);           \
            }                                                                               \
            const double x0 = xw[0], x1 = xw[C > 1 ? 1 : 0], x2 = xw[C > 2 ? 2 : 0];        \
            const double x3 = xw[C > 3 ? 3 : 0];                                            \
            const double a0 = xa[0], a1 = xa[C > 1 ? 1 : 0], a2 = xa[C > 2 ? 2 : 0];        \
            const double a3 = xa[C > 3 ? 3 : 0];                                            \
            const T *col = A + (size_t)j * (size_t)lda;                                     \
            for (int64_t i = 0; i < len; ++i) {                                             \
                const double v = (double)col[i];                                            \
                h0[i] += v * x0;                                                            \
                if (C > 1) h1[i] += v * x1;                                                 \
                if (C > 2) h2[i] += v * x2;                                                 \
                if (C > 3) h3[i] += v * x3;                                                 \
                if (ABS) {                                                                  \
                    const double av = fabs(v);                                              \
                    s0[i] += av * a0;                                                       \
                    if (C > 1) s1[i] += av * a1;                                            \
                    if (C > 2) s2[i] += av * a2;                                            \
                    if (C > 3) s3[i] += av * a3;                                            \
                }                                                                           \
            }                                                                               \
        }                                                                                   \
    }
#define ABFT_BLAS_ROWS_PLAIN_TYPE(P, T)                                                     \
    ABFT_BLAS_ROWS_PLAIN(P##_1, T, 1, 0)                                                    \
    ABFT_BLAS_ROWS_PLAIN(P##_1a, T, 1, 1)                                                   \
    ABFT_BLAS_ROWS_PLAIN(P##_2, T, 2, 0)                                                    \
    ABFT_BLAS_ROWS_PLAIN(P##_2a, T, 2, 1)                                                   \
    ABFT_BLAS_ROWS_PLAIN(P##_3, T, 3, 0)                                                    \
    ABFT_BLAS_ROWS_PLAIN(P##_3a, T, 3, 1)                                                   \
    ABFT_BLAS_ROWS_PLAIN(P##_4, T, 4, 0)                                                    \
    ABFT_BLAS_ROWS_PLAIN(P##_4a, T, 4, 1)
ABFT_BLAS_ROWS_PLAIN_TYPE(rows_pd, double)
ABFT_BLAS_ROWS_PLAIN_TYPE(rows_ps, float)
ABFT_BLAS_ROWS_IMPLICIT(rows_d_v, double, 0, 0)
ABFT_BLAS_ROWS_IMPLICIT(rows_d_va, double, 1, 0)
ABFT_BLAS_ROWS_IMPLICIT(rows_s_v, float, 0, 1)
ABFT_BLAS_ROWS_IMPLICIT(rows_s_va, float, 1, 1)

typedef void (*block_fn)(const void *, int64_t, int64_t, int64_t, const double *, int64_t,
                         const double *, int64_t, double (*)[BLK], double (*)[BLK],
                         double (*)[BLK]);

/* ---- trans = 1: Y(j, q) = sum_i A(i, j)·X(i, q), a compensated dot product down each
 * column, in the reference's order (the rows in turn; all columns q of a row's Dot2 steps,
 * then its |.| sums); the columns are independent and shared out in groups. */
enum { MAXQT = 16, COLGROUP = 32 };

#define ABFT_BLAS_COLS(NAME, T, PLAIN)                                                      \
    static void NAME(const abft_tsmm_args_t *a, int64_t j0, int64_t j1) {                   \
        const int64_t c = a->c, rows = a->rows;                                             \
        const int want_abs = a->Yabs != NULL;                                               \
        for (int64_t j = j0; j < j1; ++j) {                                                 \
            const T *col = (const T *)a->A + (size_t)j * (size_t)a->lda;                    \
            double hi[MAXQT] = {0}, lo[MAXQT] = {0}, sa[MAXQT] = {0};                       \
            for (int64_t i = 0; i < rows; ++i) {                                            \
                const double v = (double)col[i];                                            \
                for (int64_t q = 0; q < c; ++q) {                                           \
                    const double x = a->X != NULL ? a->X[i + q * a->ldx]                    \
                                     : q == 0     ? 1.0                                     \
                                                  : (double)(i + 1);                        \
                    if (PLAIN) hi[q] += v * x;                                              \
                    else DOT2(hi[q], lo[q], v, x);                                          \
                }                                                                           \
                if (want_abs) {                                                             \
                    const double av = fabs(v);                                              \
                    for (int64_t q = 0; q < c; ++q) {                                       \
                        const double x = a->X != NULL ? a->X[i + q * a->ldx]                \
                                         : q == 0     ? 1.0                                 \
                                                      : (double)(i + 1);                    \
                        const double xa = a->Xabs != NULL ? a->Xabs[i + q * a->ldxabs]      \
                                                          : fabs(x);                        \
                        sa[q] += av * xa;                                                   \
                    }                                                                       \
                }                                                                           \
            }                                                                               \
            for (int64_t q = 0; q < c; ++q) {                                               \
                a->Y[j + q * a->ldy] = isfinite(hi[q]) ? hi[q] + lo[q] : hi[q];             \
                if (want_abs) a->Yabs[j + q * a->ldyabs] = sa[q];                           \
            }                                                                               \
        }                                                                                   \
    }
ABFT_BLAS_COLS(cols_d, double, 0)
ABFT_BLAS_COLS(cols_s, float, 0)
ABFT_BLAS_COLS(cols_pd, double, 1)
ABFT_BLAS_COLS(cols_ps, float, 1)

typedef struct cols_pass {
    const abft_tsmm_args_t *a;
    int plain;
} cols_pass_t;

static void run_cols(void *ctx, int64_t g) {
    const cols_pass_t *p = (const cols_pass_t *)ctx;
    const abft_tsmm_args_t *a = p->a;
    const int64_t j0 = g * COLGROUP, j1 = a->cols - j0 < COLGROUP ? a->cols : j0 + COLGROUP;
    if (a->prec == ABFT_PREC_D) (p->plain ? cols_pd : cols_d)(a, j0, j1);
    else (p->plain ? cols_ps : cols_s)(a, j0, j1);
}

/* One pass: its arguments, the block function and the blocks' length. */
typedef struct pass {
    const abft_tsmm_args_t *a;
    block_fn f;
    size_t es;
    int64_t bl;
} pass_t;

static void run_block(void *ctx, int64_t b) {
    const pass_t *p = (const pass_t *)ctx;
    const abft_tsmm_args_t *a = p->a;
    const int64_t i0 = b * p->bl, len = a->rows - i0 < p->bl ? a->rows - i0 : p->bl;
    double h[MAXQ][BLK], l[MAXQ][BLK], s[MAXQ][BLK];
    p->f((const char *)a->A + (size_t)i0 * p->es, a->lda, len, a->cols, a->X, a->ldx, a->Xabs,
         a->ldxabs, h, l, s);
    for (int64_t q = 0; q < a->c; ++q)
        for (int64_t i = 0; i < len; ++i) {
            const double hi = h[q][i], lo = l[q][i];
            /* dot2_result (a plain sum's lo is 0: its hi) */
            a->Y[i0 + i + q * a->ldy] = isfinite(hi) ? hi + lo : hi;
            if (a->Yabs != NULL) a->Yabs[i0 + i + q * a->ldyabs] = s[q][i];
        }
}

/* Y = A·X (rows x c) and, when a->Yabs is set, Yabs = |A|·|X| (or A's |.| against Xabs),
 * for trans = 0 and 1 <= c <= 4, and the column sums of trans = 1 for 1 <= c <= 16;
 * returns 0 (nothing done) for anything else, which the caller hands to the reference.
 * plain: plain fp64 sums instead of the compensated ones (abft_blas_kernels.c says when). The blocks of rows are shared out among the pool's
 * threads (abft_blas_pool.c), at least two per thread where the rows allow. */
int ABFT_BLAS_TSMM_ENTRY(const abft_tsmm_args_t *a, int plain) {
    if (a->trans != 0 && a->c >= 1 && a->c <= MAXQT) {
        /* one thread per group of columns; a pass over a few columns (the checksums' own
         * checksum) on the calling thread alone */
        const int64_t groups = (a->cols + COLGROUP - 1) / COLGROUP;
        const int threads = a->rows * a->cols < 65536 ? 1 : abft_blas_pool_threads();
        cols_pass_t cp = {a, plain};
        abft_blas_parallel(groups, threads, run_cols, &cp);
        return 1;
    }
    if (a->trans != 0 || a->c < 1 || a->c > MAXQ) return 0;
    const int want_abs = a->Yabs != NULL;
    static const block_fn fd[MAXQ][2] = {
        {(block_fn)rows_d_1, (block_fn)rows_d_1a}, {(block_fn)rows_d_2, (block_fn)rows_d_2a},
        {(block_fn)rows_d_3, (block_fn)rows_d_3a}, {(block_fn)rows_d_4, (block_fn)rows_d_4a}};
    static const block_fn fs[MAXQ][2] = {
        {(block_fn)rows_s_1, (block_fn)rows_s_1a}, {(block_fn)rows_s_2, (block_fn)rows_s_2a},
        {(block_fn)rows_s_3, (block_fn)rows_s_3a}, {(block_fn)rows_s_4, (block_fn)rows_s_4a}};
    block_fn f = (a->prec == ABFT_PREC_D ? fd : fs)[a->c - 1][want_abs];
    /* the implicit weights (the weights' own |.| are then |1| and |j + 1|); fp32 data's
     * products with j + 1 are exact only while j + 1 < 2^29 */
    if (a->X == NULL && a->Xabs == NULL && a->c == 2 &&
        (a->prec == ABFT_PREC_D || a->cols < (1 << 29))) {
        static const block_fn vd[2] = {(block_fn)rows_d_v, (block_fn)rows_d_va};
        static const block_fn vs[2] = {(block_fn)rows_s_v, (block_fn)rows_s_va};
        f = (a->prec == ABFT_PREC_D ? vd : vs)[want_abs];
    }
    if (plain) {
        static const block_fn pd[MAXQ][2] = {
            {(block_fn)rows_pd_1, (block_fn)rows_pd_1a}, {(block_fn)rows_pd_2, (block_fn)rows_pd_2a},
            {(block_fn)rows_pd_3, (block_fn)rows_pd_3a}, {(block_fn)rows_pd_4, (block_fn)rows_pd_4a}};
        static const block_fn ps[MAXQ][2] = {
            {(block_fn)rows_ps_1, (block_fn)rows_ps_1a}, {(block_fn)rows_ps_2, (block_fn)rows_ps_2a},
            {(block_fn)rows_ps_3, (block_fn)rows_ps_3a}, {(block_fn)rows_ps_4, (block_fn)rows_ps_4a}};
        f = (a->prec == ABFT_PREC_D ? pd : ps)[a->c - 1][want_abs];
    }
    const int threads = abft_blas_pool_threads();
    int64_t bl = BLK;
    while (bl > 64 && (a->rows + bl - 1) / bl < 2 * (int64_t)threads) bl /= 2;
    pass_t p = {a, f, a->prec == ABFT_PREC_D ? sizeof(double) : sizeof(float), bl};
    abft_blas_parallel((a->rows + bl - 1) / bl, threads, run_block, &p);
    return 1;
}
