/* The split form around your own GEMM: encode before, run the GEMM yourself, verify after.
 * On the GPU the GEMM is cuBLAS on your own handle and stream (the library never touches
 * them); without a GPU it is a plain loop on the host and the library runs on the CPU
 * backend. The library only reads A and B (and C when beta != 0) before, and C after.
 *
 *   build/examples/split_gemm [n]
 *
 * Exit status 0 when the injected error was corrected and C matches the fault-free C. */
#include <abft/abft.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if ABFT_HAVE_CUDA_BACKEND
#include <cublas_v2.h>
#include <cuda_runtime.h>
#endif

#define CHECK(cond, what)                                      \
    do {                                                       \
        if (!(cond)) {                                         \
            fprintf(stderr, "split_gemm: %s failed\n", what);  \
            return 1;                                          \
        }                                                      \
    } while (0)

#include "example_mem.h"

/* The host GEMM of the CPU path: C = A·B, n x n, column-major (a plain loop; any BLAS
 * dgemm would do the same). */
static void host_gemm(int n, const double *A, const double *B, double *C) {
    for (int j = 0; j < n; ++j) {
        for (int i = 0; i < n; ++i) C[i + (size_t)j * n] = 0.0;
        for (int l = 0; l < n; ++l) {
            double b = B[l + (size_t)j * n];
            for (int i = 0; i < n; ++i) C[i + (size_t)j * n] += A[i + (size_t)l * n] * b;
        }
    }
}

int main(int argc, char **argv) {
    int n = argc > 1 ? atoi(argv[1]) : 512;
    if (n < 32) n = 32;
    abft_handle_t h;
    abft_status_t st = abft_create(&h, ABFT_BACKEND_AUTO);
    if (st != ABFT_STATUS_SUCCESS) {
        fprintf(stderr, "abft_create: %s\n", abft_status_string(st));
        return 1;
    }
    abft_get_backend(h, &backend);
    printf("split form, backend %s, n = %d; your GEMM: %s\n", abft_backend_name(backend), n,
           backend == ABFT_BACKEND_CUDA ? "cublasDgemm on your own handle and stream"
                                        : "a loop on the host");
#if ABFT_HAVE_CUDA_BACKEND
    cudaStream_t stream = NULL;
    cublasHandle_t cublas = NULL;
    if (backend == ABFT_BACKEND_CUDA) {
        CHECK(cudaStreamCreate(&stream) == cudaSuccess, "cudaStreamCreate");
        CHECK(cublasCreate(&cublas) == CUBLAS_STATUS_SUCCESS, "cublasCreate");
        CHECK(cublasSetStream(cublas, stream) == CUBLAS_STATUS_SUCCESS, "cublasSetStream");
        CHECK(abft_set_stream(h, stream) == ABFT_STATUS_SUCCESS, "abft_set_stream");
    }
#endif

    size_t bytes = sizeof(double) * (size_t)n * n;
    double *hA = malloc(bytes), *hB = malloc(bytes), *hC = malloc(bytes), *hG = malloc(bytes);
    double *A = backend_alloc(bytes), *B = backend_alloc(bytes), *C = backend_alloc(bytes);
    CHECK(hA && hB && hC && hG && A && B && C, "allocation");
    srand(2024);
    for (size_t i = 0; i < (size_t)n * n; ++i) {
        hA[i] = (double)rand() / RAND_MAX - 0.5;
        hB[i] = (double)rand() / RAND_MAX - 0.5;
    }
    CHECK(to_backend(A, hA, bytes, 1) == 0 && to_backend(B, hB, bytes, 1) == 0, "copy A, B");

    /* 1. a plan for this shape, and the checksums of the inputs */
    const double alpha = 1.0, beta = 0.0;
    abft_gemm_plan_t plan;
    CHECK(abft_gemm_plan_create(h, 'd', ABFT_OP_N, ABFT_OP_N, n, n, n, alpha, beta, &plan) ==
              ABFT_STATUS_SUCCESS, "abft_gemm_plan_create");
    CHECK(abft_dgemm_encode(h, plan, A, n, B, n, NULL, n) == ABFT_STATUS_SUCCESS, "encode");

    /* 2. your GEMM */
#if ABFT_HAVE_CUDA_BACKEND
    if (backend == ABFT_BACKEND_CUDA) {
        CHECK(cublasDgemm(cublas, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &alpha, A, n, B, n, &beta, C,
                          n) == CUBLAS_STATUS_SUCCESS, "cublasDgemm");
        CHECK(cudaStreamSynchronize(stream) == cudaSuccess, "cudaStreamSynchronize");
    } else
#endif
    {
        host_gemm(n, A, B, C);
    }
    CHECK(to_backend(hG, C, bytes, 0) == 0, "copy C"); /* the fault-free C, for the check */

    /* a soft error in C (here: on purpose) */
    const size_t at = 17 + 3 * (size_t)n;
    double v;
    CHECK(to_backend(&v, C + at, sizeof v, 0) == 0, "get");
    v += 0.25;
    CHECK(to_backend(C + at, &v, sizeof v, 1) == 0, "set");
    printf("injected: C(17,3) += 0.25\n");

    /* 3. verify; A and B let it confirm a correction by recomputing the element (without
     * them the checksums can only report the error) */
    abft_report_t rep;
    st = abft_dgemm_verify(h, plan, A, n, B, n, C, n, &rep);
    CHECK(st == ABFT_STATUS_SUCCESS, "abft_dgemm_verify");
    printf("verify: detected %lld, corrected %lld, uncorrectable %lld\n", (long long)rep.detected,
           (long long)rep.corrected, (long long)rep.uncorrectable);
    for (int64_t f = 0; f < rep.nfaults; ++f)
        printf("  fault at (%lld, %lld): delta %.6g, %s\n", (long long)rep.faults[f].row,
               (long long)rep.faults[f].col, rep.faults[f].delta,
               abft_action_name((abft_action_t)rep.faults[f].action));

    CHECK(to_backend(hC, C, bytes, 0) == 0, "copy C");
    double maxdiff = 0.0;
    for (size_t i = 0; i < (size_t)n * n; ++i) maxdiff = fmax(maxdiff, fabs(hC[i] - hG[i]));
    int ok = rep.corrected == 1 && rep.uncorrectable == 0 && maxdiff <= 1e-12 * n;
    printf("largest difference from the fault-free C: %.3g\n%s\n", maxdiff,
           ok ? "the error was corrected: C is trustworthy" : "C is NOT trustworthy");

    abft_gemm_plan_destroy(plan);
    backend_free(A), backend_free(B), backend_free(C);
    free(hA), free(hB), free(hC), free(hG);
#if ABFT_HAVE_CUDA_BACKEND
    if (cublas) cublasDestroy(cublas);
    if (stream) cudaStreamDestroy(stream);
#endif
    abft_destroy(h);
    return ok ? 0 : 1;
}
