/* libabft_blas.so keeps the BLAS/LAPACK semantics (docs/dropin.md). Linked first (in front
 * of the host BLAS), run with ABFT_BLAS_THRESHOLD=0: every call that has a product to
 * protect is protected. Checked here:
 *  - invalid arguments call xerbla_ (this program's) with the reference's routine name and
 *    parameter number, and return without touching anything;
 *  - results of every transpose / alpha / beta combination against a plain loop, with
 *    leading dimensions larger than the rows: the padding (NaN) is never read or written,
 *    the inputs are bit for bit unchanged;
 *  - beta = 0: C is not read (NaN in C does not propagate); alpha = 0 or k = 0: A and B are
 *    not read; the hidden string lengths of a Fortran caller are accepted;
 *  - cblas_dgemm / cblas_sgemm, cblas_dsyrk, cblas_dtrsm, row and column major;
 *  - dgetrf_/sgetrf_ (P·A = L·U, a singular matrix's info), dgetrs_/sgetrs_ (residual),
 *    dgesv_/sgesv_ (residual, a singular matrix's info);
 *  - dsyrk_/ssyrk_ and dtrsm_/strsm_: every uplo/trans (side, diag) and alpha/beta, against
 *    a plain loop; the triangle not referenced (NaN there, and on a unit diagonal) is never
 *    read or written, nor the padding;
 *  - several threads calling at once (one handle per thread).
 * It prints "expect protected=P passed_through=Q": the calls that must have run protected
 * and passed through, which the test driver compares with the report's summary line (a
 * NaN read from the padding would have made a protected call pass through). */
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void dgemm_(const char *ta, const char *tb, const int *m, const int *n, const int *k,
            const double *alpha, const double *A, const int *lda, const double *B,
            const int *ldb, const double *beta, double *C, const int *ldc, size_t lta,
            size_t ltb);
void sgemm_(const char *ta, const char *tb, const int *m, const int *n, const int *k,
            const float *alpha, const float *A, const int *lda, const float *B, const int *ldb,
            const float *beta, float *C, const int *ldc, size_t lta, size_t ltb);
void dgetrf_(const int *m, const int *n, double *A, const int *lda, int *ipiv, int *info);
void sgetrf_(const int *m, const int *n, float *A, const int *lda, int *ipiv, int *info);
void dgetrs_(const char *tr, const int *n, const int *nrhs, const double *A, const int *lda,
             const int *ipiv, double *B, const int *ldb, int *info, size_t ltr);
void sgetrs_(const char *tr, const int *n, const int *nrhs, const float *A, const int *lda,
             const int *ipiv, float *B, const int *ldb, int *info, size_t ltr);
void dgesv_(const int *n, const int *nrhs, double *A, const int *lda, int *ipiv, double *B,
            const int *ldb, int *info);
void sgesv_(const int *n, const int *nrhs, float *A, const int *lda, int *ipiv, float *B,
            const int *ldb, int *info);
void dtrsm_(const char *side, const char *uplo, const char *transa, const char *diag,
            const int *m, const int *n, const double *alpha, const double *A, const int *lda,
            double *B, const int *ldb, size_t ls, size_t lu, size_t lt, size_t ld);
void strsm_(const char *side, const char *uplo, const char *transa, const char *diag,
            const int *m, const int *n, const float *alpha, const float *A, const int *lda,
            float *B, const int *ldb, size_t ls, size_t lu, size_t lt, size_t ld);
void dsyrk_(const char *uplo, const char *trans, const int *n, const int *k,
            const double *alpha, const double *A, const int *lda, const double *beta,
            double *C, const int *ldc, size_t lu, size_t lt);
void ssyrk_(const char *uplo, const char *trans, const int *n, const int *k,
            const float *alpha, const float *A, const int *lda, const float *beta, float *C,
            const int *ldc, size_t lu, size_t lt);
void cblas_dgemm(int layout, int ta, int tb, int m, int n, int k, double alpha,
                 const double *A, int lda, const double *B, int ldb, double beta, double *C,
                 int ldc);
void cblas_dsyrk(int layout, int uplo, int trans, int n, int k, double alpha, const double *A,
                 int lda, double beta, double *C, int ldc);
void cblas_dtrsm(int layout, int side, int uplo, int transa, int diag, int m, int n,
                 double alpha, const double *A, int lda, double *B, int ldb);
void cblas_sgemm(int layout, int ta, int tb, int m, int n, int k, float alpha, const float *A,
                 int lda, const float *B, int ldb, float beta, float *C, int ldc);

static int failures;
static long long expect_protected, expect_passed;

#define CHECK(cond, ...)                                                                     \
    do {                                                                                     \
        if (!(cond)) {                                                                       \
            ++failures;                                                                      \
            printf("FAIL %s:%d: ", __FILE__, __LINE__);                                      \
            printf(__VA_ARGS__);                                                             \
            printf("\n");                                                                    \
        }                                                                                    \
    } while (0)

/* ---- xerbla_ of this program (the one the library must call) ------------------------- */

static char xerbla_name[7];
static int xerbla_info, xerbla_calls;

void xerbla_(const char *srname, const int *info, size_t len) {
    size_t n = len < 6 ? len : 6;
    memset(xerbla_name, 0, sizeof xerbla_name);
    memcpy(xerbla_name, srname, n);
    for (int i = (int)n - 1; i >= 0 && xerbla_name[i] == ' '; --i) xerbla_name[i] = '\0';
    xerbla_info = *info;
    ++xerbla_calls;
}

static void expect_xerbla(const char *name, int info, const char *what) {
    CHECK(xerbla_calls == 1 && strcmp(xerbla_name, name) == 0 && xerbla_info == info,
          "%s: xerbla_ called %d times, last with %s %d; expected %s %d", what, xerbla_calls,
          xerbla_name, xerbla_info, name, info);
    xerbla_calls = 0;
}

/* ---- data ------------------------------------------------------------------------------ */

static uint64_t rng = 88172645463325252ull;
static double urand(void) { /* xorshift64, uniform in [-1, 1) */
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    return (double)(rng >> 11) / 9007199254740992.0 * 2.0 - 1.0;
}

