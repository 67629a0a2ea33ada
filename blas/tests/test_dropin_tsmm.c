/* The drop-in's checksum passes (blas/abft_blas_tsmm.c) against the CPU backend's reference
 * kernel (kernels/cpu/abft_cpu_tsmm.c, linked here as abft_blas_tsmm_ref), bit for bit: every
 * instruction-set variant this build has and this CPU runs, fp64 and fp32 data, products over
 * the rows (1 to 4 checksum columns) and down the columns (trans = 1, 1 to 6), the implicit weights and explicit ones (with and without their own |.|
 * weights), with and without the |.| sums, row counts around the block sizes, leading
 * dimensions above the rows, one and several threads, and data with NaN, Inf, huge,
 * subnormal and signed-zero entries. Y and Yabs must hold the same bits as the reference's
 * (a NaN any NaN); in plain sums (the drop-in's worst-case and probabilistic modes) Yabs
 * the same bits and Y within the plain sums' rounding of the reference's. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "abft_kernels.h"

abft_status_t abft_blas_tsmm_ref(const abft_kctx_t *ctx, const abft_tsmm_args_t *a);
int abft_blas_tsmm_rows_base(const abft_tsmm_args_t *a, int plain);
#if ABFT_BLAS_TSMM_V3
int abft_blas_tsmm_rows_v3(const abft_tsmm_args_t *a, int plain);
#endif
#if ABFT_BLAS_TSMM_V4
int abft_blas_tsmm_rows_v4(const abft_tsmm_args_t *a, int plain);
#endif

typedef int (*rows_fn)(const abft_tsmm_args_t *a, int plain);

static uint64_t rng = 0x9E3779B97F4A7C15ull;
static double urand(void) {
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    return (double)(rng >> 11) / 9007199254740992.0 * 2.0 - 1.0;
}

/* an entry of the data: mostly uniform, some of every special kind */
static double draw(int special) {
    if (!special) return urand() * 3.0;
    switch ((int)((urand() + 1.0) * 4.0)) {
    case 0: return NAN;
    case 1: return urand() < 0 ? -INFINITY : INFINITY;
    case 2: return urand() * 1e300;
    case 3: return urand() * 1e-310; /* subnormal */
    case 4: return -0.0;
    case 5: return urand() * 1e-30;
    default: return urand() * 1e30;
    }
}

/* the same bits, or both NaN (a NaN's payload and sign follow the operand order the compiler
 * picks for a commutative operation, which is no difference of value) */
static int same(const double *x, const double *y, size_t n) {
    for (size_t i = 0; i < n; ++i)
        if (memcmp(&x[i], &y[i], sizeof(double)) != 0 && !(isnan(x[i]) && isnan(y[i])))
            return 0;
    return 1;
}

/* plain fp64 sums: Y within what the plain sums' rounding allows of the
 * reference's compensated Y, (len + 3)·2^-53 of sum |a·x| plus 2^-52·|Y|; the non-finite
 * ones the same (a NaN any NaN) */
static int near_plain(const abft_tsmm_args_t *a, const double *yref, const double *y) {
    const int64_t nout = a->trans ? a->cols : a->rows, len = a->trans ? a->rows : a->cols;
    for (int64_t o = 0; o < nout; ++o)
        for (int64_t q = 0; q < a->c; ++q) {
            const double r = yref[o + q * a->ldy], v = y[o + q * a->ldy];
            if (!isfinite(r) || !isfinite(v)) {
                if (!same(&r, &v, 1)) return 0;
                continue;
            }
            long double sum = 0.0L;
            for (int64_t l = 0; l < len; ++l) {
                const int64_t i = a->trans ? l : o, j = a->trans ? o : l;
                const double e = a->prec == ABFT_PREC_S ? ((const float *)a->A)[i + j * a->lda]
                                                        : ((const double *)a->A)[i + j * a->lda];
                const double x = a->X != NULL ? a->X[l + q * a->ldx] : q == 0 ? 1.0 : (double)(l + 1);
                sum += fabsl((long double)e * x);
            }
            const double tol = (double)(len + 3) * 0x1p-53 * (double)sum + 0x1p-52 * fabs(r) +
                               1e-300;
            if (!(fabs(v - r) <= tol)) return 0;
        }
    return 1;
}

