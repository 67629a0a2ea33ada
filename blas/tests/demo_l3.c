/* A plain program that calls the Fortran BLAS/LAPACK dsyrk_, dtrsm_ and dgesv_ and nothing
 * of abft (docs/dropin.md, "SYRK and TRSM"). Under LD_PRELOAD=libabft_blas.so with
 * ABFT_BLAS_INJECT=call=1,... (the SYRK) or call=2,... (the TRSM) the flip lands in the
 * result after the routine; the check flags it, the recompute action runs the call again
 * and the program still sees correct results. Exits 1 when a result is wrong: the SYRK
 * exactly (small integers), the TRSM and the solve by their residuals.
 * Usage: demo_l3 [n [beta]] (default 150 0): C = A·A^T + beta·C on the upper triangle
 * (A n x (n - 30)), then L·X = 0.5·B (L n x n lower, B n x 30), then A2·x = b. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

void dsyrk_(const char *uplo, const char *trans, const int *n, const int *k,
            const double *alpha, const double *A, const int *lda, const double *beta,
            double *C, const int *ldc);
void dtrsm_(const char *side, const char *uplo, const char *transa, const char *diag,
            const int *m, const int *n, const double *alpha, const double *A, const int *lda,
            double *B, const int *ldb);
void dgesv_(const int *n, const int *nrhs, double *A, const int *lda, int *ipiv, double *B,
            const int *ldb, int *info);

int main(int argc, char **argv) {
    int n = argc > 1 ? atoi(argv[1]) : 150;
    const double beta = argc > 2 ? atof(argv[2]) : 0.0;
    if (n < 40) n = 40;
    const int k = n - 30, r = 30;
    double *A = malloc(sizeof(double) * n * k), *C = malloc(sizeof(double) * n * n);
    double *L = malloc(sizeof(double) * n * n), *B = malloc(sizeof(double) * n * r);
    double *X = malloc(sizeof(double) * n * r), *F = malloc(sizeof(double) * n * n);
    double *b = malloc(sizeof(double) * n), *x = malloc(sizeof(double) * n);
    int *ipiv = malloc(sizeof(int) * n);
    if (!A || !C || !L || !B || !X || !F || !b || !x || !ipiv) return 2;
    for (int i = 0; i < n * k; ++i) A[i] = (double)((i * 7 + i / n * 3) % 9) - 4.0;
    for (int i = 0; i < n * n; ++i) C[i] = (double)(i % 5) - 2.0;
    /* SYRK: exact in integers */
    const double one = 1.0;
    dsyrk_("U", "N", &n, &k, &one, A, &n, &beta, C, &n);
    long wrong = 0;
    for (int j = 0; j < n; ++j)
        for (int i = 0; i <= j; ++i) {
            double s = beta == 0.0 ? 0.0 : beta * (double)((i + j * n) % 5 - 2);
            for (int l = 0; l < k; ++l) s += A[i + l * n] * A[j + l * n];
            wrong += C[i + j * n] != s;
        }
    /* TRSM: lower, non-unit, alpha = 0.5 */
    unsigned s = 12345u;
    for (int j = 0; j < n; ++j)
        for (int i = 0; i < n; ++i) {
            s = s * 1664525u + 1013904223u;
            double v = (double)(s >> 8) / 16777216.0 - 0.5;
            L[i + j * n] = i < j ? 1e300 : i == j ? 4.0 + v : v; /* upper part: never read */
            F[i + j * n] = v + (i == j ? 2.0 : 0.0);
        }
    for (int i = 0; i < n * r; ++i) B[i] = X[i] = (double)(i % 11) - 5.0;
    const double half = 0.5;
    dtrsm_("L", "L", "N", "N", &n, &r, &half, L, &n, X, &n);
    double res = 0, xmax = 0;
    for (int j = 0; j < r; ++j)
        for (int i = 0; i < n; ++i) {
            double t = -0.5 * B[i + j * n];
            for (int l = 0; l <= i; ++l) t += L[i + l * n] * X[l + j * n];
            res = fmax(res, fabs(t));
            xmax = fmax(xmax, fabs(X[i + j * n]));
        }
    const double trsm_rel = res / (xmax * 4.5 * n);
    /* GESV */
    double *F0 = malloc(sizeof(double) * n * n);
    if (F0 == NULL) return 2;
    for (int i = 0; i < n * n; ++i) F0[i] = F[i];
    for (int i = 0; i < n; ++i) b[i] = x[i] = (double)(i % 9) - 4.0;
    int info = 0, nr = 1;
    dgesv_(&n, &nr, F, &n, ipiv, x, &n, &info);
    double gres = 0, gx = 0, amax = 0;
    for (int i = 0; i < n; ++i) {
        double t = -b[i];
        for (int j = 0; j < n; ++j) t += F0[i + j * n] * x[j];
        gres = fmax(gres, fabs(t));
        gx = fmax(gx, fabs(x[i]));
    }
    for (int i = 0; i < n * n; ++i) amax = fmax(amax, fabs(F0[i]));
    const double gesv_rel = gres / (amax * gx * n);
    printf("demo_l3: n = %d, beta = %g: dsyrk %ld wrong elements, dtrsm relative residual "
           "%.3g, dgesv info %d relative residual %.3g\n",
           n, beta, wrong, trsm_rel, info, gesv_rel);
    free(A), free(C), free(L), free(B), free(X), free(F), free(F0), free(b), free(x), free(ipiv);
    return wrong == 0 && trsm_rel <= 1e-14 && info == 0 && gesv_rel <= 1e-14 ? 0 : 1;
}