/* rows x cols with leading dimension ld; the padding rows are NaN */
static double *dmat(int rows, int cols, int ld) {
    double *a = (double *)malloc(sizeof(double) * (size_t)(ld * (cols > 0 ? cols : 1)));
    for (int j = 0; j < (cols > 0 ? cols : 1); ++j)
        for (int i = 0; i < ld; ++i) a[i + j * ld] = i < rows && j < cols ? urand() : NAN;
    return a;
}

static int same_bits(const void *a, const void *b, size_t bytes) {
    return memcmp(a, b, bytes) == 0;
}

static double *dup(const double *a, size_t n) {
    double *b = (double *)malloc(sizeof(double) * n);
    memcpy(b, a, sizeof(double) * n);
    return b;
}

/* ---- GEMM -------------------------------------------------------------------------------- */

/* C = alpha·op(A)·op(B) + beta·C in long double, the reference of the checks */
static void ref_gemm(char ta, char tb, int m, int n, int k, double alpha, const double *A,
                     int lda, const double *B, int ldb, double beta, double *C, int ldc) {
    for (int j = 0; j < n; ++j)
        for (int i = 0; i < m; ++i) {
            long double s = 0;
            if (alpha != 0.0)
                for (int l = 0; l < k; ++l) {
                    double a = ta == 'N' ? A[i + l * lda] : A[l + i * lda];
                    double b = tb == 'N' ? B[l + j * ldb] : B[j + l * ldb];
                    s += (long double)a * b;
                }
            double c = beta == 0.0 ? 0.0 : beta * C[i + j * ldc];
            C[i + j * ldc] = alpha == 0.0 ? c : (double)(alpha * s + c);
        }
}

static void test_gemm_combinations(void) {
    const char tr[2] = {'N', 'T'};
    const double alphas[3] = {1.0, -0.7, 0.0}, betas[3] = {0.0, 1.0, 1.3};
    const int m = 13, n = 9, k = 11;
    for (int a = 0; a < 2; ++a)
        for (int b = 0; b < 2; ++b)
            for (int ia = 0; ia < 3; ++ia)
                for (int ib = 0; ib < 3; ++ib) {
                    char ta = tr[a], tb = tr[b];
                    double alpha = alphas[ia], beta = betas[ib];
                    int ar = ta == 'N' ? m : k, ac = ta == 'N' ? k : m;
                    int br = tb == 'N' ? k : n, bc = tb == 'N' ? n : k;
                    int lda = ar + 3, ldb = br + 2, ldc = m + 4;
                    double *A = dmat(ar, ac, lda), *B = dmat(br, bc, ldb), *C = dmat(m, n, ldc);
                    if (beta == 0.0) /* beta = 0: C is not read */
                        for (int j = 0; j < n; ++j)
                            for (int i = 0; i < m; ++i) C[i + j * ldc] = NAN;
                    double *A0 = dup(A, (size_t)lda * ac), *B0 = dup(B, (size_t)ldb * bc);
                    double *R = dup(C, (size_t)ldc * n), *C0 = dup(C, (size_t)ldc * n);
                    ref_gemm(ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, R, ldc);
                    /* lower case and the hidden lengths of a Fortran caller */
                    char la = (char)(ta | 0x20), lb = (char)(tb | 0x20);
                    dgemm_(&la, &lb, &m, &n, &k, &alpha, A, &lda, B, &ldb, &beta, C, &ldc, 1, 1);
                    if (alpha != 0.0) ++expect_protected;
                    else if (beta != 1.0) ++expect_passed; /* else a quick return */
                    double err = 0;
                    int pad_ok = 1;
                    for (int j = 0; j < n; ++j)
                        for (int i = 0; i < ldc; ++i) {
                            if (i < m) err = fmax(err, fabs(C[i + j * ldc] - R[i + j * ldc]));
                            else pad_ok &= isnan(C[i + j * ldc]) && same_bits(&C[i + j * ldc],
                                                                              &C0[i + j * ldc],
                                                                              sizeof(double));
                        }
                    CHECK(err <= 1e-13 && !isnan(err), "dgemm %c%c alpha %g beta %g: error %g",
                          ta, tb, alpha, beta, err);
                    CHECK(pad_ok, "dgemm %c%c alpha %g beta %g: padding of C written", ta, tb,
                          alpha, beta);
                    CHECK(same_bits(A, A0, sizeof(double) * (size_t)lda * ac) &&
                              same_bits(B, B0, sizeof(double) * (size_t)ldb * bc),
                          "dgemm %c%c: an input was modified", ta, tb);
                    free(A), free(B), free(C), free(A0), free(B0), free(R), free(C0);
                }
}

static void test_gemm_not_referenced(void) {
    const int m = 6, n = 5, k = 4, ld = 8;
    double *C = dmat(m, n, ld), *C0 = dup(C, (size_t)ld * n);
    double *nanA = dmat(0, k, ld); /* all NaN */
    double *nanB = dmat(0, n, ld);
    double zero = 0.0, half = 0.5, one = 1.0;
    /* alpha = 0: A and B not referenced, C = beta·C */
    dgemm_("N", "N", &m, &n, &k, &zero, nanA, &ld, nanB, &ld, &half, C, &ld, 1, 1);
    ++expect_passed;
    int ok = 1;
    for (int j = 0; j < n; ++j)
        for (int i = 0; i < m; ++i) ok &= C[i + j * ld] == 0.5 * C0[i + j * ld];
    CHECK(ok, "alpha = 0: C != beta·C");
    /* k = 0: A and B not referenced (NULL), C = beta·C */
    memcpy(C, C0, sizeof(double) * (size_t)ld * n);
    const int k0 = 0, one_ld = 1;
    dgemm_("N", "N", &m, &n, &k0, &one, NULL, &ld, NULL, &one_ld, &half, C, &ld, 1, 1);
    ++expect_passed;
    ok = 1;
    for (int j = 0; j < n; ++j)
        for (int i = 0; i < m; ++i) ok &= C[i + j * ld] == 0.5 * C0[i + j * ld];
    CHECK(ok, "k = 0: C != beta·C");
    /* alpha = 0, beta = 1: a quick return, C untouched */
    memcpy(C, C0, sizeof(double) * (size_t)ld * n);
    dgemm_("N", "N", &m, &n, &k, &zero, nanA, &ld, nanB, &ld, &one, C, &ld, 1, 1);
    CHECK(same_bits(C, C0, sizeof(double) * (size_t)ld * n), "alpha = 0, beta = 1: C written");
    /* alpha = 0, beta = 0: C = 0 even where it held NaN */
    for (int j = 0; j < n; ++j)
        for (int i = 0; i < m; ++i) C[i + j * ld] = NAN;
    dgemm_("N", "N", &m, &n, &k, &zero, nanA, &ld, nanB, &ld, &zero, C, &ld, 1, 1);
    ++expect_passed;
    ok = 1;
    for (int j = 0; j < n; ++j)
        for (int i = 0; i < m; ++i) ok &= C[i + j * ld] == 0.0;
    CHECK(ok, "alpha = 0, beta = 0: C != 0");
    /* a NaN in A with beta = 1 propagates as in the BLAS (passed through, not refused) */
    double *A = dmat(m, k, ld), *B = dmat(k, n, ld);
    A[2] = NAN;
    memcpy(C, C0, sizeof(double) * (size_t)ld * n);
    dgemm_("N", "N", &m, &n, &k, &one, A, &ld, B, &ld, &one, C, &ld, 1, 1);
    ++expect_passed;
    CHECK(isnan(C[2]) && !isnan(C[0]) && !isnan(C[1]), "NaN in A(2,0): row 2 of C not NaN");
    free(C), free(C0), free(nanA), free(nanB), free(A), free(B);
}

