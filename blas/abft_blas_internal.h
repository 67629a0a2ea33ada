/* libabft_blas.so: declarations shared by the drop-in library's sources (docs/dropin.md).
 * Private header, never installed. */
#ifndef ABFT_BLAS_INTERNAL_H
#define ABFT_BLAS_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "abft/abft.h"

/* Fortran signatures of the intercepted routines with their scalars and arrays as void *,
 * so that one generic wrapper per operation serves every type. The trailing size_t are the
 * hidden lengths of the character arguments (gfortran's convention). */
typedef void (*abft_blas_gemm_fn)(const char *ta, const char *tb, const int *m, const int *n,
                                  const int *k, const void *alpha, const void *A,
                                  const int *lda, const void *B, const int *ldb,
                                  const void *beta, void *C, const int *ldc, size_t lta,
                                  size_t ltb);
typedef void (*abft_blas_getrf_fn)(const int *m, const int *n, void *A, const int *lda,
                                   int *ipiv, int *info);
typedef void (*abft_blas_getrs_fn)(const char *trans, const int *n, const int *nrhs,
                                   const void *A, const int *lda, const int *ipiv, void *B,
                                   const int *ldb, int *info, size_t ltrans);

/* One entry per type: what the generic wrappers need to know about it. Adding a type
 * (complex, later) is one entry of the table in abft_blas.c plus its exported symbols. */
typedef struct abft_blas_type {
    char prec;                  /* 'd', 's' */
    size_t size;                /* bytes per element */
    const char *name_gemm;      /* the routine names handed to xerbla_ ("DGEMM ", ...) */
    const char *name_getrf;
    const char *name_getrs;
    const char *sym_gemm;       /* the symbols looked up after this library ("dgemm_") */
    const char *sym_getrf;
    const char *sym_getrs;
    const char *sym_cblas_gemm; /* "cblas_dgemm" */
    const char *sym_trsm;       /* what the CPU backend also calls ("dtrsm_") */
    int (*is_zero)(const void *scalar);
    int (*is_one)(const void *scalar);
    int (*is_finite)(const void *scalar);
    /* C = beta·C (beta = 0: C = 0, not read), m x n: the reference's alpha = 0 / k = 0 case */
    void (*scale)(int m, int n, const void *beta, void *C, int ldc);
    /* the protected operations of libabft, scalars passed by address */
    abft_status_t (*gemm)(abft_handle_t h, abft_operation_t ta, abft_operation_t tb, int64_t m,
                          int64_t n, int64_t k, const void *alpha, const void *A, int64_t lda,
                          const void *B, int64_t ldb, const void *beta, void *C, int64_t ldc,
                          abft_report_t *rep);
    abft_status_t (*getrf)(abft_handle_t h, int64_t m, int64_t n, void *A, int64_t lda,
                           int64_t *ipiv, int64_t *info, abft_report_t *rep);
    abft_status_t (*getrs)(abft_handle_t h, abft_operation_t trans, int64_t n, int64_t nrhs,
                           const void *A, int64_t lda, const int64_t *ipiv, void *B,
                           int64_t ldb, abft_report_t *rep);
    /* calls the real CBLAS gemm fn (the type's own signature: scalars by value) */
    void (*cblas_gemm_call)(void *fn, int layout, int ta, int tb, int m, int n, int k,
                            const void *alpha, const void *A, int lda, const void *B, int ldb,
                            const void *beta, void *C, int ldc);
} abft_blas_type_t;

/* ---- staging to the GPU (abft_blas_cuda.c; stubs without the CUDA backend) -------------- */

/* Per-thread device buffers for the staged operands. */
typedef struct abft_blas_stage {
    void *dev[3];
    size_t bytes[3];
} abft_blas_stage_t;

/* 1 when this build has the CUDA backend and a GPU is present. */
int abft_blas_cuda_present(void);
/* Stage the operands of a protected call to the GPU, run it on the CUDA handle h (checked
 * there) and copy the result back: C (gemm), A and ipiv (getrf), B (getrs). The host result
 * is written only when the status is SUCCESS (or SINGULAR for getrf); on any other status
 * the host arrays are untouched. */
abft_status_t abft_blas_cuda_gemm(abft_blas_stage_t *st, const abft_blas_type_t *t,
                                  abft_handle_t h, abft_operation_t ta, abft_operation_t tb,
                                  int64_t m, int64_t n, int64_t k, const void *alpha,
                                  const void *A, int64_t lda, const void *B, int64_t ldb,
                                  const void *beta, void *C, int64_t ldc, abft_report_t *rep);
abft_status_t abft_blas_cuda_getrf(abft_blas_stage_t *st, const abft_blas_type_t *t,
                                   abft_handle_t h, int64_t m, int64_t n, void *A, int64_t lda,
                                   int64_t *ipiv, int64_t *info, abft_report_t *rep);
abft_status_t abft_blas_cuda_getrs(abft_blas_stage_t *st, const abft_blas_type_t *t,
                                   abft_handle_t h, abft_operation_t trans, int64_t n,
                                   int64_t nrhs, const void *A, int64_t lda,
                                   const int64_t *ipiv, void *B, int64_t ldb,
                                   abft_report_t *rep);
/* Frees the device buffers. */
void abft_blas_cuda_release(abft_blas_stage_t *st);

#endif /* ABFT_BLAS_INTERNAL_H */
