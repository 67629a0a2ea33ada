/* Drop-in protected GEMM: C = A·B with checksums, on the GPU when one is present (device
 * pointers), else on the CPU (host pointers). A hook flips one bit of C after the
 * multiplication to show detection, location and correction; the result is then compared
 * with a fault-free protected run.
 *
 *   build/examples/protected_gemm [n]
 *
 * Exit status 0 when the fault was corrected and C matches the fault-free run. */
#include <abft/abft.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if ABFT_HAVE_CUDA_BACKEND
#include <cuda_runtime.h>
#endif

#include "example_mem.h"

/* The fault: flip bit 55 (an exponent bit) of C(3, 5) after the GEMM. */
static abft_status_t flip_one(void *user, abft_hook_site_t site, int which, char prec, void *C,
                              int64_t rows, int64_t cols, int64_t ld) {
    (void)user, (void)which, (void)prec, (void)rows, (void)cols;
    if (site != ABFT_SITE_AFTER_GEMM) return ABFT_STATUS_SUCCESS;
    double *p = (double *)C + 3 + 5 * ld, v, old;
    uint64_t bits;
    if (to_backend(&v, p, sizeof v, 0) != 0) return ABFT_STATUS_CUDA_ERROR;
    old = v;
    memcpy(&bits, &v, sizeof bits);
    bits ^= 1ull << 55;
    memcpy(&v, &bits, sizeof v);
    printf("injected at site %s: C(3,5) bit 55, %.17g -> %.17g\n", abft_hook_site_name(site), old,
           v);
    return to_backend(p, &v, sizeof v, 1) == 0 ? ABFT_STATUS_SUCCESS : ABFT_STATUS_CUDA_ERROR;
}

int main(int argc, char **argv) {
    int64_t n = argc > 1 ? atoll(argv[1]) : 256;
    if (n < 6) n = 6;
    abft_handle_t h = NULL;
    abft_status_t st = abft_create(&h, ABFT_BACKEND_AUTO);
    if (st != ABFT_STATUS_SUCCESS) {
        fprintf(stderr, "abft_create: %s\n", abft_status_string(st));
        return 1;
    }
    abft_get_backend(h, &backend);
    abft_checksum_kind_t kind;
    abft_get_checksum_kind(h, &kind);
    printf("abft %s, backend %s, %s checksums, n = %lld\n", abft_version_string(),
           abft_backend_name(backend), abft_checksum_kind_name(kind), (long long)n);

    size_t bytes = sizeof(double) * (size_t)(n * n);
    double *hA = malloc(bytes), *hB = malloc(bytes), *hC = malloc(bytes), *hG = malloc(bytes);
    double *A = backend_alloc(bytes), *B = backend_alloc(bytes), *C = backend_alloc(bytes);
    if (!hA || !hB || !hC || !hG || !A || !B || !C) {
        fprintf(stderr, "out of memory\n");
        return 1;
    }
    srand(12345);
    for (int64_t i = 0; i < n * n; ++i) {
        hA[i] = (double)rand() / RAND_MAX - 0.5;
        hB[i] = (double)rand() / RAND_MAX - 0.5;
    }
    if (to_backend(A, hA, bytes, 1) || to_backend(B, hB, bytes, 1)) return 1;

    /* the fault-free result, for the comparison at the end */
    abft_report_t rep;
    st = abft_dgemm(h, ABFT_OP_N, ABFT_OP_N, n, n, n, 1.0, A, n, B, n, 0.0, C, n, &rep);
    if (st != ABFT_STATUS_SUCCESS || to_backend(hG, C, bytes, 0)) {
        fprintf(stderr, "fault-free abft_dgemm: %s\n", abft_status_string(st));
        return 1;
    }

    /* beta = 0 and A, B given: a located error is confirmed by recomputing the element */
    abft_set_hook(h, flip_one, NULL);
    st = abft_dgemm(h, ABFT_OP_N, ABFT_OP_N, n, n, n, 1.0, A, n, B, n, 0.0, C, n, &rep);
    abft_set_hook(h, NULL, NULL);
    if (st != ABFT_STATUS_SUCCESS) {
        fprintf(stderr, "abft_dgemm: %s: %s\n", abft_status_name(st), abft_status_string(st));
        return 1;
    }
    printf("report: checked %lld rows, detected %lld, corrected %lld, uncorrectable %lld, "
           "recomputed %lld, checksum faults %lld, largest residual/bound %.3g\n",
           (long long)rep.checked, (long long)rep.detected, (long long)rep.corrected,
           (long long)rep.uncorrectable, (long long)rep.recomputed,
           (long long)rep.checksum_faults, rep.max_ratio);
    for (int64_t f = 0; f < rep.nfaults; ++f)
        printf("  fault at (%lld, %lld): delta %.6g, %s\n", (long long)rep.faults[f].row,
               (long long)rep.faults[f].col, rep.faults[f].delta,
               abft_action_name((abft_action_t)rep.faults[f].action));

    /* C against the fault-free run: equal up to the rounding of the corrected element */
    if (to_backend(hC, C, bytes, 0)) return 1;
    double maxdiff = 0.0;
    for (int64_t i = 0; i < n * n; ++i) maxdiff = fmax(maxdiff, fabs(hC[i] - hG[i]));
    int ok = rep.corrected == 1 && rep.uncorrectable == 0 && maxdiff <= 1e-12 * (double)n;
    printf("largest difference from the fault-free C: %.3g\n", maxdiff);
    printf("%s\n", ok ? "the fault was corrected: C is trustworthy"
                      : "C is NOT trustworthy (or the fault was not corrected)");
    backend_free(A), backend_free(B), backend_free(C);
    free(hA), free(hB), free(hC), free(hG);
    abft_destroy(h);
    return ok ? 0 : 1;
}
