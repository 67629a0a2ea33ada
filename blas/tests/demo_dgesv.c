/* A plain program that solves A·x = b with LAPACK's dgetrf_ and dgetrs_ and nothing of
 * abft (docs/dropin.md). Under LD_PRELOAD=libabft_blas.so with ABFT_BLAS_INJECT=call=1,...
 * the flip lands in the LU factors after dgetrf_; the check corrects it and the solution is
 * right. Exits 1 when the residual max|A·x - b| / (max|A|·max|x|·n) exceeds 1e-12.
 * Usage: demo_dgesv [n] (default 300). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void dgetrf_(const int *m, const int *n, double *A, const int *lda, int *ipiv, int *info);
void dgetrs_(const char *tr, const int *n, const int *nrhs, const double *A, const int *lda,
             const int *ipiv, double *B, const int *ldb, int *info);

int main(int argc, char **argv) {
    int n = argc > 1 ? atoi(argv[1]) : 300;
    if (n < 4) n = 4;
    double *A = malloc(sizeof(double) * n * n), *F = malloc(sizeof(double) * n * n);
    double *b = malloc(sizeof(double) * n), *x = malloc(sizeof(double) * n);
    int *ipiv = malloc(sizeof(int) * n);
    if (A == NULL || F == NULL || b == NULL || x == NULL || ipiv == NULL) return 2;
    unsigned s = 12345u;
    for (int i = 0; i < n * n; ++i) {
        s = s * 1664525u + 1013904223u;
        A[i] = (double)(s >> 8) / 16777216.0 - 0.5;
    }
    for (int i = 0; i < n; ++i) b[i] = x[i] = (double)(i % 9) - 4.0;
    memcpy(F, A, sizeof(double) * n * n);
    int info = 0, one = 1;
    dgetrf_(&n, &n, F, &n, ipiv, &info);
    if (info != 0) {
        printf("demo_dgesv: dgetrf info %d\n", info);
        return 1;
    }
    dgetrs_("N", &n, &one, F, &n, ipiv, x, &n, &info);
    double res = 0, amax = 0, xmax = 0;
    for (int i = 0; i < n; ++i) {
        double r = -b[i];
        for (int j = 0; j < n; ++j) r += A[i + j * n] * x[j];
        res = fmax(res, fabs(r));
        xmax = fmax(xmax, fabs(x[i]));
    }
    for (int i = 0; i < n * n; ++i) amax = fmax(amax, fabs(A[i]));
    double rel = res / (amax * xmax * n);
    printf("demo_dgesv: n = %d, info %d, relative residual %.3g\n", n, info, rel);
    free(A), free(F), free(b), free(x), free(ipiv);
    return info == 0 && rel <= 1e-12 ? 0 : 1;
}