static void test_gemm_errors(void) {
    double A[16] = {0}, B[16] = {0}, C[16], C0[16], one = 1.0;
    for (int i = 0; i < 16; ++i) C[i] = C0[i] = i;
    int m = 2, n = 2, k = 2, ld = 2, bad = -1, ld1 = 1;
    xerbla_calls = 0;
    dgemm_("X", "N", &m, &n, &k, &one, A, &ld, B, &ld, &one, C, &ld, 1, 1);
    expect_xerbla("DGEMM", 1, "transa = X");
    dgemm_("N", "Y", &m, &n, &k, &one, A, &ld, B, &ld, &one, C, &ld, 1, 1);
    expect_xerbla("DGEMM", 2, "transb = Y");
    dgemm_("N", "N", &bad, &n, &k, &one, A, &ld, B, &ld, &one, C, &ld, 1, 1);
    expect_xerbla("DGEMM", 3, "m < 0");
    dgemm_("N", "N", &m, &bad, &k, &one, A, &ld, B, &ld, &one, C, &ld, 1, 1);
    expect_xerbla("DGEMM", 4, "n < 0");
    dgemm_("N", "N", &m, &n, &bad, &one, A, &ld, B, &ld, &one, C, &ld, 1, 1);
    expect_xerbla("DGEMM", 5, "k < 0");
    dgemm_("N", "N", &m, &n, &k, &one, A, &ld1, B, &ld, &one, C, &ld, 1, 1);
    expect_xerbla("DGEMM", 8, "lda < m");
    dgemm_("T", "N", &m, &n, &k, &one, A, &ld1, B, &ld, &one, C, &ld, 1, 1);
    expect_xerbla("DGEMM", 8, "lda < k (transa = T)");
    dgemm_("N", "N", &m, &n, &k, &one, A, &ld, B, &ld1, &one, C, &ld, 1, 1);
    expect_xerbla("DGEMM", 10, "ldb < k");
    dgemm_("N", "C", &m, &n, &k, &one, A, &ld, B, &ld1, &one, C, &ld, 1, 1);
    expect_xerbla("DGEMM", 10, "ldb < n (transb = C)");
    dgemm_("N", "N", &m, &n, &k, &one, A, &ld, B, &ld, &one, C, &ld1, 1, 1);
    expect_xerbla("DGEMM", 13, "ldc < m");
    /* the first bad parameter wins */
    dgemm_("N", "N", &m, &bad, &k, &one, A, &ld1, B, &ld, &one, C, &ld1, 1, 1);
    expect_xerbla("DGEMM", 4, "n < 0 and lda, ldc bad");
    float sA[4] = {0}, sB[4] = {0}, sC[4] = {0}, sone = 1.0f;
    sgemm_("N", "N", &m, &n, &k, &sone, sA, &ld, sB, &ld, &sone, sC, &ld1, 1, 1);
    expect_xerbla("SGEMM", 13, "sgemm ldc < m");
    CHECK(same_bits(C, C0, sizeof C), "dgemm with bad arguments wrote C");
    /* m = 0 with lda = 1: valid, nothing to do */
    int zero = 0;
    dgemm_("N", "N", &zero, &n, &k, &one, A, &ld1, B, &ld, &one, C, &ld1, 1, 1);
    CHECK(xerbla_calls == 0 && same_bits(C, C0, sizeof C), "m = 0: not a quick return");
    xerbla_calls = 0;
}

static void test_sgemm(void) {
    const int m = 17, n = 12, k = 33, lda = 20, ldb = 40, ldc = 18;
    float *A = (float *)malloc(sizeof(float) * lda * k), *B = (float *)malloc(sizeof(float) * ldb * n);
    float *C = (float *)malloc(sizeof(float) * ldc * n);
    for (int i = 0; i < lda * k; ++i) A[i] = i % lda < m ? (float)urand() : NAN;
    for (int i = 0; i < ldb * n; ++i) B[i] = i % ldb < k ? (float)urand() : NAN;
    for (int i = 0; i < ldc * n; ++i) C[i] = NAN;
    float alpha = 1.5f, beta = 0.0f;
    sgemm_("N", "N", &m, &n, &k, &alpha, A, &lda, B, &ldb, &beta, C, &ldc, 1, 1);
    ++expect_protected;
    double err = 0;
    for (int j = 0; j < n; ++j)
        for (int i = 0; i < m; ++i) {
            double s = 0;
            for (int l = 0; l < k; ++l) s += (double)A[i + l * lda] * B[l + j * ldb];
            err = fmax(err, fabs(C[i + j * ldc] - alpha * s));
        }
    CHECK(err < 1e-4, "sgemm: error %g", err);
    free(A), free(B), free(C);
}

/* ---- CBLAS ------------------------------------------------------------------------------ */

