/* abft CPU backend: host BLAS through the Fortran interface (any vendor CMake finds:
 * reference BLAS, OpenBLAS, ...), host memory operations. */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "abft_kernels.h"
#include "abft_cpu_host_blas.h"

/* All NULL: the Fortran symbols are called directly (abft_cpu_host_blas.h). */
abft_cpu_host_blas_t abft_cpu_host_blas;

static int fits_int(int64_t v) { return v >= 0 && v <= INT_MAX; }

abft_status_t abft_cpu_gemm(const abft_kctx_t *ctx, const abft_gemm_args_t *a) {
    (void)ctx;
    if (a->m == 0 || a->n == 0) return ABFT_STATUS_SUCCESS;
    /* The LP64 interface takes int: sizes beyond it are not supported on the CPU. */
    if (!fits_int(a->m) || !fits_int(a->n) || !fits_int(a->k) || !fits_int(a->lda) ||
        !fits_int(a->ldb) || !fits_int(a->ldc))
        return ABFT_STATUS_NOT_SUPPORTED;
    int m = (int)a->m, n = (int)a->n, k = (int)a->k;
    int lda = (int)a->lda, ldb = (int)a->ldb, ldc = (int)a->ldc;
    char ta = a->transa ? 'T' : 'N', tb = a->transb ? 'T' : 'N';
    if (a->prec == ABFT_PREC_D) {
        ABFT_HOST_BLAS(dgemm, (&ta, &tb, &m, &n, &k, &a->alpha, (const double *)a->A, &lda,
                               (const double *)a->B, &ldb, &a->beta, (double *)a->C, &ldc));
    } else {
        float al = (float)a->alpha, be = (float)a->beta;
        ABFT_HOST_BLAS(sgemm, (&ta, &tb, &m, &n, &k, &al, (const float *)a->A, &lda,
                               (const float *)a->B, &ldb, &be, (float *)a->C, &ldc));
    }
    return ABFT_STATUS_SUCCESS;
}

abft_status_t abft_cpu_alloc(const abft_kctx_t *ctx, size_t bytes, void **ptr) {
    (void)ctx;
    void *p = malloc(bytes > 0 ? bytes : 1);
    if (p == NULL) return ABFT_STATUS_ALLOC_FAILED;
    *ptr = p;
    return ABFT_STATUS_SUCCESS;
}

abft_status_t abft_cpu_free(const abft_kctx_t *ctx, void *ptr) {
    (void)ctx;
    free(ptr);
    return ABFT_STATUS_SUCCESS;
}

abft_status_t abft_cpu_copy(const abft_kctx_t *ctx, const abft_copy_args_t *a) {
    (void)ctx;
    for (int64_t j = 0; j < a->cols; ++j) {
        char *h = (char *)a->host + (size_t)(j * a->ldh) * a->elem;
        char *d = (char *)a->dev + (size_t)(j * a->ldd) * a->elem;
        size_t len = (size_t)a->rows * a->elem;
        if (a->dir == 0 || a->dir == 2)
            memmove(h, d, len);
        else
            memmove(d, h, len);
    }
    return ABFT_STATUS_SUCCESS;
}

abft_status_t abft_cpu_sync(const abft_kctx_t *ctx) {
    (void)ctx;
    return ABFT_STATUS_SUCCESS;
}

abft_status_t abft_cpu_order(const abft_kctx_t *waiter, const abft_kctx_t *signaler) {
    (void)waiter;
    (void)signaler;
    return ABFT_STATUS_SUCCESS;
}
