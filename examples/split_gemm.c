/* The split form around your own GEMM: encode before, run the GEMM on your own cuBLAS handle
 * and stream, verify after. The library only reads A and B (and C when beta != 0) before,
 * and C after; your cuBLAS handle is never touched.
 *
 *   build/examples/split_gemm [n]     (needs a GPU; prints why not otherwise)
 */
#include <abft/abft.h>
#include <stdio.h>
#include <stdlib.h>

#if ABFT_HAVE_CUDA_BACKEND
#include <cublas_v2.h>
#include <cuda_runtime.h>

#define CHECK(cond, what)                                      \
    do {                                                       \
        if (!(cond)) {                                         \
            fprintf(stderr, "split_gemm: %s failed\n", what);  \
            return 1;                                          \
        }                                                      \
    } while (0)

int main(int argc, char **argv) {
    int n = argc > 1 ? atoi(argv[1]) : 1024;
    if (n < 8) n = 8;
    abft_handle_t h;
    if (abft_create(&h, ABFT_BACKEND_CUDA) != ABFT_STATUS_SUCCESS) {
        printf("split_gemm: no GPU here; the split form is shown on the CUDA backend\n");
        return 0;
    }
    cudaStream_t stream;
    cublasHandle_t cublas;
    CHECK(cudaStreamCreate(&stream) == cudaSuccess, "cudaStreamCreate");
    CHECK(cublasCreate(&cublas) == CUBLAS_STATUS_SUCCESS, "cublasCreate");
    CHECK(cublasSetStream(cublas, stream) == CUBLAS_STATUS_SUCCESS, "cublasSetStream");
    CHECK(abft_set_stream(h, stream) == ABFT_STATUS_SUCCESS, "abft_set_stream");

    size_t bytes = sizeof(double) * (size_t)n * n;
    double *hA = malloc(bytes), *hB = malloc(bytes), *A, *B, *C;
    CHECK(hA && hB, "malloc");
    for (size_t i = 0; i < (size_t)n * n; ++i) {
        hA[i] = (double)rand() / RAND_MAX - 0.5;
        hB[i] = (double)rand() / RAND_MAX - 0.5;
    }
    CHECK(cudaMalloc((void **)&A, bytes) == cudaSuccess && cudaMalloc((void **)&B, bytes) ==
              cudaSuccess && cudaMalloc((void **)&C, bytes) == cudaSuccess, "cudaMalloc");
    CHECK(cudaMemcpy(A, hA, bytes, cudaMemcpyHostToDevice) == cudaSuccess, "copy A");
    CHECK(cudaMemcpy(B, hB, bytes, cudaMemcpyHostToDevice) == cudaSuccess, "copy B");

    /* 1. a plan for this shape, and the checksums of the inputs */
    const double alpha = 1.0, beta = 0.0;
    abft_gemm_plan_t plan;
    CHECK(abft_gemm_plan_create(h, 'd', ABFT_OP_N, ABFT_OP_N, n, n, n, alpha, beta, &plan) ==
              ABFT_STATUS_SUCCESS, "abft_gemm_plan_create");
    CHECK(abft_dgemm_encode(h, plan, A, n, B, n, NULL, n) == ABFT_STATUS_SUCCESS, "encode");

    /* 2. your GEMM, on your handle and stream */
    CHECK(cublasDgemm(cublas, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &alpha, A, n, B, n, &beta, C,
                      n) == CUBLAS_STATUS_SUCCESS, "cublasDgemm");

    /* a soft error in C (here: on purpose) */
    double v;
    CHECK(cudaMemcpy(&v, C + 17 + 3 * (size_t)n, 8, cudaMemcpyDeviceToHost) == cudaSuccess, "get");
    v += 0.25;
    CHECK(cudaMemcpy(C + 17 + 3 * (size_t)n, &v, 8, cudaMemcpyHostToDevice) == cudaSuccess, "set");

    /* 3. verify (A and B let it recompute what cannot be corrected; NULL is fine too) */
    abft_report_t rep;
    CHECK(abft_dgemm_verify(h, plan, A, n, B, n, C, n, &rep) == ABFT_STATUS_SUCCESS, "verify");
    printf("detected %lld, corrected %lld at (%lld, %lld), delta %.3g, uncorrectable %lld\n",
           (long long)rep.detected, (long long)rep.corrected,
           (long long)(rep.nfaults ? rep.faults[0].row : -1),
           (long long)(rep.nfaults ? rep.faults[0].col : -1),
           rep.nfaults ? rep.faults[0].delta : 0.0, (long long)rep.uncorrectable);

    abft_gemm_plan_destroy(plan);
    cudaFree(A), cudaFree(B), cudaFree(C), free(hA), free(hB);
    cublasDestroy(cublas);
    cudaStreamDestroy(stream);
    abft_destroy(h);
    return rep.corrected == 1 && rep.uncorrectable == 0 ? 0 : 1;
}
#else
int main(void) {
    printf("split_gemm: this build has no CUDA backend; see examples/protected_gemm.c\n");
    return 0;
}
#endif
