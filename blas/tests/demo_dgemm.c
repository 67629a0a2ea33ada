/* A plain program that calls the Fortran BLAS dgemm_ and nothing of abft: the drop-in
 * demonstration (docs/dropin.md). Run under LD_PRELOAD=libabft_blas.so with
 * ABFT_BLAS_INJECT, the fault flipped into C after the product is detected and corrected,
 * and the program still prints a correct result. It checks C against a plain loop and exits
 * 1 when any element differs (the inputs are small integers: every product is exact).
 * Usage: demo_dgemm [n] (default 200). beta = 0: with row checksums a corrected element is
 * confirmed by recomputing it. */
#include <stdio.h>
#include <stdlib.h>

void dgemm_(const char *ta, const char *tb, const int *m, const int *n, const int *k,
            const double *alpha, const double *A, const int *lda, const double *B,
            const int *ldb, const double *beta, double *C, const int *ldc);

int main(int argc, char **argv) {
    int n = argc > 1 ? atoi(argv[1]) : 200;
    if (n < 3) n = 3;
    double *A = malloc(sizeof(double) * n * n), *B = malloc(sizeof(double) * n * n);
    double *C = malloc(sizeof(double) * n * n);
    if (A == NULL || B == NULL || C == NULL) return 2;
    for (int i = 0; i < n * n; ++i) {
        A[i] = (double)(i % 7) - 3.0;
        B[i] = (double)(i % 5) - 2.0;
        C[i] = 0.0;
    }
    const double one = 1.0, zero = 0.0;
    dgemm_("N", "N", &n, &n, &n, &one, A, &n, B, &n, &zero, C, &n);
    long wrong = 0;
    for (int j = 0; j < n; ++j)
        for (int i = 0; i < n; ++i) {
            double s = 0.0;
            for (int l = 0; l < n; ++l) s += A[i + l * n] * B[l + j * n];
            wrong += C[i + j * n] != s;
        }
    printf("demo_dgemm: n = %d, C(1,2) = %g, %ld wrong elements\n", n, C[1 + 2 * n], wrong);
    free(A), free(B), free(C);
    return wrong == 0 ? 0 : 1;
}