static void test_cblas(void) {
    enum { ROW = 101, COL = 102, NT = 111, TR = 112 };
    const int m = 7, n = 5, k = 6;
    for (int layout = ROW; layout <= COL; ++layout)
        for (int ta = NT; ta <= TR; ++ta)
            for (int tb = NT; tb <= TR; ++tb) {
                /* logical op(A) m x k, op(B) k x n, C m x n; stored per layout */
                int row = layout == ROW;
                int ar = ta == NT ? m : k, ac = ta == NT ? k : m;
                int br = tb == NT ? k : n, bc = tb == NT ? n : k;
                int lda = (row ? ac : ar) + 1, ldb = (row ? bc : br) + 2;
                int ldc = (row ? n : m) + 3;
                /* a row-major r x c matrix is a column-major c x r one */
                double *A = row ? dmat(ac, ar, lda) : dmat(ar, ac, lda);
                double *B = row ? dmat(bc, br, ldb) : dmat(br, bc, ldb);
                double C[64], R[64];
                for (int i = 0; i < 64; ++i) C[i] = R[i] = urand();
                /* element (i, j) of a stored matrix */
#define AT(X, ld, i, j) (*(row ? &(X)[(i) * (ld) + (j)] : &(X)[(i) + (j) * (ld)]))
                for (int i = 0; i < m; ++i)
                    for (int j = 0; j < n; ++j) {
                        long double s = 0;
                        for (int l = 0; l < k; ++l) {
                            double a = ta == NT ? AT(A, lda, i, l) : AT(A, lda, l, i);
                            double b = tb == NT ? AT(B, ldb, l, j) : AT(B, ldb, j, l);
                            s += (long double)a * b;
                        }
                        AT(R, ldc, i, j) = (double)(0.5L * s + 2.0L * AT(R, ldc, i, j));
                    }
                cblas_dgemm(layout, ta, tb, m, n, k, 0.5, A, lda, B, ldb, 2.0, C, ldc);
                ++expect_protected;
                double err = 0;
                for (int i = 0; i < 64; ++i) err = fmax(err, fabs(C[i] - R[i]));
                CHECK(err < 1e-13, "cblas_dgemm layout %d %d %d: error %g", layout, ta, tb, err);
#undef AT
                free(A), free(B);
            }
    /* cblas_sgemm, row major, A·B^T */
    float sA[6] = {1, 2, 3, 4, 5, 6}, sB[6] = {1, 0, -1, 2, 1, 0}, sC[4] = {9, 9, 9, 9};
    cblas_sgemm(ROW, NT, TR, 2, 2, 3, 1.0f, sA, 3, sB, 3, 0.0f, sC, 2);
    ++expect_protected;
    CHECK(sC[0] == -2 && sC[1] == 4 && sC[2] == -2 && sC[3] == 13,
          "cblas_sgemm row major: %g %g %g %g", sC[0], sC[1], sC[2], sC[3]);
}

/* cblas_dsyrk and cblas_dtrsm in both layouts against the same products element by element */
static void test_cblas_l3(void) {
    enum { ROW = 101, COL = 102, NT = 111, TR = 112, UP = 121, LO = 122, NONUNIT = 131,
           LEFT = 141, RIGHT = 142 };
    const int n = 6, k = 5;
    for (int layout = ROW; layout <= COL; ++layout)
        for (int uplo = UP; uplo <= LO; ++uplo)
            for (int trans = NT; trans <= TR; ++trans) {
                const int row = layout == ROW;
                /* logical op(A) n x k; A stored per layout */
                const int ar = trans == NT ? n : k, ac = trans == NT ? k : n;
                const int lda = (row ? ac : ar) + 1, ldc = n + 2;
                double *A = row ? dmat(ac, ar, lda) : dmat(ar, ac, lda);
                double C[64], C0[64];
                for (int i = 0; i < 64; ++i) C[i] = C0[i] = urand();
#define AT(X, ld, i, j) (*(row ? &(X)[(i) * (ld) + (j)] : &(X)[(i) + (j) * (ld)]))
                cblas_dsyrk(layout, uplo, trans, n, k, 0.5, A, lda, 2.0, C, ldc);
                ++expect_protected;
                double err = 0;
                int other_ok = 1;
                for (int i = 0; i < n; ++i)
                    for (int j = 0; j < n; ++j) {
                        const int in = uplo == UP ? i <= j : i >= j;
                        if (!in) {
                            other_ok &= AT(C, ldc, i, j) == AT(C0, ldc, i, j);
                            continue;
                        }
                        long double s = 0;
                        for (int l = 0; l < k; ++l) {
                            double a = trans == NT ? AT(A, lda, i, l) : AT(A, lda, l, i);
                            double b = trans == NT ? AT(A, lda, j, l) : AT(A, lda, l, j);
                            s += (long double)a * b;
                        }
                        err = fmax(err, fabs(AT(C, ldc, i, j) -
                                             (double)(0.5L * s + 2.0L * AT(C0, ldc, i, j))));
                    }
                CHECK(err < 1e-13 && other_ok, "cblas_dsyrk layout %d uplo %d trans %d: error "
                      "%g, other triangle %s", layout, uplo, trans, err,
                      other_ok ? "kept" : "written");
                free(A);
            }
    const int m = 7, nb = 4;
    for (int layout = ROW; layout <= COL; ++layout)
        for (int side = LEFT; side <= RIGHT; ++side)
            for (int uplo = UP; uplo <= LO; ++uplo)
                for (int trans = NT; trans <= TR; ++trans) {
                    const int row = layout == ROW, N = side == LEFT ? m : nb;
                    const int lda = N + 1, ldb = (row ? nb : m) + 2;
                    double *A = dmat(N, N, lda);
                    for (int i = 0; i < N; ++i) A[i + i * lda] += 4.0; /* either layout */
                    double B[128], X[128];
                    for (int i = 0; i < 128; ++i) B[i] = X[i] = urand();
                    cblas_dtrsm(layout, side, uplo, trans, NONUNIT, m, nb, 0.5, A, lda, X, ldb);
                    ++expect_protected;
                    /* op(A) as the layout reads it, the other triangle zero */
#define TA(i, j)                                                                               \
    (((uplo == UP) == (trans == NT) ? (i) <= (j) : (i) >= (j))                                  \
         ? (trans == NT ? AT(A, lda, i, j) : AT(A, lda, j, i))                                  \
         : 0.0)
                    double res = 0;
                    for (int i = 0; i < m; ++i)
                        for (int j = 0; j < nb; ++j) {
                            long double sum = 0;
                            for (int l = 0; l < N; ++l)
                                sum += side == LEFT ? (long double)TA(i, l) * AT(X, ldb, l, j)
                                                    : (long double)AT(X, ldb, i, l) * TA(l, j);
                            res = fmax(res, fabs((double)sum - 0.5 * AT(B, ldb, i, j)));
                        }
                    CHECK(res < 1e-12, "cblas_dtrsm layout %d side %d uplo %d trans %d: "
                          "residual %g", layout, side, uplo, trans, res);
#undef TA
#undef AT
                    free(A);
                }
}

