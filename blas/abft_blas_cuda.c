/* libabft_blas.so: staging of host operands to the GPU (docs/dropin.md, "CUDA backend").
 *
 * The intercepted routines get host arrays. For a call the configuration sends to the GPU,
 * the operands are copied into device buffers of the calling thread (kept between calls,
 * grown when too small), the protected operation runs on the thread's CUDA handle, which
 * verifies (and corrects) the result on the GPU, and only then is the result copied back.
 * On any status but success the host arrays are left as they were, so the caller can run
 * the call elsewhere. Without the CUDA backend these are stubs. */
#include "abft_blas_internal.h"

#if ABFT_HAVE_CUDA

#include <cuda_runtime_api.h>

int abft_blas_cuda_present(void) {
    if (!abft_cuda_built()) return 0;
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess) {
        (void)cudaGetLastError();
        return 0;
    }
    return count > 0;
}

/* Device buffer `slot` of at least `bytes`. */
static abft_status_t dev_buffer(abft_blas_stage_t *st, int slot, size_t bytes, void **ptr) {
    if (bytes == 0) bytes = 1;
    if (st->bytes[slot] < bytes) {
        if (st->dev[slot] != NULL) cudaFree(st->dev[slot]);
        st->dev[slot] = NULL, st->bytes[slot] = 0;
        if (cudaMalloc(&st->dev[slot], bytes) != cudaSuccess) {
            (void)cudaGetLastError();
            st->dev[slot] = NULL;
            return ABFT_STATUS_ALLOC_FAILED;
        }
        st->bytes[slot] = bytes;
    }
    *ptr = st->dev[slot];
    return ABFT_STATUS_SUCCESS;
}

/* rows x cols elements of es bytes, host (leading dimension ldh) to a packed device array. */
static abft_status_t to_dev(void *d, const void *h, int64_t ldh, int64_t rows, int64_t cols,
                            size_t es) {
    if (rows == 0 || cols == 0) return ABFT_STATUS_SUCCESS;
    cudaError_t e = cudaMemcpy2D(d, (size_t)rows * es, h, (size_t)ldh * es, (size_t)rows * es,
                                 (size_t)cols, cudaMemcpyHostToDevice);
    if (e != cudaSuccess) {
        (void)cudaGetLastError();
        return ABFT_STATUS_CUDA_ERROR;
    }
    return ABFT_STATUS_SUCCESS;
}

static abft_status_t to_host(void *h, int64_t ldh, const void *d, int64_t rows, int64_t cols,
                             size_t es) {
    if (rows == 0 || cols == 0) return ABFT_STATUS_SUCCESS;
    cudaError_t e = cudaMemcpy2D(h, (size_t)ldh * es, d, (size_t)rows * es, (size_t)rows * es,
                                 (size_t)cols, cudaMemcpyDeviceToHost);
    if (e != cudaSuccess) {
        (void)cudaGetLastError();
        return ABFT_STATUS_CUDA_ERROR;
    }
    return ABFT_STATUS_SUCCESS;
}

#define TRY(x)                                                                               \
    do {                                                                                     \
        abft_status_t s_ = (x);                                                              \
        if (s_ != ABFT_STATUS_SUCCESS) return s_;                                            \
    } while (0)

abft_status_t abft_blas_cuda_gemm(abft_blas_stage_t *st, const abft_blas_type_t *t,
                                  abft_handle_t h, abft_operation_t ta, abft_operation_t tb,
                                  int64_t m, int64_t n, int64_t k, const void *alpha,
                                  const void *A, int64_t lda, const void *B, int64_t ldb,
                                  const void *beta, void *C, int64_t ldc, abft_report_t *rep) {
    const size_t es = t->size;
    int64_t ar = ta == ABFT_OP_N ? m : k, ac = ta == ABFT_OP_N ? k : m;
    int64_t br = tb == ABFT_OP_N ? k : n, bc = tb == ABFT_OP_N ? n : k;
    void *dA, *dB, *dC;
    TRY(dev_buffer(st, 0, (size_t)ar * (size_t)ac * es, &dA));
    TRY(dev_buffer(st, 1, (size_t)br * (size_t)bc * es, &dB));
    TRY(dev_buffer(st, 2, (size_t)m * (size_t)n * es, &dC));
    TRY(to_dev(dA, A, lda, ar, ac, es));
    TRY(to_dev(dB, B, ldb, br, bc, es));
    if (!t->is_zero(beta)) TRY(to_dev(dC, C, ldc, m, n, es)); /* beta = 0: C is not read */
    abft_status_t s = t->gemm(h, ta, tb, m, n, k, alpha, dA, ar > 1 ? ar : 1, dB,
                              br > 1 ? br : 1, beta, dC, m > 1 ? m : 1, rep);
    if (s != ABFT_STATUS_SUCCESS) return s;
    /* verified (and corrected) on the GPU: now the host copy */
    return to_host(C, ldc, dC, m, n, es);
}

