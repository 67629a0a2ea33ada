/* A plain program that calls the Fortran BLAS dgemm_ and nothing of abft: the drop-in
 * demonstration (docs/dropin.md). Run under LD_PRELOAD=libabft_blas.so with
 * ABFT_BLAS_INJECT, the fault flipped into C after the product is detected and corrected,
 * and the program still prints a correct result. It checks C against a plain loop and exits
 * 1 when any element differs (the inputs are small integers: every product is exact).
 * Usage: demo_dgemm [n [beta]] (default 200 0): C = A·B + beta·C. With beta = 0 and row
 * checksums the library confirms a correction by recomputing the element; with beta != 0 it
 * reports the element uncorrectable and the drop-in's ABFT_BLAS_ON_UNCORRECTABLE decides
 * (recompute: the call again from a saved C). */
#include <stdio.h>
#include <stdlib.h>

void dgemm_(const char *ta, const char *tb, const int *m, const int *n, const int *k,
            const double *alpha, const double *A, const int *lda, const double *B,
            const int *ldb, const double *beta, double *C, const int *ldc);

int main(int argc, char **argv) {
    int n = argc > 1 ? atoi(argv[1]) : 200;
    const double beta = argc > 2 ? atof(argv[2]) : 0.0;
    if (n < 3) n = 3;
    double *A = malloc(sizeof(double) * n * n), *B = malloc(sizeof(double) * n * n);
    double *C = malloc(sizeof(double) * n * n);
    if (A == NULL || B == NULL || C == NULL) return 2;
    for (int i = 0; i < n * n; ++i) {
        A[i] = (double)(i % 7) - 3.0;
        B[i] = (double)(i % 5) - 2.0;
        C[i] = (double)(i % 3); /* beta is a small integer in the tests: still exact */
    }
    const double one = 1.0;
    dgemm_("N", "N", &n, &n, &n, &one, A, &n, B, &n, &beta, C, &n);
    long wrong = 0;
    for (int j = 0; j < n; ++j)
        for (int i = 0; i < n; ++i) {
            double s = beta == 0.0 ? 0.0 : beta * (double)((i + j * n) % 3);
            for (int l = 0; l < n; ++l) s += A[i + l * n] * B[l + j * n];
            wrong += C[i + j * n] != s;
        }
    printf("demo_dgemm: n = %d, beta = %g, C(1,2) = %g, %ld wrong elements\n", n, beta,
           C[1 + 2 * n], wrong);
    free(A), free(B), free(C);
    return wrong == 0 ? 0 : 1;
}