/* ---- LU ---------------------------------------------------------------------------------- */

static void test_getrf_getrs(void) {
    const int n = 40, lda = 45, nrhs = 3, ldb = 41;
    double *A = dmat(n, n, lda), *F = dup(A, (size_t)lda * n);
    int ipiv[40], info = -7;
    dgetrf_(&n, &n, F, &lda, ipiv, &info);
    ++expect_protected;
    CHECK(info == 0, "dgetrf info %d", info);
    /* P·A = L·U: apply the interchanges to a copy of A and compare with L·U */
    double *PA = dup(A, (size_t)lda * n);
    for (int i = 0; i < n; ++i) {
        CHECK(ipiv[i] >= i + 1 && ipiv[i] <= n, "ipiv[%d] = %d", i, ipiv[i]);
        int p = ipiv[i] - 1;
        if (p != i)
            for (int j = 0; j < n; ++j) {
                double t = PA[i + j * lda];
                PA[i + j * lda] = PA[p + j * lda], PA[p + j * lda] = t;
            }
    }
    double err = 0;
    for (int j = 0; j < n; ++j)
        for (int i = 0; i < n; ++i) {
            double s = 0;
            for (int l = 0; l <= (i < j ? i : j); ++l)
                s += (l == i ? 1.0 : F[i + l * lda]) * F[l + j * lda];
            err = fmax(err, fabs(s - PA[i + j * lda]));
        }
    CHECK(err < 1e-12, "dgetrf: |P·A - L·U| = %g", err);
    int pad_ok = 1;
    for (int j = 0; j < n; ++j)
        for (int i = n; i < lda; ++i) pad_ok &= isnan(F[i + j * lda]);
    CHECK(pad_ok, "dgetrf wrote the padding");
    /* solve A·X = B and A^T·X = B */
    for (int t = 0; t < 2; ++t) {
        const char tr = t ? 'T' : 'N';
        double *B = dmat(n, nrhs, ldb), *X = dup(B, (size_t)ldb * nrhs);
        double *F0 = dup(F, (size_t)lda * n);
        dgetrs_(&tr, &n, &nrhs, F, &lda, ipiv, X, &ldb, &info, 1);
        ++expect_protected;
        CHECK(info == 0, "dgetrs info %d", info);
        CHECK(same_bits(F, F0, sizeof(double) * (size_t)lda * n), "dgetrs modified A");
        double res = 0;
        for (int j = 0; j < nrhs; ++j)
            for (int i = 0; i < n; ++i) {
                double s = 0;
                for (int l = 0; l < n; ++l)
                    s += (t ? A[l + i * lda] : A[i + l * lda]) * X[l + j * ldb];
                res = fmax(res, fabs(s - B[i + j * ldb]));
            }
        CHECK(res < 1e-10, "dgetrs %c: residual %g", tr, res);
        free(B), free(X), free(F0);
    }
    /* a singular matrix: column 3 zero -> info = 4, the factors still returned */
    double *S = dmat(n, n, lda);
    for (int i = 0; i < n; ++i) S[i + 3 * lda] = 0.0;
    dgetrf_(&n, &n, S, &lda, ipiv, &info);
    ++expect_protected;
    CHECK(info == 4, "singular dgetrf: info %d, expected 4", info);
    /* sgetrf + sgetrs on a rectangular-free square system */
    float sA[25], sF[25], sb[5], sx[5];
    for (int i = 0; i < 25; ++i) sA[i] = sF[i] = (float)urand() + (i % 6 == 0 ? 4.0f : 0.0f);
    for (int i = 0; i < 5; ++i) sb[i] = sx[i] = (float)urand();
    const int five = 5, onei = 1;
    int sp[5];
    sgetrf_(&five, &five, sF, &five, sp, &info);
    ++expect_protected;
    CHECK(info == 0, "sgetrf info %d", info);
    sgetrs_("N", &five, &onei, sF, &five, sp, sx, &five, &info, 1);
    ++expect_protected;
    double sres = 0;
    for (int i = 0; i < 5; ++i) {
        double s = 0;
        for (int l = 0; l < 5; ++l) s += (double)sA[i + l * 5] * sx[l];
        sres = fmax(sres, fabs(s - sb[i]));
    }
    CHECK(info == 0 && sres < 1e-4, "sgetrs: info %d residual %g", info, sres);
    /* errors */
    int bad = -1, one = 1, two = 2;
    xerbla_calls = 0;
    dgetrf_(&bad, &n, A, &lda, ipiv, &info);
    CHECK(info == -1, "dgetrf m < 0: info %d", info);
    expect_xerbla("DGETRF", 1, "dgetrf m < 0");
    dgetrf_(&n, &bad, A, &lda, ipiv, &info);
    expect_xerbla("DGETRF", 2, "dgetrf n < 0");
    dgetrf_(&two, &two, A, &one, ipiv, &info);
    CHECK(info == -4, "dgetrf lda < m: info %d", info);
    expect_xerbla("DGETRF", 4, "dgetrf lda < m");
    sgetrf_(&two, &two, sA, &one, sp, &info);
    expect_xerbla("SGETRF", 4, "sgetrf lda < m");
    double b2[4];
    dgetrs_("/", &two, &one, A, &two, ipiv, b2, &two, &info, 1);
    CHECK(info == -1, "dgetrs trans: info %d", info);
    expect_xerbla("DGETRS", 1, "dgetrs trans = /");
    dgetrs_("N", &bad, &one, A, &two, ipiv, b2, &two, &info, 1);
    expect_xerbla("DGETRS", 2, "dgetrs n < 0");
    dgetrs_("N", &two, &bad, A, &two, ipiv, b2, &two, &info, 1);
    expect_xerbla("DGETRS", 3, "dgetrs nrhs < 0");
    dgetrs_("N", &two, &one, A, &one, ipiv, b2, &two, &info, 1);
    expect_xerbla("DGETRS", 5, "dgetrs lda < n");
    dgetrs_("N", &two, &one, A, &two, ipiv, b2, &one, &info, 1);
    CHECK(info == -8, "dgetrs ldb < n: info %d", info);
    expect_xerbla("DGETRS", 8, "dgetrs ldb < n");
    /* quick returns */
    int zero = 0;
    dgetrf_(&zero, &n, A, &one, ipiv, &info);
    CHECK(info == 0 && xerbla_calls == 0, "dgetrf m = 0: info %d", info);
    dgetrs_("N", &n, &zero, F, &lda, ipiv, b2, &lda, &info, 1);
    CHECK(info == 0 && xerbla_calls == 0, "dgetrs nrhs = 0: info %d", info);
    free(A), free(F), free(PA), free(S);
}