abft_status_t abft_blas_cuda_getrf(abft_blas_stage_t *st, const abft_blas_type_t *t,
                                   abft_handle_t h, int64_t m, int64_t n, void *A, int64_t lda,
                                   int64_t *ipiv, int64_t *info, abft_report_t *rep) {
    const size_t es = t->size;
    const int64_t mn = m < n ? m : n;
    void *dA, *dP;
    TRY(dev_buffer(st, 0, (size_t)m * (size_t)n * es, &dA));
    TRY(dev_buffer(st, 1, (size_t)mn * sizeof(int64_t), &dP));
    TRY(to_dev(dA, A, lda, m, n, es));
    abft_status_t s = t->getrf(h, m, n, dA, m > 1 ? m : 1, (int64_t *)dP, info, rep);
    if (s != ABFT_STATUS_SUCCESS && s != ABFT_STATUS_SINGULAR) return s;
    if (mn > 0 && cudaMemcpy(ipiv, dP, (size_t)mn * sizeof(int64_t), cudaMemcpyDeviceToHost) !=
                      cudaSuccess) {
        (void)cudaGetLastError();
        return ABFT_STATUS_CUDA_ERROR;
    }
    TRY(to_host(A, lda, dA, m, n, es));
    return s;
}

abft_status_t abft_blas_cuda_getrs(abft_blas_stage_t *st, const abft_blas_type_t *t,
                                   abft_handle_t h, abft_operation_t trans, int64_t n,
                                   int64_t nrhs, const void *A, int64_t lda,
                                   const int64_t *ipiv, void *B, int64_t ldb,
                                   abft_report_t *rep) {
    const size_t es = t->size;
    void *dA, *dP, *dB;
    TRY(dev_buffer(st, 0, (size_t)n * (size_t)n * es, &dA));
    TRY(dev_buffer(st, 1, (size_t)n * sizeof(int64_t), &dP));
    TRY(dev_buffer(st, 2, (size_t)n * (size_t)nrhs * es, &dB));
    TRY(to_dev(dA, A, lda, n, n, es));
    TRY(to_dev(dB, B, ldb, n, nrhs, es));
    if (n > 0 && cudaMemcpy(dP, ipiv, (size_t)n * sizeof(int64_t), cudaMemcpyHostToDevice) !=
                     cudaSuccess) {
        (void)cudaGetLastError();
        return ABFT_STATUS_CUDA_ERROR;
    }
    abft_status_t s = t->getrs(h, trans, n, nrhs, dA, n > 1 ? n : 1, (const int64_t *)dP, dB,
                               n > 1 ? n : 1, rep);
    if (s != ABFT_STATUS_SUCCESS) return s;
    return to_host(B, ldb, dB, n, nrhs, es);
}

void abft_blas_cuda_release(abft_blas_stage_t *st) {
    for (int i = 0; i < 3; ++i) {
        if (st->dev[i] != NULL) cudaFree(st->dev[i]);
        st->dev[i] = NULL, st->bytes[i] = 0;
    }
}

#else /* no CUDA backend in this build */

int abft_blas_cuda_present(void) { return 0; }

abft_status_t abft_blas_cuda_gemm(abft_blas_stage_t *st, const abft_blas_type_t *t,
                                  abft_handle_t h, abft_operation_t ta, abft_operation_t tb,
                                  int64_t m, int64_t n, int64_t k, const void *alpha,
                                  const void *A, int64_t lda, const void *B, int64_t ldb,
                                  const void *beta, void *C, int64_t ldc, abft_report_t *rep) {
    (void)st, (void)t, (void)h, (void)ta, (void)tb, (void)m, (void)n, (void)k, (void)alpha;
    (void)A, (void)lda, (void)B, (void)ldb, (void)beta, (void)C, (void)ldc, (void)rep;
    return ABFT_STATUS_NOT_SUPPORTED;
}

abft_status_t abft_blas_cuda_getrf(abft_blas_stage_t *st, const abft_blas_type_t *t,
                                   abft_handle_t h, int64_t m, int64_t n, void *A, int64_t lda,
                                   int64_t *ipiv, int64_t *info, abft_report_t *rep) {
    (void)st, (void)t, (void)h, (void)m, (void)n, (void)A, (void)lda, (void)ipiv, (void)info;
    (void)rep;
    return ABFT_STATUS_NOT_SUPPORTED;
}

abft_status_t abft_blas_cuda_getrs(abft_blas_stage_t *st, const abft_blas_type_t *t,
                                   abft_handle_t h, abft_operation_t trans, int64_t n,
                                   int64_t nrhs, const void *A, int64_t lda,
                                   const int64_t *ipiv, void *B, int64_t ldb,
                                   abft_report_t *rep) {
    (void)st, (void)t, (void)h, (void)trans, (void)n, (void)nrhs, (void)A, (void)lda;
    (void)ipiv, (void)B, (void)ldb, (void)rep;
    return ABFT_STATUS_NOT_SUPPORTED;
}

void abft_blas_cuda_release(abft_blas_stage_t *st) { (void)st; }

#endif
