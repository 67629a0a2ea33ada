/* abft CUDA backend: one cuBLAS call on a (possibly borrowed) handle. Private.
 *
 * Borrowed handles keep their settings. abft_blas_enter saves the handle's stream and
 * pointer mode and sets the context's stream and host pointer mode where they differ (*st:
 * the result of that); it returns false, changing nothing, when the state cannot be read.
 * After the call, abft_blas_leave restores what enter changed, on every path, and returns
 * the first failure: the call's (or the setup's), else the restore's. A stream that is
 * already the context's is not set again: cublasSetStream also resets the handle's workspace
 * to cuBLAS's default pool (a workspace given with cublasSetWorkspace would be lost, and
 * cuBLAS has no getter to restore it). */
#ifndef ABFT_CUDA_BLAS_CUH
#define ABFT_CUDA_BLAS_CUH

#include <cublas_v2.h>

#include "abft_cuda_common.cuh"

struct abft_blas_saved {
    cudaStream_t stream;
    cublasPointerMode_t mode;
    bool set_stream, set_mode; /* what enter changed */
};

static inline bool abft_blas_enter(cublasHandle_t h, const abft_kctx_t *ctx,
                                   abft_blas_saved *sv, cublasStatus_t *st) {
    const cudaStream_t stream = abft_cuda_stream(ctx);
    sv->stream = nullptr;
    sv->mode = CUBLAS_POINTER_MODE_HOST;
    sv->set_stream = sv->set_mode = false;
    if (cublasGetStream(h, &sv->stream) != CUBLAS_STATUS_SUCCESS ||
        cublasGetPointerMode(h, &sv->mode) != CUBLAS_STATUS_SUCCESS)
        return false;
    *st = CUBLAS_STATUS_SUCCESS;
    if (sv->stream != stream) {
        sv->set_stream = true;
        *st = cublasSetStream(h, stream);
    }
    if (*st == CUBLAS_STATUS_SUCCESS && sv->mode != CUBLAS_POINTER_MODE_HOST) {
        sv->set_mode = true;
        *st = cublasSetPointerMode(h, CUBLAS_POINTER_MODE_HOST);
    }
    return true;
}

static inline cublasStatus_t abft_blas_leave(cublasHandle_t h, const abft_blas_saved *sv,
                                             cublasStatus_t st) {
    cublasStatus_t r1 = sv->set_mode ? cublasSetPointerMode(h, sv->mode) : CUBLAS_STATUS_SUCCESS;
    cublasStatus_t r2 = sv->set_stream ? cublasSetStream(h, sv->stream) : CUBLAS_STATUS_SUCCESS;
    if (st == CUBLAS_STATUS_SUCCESS) st = r1 != CUBLAS_STATUS_SUCCESS ? r1 : r2;
    return st;
}

/* C = alpha·op(A)·op(B) + beta·C on the handle as it is set (host pointer mode). */
static inline cublasStatus_t abft_blas_gemm(cublasHandle_t h, const abft_gemm_args_t *a) {
    cublasOperation_t ta = a->transa ? CUBLAS_OP_T : CUBLAS_OP_N;
    cublasOperation_t tb = a->transb ? CUBLAS_OP_T : CUBLAS_OP_N;
    if (a->prec == ABFT_PREC_D)
        return cublasDgemm_64(h, ta, tb, a->m, a->n, a->k, &a->alpha, (const double *)a->A,
                              a->lda, (const double *)a->B, a->ldb, &a->beta, (double *)a->C,
                              a->ldc);
    float al = (float)a->alpha, be = (float)a->beta;
    return cublasSgemm_64(h, ta, tb, a->m, a->n, a->k, &al, (const float *)a->A, a->lda,
                          (const float *)a->B, a->ldb, &be, (float *)a->C, a->ldc);
}

#endif /* ABFT_CUDA_BLAS_CUH */