/* ---- GESV -------------------------------------------------------------------------------- */

static void test_gesv(void) {
    const int n = 37, lda = 40, nrhs = 4, ldb = 39;
    double *A = dmat(n, n, lda), *F = dup(A, (size_t)lda * n);
    double *B = dmat(n, nrhs, ldb), *X = dup(B, (size_t)ldb * nrhs);
    int ipiv[37], info = -7;
    dgesv_(&n, &nrhs, F, &lda, ipiv, X, &ldb, &info);
    expect_protected += 2; /* its getrf and its getrs */
    double res = 0;
    for (int j = 0; j < nrhs; ++j)
        for (int i = 0; i < n; ++i) {
            double s = 0;
            for (int l = 0; l < n; ++l) s += A[i + l * lda] * X[l + j * ldb];
            res = fmax(res, fabs(s - B[i + j * ldb]));
        }
    CHECK(info == 0 && res < 1e-10, "dgesv: info %d residual %g", info, res);
    int pad_ok = 1;
    for (int j = 0; j < nrhs; ++j)
        for (int i = n; i < ldb; ++i) pad_ok &= isnan(X[i + j * ldb]);
    CHECK(pad_ok, "dgesv wrote the padding of B");
    /* singular: info > 0 from the factorization, B untouched (no solve) */
    double *S = dmat(n, n, lda), *Y = dup(B, (size_t)ldb * nrhs);
    for (int i = 0; i < n; ++i) S[i + 5 * lda] = 0.0;
    dgesv_(&n, &nrhs, S, &lda, ipiv, Y, &ldb, &info);
    ++expect_protected;
    CHECK(info == 6, "singular dgesv: info %d, expected 6", info);
    CHECK(same_bits(Y, B, sizeof(double) * (size_t)ldb * nrhs), "singular dgesv wrote B");
    float sA[16], sF[16], sb[4], sx[4];
    for (int i = 0; i < 16; ++i) sA[i] = sF[i] = (float)urand() + (i % 5 == 0 ? 3.0f : 0.0f);
    for (int i = 0; i < 4; ++i) sb[i] = sx[i] = (float)urand();
    const int four = 4, onei = 1;
    int sp[4];
    sgesv_(&four, &onei, sF, &four, sp, sx, &four, &info);
    expect_protected += 2;
    double sres = 0;
    for (int i = 0; i < 4; ++i) {
        double s = 0;
        for (int l = 0; l < 4; ++l) s += (double)sA[i + l * 4] * sx[l];
        sres = fmax(sres, fabs(s - sb[i]));
    }
    CHECK(info == 0 && sres < 1e-4, "sgesv: info %d residual %g", info, sres);
    /* errors: N 1, NRHS 2, LDA 4, LDB 7 */
    int bad = -1, one = 1, two = 2, zero = 0;
    double b2[4];
    xerbla_calls = 0;
    dgesv_(&bad, &one, A, &lda, ipiv, b2, &two, &info);
    CHECK(info == -1, "dgesv n < 0: info %d", info);
    expect_xerbla("DGESV", 1, "dgesv n < 0");
    dgesv_(&two, &bad, A, &lda, ipiv, b2, &two, &info);
    expect_xerbla("DGESV", 2, "dgesv nrhs < 0");
    dgesv_(&two, &one, A, &one, ipiv, b2, &two, &info);
    expect_xerbla("DGESV", 4, "dgesv lda < n");
    dgesv_(&two, &one, A, &two, ipiv, b2, &one, &info);
    CHECK(info == -7, "dgesv ldb < n: info %d", info);
    expect_xerbla("DGESV", 7, "dgesv ldb < n");
    sgesv_(&two, &one, sA, &two, sp, sb, &one, &info);
    expect_xerbla("SGESV", 7, "sgesv ldb < n");
    dgesv_(&zero, &one, A, &one, ipiv, b2, &one, &info);
    CHECK(info == 0 && xerbla_calls == 0, "dgesv n = 0: info %d", info);
    free(A), free(F), free(B), free(X), free(S), free(Y);
}

/* ---- SYRK -------------------------------------------------------------------------------- */

