/* Protected LU solve: factor A with checksums checked (offline), solve A·x = b with checked
 * triangular solves, print what the reports say. CPU backend (on a CUDA handle the same calls
 * take device pointers). */
#include <abft/abft.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

int main(void) {
    const int64_t n = 500;
    abft_handle_t h;
    if (abft_create(&h, ABFT_BACKEND_CPU) != ABFT_STATUS_SUCCESS) return 1;
    double *A = malloc(sizeof(double) * n * n), *b = malloc(sizeof(double) * n);
    int64_t *ipiv = malloc(sizeof(int64_t) * n), info = 0;
    srand(7);
    for (int64_t i = 0; i < n * n; ++i) A[i] = rand() / (double)RAND_MAX - 0.5;
    for (int64_t i = 0; i < n; ++i) b[i] = 1.0;
    abft_report_t rep;
    abft_status_t st = abft_dgetrf(h, n, n, A, n, ipiv, &info, &rep);
    printf("getrf: %s, checked %lld rows, detected %lld, corrected %lld, max ratio %.3g\n",
           abft_status_name(st), (long long)rep.checked, (long long)rep.detected,
           (long long)rep.corrected, rep.max_ratio);
    if (st != ABFT_STATUS_SUCCESS || rep.uncorrectable > 0) {
        printf("factors not trustworthy (spread %d): refactor\n", rep.spread);
        return 1;
    }
    st = abft_dgetrs(h, ABFT_OP_N, n, 1, A, n, ipiv, b, n, &rep);
    printf("getrs: %s, detected %lld\n", abft_status_name(st), (long long)rep.detected);
    printf("x[0] = %.6f\n", b[0]);
    free(A);
    free(b);
    free(ipiv);
    abft_destroy(h);
    return 0;
}
