/* abft CUDA backend: one cuBLAS call on a (possibly borrowed) handle. Private.
 *
 * Borrowed handles keep their settings. abft_blas_enter saves the handle's stream and
 * pointer mode and sets the context's stream and host pointer mode (*st: the result of
 * that); it returns false, changing nothing, when the state cannot be read. After the call,
 * abft_blas_leave restores both on every path and returns the first failure: the call's
 * (or the setup's), else the restore's. */
#ifndef ABFT_CUDA_BLAS_CUH
#define ABFT_CUDA_BLAS_CUH

#include <cublas_v2.h>

#include "abft_cuda_common.cuh"

struct abft_blas_saved {
    cudaStream_t stream;
    cublasPointerMode_t mode;
};

static inline bool abft_blas_enter(cublasHandle_t h, const abft_kctx_t *ctx,
                                   abft_blas_saved *sv, cublasStatus_t *st) {
    sv->stream = nullptr;
    sv->mode = CUBLAS_POINTER_MODE_HOST;
    if (cublasGetStream(h, &sv->stream) != CUBLAS_STATUS_SUCCESS ||
        cublasGetPointerMode(h, &sv->mode) != CUBLAS_STATUS_SUCCESS)
        return false;
    *st = cublasSetStream(h, abft_cuda_stream(ctx));
    if (*st == CUBLAS_STATUS_SUCCESS) *st = cublasSetPointerMode(h, CUBLAS_POINTER_MODE_HOST);
    return true;
}

static inline cublasStatus_t abft_blas_leave(cublasHandle_t h, const abft_blas_saved *sv,
                                             cublasStatus_t st) {
    cublasStatus_t r1 = cublasSetPointerMode(h, sv->mode);
    cublasStatus_t r2 = cublasSetStream(h, sv->stream);
    if (st == CUBLAS_STATUS_SUCCESS) st = r1 != CUBLAS_STATUS_SUCCESS ? r1 : r2;
    return st;
}

#endif /* ABFT_CUDA_BLAS_CUH */