static void test_syrk(void) {
    const char ul[2] = {'U', 'L'}, tr[3] = {'N', 'T', 'C'};
    const double alphas[3] = {1.0, -0.7, 0.0}, betas[3] = {0.0, 1.0, 1.3};
    const int n = 12, k = 9;
    for (int u = 0; u < 2; ++u)
        for (int t = 0; t < 3; ++t)
            for (int ia = 0; ia < 3; ++ia)
                for (int ib = 0; ib < 3; ++ib) {
                    const char uplo = ul[u], trans = tr[t];
                    const double alpha = alphas[ia], beta = betas[ib];
                    const int upper = uplo == 'U', nt = trans == 'N';
                    const int ar = nt ? n : k, ac = nt ? k : n, lda = ar + 2, ldc = n + 3;
                    double *A = dmat(ar, ac, lda), *C = dmat(n, n, ldc);
                    /* the other triangle: NaN, never read or written; beta = 0: the
                     * triangle NaN too (not read) */
                    for (int j = 0; j < n; ++j)
                        for (int i = 0; i < n; ++i)
                            if ((upper ? i > j : i < j) || beta == 0.0) C[i + j * ldc] = NAN;
                    double *A0 = dup(A, (size_t)lda * ac), *C0 = dup(C, (size_t)ldc * n);
                    char lu = (char)(uplo | 0x20), lt = (char)(trans | 0x20);
                    dsyrk_(&lu, &lt, &n, &k, &alpha, A, &lda, &beta, C, &ldc, 1, 1);
                    if (alpha != 0.0) ++expect_protected;
                    else if (beta != 1.0) ++expect_passed;
                    double err = 0;
                    int other_ok = 1;
                    for (int j = 0; j < n; ++j)
                        for (int i = 0; i < ldc; ++i) {
                            const size_t o = (size_t)i + (size_t)j * ldc;
                            if (i >= n || (upper ? i > j : i < j)) {
                                other_ok &= same_bits(&C[o], &C0[o], sizeof(double));
                                continue;
                            }
                            long double s = 0;
                            for (int l = 0; l < k; ++l) {
                                double a = nt ? A[i + l * lda] : A[l + i * lda];
                                double b = nt ? A[j + l * lda] : A[l + j * lda];
                                s += (long double)a * b;
                            }
                            double r = alpha * (double)s + (beta == 0.0 ? 0.0 : beta * C0[o]);
                            err = fmax(err, fabs(C[o] - r));
                        }
                    CHECK(err <= 1e-13 && !isnan(err), "dsyrk %c%c alpha %g beta %g: error %g",
                          uplo, trans, alpha, beta, err);
                    CHECK(other_ok, "dsyrk %c%c alpha %g beta %g: the other triangle or the "
                          "padding written", uplo, trans, alpha, beta);
                    CHECK(same_bits(A, A0, sizeof(double) * (size_t)lda * ac),
                          "dsyrk %c%c: A was modified", uplo, trans);
                    free(A), free(C), free(A0), free(C0);
                }
    /* ssyrk, lower, A^T·A */
    float sA[6] = {1, 2, 3, 4, 5, 6}, sC[4] = {7, -9, 1, 7};
    const int two = 2, three = 3;
    const float sone = 1.0f, szero = 0.0f;
    ssyrk_("L", "T", &two, &three, &sone, sA, &three, &szero, sC, &two, 1, 1);
    ++expect_protected;
    CHECK(sC[0] == 14 && sC[1] == 32 && sC[2] == 1 && sC[3] == 77, "ssyrk: %g %g %g %g",
          sC[0], sC[1], sC[2], sC[3]);
    /* errors: UPLO 1, TRANS 2, N 3, K 4, LDA 7, LDC 10 */
    double A[8] = {0}, C[8], one = 1.0;
    int bad = -1, one_i = 1;
    xerbla_calls = 0;
    dsyrk_("X", "N", &two, &two, &one, A, &two, &one, C, &two, 1, 1);
    expect_xerbla("DSYRK", 1, "dsyrk uplo = X");
    dsyrk_("U", "X", &two, &two, &one, A, &two, &one, C, &two, 1, 1);
    expect_xerbla("DSYRK", 2, "dsyrk trans = X");
    dsyrk_("U", "N", &bad, &two, &one, A, &two, &one, C, &two, 1, 1);
    expect_xerbla("DSYRK", 3, "dsyrk n < 0");
    dsyrk_("U", "N", &two, &bad, &one, A, &two, &one, C, &two, 1, 1);
    expect_xerbla("DSYRK", 4, "dsyrk k < 0");
    dsyrk_("U", "N", &two, &two, &one, A, &one_i, &one, C, &two, 1, 1);
    expect_xerbla("DSYRK", 7, "dsyrk lda < n");
    dsyrk_("U", "T", &two, &three, &one, A, &two, &one, C, &two, 1, 1);
    expect_xerbla("DSYRK", 7, "dsyrk lda < k (trans = T)");
    dsyrk_("U", "N", &two, &two, &one, A, &two, &one, C, &one_i, 1, 1);
    expect_xerbla("DSYRK", 10, "dsyrk ldc < n");
    ssyrk_("U", "N", &two, &two, &sone, sA, &two, &sone, sC, &one_i, 1, 1);
    expect_xerbla("SSYRK", 10, "ssyrk ldc < n");
}

/* ---- TRSM -------------------------------------------------------------------------------- */

