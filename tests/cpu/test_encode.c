/* Checksums and tall-and-skinny products on the CPU backend against a plain reference
 * computed in long double. */
#include <math.h>
#include <string.h>

#include "testutil.h"

static double ref_dot(const double *A, int64_t lda, int trans, int64_t i, int64_t rows,
                      int64_t cols, const double *X, int64_t ldx, int64_t q, int absval,
                      double *absref) {
    long double s = 0, sa = 0;
    int64_t len = trans ? rows : cols;
    for (int64_t l = 0; l < len; ++l) {
        double a = trans ? A[l + i * lda] : A[i + l * lda];
        double x = X != NULL ? X[l + q * ldx] : (q == 0 ? 1.0 : (double)(l + 1));
        s += (long double)a * x;
        sa += fabsl((long double)a) * fabsl((long double)x);
    }
    (void)absval;
    if (absref) *absref = (double)sa;
    return (double)s;
}

static void check_case(abft_handle_t h, tu_rng_t *r, int64_t m, int64_t n, int64_t lda, int trans,
                       int64_t c, int implicit) {
    double *A = tu_alloc_d(lda * (n > 0 ? n : 1));
    tu_fill_d(r, TU_WIDE, m, n, A, lda);
    int64_t xr = trans ? m : n, yr = trans ? n : m;
    int64_t ldx = xr + 1, ldy = yr + 2;
    double *X = implicit ? NULL : tu_alloc_d(ldx * c);
    if (X) tu_fill_d(r, TU_UNIFORM, xr, c, X, ldx);
    double *Y = tu_alloc_d(ldy * c), *Ya = tu_alloc_d(ldy * c);
    for (int64_t t = 0; t < ldy * c; ++t) Y[t] = Ya[t] = NAN;
    abft_status_t st;
    if (implicit)
        st = trans ? abft_dchecksum_cols(h, m, n, A, lda, Y, ldy, Ya, ldy)
                   : abft_dchecksum_rows(h, m, n, A, lda, Y, ldy, Ya, ldy);
    else
        st = abft_dtsmm(h, trans ? ABFT_OP_T : ABFT_OP_N, m, n, c, A, lda, X, ldx, Y, ldy, NULL,
                        0, Ya, ldy);
    TU_CHECK(st == ABFT_STATUS_SUCCESS, "m=%lld n=%lld: %s", (long long)m, (long long)n,
             abft_status_name(st));
    for (int64_t q = 0; q < c; ++q)
        for (int64_t i = 0; i < ldy; ++i) {
            double got = Y[i + q * ldy], gota = Ya[i + q * ldy];
            if (i >= yr) {
                TU_CHECK(isnan(got) && isnan(gota), "padding written at %lld", (long long)i);
                continue;
            }
            double refa;
            double ref = ref_dot(A, lda, trans, i, m, n, X, ldx, q, 1, &refa);
            int64_t len = trans ? m : n;
            double tol = 2.0 * (len + 2) * 0x1p-53 * refa;
            TU_CHECK(fabs(got - ref) <= tol, "trans=%d m=%lld n=%lld c=%lld (%lld,%lld): got %.17g ref %.17g",
                     trans, (long long)m, (long long)n, (long long)c, (long long)i, (long long)q, got, ref);
            TU_CHECK(fabs(gota - refa) <= tol, "abs (%lld,%lld): got %.17g ref %.17g",
                     (long long)i, (long long)q, gota, refa);
        }
    free(A);
    free(X);
    free(Y);
    free(Ya);
}

static void check_float_rows(abft_handle_t h, tu_rng_t *r) {
    int64_t m = 37, n = 53, lda = 40;
    float *A = tu_alloc_s(lda * n);
    tu_fill_s(r, TU_UNIFORM, m, n, A, lda);
    double R[2 * 37];
    TU_CHECK_STATUS(abft_schecksum_rows(h, m, n, A, lda, R, m, NULL, 0), ABFT_STATUS_SUCCESS);
    for (int64_t i = 0; i < m; ++i) {
        long double s = 0, w = 0;
        for (int64_t j = 0; j < n; ++j) {
            s += A[i + j * lda];
            w += (long double)A[i + j * lda] * (j + 1);
        }
        /* fp64 accumulation of fp32 data: error ~ n·2^-53, far below fp32 rounding */
        TU_CHECK(fabsl(R[i] - s) <= 1e-13L, "row %lld sum %.17g vs %.17Lg", (long long)i, R[i], s);
        TU_CHECK(fabsl(R[i + m] - w) <= 1e-11L, "row %lld wsum %.17g vs %.17Lg", (long long)i, R[i + m], w);
    }
    free(A);
}

int main(void) {
    uint64_t seed = tu_seed("test_encode");
    tu_rng_t r;
    tu_rng_init(&r, seed);
    abft_handle_t h;
    TU_CHECK_STATUS(abft_create(&h, ABFT_BACKEND_CPU), ABFT_STATUS_SUCCESS);
    const int64_t sizes[] = {0, 1, 7, 33, 1031};
    for (int a = 0; a < 5; ++a)
        for (int b = 0; b < 5; ++b) {
            int64_t m = sizes[a], n = sizes[b];
            if (m * n > 200000) continue;
            for (int trans = 0; trans < 2; ++trans) {
                check_case(h, &r, m, n, m + 3, trans, 2, 1);
                check_case(h, &r, m, n, m > 0 ? m : 1, trans, 1 + (int)tu_int(&r, 0, 15), 0);
            }
        }
    check_case(h, &r, 1200, 900, 1207, 0, 16, 0);
    check_case(h, &r, 1200, 900, 1207, 1, 3, 0);
    check_float_rows(h, &r);
    abft_destroy(h);
    return tu_finish("test_encode");
}