int main(void) {
    rows_fn variants[3];
    const char *names[3];
    int nv = 0;
    variants[nv] = abft_blas_tsmm_rows_base, names[nv++] = "base";
#if defined(__x86_64__)
    __builtin_cpu_init();
    const int v3 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") &&
                   __builtin_cpu_supports("bmi") && __builtin_cpu_supports("bmi2");
    const int v4 = v3 && __builtin_cpu_supports("avx512f") &&
                   __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512dq") &&
                   __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512cd");
#if ABFT_BLAS_TSMM_V3
    if (v3) variants[nv] = abft_blas_tsmm_rows_v3, names[nv++] = "v3";
#endif
#if ABFT_BLAS_TSMM_V4
    if (v4) variants[nv] = abft_blas_tsmm_rows_v4, names[nv++] = "v4";
#endif
    (void)v4;
#endif
    const int64_t rowset[] = {1, 7, 63, 65, 256, 513, 1100};
    const int64_t colset[] = {0, 1, 5, 97};
    long cases = 0, failures = 0;
    for (int threads = 1; threads <= 3; threads += 2) {
#ifdef _OPENMP
        omp_set_num_threads(threads);
#endif
        for (size_t ri = 0; ri < sizeof rowset / sizeof *rowset; ++ri)
            for (size_t ci = 0; ci < sizeof colset / sizeof *colset; ++ci)
                for (int prec = 0; prec < 4; ++prec) /* fp64, fp32; +2: trans = 1 */
                    for (int64_t c = 1; c <= (prec >= 2 ? 6 : 4); ++c)
                        for (int wmode = 0; wmode < 4; ++wmode) /* V, X, X and Xabs, V and Xabs */
                            for (int abs = 0; abs < 2; ++abs)
                                for (int special = 0; special < 2; ++special) {
                                    if ((wmode == 0 || wmode == 3) && c > 2) continue; /* V has 2 columns */
                                    const int trans = prec >= 2, fp32 = prec & 1;
                                    /* trans = 1: a rows x cols A gives cols sums */
                                    const int64_t rows = rowset[ri], cols = colset[ci];
                                    const int64_t lda = rows + 3, es = fp32 ? 4 : 8;
                                    const size_t na = (size_t)lda * (size_t)(cols + 1);
                                    void *A = malloc(na * (size_t)es);
                                    for (size_t i = 0; i < na; ++i) {
                                        double v = draw(special && urand() > 0.9);
                                        if (fp32) ((float *)A)[i] = (float)v;
                                        else ((double *)A)[i] = v;
                                    }
                                    const int64_t ldx = (trans ? rows : cols) + 2;
                                    double *X = malloc(sizeof(double) * (size_t)(ldx * c + 1));
                                    double *Xa = malloc(sizeof(double) * (size_t)(ldx * c + 1));
                                    for (int64_t i = 0; i < ldx * c; ++i)
                                        X[i] = urand() * 10.0, Xa[i] = fabs(urand()) * 10.0;
                                    const int64_t ldy = (trans ? cols : rows) + 2;
                                    const size_t ny = (size_t)(ldy * c);
                                    double *Y[2], *Ya[2];
                                    for (int k = 0; k < 2; ++k) {
                                        Y[k] = malloc(sizeof(double) * ny);
                                        Ya[k] = malloc(sizeof(double) * ny);
                                    }
                                    abft_tsmm_args_t a = {fp32 ? ABFT_PREC_S : ABFT_PREC_D, trans,
                                                          rows, cols, c, A, lda,
                                                          wmode == 1 || wmode == 2 ? X : NULL, ldx,
                                                          wmode >= 2 ? Xa : NULL, ldx, NULL,
                                                          ldy, NULL, ldy, 1};
                                    for (size_t i = 0; i < ny; ++i)
                                        Y[0][i] = Ya[0][i] = 12345.0;
                                    a.Y = Y[0], a.Yabs = abs ? Ya[0] : NULL;
                                    abft_blas_tsmm_ref(NULL, &a);
                                    for (int v = 0; v < nv; ++v) {
                                        for (size_t i = 0; i < ny; ++i)
                                            Y[1][i] = Ya[1][i] = 12345.0;
                                        a.Y = Y[1], a.Yabs = abs ? Ya[1] : NULL;
                                        ++cases;
                                        /* also in plain sums */
                                        int bad = !variants[v](&a, 0) || !same(Y[0], Y[1], ny) ||
                                                  !same(Ya[0], Ya[1], ny);
                                        if (!bad) {
                                            for (size_t i = 0; i < ny; ++i)
                                                Y[1][i] = Ya[1][i] = 12345.0;
                                            bad = !variants[v](&a, 1) ||
                                                  !near_plain(&a, Y[0], Y[1]) ||
                                                  !same(Ya[0], Ya[1], ny);
                                        }
                                        if (bad) {
                                            if (++failures <= 10)
                                                printf("FAIL %s: %s trans %d rows %lld cols %lld "
                                                       "c %lld weights %d abs %d special %d "
                                                       "threads %d\n",
                                                       names[v], fp32 ? "fp32" : "fp64", trans,
                                                       (long long)rows, (long long)cols,
                                                       (long long)c, wmode, abs, special,
                                                       threads);
                                        }
                                    }
                                    free(A), free(X), free(Xa);
                                    for (int k = 0; k < 2; ++k) free(Y[k]), free(Ya[k]);
                                }
    }
    /* more than 4 columns over the rows are the reference's: refused here */
    abft_tsmm_args_t t = {ABFT_PREC_D, 0, 1, 1, 5, NULL, 1, NULL, 1, NULL, 1, NULL, 1, NULL, 1, 0};
    if (abft_blas_tsmm_rows_base(&t, 0) != 0) ++failures, printf("FAIL: c = 5 accepted\n");
    printf("test_dropin_tsmm: variants");
    for (int v = 0; v < nv; ++v) printf(" %s", names[v]);
    printf(", %ld cases, %ld failures: %s\n", cases, failures, failures ? "FAILED" : "passed");
    return failures ? 1 : 0;
}