static void test_trsm(void) {
    const char sd[2] = {'L', 'R'}, ul[2] = {'U', 'L'}, tr[3] = {'N', 'T', 'C'}, dg[2] = {'N', 'U'};
    const double alphas[3] = {1.0, 0.5, 0.0};
    const int m = 11, n = 7;
    for (int s = 0; s < 2; ++s)
        for (int u = 0; u < 2; ++u)
            for (int t = 0; t < 3; ++t)
                for (int d = 0; d < 2; ++d)
                    for (int ia = 0; ia < 3; ++ia) {
                        const char side = sd[s], uplo = ul[u], transa = tr[t], diag = dg[d];
                        const double alpha = alphas[ia];
                        const int left = side == 'L', upper = uplo == 'U', nt = transa == 'N';
                        const int unit = diag == 'U', N = left ? m : n, lda = N + 2, ldb = m + 3;
                        double *A = dmat(N, N, lda), *B = dmat(m, n, ldb);
                        /* the triangle's diagonal dominant (a well-conditioned solve); the
                         * other triangle, and a unit diagonal, NaN: never read */
                        for (int j = 0; j < N; ++j)
                            for (int i = 0; i < N; ++i) {
                                double *a = &A[i + j * lda];
                                if (i == j) *a = unit ? NAN : 4.0 + *a;
                                else if (upper ? i > j : i < j) *a = NAN;
                            }
                        double *A0 = dup(A, (size_t)lda * N), *X = dup(B, (size_t)ldb * n);
                        char ls = (char)(side | 0x20), lu = (char)(uplo | 0x20);
                        char lt = (char)(transa | 0x20), ld = (char)(diag | 0x20);
                        dtrsm_(&ls, &lu, &lt, &ld, &m, &n, &alpha, A, &lda, X, &ldb, 1, 1, 1, 1);
                        if (alpha != 0.0) ++expect_protected;
                        else ++expect_passed;
                        /* op(A)·X = alpha·B or X·op(A) = alpha·B */
                        double res = 0;
                        int pad_ok = 1;
#define TA(i, j)                                                                              \
    ((i) == (j) ? (unit ? 1.0 : A[(i) + (j) * lda])                                           \
                : (nt ? (upper ? (i) < (j) : (i) > (j)) : (upper ? (j) < (i) : (j) > (i)))    \
                      ? (nt ? A[(i) + (j) * lda] : A[(j) + (i) * lda])                        \
                      : 0.0)
                        for (int j = 0; j < n; ++j)
                            for (int i = 0; i < ldb; ++i) {
                                if (i >= m) {
                                    pad_ok &= isnan(X[i + j * ldb]);
                                    continue;
                                }
                                long double sum = 0;
                                for (int l = 0; l < N; ++l)
                                    sum += left ? (long double)TA(i, l) * X[l + j * ldb]
                                                : (long double)X[i + l * ldb] * TA(l, j);
                                res = fmax(res, fabs((double)sum - alpha * B[i + j * ldb]));
                            }
#undef TA
                        CHECK(res < 1e-12 && !isnan(res),
                              "dtrsm %c%c%c%c alpha %g: residual %g", side, uplo, transa, diag,
                              alpha, res);
                        CHECK(pad_ok, "dtrsm %c%c%c%c: padding of B written", side, uplo, transa,
                              diag);
                        CHECK(same_bits(A, A0, sizeof(double) * (size_t)lda * N),
                              "dtrsm %c%c%c%c: A was modified", side, uplo, transa, diag);
                        free(A), free(B), free(A0), free(X);
                    }
    /* strsm, left lower unit: [1 0; 2 1]·X = [1; 4] -> X = [1; 2] */
    float sA[4] = {NAN, 2, NAN, NAN}, sB[2] = {1, 4};
    const int two = 2, one_i = 1;
    const float sone = 1.0f;
    strsm_("L", "L", "N", "U", &two, &one_i, &sone, sA, &two, sB, &two, 1, 1, 1, 1);
    ++expect_protected;
    CHECK(sB[0] == 1 && sB[1] == 2, "strsm: %g %g", sB[0], sB[1]);
    /* a zero on a non-unit diagonal: passed through, the BLAS's Inf/NaN */
    double Z[4] = {0, 0, 1, 1}, zb[2] = {1, 1}, one = 1.0;
    dtrsm_("L", "U", "N", "N", &two, &one_i, &one, Z, &two, zb, &two, 1, 1, 1, 1);
    ++expect_passed;
    CHECK(!isfinite(zb[0]), "dtrsm with U(0,0) = 0: x0 = %g", zb[0]);
    /* errors: SIDE 1, UPLO 2, TRANSA 3, DIAG 4, M 5, N 6, LDA 9, LDB 11 */
    double A[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1}, B[9];
    int bad = -1, three = 3;
    xerbla_calls = 0;
    dtrsm_("X", "U", "N", "N", &two, &two, &one, A, &three, B, &three, 1, 1, 1, 1);
    expect_xerbla("DTRSM", 1, "dtrsm side = X");
    dtrsm_("L", "X", "N", "N", &two, &two, &one, A, &three, B, &three, 1, 1, 1, 1);
    expect_xerbla("DTRSM", 2, "dtrsm uplo = X");
    dtrsm_("L", "U", "X", "N", &two, &two, &one, A, &three, B, &three, 1, 1, 1, 1);
    expect_xerbla("DTRSM", 3, "dtrsm transa = X");
    dtrsm_("L", "U", "N", "X", &two, &two, &one, A, &three, B, &three, 1, 1, 1, 1);
    expect_xerbla("DTRSM", 4, "dtrsm diag = X");
    dtrsm_("L", "U", "N", "N", &bad, &two, &one, A, &three, B, &three, 1, 1, 1, 1);
    expect_xerbla("DTRSM", 5, "dtrsm m < 0");
    dtrsm_("L", "U", "N", "N", &two, &bad, &one, A, &three, B, &three, 1, 1, 1, 1);
    expect_xerbla("DTRSM", 6, "dtrsm n < 0");
    dtrsm_("R", "U", "N", "N", &two, &three, &one, A, &two, B, &three, 1, 1, 1, 1);
    expect_xerbla("DTRSM", 9, "dtrsm lda < n (side = R)");
    dtrsm_("L", "U", "N", "N", &three, &two, &one, A, &three, B, &two, 1, 1, 1, 1);
    expect_xerbla("DTRSM", 11, "dtrsm ldb < m");
    strsm_("L", "U", "N", "N", &two, &two, &sone, sA, &one_i, sB, &two, 1, 1, 1, 1);
    expect_xerbla("STRSM", 9, "strsm lda < m");
}

/* ---- threads ----------------------------------------------------------------------------- */

enum { NTHREADS = 4, NCALLS = 10 };

static void *thread_main(void *arg) {
    int id = (int)(intptr_t)arg, m = 24 + id, n = 20, k = 31, bad = 0;
    double *A = (double *)malloc(sizeof(double) * m * k), *B = (double *)malloc(sizeof(double) * k * n);
    double *C = (double *)malloc(sizeof(double) * m * n);
    for (int i = 0; i < m * k; ++i) A[i] = (double)((i * 7 + id) % 13) - 6.0;
    for (int i = 0; i < k * n; ++i) B[i] = (double)((i * 5 + id) % 11) - 5.0;
    double one = 1.0, zero = 0.0;
    for (int c = 0; c < NCALLS; ++c) {
        dgemm_("N", "N", &m, &n, &k, &one, A, &m, B, &k, &zero, C, &m, 1, 1);
        for (int j = 0; j < n; ++j)
            for (int i = 0; i < m; ++i) {
                double s = 0;
                for (int l = 0; l < k; ++l) s += A[i + l * m] * B[l + j * k];
                bad += C[i + j * m] != s; /* small integers: exact */
            }
    }
    free(A), free(B), free(C);
    return (void *)(intptr_t)bad;
}

static void test_threads(void) {
    pthread_t th[NTHREADS];
    for (int i = 0; i < NTHREADS; ++i)
        pthread_create(&th[i], NULL, thread_main, (void *)(intptr_t)i);
    for (int i = 0; i < NTHREADS; ++i) {
        void *r;
        pthread_join(th[i], &r);
        CHECK(r == NULL, "thread %d: %d wrong elements", i, (int)(intptr_t)r);
    }
    expect_protected += NTHREADS * NCALLS;
}

int main(void) {
    test_gemm_errors();
    test_gemm_combinations();
    test_gemm_not_referenced();
    test_sgemm();
    test_cblas();
    test_cblas_l3();
    test_getrf_getrs();
    test_gesv();
    test_syrk();
    test_trsm();
    test_threads();
    printf("expect protected=%lld passed_through=%lld\n", expect_protected, expect_passed);
    printf("test_dropin_semantics: %s (%d failures)\n", failures ? "FAILED" : "passed",
           failures);
    return failures ? 1 : 0;
}
